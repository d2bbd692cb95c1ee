//! The response filter: removes terminal *replies* that leak into a remote
//! or child program's output, and nothing else.
//!
//! A reply is what a terminal sends *to* a program when asked (device
//! attributes, cursor position, mode reports, colours, capabilities). When
//! one shows up in the output stream it was echoed back by something, and
//! writing it to the local terminal would print garbage or change state. Every
//! query and every write passes through: clipboard writes (OSC 52), colour
//! sets and `?` queries, XTGETTCAP queries, titles, hyperlinks, sixel and
//! other DCS, and all SGR and cursor sequences.

use crate::scan::Scanner;
use crate::token::{Csi, DcsHeader, Event, StringKind, Token};

/// Streaming filter from program output to the local terminal.
///
/// Bytes of an unfinished sequence are held (at most
/// [`MAX_PENDING`](crate::MAX_PENDING)) until the sequence ends; a sequence
/// that grows past that bound is released as-is, and [`flush`](Self::flush)
/// releases whatever is held (for example a lone trailing ESC).
#[derive(Clone, Debug, Default)]
pub struct ResponseFilter {
    scanner: Scanner,
    dropped: u64,
    /// Keep what a key can also send: a cursor position report has the
    /// shape of F1-F4 with modifiers (`CSI 1 ; 2 R` is Shift-F3).
    keys: bool,
}

impl ResponseFilter {
    /// A filter in ground state.
    pub fn new() -> Self {
        ResponseFilter {
            scanner: Scanner::escapes_only(),
            dropped: 0,
            keys: false,
        }
    }

    /// A filter for what a person types into a terminal that asked no
    /// cursor position of its own: replies are dropped, but nothing a key
    /// can send (so `CSI r ; c R`, which is also F1-F4 with modifiers,
    /// passes).
    pub fn for_typed_input() -> Self {
        ResponseFilter {
            keys: true,
            ..Self::new()
        }
    }

    /// Filters one chunk, appending the bytes to keep to `out`.
    pub fn feed(&mut self, input: &[u8], out: &mut Vec<u8>) {
        let (dropped, keys) = (&mut self.dropped, self.keys);
        self.scanner
            .feed(input, |ev| keep_or_drop(ev, out, dropped, keys));
    }

    /// Releases any held partial sequence into `out`, unchanged.
    pub fn flush(&mut self, out: &mut Vec<u8>) {
        self.scanner.flush(|ev| out.extend_from_slice(ev.raw));
    }

    /// Bytes currently held back as an unfinished sequence.
    pub fn pending(&self) -> usize {
        self.scanner.pending()
    }

    /// How many reply sequences have been removed so far.
    pub fn replies_dropped(&self) -> u64 {
        self.dropped
    }
}

fn keep_or_drop(ev: Event<'_>, out: &mut Vec<u8>, dropped: &mut u64, keys: bool) {
    let key_shaped = keys && matches!(&ev.token, Token::Csi(c) if c.final_byte == b'R');
    if is_reply(&ev.token) && !key_shaped {
        *dropped += 1;
    } else {
        out.extend_from_slice(ev.raw);
    }
}

/// True when `token` is a terminal reply that must not reach the terminal.
pub fn is_reply(token: &Token<'_>) -> bool {
    match token {
        Token::Csi(csi) => is_csi_reply(csi),
        Token::Str {
            kind: StringKind::Dcs,
            payload,
            ..
        } => is_dcs_reply(payload),
        Token::Str {
            kind: StringKind::Osc,
            payload,
            ..
        } => is_osc_colour_reply(payload),
        _ => false,
    }
}

fn is_csi_reply(csi: &Csi<'_>) -> bool {
    if !matches!(csi.final_byte, b'c' | b'R' | b'y' | b'u') {
        return false;
    }
    let Some(params) = csi.strict_params() else {
        return false;
    };
    let prefix = csi.prefix();
    match (prefix, csi.intermediates, csi.final_byte) {
        // DA1 reply `CSI ? Ps ; ... c` (a query never carries `?`).
        (Some(b'?'), b"", b'c') => !params.is_empty(),
        // DA2 reply `CSI > Pp ; Pv ; Pc c`; the query is `CSI > c` / `CSI > 0 c`.
        (Some(b'>'), b"", b'c') => params.len() >= 2,
        // Cursor position report `CSI r ; c R`, DECXCPR `CSI ? r ; c (; p) R`.
        (None, b"", b'R') => params.len() == 2,
        (Some(b'?'), b"", b'R') => matches!(params.len(), 2 | 3),
        // DECRQM reply `CSI (?) Ps ; Pm $ y`.
        (None | Some(b'?'), b"$", b'y') => params.len() == 2,
        // Kitty keyboard flags reply `CSI ? flags u`; the query is `CSI ? u`.
        (Some(b'?'), b"", b'u') => params.len() == 1 && params.iter().next().flatten().is_some(),
        _ => false,
    }
}

fn is_dcs_reply(payload: &[u8]) -> bool {
    let Some(h) = DcsHeader::parse(payload) else {
        return false;
    };
    match (h.params, h.intermediates, h.final_byte) {
        // XTGETTCAP reply `DCS 1 + r …` or `DCS 0 + r`; the query is `DCS + q`.
        (b"0" | b"1", b"+", b'r') => true,
        // DECRQSS reply `DCS 1 $ r …` (and the invalid-request `DCS 0 $ r`).
        (b"0" | b"1", b"$", b'r') => true,
        // DA3 reply `DCS ! | unit-id ST`.
        (b"", b"!", b'|') => true,
        // XTVERSION reply `DCS > | name(version) ST`; the query is `CSI > q`.
        (b">", b"", b'|') => true,
        _ => false,
    }
}

/// OSC 4/10/11/12 colour *replies*: `OSC 4 ; n ; rgb:R/G/B` or
/// `OSC 1x ; rgb:R/G/B` where each channel is exactly four hex digits, the
/// form every mainstream terminal replies with. A set such as `#102030` or
/// `rgb:10/20/30`, and a `?` query, pass through. (A program that *sets* a
/// colour in the 16-bit reply form is indistinguishable from a reply; it is
/// treated as one, which only costs that redundant set.)
fn is_osc_colour_reply(payload: &[u8]) -> bool {
    let mut parts = payload.split(|b| *b == b';');
    let spec = match parts.next() {
        Some(b"4") => match (parts.next(), parts.next()) {
            (Some(index), Some(spec)) if crate::token::parse_u32(index).is_some() => spec,
            _ => return false,
        },
        Some(b"10" | b"11" | b"12") => match parts.next() {
            Some(spec) => spec,
            None => return false,
        },
        _ => return false,
    };
    parts.next().is_none() && is_rgb16(spec)
}

fn is_rgb16(spec: &[u8]) -> bool {
    let Some(chans) = spec.strip_prefix(b"rgb:") else {
        return false;
    };
    let mut n = 0;
    for chan in chans.split(|b| *b == b'/') {
        if chan.len() != 4 || !chan.iter().all(u8::is_ascii_hexdigit) {
            return false;
        }
        n += 1;
    }
    n == 3
}
