//! Scanner: raw bytes round-trip, chunking invariance (adjacent Text and
//! Overflow pieces merged, as in tests/chunking.rs), the MAX_PENDING bound,
//! and per-token consistency with the raw bytes (a Csi's raw is `ESC [ ...`,
//! a string's raw is `ESC` + its introducer and holds its payload, a single
//! shift's `byte` is the byte after `ESC N`/`ESC O`), judged on the raw bytes
//! without the C0 controls and DELs a terminal runs or ignores inside the
//! ESC/CSI part of a sequence.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tether_term::{Event, MAX_PENDING, Scanner, StringKind, Token};
use tether_term_fuzz::Case;

#[derive(Debug, PartialEq)]
enum Norm {
    Text(Vec<u8>),
    Overflow(Vec<u8>),
    Other(String, Vec<u8>),
}

/// `raw` without stray C0 controls and DELs after its ESC: all of them for
/// ESC/CSI sequences, only those before the introducer for control strings.
fn without_strays(raw: &[u8], string: bool) -> Vec<u8> {
    let stray = |b: &u8| *b < 0x20 || *b == 0x7f;
    let Some((first, rest)) = raw.split_first() else {
        return Vec::new();
    };
    if *first != 0x1b {
        return raw.to_vec();
    }
    let mut clean = vec![*first];
    if string {
        let intro = rest.iter().position(|b| !stray(b)).unwrap_or(rest.len());
        clean.extend_from_slice(&rest[intro..]);
    } else {
        clean.extend(rest.iter().filter(|b| !stray(b)));
    }
    clean
}

/// Checks what one event says about its own bytes.
fn check_event(e: &Event<'_>, split_controls: bool) {
    let clean = match e.token {
        Token::Text(_) | Token::Control(_) | Token::Cancelled | Token::Overflow => e.raw.to_vec(),
        Token::Str { .. } => without_strays(e.raw, true),
        _ => without_strays(e.raw, false),
    };
    let raw = &clean[..];
    match e.token {
        Token::Text(t) => {
            assert_eq!(t, e.raw, "Text must borrow its raw bytes");
            assert!(!t.contains(&0x1b), "Text contains ESC: {raw:?}");
            if split_controls {
                assert!(
                    !t.iter().any(|&b| b < 0x20 || b == 0x7f),
                    "Text contains a C0 control or DEL with split_controls: {raw:?}"
                );
            }
        }
        Token::Control(b) => {
            assert_eq!(raw, [b], "Control raw");
            assert!(split_controls, "Control from an escapes_only scanner");
            assert!((b < 0x20 && b != 0x1b) || b == 0x7f, "Control({b:#x})");
        }
        Token::Esc {
            intermediates,
            final_byte,
        } => {
            assert_eq!(raw[0], 0x1b);
            assert_eq!(raw.last(), Some(&final_byte));
            assert!((0x30..=0x7e).contains(&final_byte));
            assert!(intermediates.iter().all(|b| (0x20..=0x2f).contains(b)));
        }
        Token::SingleShift { set, byte } => {
            assert!(raw.starts_with(if set == 2 { b"\x1bN" } else { b"\x1bO" }));
            assert_eq!(raw.get(2).copied(), byte);
        }
        Token::Csi(csi) => {
            assert!(raw.starts_with(b"\x1b["), "Csi raw {raw:?}");
            assert_eq!(raw.last(), Some(&csi.final_byte));
            assert!((0x40..=0x7e).contains(&csi.final_byte));
        }
        Token::Str { kind, payload, .. } => {
            let intro = match kind {
                StringKind::Osc => b']',
                StringKind::Dcs => b'P',
                StringKind::Apc => b'_',
                StringKind::Pm => b'^',
                StringKind::Sos => b'X',
            };
            assert_eq!(&raw[..2], [0x1b, intro]);
            assert!(raw[2..].starts_with(payload), "payload not in raw");
        }
        Token::Cancelled | Token::Overflow => {}
    }
}

fn scan(chunks: &[&[u8]], split_controls: bool) -> Vec<Norm> {
    let mut s = if split_controls {
        Scanner::new()
    } else {
        Scanner::escapes_only()
    };
    let mut out: Vec<Norm> = Vec::new();
    let mut push = |e: Event<'_>| {
        check_event(&e, split_controls);
        match (out.last_mut(), &e.token) {
            (Some(Norm::Text(t)), Token::Text(_)) => t.extend_from_slice(e.raw),
            (Some(Norm::Overflow(t)), Token::Overflow) => t.extend_from_slice(e.raw),
            (_, Token::Text(_)) => out.push(Norm::Text(e.raw.to_vec())),
            (_, Token::Overflow) => out.push(Norm::Overflow(e.raw.to_vec())),
            (_, t) => out.push(Norm::Other(format!("{t:?}"), e.raw.to_vec())),
        }
    };
    for c in chunks {
        s.feed(c, &mut push);
        assert!(s.pending() < MAX_PENDING, "scanner held {}", s.pending());
    }
    s.flush(&mut push);
    assert_eq!(s.pending(), 0, "pending after flush");
    assert!(!s.in_sequence(), "in_sequence after flush");
    out
}

fn raw_of(norm: &[Norm]) -> Vec<u8> {
    norm.iter()
        .flat_map(|n| match n {
            Norm::Text(b) | Norm::Overflow(b) | Norm::Other(_, b) => b.iter().copied(),
        })
        .collect()
}

fuzz_target!(|input: &[u8]| {
    let case = Case::parse(input, 0);
    let chunks = case.chunks();
    for split_controls in [true, false] {
        let whole = scan(&[&case.data], split_controls);
        assert_eq!(
            raw_of(&whole),
            case.data,
            "raw bytes of all events != input"
        );
        let parts = scan(&chunks, split_controls);
        assert_eq!(
            raw_of(&parts),
            case.data,
            "raw bytes of chunked events != input"
        );
        assert_eq!(
            parts, whole,
            "chunked events differ (split_controls={split_controls})"
        );
    }
});
