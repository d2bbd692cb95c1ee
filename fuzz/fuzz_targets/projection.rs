//! TextProjector: finished output and current line are the same whole and
//! chunked; the current line stays within the line bound; the output holds
//! no ASCII control other than `\n` and `\t` (so no escape sequence leaks);
//! and it has exactly one `\n` per LF/VT/FF control the scanner reports.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tether_term::{Scanner, TextProjector, Token};
use tether_term_fuzz::Case;

/// extra[0]: the line bound is 1 + extra[0] (1..=256 bytes).
const EXTRA: usize = 1;

fn project(chunks: &[&[u8]], max: usize) -> (String, String) {
    let mut p = TextProjector::with_max_line(max);
    let mut out = String::new();
    for c in chunks {
        p.feed(c, &mut out);
        let line = p.current_line();
        assert!(
            line.len() <= max,
            "current line {} bytes > bound {max}",
            line.len()
        );
    }
    let line = p.current_line();
    p.finish(&mut out);
    (out, line)
}

fn newlines(data: &[u8]) -> usize {
    let mut s = Scanner::new();
    let mut n = 0;
    let mut count = |e: tether_term::Event<'_>| {
        if matches!(e.token, Token::Control(b'\n' | 0x0b | 0x0c)) {
            n += 1;
        }
    };
    s.feed(data, &mut count);
    s.flush(&mut count);
    n
}

fuzz_target!(|input: &[u8]| {
    let case = Case::parse(input, EXTRA);
    let max = 1 + usize::from(case.extra[0]);
    let whole = project(&[&case.data], max);
    let parts = project(&case.chunks(), max);
    assert_eq!(parts, whole, "chunked projection differs");
    let (out, _) = whole;
    if let Some(c) = out
        .chars()
        .find(|&c| (c < ' ' && c != '\n' && c != '\t') || c == '\x7f')
    {
        panic!("control {c:?} in projected text {out:?}");
    }
    assert_eq!(
        out.matches('\n').count(),
        newlines(&case.data),
        "newline count differs from the LF/VT/FF controls"
    );
});
