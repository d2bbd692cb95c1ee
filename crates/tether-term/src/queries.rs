//! The query filter: removes terminal *queries* (and tether's own marks)
//! from output bound for a terminal that must not answer them.
//!
//! A person attached to a session watches output whose queries the
//! session's headless emulator has already answered. Were they to reach the
//! person's terminal too, it would answer again, and its replies would
//! arrive as typed input, where they look like keys (a cursor position
//! report `CSI 1 ; 2 R` is also Shift-F3). So the queries stop here, and
//! what the person types is passed on whole.
//!
//! Removed: device attributes (`CSI c`, `CSI > c`, `CSI = c`), device
//! status and cursor position requests (`CSI 5 n`, `CSI 6 n`, `CSI ? 6 n`
//! …), mode requests (DECRQM, `CSI (?) Ps $ p`), XTVERSION (`CSI > q`),
//! the Kitty keyboard flags query (`CSI ? u`), the modifyOtherKeys query
//! (`CSI ? 4 m`), window reports (`CSI 11…21 t`), DECRQSS (`DCS $ q`) and
//! XTGETTCAP (`DCS + q`), colour and clipboard queries (`OSC 4 ; n ; ?`,
//! `OSC 10…19 ; ?`, `OSC 52 ; c ; ?`), and the engine's marks
//! (`OSC 6973 ; …`). Everything else passes as it came.

use crate::scan::Scanner;
use crate::token::{Csi, DcsHeader, Event, StringKind, Token};

/// Streaming filter from a session's output to a watching terminal.
#[derive(Clone, Debug, Default)]
pub struct QueryFilter {
    scanner: Scanner,
    dropped: u64,
}

impl QueryFilter {
    /// A filter in ground state.
    pub fn new() -> Self {
        QueryFilter {
            scanner: Scanner::escapes_only(),
            dropped: 0,
        }
    }

    /// Filters one chunk, appending the bytes to keep to `out`. Bytes of an
    /// unfinished sequence are held until it ends (at most
    /// [`MAX_PENDING`](crate::MAX_PENDING)).
    pub fn feed(&mut self, input: &[u8], out: &mut Vec<u8>) {
        let dropped = &mut self.dropped;
        self.scanner.feed(input, |ev| keep(ev, out, dropped));
    }

    /// Releases a held partial sequence, unchanged.
    pub fn flush(&mut self, out: &mut Vec<u8>) {
        self.scanner.flush(|ev| out.extend_from_slice(ev.raw));
    }

    /// Bytes held as an unfinished sequence.
    pub fn pending(&self) -> usize {
        self.scanner.pending()
    }

    /// How many sequences were removed so far.
    pub fn dropped(&self) -> u64 {
        self.dropped
    }
}

fn keep(ev: Event<'_>, out: &mut Vec<u8>, dropped: &mut u64) {
    if is_query(&ev.token) {
        *dropped += 1;
    } else {
        out.extend_from_slice(ev.raw);
    }
}

/// True when `token` asks the terminal for a reply, or is a tether mark.
pub fn is_query(token: &Token<'_>) -> bool {
    match token {
        Token::Csi(csi) => is_csi_query(csi),
        Token::Str {
            kind: StringKind::Dcs,
            payload,
            ..
        } => DcsHeader::parse(payload).is_some_and(|h| {
            matches!((h.intermediates, h.final_byte), (b"$" | b"+", b'q')) && h.params.is_empty()
        }),
        Token::Str {
            kind: StringKind::Osc,
            payload,
            ..
        } => is_osc_query(payload),
        _ => false,
    }
}

fn is_csi_query(csi: &Csi<'_>) -> bool {
    let Some(params) = csi.strict_params() else {
        return false;
    };
    let first = params.iter().next().flatten();
    match (csi.prefix(), csi.intermediates, csi.final_byte) {
        // DA1, DA2, DA3 (`CSI c`, `CSI 0 c`, `CSI > c`, `CSI = c`).
        (None | Some(b'>' | b'='), b"", b'c') => matches!(first, None | Some(0)),
        // DSR: status, cursor position, and the DEC private reports.
        (None, b"", b'n') => matches!(first, Some(5 | 6)),
        (Some(b'?'), b"", b'n') => first.is_some(),
        // DECRQM, ANSI and DEC private.
        (None | Some(b'?'), b"$", b'p') => params.len() == 1,
        // XTVERSION.
        (Some(b'>'), b"", b'q') => matches!(first, None | Some(0)),
        // Kitty keyboard flags query.
        (Some(b'?'), b"", b'u') => params.is_empty(),
        // modifyOtherKeys (and other key-modifier) queries.
        (Some(b'?'), b"", b'm') => params.len() == 1,
        // XTWINOPS reports: sizes, positions, state, titles.
        (None, b"", b't') => matches!(first, Some(11..=21)) && params.len() == 1,
        _ => false,
    }
}

fn is_osc_query(payload: &[u8]) -> bool {
    let mut parts = payload.split(|b| *b == b';');
    match parts.next() {
        // tether's own marks never reach a person.
        Some(b"6973") => true,
        Some(b"4") => {
            // `OSC 4 ; n ; ? (; n ; ?)*`: any `?` asks.
            parts.skip(1).step_by(2).any(|spec| spec == b"?")
        }
        Some(n) if is_dynamic_colour(n) => parts.any(|spec| spec == b"?"),
        Some(b"52") => parts.nth(1).is_some_and(|data| data == b"?"),
        _ => false,
    }
}

/// `OSC 10` … `OSC 19`: the dynamic colours.
fn is_dynamic_colour(n: &[u8]) -> bool {
    matches!(n, [b'1', b'0'..=b'9'])
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn filtered(input: &[u8]) -> Vec<u8> {
        let mut f = QueryFilter::new();
        let mut out = Vec::new();
        f.feed(input, &mut out);
        f.flush(&mut out);
        out
    }

    #[test]
    fn queries_and_marks_go_everything_else_stays() {
        let queries: &[&[u8]] = &[
            b"\x1b[c",
            b"\x1b[0c",
            b"\x1b[>c",
            b"\x1b[=c",
            b"\x1b[6n",
            b"\x1b[5n",
            b"\x1b[?6n",
            b"\x1b[?1049$p",
            b"\x1b[4$p",
            b"\x1b[>q",
            b"\x1b[?u",
            b"\x1b[?4m",
            b"\x1b[14t",
            b"\x1bP$qm\x1b\\",
            b"\x1bP+q544e\x1b\\",
            b"\x1b]4;1;?\x07",
            b"\x1b]11;?\x1b\\",
            b"\x1b]52;c;?\x07",
            b"\x1b]6973;0123456789abcdef0123456789abcdef;end;exit=0\x07",
        ];
        for q in queries {
            assert_eq!(filtered(&[b"a", *q, b"b"].concat()), b"ab", "{q:?}");
        }
        let kept: &[&[u8]] = &[
            b"\x1b[1;31m",
            b"\x1b[2J",
            b"\x1b[?1049h",
            b"\x1b[>1u",
            b"\x1b[<u",
            b"\x1b[>4;2m",
            b"\x1b[8;24;80t",
            b"\x1b]0;title\x07",
            b"\x1b]11;#000000\x07",
            b"\x1b]52;c;aGk=\x07",
            b"\x1b]8;;http://x\x07",
            b"\x1b]133;A\x07",
            b"\x1bPq#0;2;0;0;0\x1b\\",
            b"\x1b[?25l",
        ];
        for k in kept {
            assert_eq!(filtered(k), *k, "{k:?}");
        }
    }

    #[test]
    fn chunking_does_not_matter() {
        let stream = b"x\x1b[6ny\x1b]6973;abc;end\x07z\x1b[1mw\x1b[?u".to_vec();
        let whole = filtered(&stream);
        assert_eq!(whole, b"xyz\x1b[1mw");
        for cut in 0..stream.len() {
            let mut f = QueryFilter::new();
            let mut out = Vec::new();
            f.feed(&stream[..cut], &mut out);
            f.feed(&stream[cut..], &mut out);
            f.flush(&mut out);
            assert_eq!(out, whole, "cut at {cut}");
        }
    }
}
