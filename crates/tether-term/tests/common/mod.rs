//! Stream generators shared by the property tests.

#![allow(dead_code)]

use proptest::prelude::*;
use proptest::sample::Index;
use tether_term::MAX_PENDING;

pub const NONCE: &str = "0123456789abcdef0123";

/// Pieces that make streams escape-heavy and full of edge cases.
pub const VOCAB: &[&[u8]] = &[
    b"\x1b",
    b"\x1b[",
    b"\x1b]",
    b"\x1bP",
    b"\x1b_",
    b"\x1b^",
    b"\x1bX",
    b"\x1bO",
    b"\x1b\\",
    b"\x07",
    b"\x18",
    b"\x1a",
    b"\r",
    b"\n",
    b"\r\n",
    b"\x08",
    b"\t",
    b"\x9b",
    b"\xe2\x82\xac",
    b"\xf0\x9f\xa6\x80",
    b"\xff",
    b"\xc3",
    b"\x1b[?1049h",
    b"\x1b[?1049l",
    b"\x1b[?47h",
    b"\x1b[?2004h",
    b"\x1b[?1000;1006h",
    b"\x1b[>15u",
    b"\x1b[<u",
    b"\x1b[=5;2u",
    b"\x1b[>4;2m",
    b"\x1b[?62;22c",
    b"\x1b[>41;380;0c",
    b"\x1b[24;80R",
    b"\x1b[?2004;2$y",
    b"\x1b[?7u",
    b"\x1bP1+r544e=78\x1b\\",
    b"\x1bP!|00\x1b\\",
    b"\x1bP1$r0m\x1b\\",
    b"\x1b]11;rgb:0000/0000/0000\x07",
    b"\x1b]52;c;aGk=\x07",
    b"\x1b]0;t\x1b\\",
    b"\x1b[K",
    b"\x1b[3D",
    b"\x1b[1;31m",
    b"\x1b]133;D;1\x07",
    b"\x1b]6973;0123456789abcdef0123;end;exit=0\x07",
    b"hello",
    b"secret",
    b"sec",
    b"ret",
    b"\x1bc",
];

/// Sequences that change what the restore planner undoes, and text.
pub const MODE_VOCAB: &[&[u8]] = &[
    b"\x1b[?1049h",
    b"\x1b[?1049l",
    b"\x1b[?47h",
    b"\x1b[?47l",
    b"\x1b[?1h",
    b"\x1b[?1l",
    b"\x1b=",
    b"\x1b>",
    b"\x1b[?25l",
    b"\x1b[?25h",
    b"\x1b[?2004h",
    b"\x1b[?9h",
    b"\x1b[?1000h",
    b"\x1b[?1002h",
    b"\x1b[?1003h",
    b"\x1b[?1000l",
    b"\x1b[?1005h",
    b"\x1b[?1006h",
    b"\x1b[?1006l",
    b"\x1b[?6h",
    b"\x1b[?6l",
    b"\x1b[?7l",
    b"\x1b[4h",
    b"\x1b[?5h",
    b"\x1b[3;10r",
    b"\x1b[r",
    b"\x1b7",
    b"\x1b8",
    b"\x1b[s",
    b"\x1b[u",
    b"\x1b[1m",
    b"\x1b[3;4;7m",
    b"\x1b[38;5;1;48;2;1;2;3m",
    b"\x1b[0m",
    b"\x1b[m",
    b"\x1b[22m",
    b"\x1b[2 q",
    b"\x1b[6 q",
    b"\x1b[0 q",
    b"\x1b(0",
    b"\x1b)0",
    b"\x0e",
    b"\x0f",
    b"\x1b[5;7H",
    b"text",
    b"\r\n",
    b"\x1bc",
    b"\x1b[!p",
];

/// Streams of escape-heavy pieces, the modes the restore planner undoes,
/// and random bytes.
pub fn mode_stream() -> impl Strategy<Value = Vec<u8>> {
    let piece = prop_oneof![
        2 => prop::sample::select(VOCAB).prop_map(<[u8]>::to_vec),
        3 => prop::sample::select(MODE_VOCAB).prop_map(<[u8]>::to_vec),
        1 => prop::collection::vec(any::<u8>(), 1..8),
    ];
    prop::collection::vec(piece, 0..80).prop_map(|v| v.concat())
}

pub fn stream() -> impl Strategy<Value = Vec<u8>> {
    let piece = prop_oneof![
        3 => prop::sample::select(VOCAB).prop_map(<[u8]>::to_vec),
        2 => prop::collection::vec(any::<u8>(), 1..8),
        1 => (0usize..2).prop_map(|_| vec![b'A'; MAX_PENDING / 3]),
    ];
    prop::collection::vec(piece, 0..80).prop_map(|v| v.concat())
}

pub fn cuts() -> impl Strategy<Value = Vec<Index>> {
    prop::collection::vec(any::<Index>(), 0..12)
}

/// Splits `data` at the given points (sorted, deduplicated).
pub fn split<'a>(data: &'a [u8], cuts: &[Index]) -> Vec<&'a [u8]> {
    let mut at: Vec<usize> = cuts.iter().map(|i| i.index(data.len() + 1)).collect();
    at.sort_unstable();
    at.dedup();
    let mut out = Vec::new();
    let mut prev = 0;
    for a in at {
        out.push(&data[prev..a]);
        prev = a;
    }
    out.push(&data[prev..]);
    out
}

/// `default` cases, or `PROPTEST_CASES` when set (for long runs by hand).
pub fn config(default: u32) -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default);
    ProptestConfig::with_cases(cases)
}
