//! Property tests: for every component, any chunking of a stream gives the
//! same result as the whole stream; random bytes never panic and never grow
//! memory past the stated bounds.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use proptest::prelude::*;
use proptest::sample::Index;
use tether_term::keys::MAX_KEY;
use tether_term::utf8::Utf8Decoder;
use tether_term::{
    Baseline, ByteLog, CaptureParser, Captured, EscapeScanner, EscapeSet, HeadTailClip, Keyed,
    MAX_PENDING, MarkerScanner, Redactor, ResponseFilter, Scanner, Screen, ScreenTracker,
    TextProjector, Token, plan_restore,
};

mod common;

use common::{NONCE, cuts, mode_stream, split, stream};

#[derive(Debug, PartialEq)]
enum Norm {
    Text(Vec<u8>),
    Overflow(Vec<u8>),
    Other(String, Vec<u8>),
}

fn scan_norm(chunks: &[&[u8]], split_controls: bool) -> Vec<Norm> {
    let mut s = if split_controls {
        Scanner::new()
    } else {
        Scanner::escapes_only()
    };
    let mut out: Vec<Norm> = Vec::new();
    let mut push = |token: &Token<'_>, raw: &[u8]| match (out.last_mut(), token) {
        (Some(Norm::Text(t)), Token::Text(_)) => t.extend_from_slice(raw),
        (Some(Norm::Overflow(t)), Token::Overflow) => t.extend_from_slice(raw),
        (_, Token::Text(_)) => out.push(Norm::Text(raw.to_vec())),
        (_, Token::Overflow) => out.push(Norm::Overflow(raw.to_vec())),
        (_, t) => out.push(Norm::Other(format!("{t:?}"), raw.to_vec())),
    };
    for c in chunks {
        s.feed(c, |e| push(&e.token, e.raw));
        assert!(s.pending() < MAX_PENDING, "scanner held {}", s.pending());
    }
    s.flush(|e| push(&e.token, e.raw));
    out
}

fn filter(chunks: &[&[u8]]) -> Vec<u8> {
    let mut f = ResponseFilter::new();
    let mut out = Vec::new();
    for c in chunks {
        f.feed(c, &mut out);
        assert!(f.pending() < MAX_PENDING);
    }
    f.flush(&mut out);
    out
}

fn project(chunks: &[&[u8]]) -> (String, String) {
    let mut p = TextProjector::with_max_line(300);
    let mut out = String::new();
    for c in chunks {
        p.feed(c, &mut out);
        assert!(p.current_line().chars().count() < 300);
    }
    let line = p.current_line();
    p.finish(&mut out);
    (out, line)
}

fn markers(chunks: &[&[u8]]) -> Vec<tether_term::MarkerEvent> {
    let mut m = MarkerScanner::new(NONCE).unwrap();
    let mut out = Vec::new();
    for c in chunks {
        m.feed(c, &mut out);
    }
    out
}

fn capture(chunks: &[&[u8]]) -> (tether_term::CaptureReplies, Vec<u8>) {
    let mut p = CaptureParser::new();
    for c in chunks {
        p.feed(c);
    }
    p.finish()
}

fn redact(secrets: &[Vec<u8>], chunks: &[&[u8]]) -> Vec<u8> {
    let mut r = Redactor::new(secrets).unwrap();
    let longest = secrets.iter().map(Vec::len).max().unwrap_or(0);
    let mut out = Vec::new();
    for c in chunks {
        r.feed(c, &mut out);
        assert!(r.pending() < longest.max(1));
        // Only a tail that can still become a secret is held.
        let held = r.held();
        assert!(
            held.is_empty()
                || secrets
                    .iter()
                    .any(|s| s.len() > held.len() && s.starts_with(held)),
            "held {held:?}"
        );
    }
    r.finish(&mut out);
    out
}

/// Redaction with a flush after each chunk (a result boundary each time).
fn redact_flushed(secrets: &[Vec<u8>], chunks: &[&[u8]]) -> Vec<u8> {
    let mut r = Redactor::new(secrets).unwrap();
    let mut out = Vec::new();
    for c in chunks {
        r.feed(c, &mut out);
        r.flush(&mut out);
        assert_eq!(r.pending(), 0);
    }
    out
}

/// Leftmost-longest replacement, one position at a time, on the whole input.
fn redact_reference(secrets: &[Vec<u8>], data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < data.len() {
        let longest = secrets
            .iter()
            .filter(|s| data[i..].starts_with(s))
            .map(Vec::len)
            .max();
        match longest {
            Some(n) => {
                out.extend_from_slice(tether_term::redact::REDACTED.as_bytes());
                i += n;
            }
            None => {
                out.push(data[i]);
                i += 1;
            }
        }
    }
    out
}

/// Typed keys in every encoding the escape scanner reads, and noise.
fn key_stream() -> impl Strategy<Value = Vec<u8>> {
    const KEYS: &[&[u8]] = &[
        b"\r",
        b"\n",
        b"~",
        b".",
        b"?",
        b"C",
        b"#",
        b"&",
        b"\x1a",
        b"\x03",
        b"\x7f",
        b"a",
        b"\x1b",
        b"[",
        b"\x1b[13u",
        b"\x1b[13;1:3u",
        b"\x1b[96:126;2u",
        b"\x1b[96;2;126u",
        b"\x1b[46u",
        b"\x1b[57441;2u",
        b"\x1b[27;2;126~",
        b"\x1b[126;2u",
        b"\x1bOM",
        b"\x1b[A",
        b"\x1b[M !!",
        b"\x1b[200~",
    ];
    let piece = prop_oneof![
        4 => prop::sample::select(KEYS).prop_map(<[u8]>::to_vec),
        1 => prop::collection::vec(any::<u8>(), 1..6),
    ];
    prop::collection::vec(piece, 0..60).prop_map(|v| v.concat())
}

/// What an escape scanner makes of `chunks` (then flushed), adjacent
/// `Send`s joined.
fn escapes(chunks: &[&[u8]]) -> Vec<Keyed> {
    let mut s = EscapeScanner::with_escapes(Some(b'~'), EscapeSet::ALL);
    let mut out: Vec<Keyed> = Vec::new();
    let mut put = |k: Keyed| match (out.last_mut(), k) {
        (Some(Keyed::Send(a)), Keyed::Send(b)) => a.extend_from_slice(&b),
        (_, k) => out.push(k),
    };
    for c in chunks {
        s.feed(c).into_iter().for_each(&mut put);
        assert!(s.pending() < MAX_KEY, "held {}", s.pending());
    }
    s.flush().into_iter().for_each(&mut put);
    out
}

proptest! {
    #![proptest_config(common::config(400))]

    #[test]
    fn scanner_chunking_invariant(data in stream(), cuts in cuts(), split_controls in any::<bool>()) {
        let whole = scan_norm(&[&data], split_controls);
        let raw: Vec<u8> = whole.iter().flat_map(|n| match n {
            Norm::Text(b) | Norm::Overflow(b) | Norm::Other(_, b) => b.clone(),
        }).collect();
        prop_assert_eq!(&raw, &data);
        prop_assert_eq!(scan_norm(&split(&data, &cuts), split_controls), whole);
    }

    #[test]
    fn escape_scanner_chunking_invariant(data in key_stream(), cuts in cuts()) {
        prop_assert_eq!(escapes(&split(&data, &cuts)), escapes(&[&data]));
    }

    #[test]
    fn filter_chunking_invariant(data in stream(), cuts in cuts()) {
        prop_assert_eq!(filter(&split(&data, &cuts)), filter(&[&data]));
    }

    #[test]
    fn tracker_chunking_invariant(data in stream(), cuts in cuts()) {
        let mut whole = ScreenTracker::new();
        whole.written(&data);
        let mut parts = ScreenTracker::new();
        for c in split(&data, &cuts) {
            parts.written(c);
        }
        prop_assert_eq!(parts.state(), whole.state());
        prop_assert!(whole.state().kitty_main.pushed.len() <= tether_term::tracker::KITTY_STACK_MAX);
    }

    #[test]
    fn restore_plan_chunking_invariant(data in mode_stream(), cuts in cuts(), alt in any::<bool>(), kitty in 0u32..4) {
        let screen = if alt { Screen::Alternate } else { Screen::Main };
        let mut whole = ScreenTracker::starting_on(screen);
        whole.written(&data);
        let mut parts = ScreenTracker::starting_on(screen);
        for c in split(&data, &cuts) {
            parts.written(c);
        }
        prop_assert_eq!(parts.state(), whole.state());
        let captured = Baseline::Captured(Captured { screen, kitty_main: kitty, ..Captured::default() });
        for baseline in [captured, Baseline::Fallback] {
            prop_assert_eq!(plan_restore(&baseline, parts.state()), plan_restore(&baseline, whole.state()));
        }
    }

    #[test]
    fn capture_chunking_invariant(data in stream(), cuts in cuts()) {
        prop_assert_eq!(capture(&split(&data, &cuts)), capture(&[&data]));
    }

    #[test]
    fn markers_chunking_invariant(data in stream(), cuts in cuts()) {
        prop_assert_eq!(markers(&split(&data, &cuts)), markers(&[&data]));
    }

    #[test]
    fn projection_chunking_invariant(data in stream(), cuts in cuts()) {
        prop_assert_eq!(project(&split(&data, &cuts)), project(&[&data]));
    }

    #[test]
    fn utf8_decoder_matches_lossy_decoding(data in stream(), cuts in cuts()) {
        let mut d = Utf8Decoder::new();
        let mut out = String::new();
        for c in split(&data, &cuts) {
            d.decode(c, &mut |s| out.push_str(s));
        }
        d.finish(&mut |s| out.push_str(s));
        prop_assert_eq!(out, String::from_utf8_lossy(&data));
    }

    #[test]
    fn byte_log_chunking_invariant(data in stream(), cuts in cuts(), cap in 1usize..600, at in any::<Index>()) {
        let mut whole = ByteLog::new(cap).unwrap();
        whole.append(&data);
        let mut parts = ByteLog::new(cap).unwrap();
        for c in split(&data, &cuts) {
            parts.append(c);
        }
        let offset = at.index(data.len() + 2) as u64;
        prop_assert_eq!(parts.since(offset), whole.since(offset));
        let since = whole.since(0);
        prop_assert!(since.bytes.len() <= cap);
        prop_assert_eq!(since.dropped as usize + since.bytes.len(), data.len());
        prop_assert_eq!(&since.bytes[..], &data[data.len() - since.bytes.len()..]);
    }

    #[test]
    fn clip_chunking_invariant(text in "\\PC{0,200}", cuts in cuts(), head in 0usize..50, tail in 0usize..50) {
        let mut whole = HeadTailClip::new(head, tail);
        whole.push(&text);
        let mut parts = HeadTailClip::new(head, tail);
        let mut at: Vec<usize> = cuts.iter().map(|i| i.index(text.len() + 1)).filter(|a| text.is_char_boundary(*a)).collect();
        at.sort_unstable();
        let mut prev = 0;
        for a in at {
            parts.push(&text[prev..a]);
            prev = a;
        }
        parts.push(&text[prev..]);
        let got = whole.clipped();
        prop_assert_eq!(parts.clipped(), got.clone());
        prop_assert!(got.head.len() <= head && got.tail.len() <= tail);
        prop_assert!(text.starts_with(&got.head) && text.ends_with(&got.tail));
        prop_assert_eq!(got.head.len() as u64 + got.tail.len() as u64 + got.omitted, text.len() as u64);
    }

    #[test]
    fn redactor_chunking_invariant(data in stream(), cuts in cuts(), picks in prop::collection::vec((any::<Index>(), 1usize..12), 1..4)) {
        let mut secrets: Vec<Vec<u8>> = picks.iter().map(|(i, len)| {
            let start = i.index(data.len().max(1));
            data.get(start..(start + len).min(data.len())).unwrap_or(b"x").to_vec()
        }).filter(|s| !s.is_empty()).collect();
        if secrets.is_empty() { secrets.push(b"secret".to_vec()); }
        let whole = redact(&secrets, &[&data]);
        prop_assert_eq!(redact(&secrets, &split(&data, &cuts)), whole.clone());
        prop_assert_eq!(whole, redact_reference(&secrets, &data));
    }

    #[test]
    fn redactor_flush_starts_the_stream_afresh(data in stream(), cuts in cuts(), picks in prop::collection::vec((any::<Index>(), 1usize..12), 1..4)) {
        let mut secrets: Vec<Vec<u8>> = picks.iter().map(|(i, len)| {
            let start = i.index(data.len().max(1));
            data.get(start..(start + len).min(data.len())).unwrap_or(b"x").to_vec()
        }).filter(|s| !s.is_empty()).collect();
        if secrets.is_empty() { secrets.push(b"secret".to_vec()); }
        let chunks = split(&data, &cuts);
        let expected: Vec<u8> = chunks.iter().flat_map(|c| redact_reference(&secrets, c)).collect();
        prop_assert_eq!(redact_flushed(&secrets, &chunks), expected);
    }

    #[test]
    fn random_bytes_never_panic(data in prop::collection::vec(any::<u8>(), 0..2000), cuts in cuts()) {
        let chunks = split(&data, &cuts);
        let _ = scan_norm(&chunks, true);
        let _ = filter(&chunks);
        let _ = project(&chunks);
        let _ = markers(&chunks);
        let _ = capture(&chunks);
        let mut t = ScreenTracker::new();
        for c in &chunks { t.written(c); }
        let _ = tether_term::plan_restore(&tether_term::Baseline::Fallback, t.state());
    }
}
