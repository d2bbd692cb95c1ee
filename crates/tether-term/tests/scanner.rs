//! Hand-written cases for the scanner: every sequence type, terminators,
//! fragmentation, bounds.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use tether_term::{Csi, MAX_PENDING, Scanner, StringKind, Terminator, Token};

/// An owned copy of an event, for whole-list assertions.
#[derive(Debug, PartialEq, Eq)]
enum Ev {
    Text(Vec<u8>),
    Control(u8),
    Esc(Vec<u8>, u8),
    Ss(u8, Option<u8>),
    Csi(Vec<u8>, Vec<u8>, u8, bool),
    Str(StringKind, Vec<u8>, Terminator),
    Cancelled(Vec<u8>),
    Overflow(Vec<u8>),
}

fn own(token: &Token<'_>, raw: &[u8]) -> Ev {
    match *token {
        Token::Text(t) => Ev::Text(t.to_vec()),
        Token::Control(c) => Ev::Control(c),
        Token::Esc {
            intermediates,
            final_byte,
        } => Ev::Esc(intermediates.to_vec(), final_byte),
        Token::SingleShift { set, byte } => Ev::Ss(set, byte),
        Token::Csi(Csi {
            params,
            intermediates,
            final_byte,
            malformed,
        }) => Ev::Csi(
            params.to_vec(),
            intermediates.to_vec(),
            final_byte,
            malformed,
        ),
        Token::Str {
            kind,
            payload,
            terminator,
        } => Ev::Str(kind, payload.to_vec(), terminator),
        Token::Cancelled => Ev::Cancelled(raw.to_vec()),
        Token::Overflow => Ev::Overflow(raw.to_vec()),
    }
}

fn scan_chunks(chunks: &[&[u8]]) -> (Vec<Ev>, Vec<u8>) {
    let mut s = Scanner::new();
    let mut evs = Vec::new();
    let mut raw = Vec::new();
    for c in chunks {
        s.feed(c, |e| {
            raw.extend_from_slice(e.raw);
            evs.push(own(&e.token, e.raw));
        });
    }
    s.flush(|e| {
        raw.extend_from_slice(e.raw);
        evs.push(own(&e.token, e.raw));
    });
    (evs, raw)
}

fn scan(bytes: &[u8]) -> Vec<Ev> {
    let (evs, raw) = scan_chunks(&[bytes]);
    assert_eq!(raw, bytes, "raw spans must reassemble the input");
    evs
}

fn csi(p: &str, i: &str, f: u8) -> Ev {
    Ev::Csi(p.as_bytes().to_vec(), i.as_bytes().to_vec(), f, false)
}

#[test]
fn text_and_c0_controls() {
    assert_eq!(
        scan(b"ab\r\ncd\x07\x08\x7f"),
        vec![
            Ev::Text(b"ab".to_vec()),
            Ev::Control(b'\r'),
            Ev::Control(b'\n'),
            Ev::Text(b"cd".to_vec()),
            Ev::Control(0x07),
            Ev::Control(0x08),
            Ev::Control(0x7f),
        ]
    );
}

#[test]
fn csi_parts() {
    assert_eq!(scan(b"\x1b[1;31m"), vec![csi("1;31", "", b'm')]);
    assert_eq!(scan(b"\x1b[?1049h"), vec![csi("?1049", "", b'h')]);
    assert_eq!(scan(b"\x1b[?2004$p"), vec![csi("?2004", "$", b'p')]);
    assert_eq!(scan(b"\x1b[ q"), vec![csi("", " ", b'q')]);
    // A parameter after an intermediate is malformed but still one sequence.
    assert_eq!(
        scan(b"\x1b[1$2p"),
        vec![Ev::Csi(b"1".to_vec(), b"$".to_vec(), b'p', true)]
    );
    // A C0 control inside a CSI stays in its span, out of its parameters.
    assert_eq!(scan(b"\x1b[1\n2m"), vec![csi("12", "", b'm')]);
}

#[test]
fn esc_and_single_shifts() {
    assert_eq!(
        scan(b"\x1b7\x1b8"),
        vec![Ev::Esc(vec![], b'7'), Ev::Esc(vec![], b'8')]
    );
    assert_eq!(scan(b"\x1b(B"), vec![Ev::Esc(b"(".to_vec(), b'B')]);
    assert_eq!(scan(b"\x1bc"), vec![Ev::Esc(vec![], b'c')]);
    assert_eq!(
        scan(b"\x1bNa\x1bOP"),
        vec![Ev::Ss(2, Some(b'a')), Ev::Ss(3, Some(b'P'))]
    );
    assert_eq!(scan(b"\x1bO\r"), vec![Ev::Ss(3, None), Ev::Control(b'\r')]);
}

#[test]
fn every_string_type_with_both_terminators() {
    let kinds = [
        (b']', StringKind::Osc),
        (b'P', StringKind::Dcs),
        (b'_', StringKind::Apc),
        (b'^', StringKind::Pm),
        (b'X', StringKind::Sos),
    ];
    for (intro, kind) in kinds {
        let st = [b"\x1b".as_slice(), &[intro], b"pay\x1bload", b"\x1b\\"].concat();
        // `ESC l` inside the payload aborts the string and starts a new ESC.
        assert_eq!(
            scan(&st),
            vec![
                Ev::Str(kind, b"pay".to_vec(), Terminator::Aborted),
                Ev::Esc(vec![], b'l'),
                Ev::Text(b"oad".to_vec()),
                Ev::Esc(vec![], b'\\'),
            ],
            "{kind:?}"
        );
        let st = [b"\x1b".as_slice(), &[intro], b"payload", b"\x1b\\"].concat();
        assert_eq!(
            scan(&st),
            vec![Ev::Str(kind, b"payload".to_vec(), Terminator::St)]
        );
        // BEL ends only OSC; elsewhere it is payload.
        let bel = [b"\x1b".as_slice(), &[intro], b"a\x07b\x1b\\"].concat();
        let want = if kind == StringKind::Osc {
            vec![
                Ev::Str(kind, b"a".to_vec(), Terminator::Bel),
                Ev::Text(b"b".to_vec()),
                Ev::Esc(vec![], b'\\'),
            ]
        } else {
            vec![Ev::Str(kind, b"a\x07b".to_vec(), Terminator::St)]
        };
        assert_eq!(scan(&bel), want, "{kind:?}");
    }
}

#[test]
fn look_alikes_inside_strings_are_payload() {
    assert_eq!(
        scan(b"\x1b]0;[?1049h\x07"),
        vec![Ev::Str(
            StringKind::Osc,
            b"0;[?1049h".to_vec(),
            Terminator::Bel
        )]
    );
}

#[test]
fn fragmented_terminators_and_sequences() {
    let whole = b"x\x1b]52;c;aGk=\x1b\\y\x1b[?25l";
    let want = scan(whole);
    for cut in 1..whole.len() {
        let (a, b) = whole.split_at(cut);
        let (evs, raw) = scan_chunks(&[a, b]);
        assert_eq!(raw, whole);
        assert_eq!(merge_text(evs), merge_text(scan(whole)), "cut at {cut}");
    }
    assert_eq!(want.len(), 4);
}

fn merge_text(evs: Vec<Ev>) -> Vec<Ev> {
    let mut out: Vec<Ev> = Vec::new();
    for e in evs {
        match (out.last_mut(), e) {
            (Some(Ev::Text(a)), Ev::Text(b)) => a.extend(b),
            (_, e) => out.push(e),
        }
    }
    out
}

#[test]
fn raw_c1_bytes_are_data() {
    // 0x9b is CSI in 8-bit form and also a UTF-8 continuation byte ("›").
    assert_eq!(
        scan("a›b\u{9b}".as_bytes()),
        vec![Ev::Text("a›b\u{9b}".as_bytes().to_vec())]
    );
    assert_eq!(
        scan(b"\x9b31m\x90q\x9c"),
        vec![Ev::Text(b"\x9b31m\x90q\x9c".to_vec())]
    );
}

#[test]
fn cancelled_sequences_keep_their_bytes() {
    assert_eq!(
        scan(b"\x1b[12\x18x"),
        vec![
            Ev::Cancelled(b"\x1b[12\x18".to_vec()),
            Ev::Text(b"x".to_vec())
        ]
    );
    assert_eq!(
        scan(b"\x1b]0;t\x1ax"),
        vec![
            Ev::Cancelled(b"\x1b]0;t\x1a".to_vec()),
            Ev::Text(b"x".to_vec())
        ]
    );
    assert_eq!(
        scan("\x1b[é".as_bytes()),
        vec![
            Ev::Cancelled(b"\x1b[".to_vec()),
            Ev::Text("é".as_bytes().to_vec())
        ]
    );
    assert_eq!(
        scan(b"\x1b\x1b[m"),
        vec![Ev::Cancelled(b"\x1b".to_vec()), csi("", "", b'm')]
    );
}

#[test]
fn controls_inside_a_sequence_are_kept_in_its_span_and_left_out_of_its_parts() {
    // As in xterm and vte: the control runs, the sequence goes on. (The
    // fuzz target found the parts read at fixed offsets when strays were
    // present.)
    assert_eq!(
        scan(b"\x1b\x01O\x06"),
        vec![Ev::Ss(3, None), Ev::Control(0x06)]
    );
    assert_eq!(scan(b"\x1b\x7f[m"), vec![csi("", "", b'm')]);
    assert_eq!(scan(b"\x1b\x01[?1049h"), vec![csi("?1049", "", b'h')]);
    assert_eq!(scan(b"\x1b[?10\r49h"), vec![csi("?1049", "", b'h')]);
    assert_eq!(scan(b"\x1b(\x0bB"), vec![Ev::Esc(b"(".to_vec(), b'B')]);
    assert_eq!(
        scan(b"\x1b\x01]0;t\tx\x07"),
        vec![Ev::Str(
            StringKind::Osc,
            b"0;t\tx".to_vec(),
            Terminator::Bel
        )]
    );
}

#[test]
fn lone_trailing_esc_is_held_then_released() {
    let mut s = Scanner::new();
    let mut got = Vec::new();
    s.feed(b"abc\x1b", |e| got.push(own(&e.token, e.raw)));
    assert_eq!(got, vec![Ev::Text(b"abc".to_vec())]);
    assert_eq!(s.pending(), 1);
    s.feed(b"[m", |e| got.push(own(&e.token, e.raw)));
    assert_eq!(got.last(), Some(&csi("", "", b'm')));
    s.feed(b"\x1b", |e| got.push(own(&e.token, e.raw)));
    s.flush(|e| got.push(own(&e.token, e.raw)));
    assert_eq!(got.last(), Some(&Ev::Cancelled(b"\x1b".to_vec())));
    assert_eq!(s.pending(), 0);
}

#[test]
fn endless_sequences_are_released_at_the_bound() {
    let mut input = b"\x1b]52;c;".to_vec();
    input.extend(std::iter::repeat_n(b'A', 3 * MAX_PENDING));
    input.extend(b"\x07after");
    let mut s = Scanner::new();
    let mut raw = Vec::new();
    let mut max_pending = 0;
    let mut kinds = Vec::new();
    for chunk in input.chunks(100) {
        s.feed(chunk, |e| {
            raw.extend_from_slice(e.raw);
            kinds.push(own(&e.token, e.raw));
        });
        max_pending = max_pending.max(s.pending());
    }
    assert_eq!(raw, input, "nothing dropped");
    assert!(max_pending < MAX_PENDING, "held {max_pending}");
    assert!(matches!(kinds[0], Ev::Overflow(_)));
    // The terminator ends the overflowed string; text after it is text again.
    let kinds = merge_text(kinds);
    assert_eq!(kinds.last(), Some(&Ev::Text(b"after".to_vec())));
    let overflow: usize = kinds
        .iter()
        .map(|k| if let Ev::Overflow(b) = k { b.len() } else { 0 })
        .sum();
    assert_eq!(overflow, input.len() - 5);
}
