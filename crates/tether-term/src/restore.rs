//! The restore planner: the exact bytes that return the local terminal to
//! the state it was in before a remote session, whatever the remote left.
//!
//! Rules (from the interactive-mode design this grows from):
//! - the hidden screen is visited with DEC mode 47, which switches buffers
//!   without clearing or saving the cursor;
//! - `1049l` is used only when we began on the main screen and the remote
//!   left us in a 1049 alternate screen (it restores the remote-saved
//!   cursor); when we began inside an outer alternate screen and the remote
//!   left it, mode 47 returns us there: `1049h` is never sent, because it
//!   would clear the outer program's screen;
//! - the screen is repaired first, then each screen's Kitty stack is popped
//!   by the entries the remote pushed and its captured flags are set back,
//!   then modifyOtherKeys;
//! - when the capture failed, the baseline is an ordinary shell: main
//!   screen, Kitty flags 0 on both screens, modifyOtherKeys 0, and every
//!   mode is reset unconditionally.

use crate::tracker::{AltScreenMode, KittyStack, Screen, ScreenState};

/// What the local terminal looked like before the session started.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Baseline {
    /// Captured by the query transaction.
    Captured(Captured),
    /// The capture failed: assume an ordinary shell on the main screen and
    /// reset everything unconditionally.
    Fallback,
}

/// A successfully captured baseline.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Captured {
    /// The screen that was active.
    pub screen: Screen,
    /// Kitty keyboard flags of the main screen.
    pub kitty_main: u32,
    /// Kitty keyboard flags of the alternate screen.
    pub kitty_alt: u32,
    /// xterm modifyOtherKeys level.
    pub modify_other_keys: u32,
}

impl Captured {
    fn kitty(&self, screen: Screen) -> u32 {
        match screen {
            Screen::Main => self.kitty_main,
            Screen::Alternate => self.kitty_alt,
        }
    }
}

impl Baseline {
    fn resolved(&self) -> (Captured, bool) {
        match self {
            Baseline::Captured(c) => (*c, false),
            Baseline::Fallback => (Captured::default(), true),
        }
    }

    /// The screen the session starts on.
    pub fn screen(&self) -> Screen {
        self.resolved().0.screen
    }
}

/// Bytes that put both screens in the legacy keyboard baseline before the
/// remote session starts (without popping the outer program's Kitty
/// stacks), and return to the original screen. Empty for a fallback
/// baseline, whose state is unknown.
pub fn plan_setup(baseline: &Baseline) -> Vec<u8> {
    let Baseline::Captured(c) = baseline else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let set_zero = |flags: u32| -> &'static [u8] { if flags != 0 { b"\x1b[=0;1u" } else { b"" } };
    out.extend_from_slice(set_zero(c.kitty(c.screen)));
    let hidden = set_zero(c.kitty(c.screen.other()));
    visit_hidden(&mut out, c.screen, hidden);
    if c.modify_other_keys != 0 {
        out.extend_from_slice(b"\x1b[>4;0m");
    }
    out
}

/// The exact bytes that return the terminal from `state` to `baseline`.
pub fn plan_restore(baseline: &Baseline, state: &ScreenState) -> Vec<u8> {
    let (want, fallback) = baseline.resolved();
    let mut out = Vec::new();
    reset_modes(&mut out, state, fallback);
    repair_screen(&mut out, want.screen, state);
    let here = want.screen;
    out.extend_from_slice(&kitty_ops(state.kitty(here), want.kitty(here), fallback));
    let hidden = kitty_ops(
        state.kitty(here.other()),
        want.kitty(here.other()),
        fallback,
    );
    visit_hidden(&mut out, here, &hidden);
    if fallback || state.modify_other_keys != want.modify_other_keys {
        out.extend_from_slice(format!("\x1b[>4;{}m", want.modify_other_keys).as_bytes());
    }
    out
}

/// Every mode [`ScreenState::modes_on`] can report, for the fallback reset.
const ALL_MODES: [u32; 9] = [9, 1000, 1002, 1003, 1004, 1005, 1006, 1015, 2004];

fn reset_modes(out: &mut Vec<u8>, state: &ScreenState, fallback: bool) {
    let modes = if fallback {
        ALL_MODES.to_vec()
    } else {
        state.modes_on()
    };
    if modes.is_empty() {
        return;
    }
    let list: Vec<String> = modes.iter().map(u32::to_string).collect();
    out.extend_from_slice(format!("\x1b[?{}l", list.join(";")).as_bytes());
}

fn repair_screen(out: &mut Vec<u8>, want: Screen, state: &ScreenState) {
    match (want, state.screen) {
        (Screen::Main, Screen::Alternate) => {
            if state.alt_mode == Some(AltScreenMode::Save1049) {
                out.extend_from_slice(b"\x1b[?1049l");
            } else {
                out.extend_from_slice(b"\x1b[?47l");
            }
        }
        (Screen::Alternate, Screen::Main) => out.extend_from_slice(b"\x1b[?47h"),
        _ => {}
    }
}

/// Pops what the remote pushed on one screen, then sets the captured flags
/// when the base entry differs from them.
fn kitty_ops(stack: &KittyStack, want: u32, fallback: bool) -> Vec<u8> {
    let mut ops = Vec::new();
    if !stack.pushed.is_empty() {
        ops.extend_from_slice(format!("\x1b[<{}u", stack.pushed.len()).as_bytes());
    }
    if fallback || stack.base_lost || stack.base != want {
        ops.extend_from_slice(format!("\x1b[={want};1u").as_bytes());
    }
    ops
}

/// Runs `ops` on the screen that is not `here`, using mode 47 to get there
/// and back. Nothing is written when `ops` is empty.
fn visit_hidden(out: &mut Vec<u8>, here: Screen, ops: &[u8]) {
    if ops.is_empty() {
        return;
    }
    let (go, back): (&[u8], &[u8]) = match here {
        Screen::Main => (b"\x1b[?47h", b"\x1b[?47l"),
        Screen::Alternate => (b"\x1b[?47l", b"\x1b[?47h"),
    };
    out.extend_from_slice(go);
    out.extend_from_slice(ops);
    out.extend_from_slice(back);
}
