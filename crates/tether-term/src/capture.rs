//! The capture transaction: queries written to the local terminal before a
//! session starts, and a parser for the terminal's replies.
//!
//! One transaction is a batch of queries ended by a primary DA query
//! (`CSI c`); every terminal answers DA, so its reply delimits the
//! transaction. Only strict replies *before* the first DA reply are
//! consumed. Everything else that arrives on the input (keys the user typed
//! meanwhile, malformed or unrelated sequences, and every byte after the DA
//! reply) is kept, in order, to be forwarded to the session.

use crate::restore::{Baseline, Captured, ScreenSwitch};
use crate::scan::Scanner;
use crate::token::{Event, Token};
use crate::tracker::Screen;

/// Queries for the active screen: Kitty flags, alternate-screen modes
/// 1049/1047/47 (DECRQM), modifyOtherKeys (XTQMODKEYS), then DA1.
pub const ACTIVE_SCREEN_QUERY: &[u8] = b"\x1b[?u\x1b[?1049$p\x1b[?1047$p\x1b[?47$p\x1b[?4m\x1b[c";

/// Queries for the hidden screen: switch as `switch` allows (mode 47 inside
/// DECSC/DECRC, or 1049 from the main screen where the terminal lacks 47),
/// read its Kitty flags, DA1, and switch back. `None` when the hidden
/// screen cannot be visited.
pub fn hidden_screen_query(active: Screen, switch: ScreenSwitch) -> Option<Vec<u8>> {
    let (go, back) = switch.visit(active)?;
    Some([go, b"\x1b[?u\x1b[c", back].concat())
}

/// The switch back to the `active` screen that ends
/// [`hidden_screen_query`]: written again on its own when writing the query
/// failed part way (harmless when the terminal never left).
pub fn hidden_screen_return(active: Screen, switch: ScreenSwitch) -> &'static [u8] {
    switch.visit(active).map_or(b"", |(_, back)| back)
}

/// What one transaction's replies said.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CaptureReplies {
    /// Kitty keyboard flags (`CSI ? flags u`), if the terminal reported them.
    pub kitty_flags: Option<u32>,
    /// DECRQM reports `(mode, value)`: 0 unknown, 1 set, 2 reset,
    /// 3 permanently set, 4 permanently reset.
    pub modes: Vec<(u32, u32)>,
    /// modifyOtherKeys level (`CSI > 4 ; n m`), if reported.
    pub modify_other_keys: Option<u32>,
    /// True once the DA1 reply arrived.
    pub complete: bool,
}

impl CaptureReplies {
    /// The DECRQM value reported for `mode`.
    pub fn mode(&self, mode: u32) -> Option<u32> {
        self.modes.iter().find(|(m, _)| *m == mode).map(|(_, v)| *v)
    }

    /// How the hidden screen may be visited, from the DECRQM answer for
    /// mode 47.
    pub fn switch(&self) -> ScreenSwitch {
        ScreenSwitch::from_decrqm(self.mode(47))
    }

    /// A hidden screen left unvisited (it cannot be, without mode 47, from
    /// an alternate screen): its flags taken as 0, and never touched.
    pub fn unvisited() -> CaptureReplies {
        CaptureReplies {
            complete: true,
            ..CaptureReplies::default()
        }
    }

    /// The screen that was active, when the terminal reported mode 1049.
    pub fn active_screen(&self) -> Option<Screen> {
        let set = |m| matches!(self.mode(m), Some(1 | 3));
        match self.mode(1049) {
            None | Some(0) => None,
            Some(_) if set(1049) || set(1047) || set(47) => Some(Screen::Alternate),
            Some(_) => Some(Screen::Main),
        }
    }
}

/// Parses the replies of one capture transaction out of the input stream.
#[derive(Clone, Debug, Default)]
pub struct CaptureParser {
    scanner: Scanner,
    replies: CaptureReplies,
    forward: Vec<u8>,
}

impl CaptureParser {
    /// A parser waiting for the first reply.
    pub fn new() -> Self {
        CaptureParser {
            scanner: Scanner::escapes_only(),
            ..Self::default()
        }
    }

    /// Feeds bytes read from the terminal.
    pub fn feed(&mut self, input: &[u8]) {
        let (replies, forward) = (&mut self.replies, &mut self.forward);
        self.scanner
            .feed(input, |ev| take_reply(replies, forward, ev));
    }

    /// True once the DA1 reply arrived: the transaction is over.
    pub fn is_complete(&self) -> bool {
        self.replies.complete
    }

    /// Ends the transaction (on DA, or on its deadline): returns the replies
    /// and every non-reply byte, in order, including a held partial sequence.
    pub fn finish(mut self) -> (CaptureReplies, Vec<u8>) {
        let forward = &mut self.forward;
        self.scanner.flush(|ev| forward.extend_from_slice(ev.raw));
        (self.replies, self.forward)
    }
}

fn take_reply(replies: &mut CaptureReplies, forward: &mut Vec<u8>, ev: Event<'_>) {
    if replies.complete || !consume(replies, &ev.token) {
        forward.extend_from_slice(ev.raw);
    }
}

/// Records `token` when it is a strict reply of the transaction.
fn consume(replies: &mut CaptureReplies, token: &Token<'_>) -> bool {
    let Token::Csi(csi) = token else {
        return false;
    };
    let Some(params) = csi.strict_params() else {
        return false;
    };
    let values: Vec<Option<u32>> = params.iter().collect();
    match (csi.prefix(), csi.intermediates, csi.final_byte, &values[..]) {
        (Some(b'?'), b"", b'u', [Some(flags)]) => replies.kitty_flags = Some(*flags),
        (Some(b'?'), b"$", b'y', [Some(mode), Some(value)]) => {
            replies.modes.push((*mode, *value));
        }
        (Some(b'>'), b"", b'm', [Some(4)]) => replies.modify_other_keys = Some(0),
        (Some(b'>'), b"", b'm', [Some(4), Some(level)]) => {
            replies.modify_other_keys = Some(*level);
        }
        (Some(b'?'), b"", b'c', [_, ..]) => replies.complete = true,
        _ => return false,
    }
    true
}

/// The baseline from the active-screen and hidden-screen transactions, or
/// [`Baseline::Fallback`] when either did not complete or the terminal did
/// not report the alternate-screen mode. A missing Kitty or modifyOtherKeys
/// reply before DA means the terminal lacks the feature: its value is 0.
pub fn baseline_from(active: &CaptureReplies, hidden: &CaptureReplies) -> Baseline {
    if !active.complete || !hidden.complete {
        return Baseline::Fallback;
    }
    let Some(screen) = active.active_screen() else {
        return Baseline::Fallback;
    };
    let here = active.kitty_flags.unwrap_or(0);
    let there = hidden.kitty_flags.unwrap_or(0);
    let (kitty_main, kitty_alt) = match screen {
        Screen::Main => (here, there),
        Screen::Alternate => (there, here),
    };
    Baseline::Captured(Captured {
        screen,
        kitty_main,
        kitty_alt,
        modify_other_keys: active.modify_other_keys.unwrap_or(0),
        switch: active.switch(),
    })
}
