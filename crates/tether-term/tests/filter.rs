//! Hand-written cases for the response filter, both directions: each reply
//! is removed, each query and write of the same family is kept.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use tether_term::{MAX_PENDING, ResponseFilter};

fn filter(bytes: &[u8]) -> Vec<u8> {
    let mut f = ResponseFilter::new();
    let mut out = Vec::new();
    f.feed(bytes, &mut out);
    f.flush(&mut out);
    out
}

/// Replies, each with the name of what it answers.
const REPLIES: &[(&str, &[u8])] = &[
    ("XTGETTCAP reply (valid)", b"\x1bP1+r544e=787465726d\x1b\\"),
    ("XTGETTCAP reply (invalid)", b"\x1bP0+r\x1b\\"),
    (
        "XTGETTCAP reply BEL-free, two caps",
        b"\x1bP1+r544e=78;436f=323536\x1b\\",
    ),
    ("DA1 reply", b"\x1b[?62;22c"),
    ("DA1 reply short", b"\x1b[?1;2c"),
    ("DA2 reply", b"\x1b[>41;380;0c"),
    ("DA2 reply two params", b"\x1b[>0;276c"),
    ("DA3 reply", b"\x1bP!|7E565445\x1b\\"),
    ("DECRQSS reply", b"\x1bP1$r0;1m\x1b\\"),
    ("DECRQSS invalid reply", b"\x1bP0$r\x1b\\"),
    ("cursor position report", b"\x1b[24;80R"),
    ("DECXCPR report", b"\x1b[?24;80;1R"),
    ("DECRQM private reply", b"\x1b[?2004;2$y"),
    ("DECRQM ANSI reply", b"\x1b[4;2$y"),
    ("Kitty flags reply", b"\x1b[?15u"),
    ("Kitty flags reply zero", b"\x1b[?0u"),
    ("OSC 4 reply", b"\x1b]4;1;rgb:cdcd/0000/0000\x1b\\"),
    ("OSC 10 reply", b"\x1b]10;rgb:ffff/ffff/ffff\x07"),
    ("OSC 11 reply", b"\x1b]11;rgb:0000/0000/0000\x1b\\"),
    ("OSC 12 reply", b"\x1b]12;rgb:aaaa/bbbb/cccc\x07"),
    ("XTVERSION reply", b"\x1bP>|xterm(388)\x1b\\"),
];

/// Queries and writes that must pass unchanged.
const KEPT: &[(&str, &[u8])] = &[
    ("XTGETTCAP query", b"\x1bP+q544e;436f\x1b\\"),
    ("DA1 query", b"\x1b[c"),
    ("DA1 query 0", b"\x1b[0c"),
    ("DA2 query", b"\x1b[>c"),
    ("DA2 query 0", b"\x1b[>0c"),
    ("DA3 query", b"\x1b[=c"),
    ("DECRQSS query", b"\x1bP$qm\x1b\\"),
    ("CPR query", b"\x1b[6n"),
    ("DECXCPR query", b"\x1b[?6n"),
    ("DECRQM query", b"\x1b[?2004$p"),
    ("Kitty flags query", b"\x1b[?u"),
    ("Kitty push", b"\x1b[>15u"),
    ("Kitty pop", b"\x1b[<u"),
    ("Kitty set", b"\x1b[=5;1u"),
    ("OSC 52 clipboard write", b"\x1b]52;c;aGVsbG8gd29ybGQ=\x07"),
    ("OSC 52 clipboard write ST", b"\x1b]52;c;aGVsbG8=\x1b\\"),
    ("OSC 52 clipboard query", b"\x1b]52;c;?\x07"),
    ("OSC 4 set", b"\x1b]4;1;#ff0000\x07"),
    ("OSC 4 set rgb 8-bit", b"\x1b]4;1;rgb:ff/00/00\x07"),
    ("OSC 4 query", b"\x1b]4;1;?\x07"),
    ("OSC 10 set", b"\x1b]10;#ffffff\x1b\\"),
    ("OSC 10 query", b"\x1b]10;?\x1b\\"),
    ("OSC 11 set", b"\x1b]11;#102030\x07"),
    ("OSC 11 set name", b"\x1b]11;black\x07"),
    ("OSC 11 query", b"\x1b]11;?\x07"),
    ("OSC 12 query", b"\x1b]12;?\x07"),
    ("title", b"\x1b]0;my title\x07"),
    ("window title", b"\x1b]2;build \xe2\x9c\x93\x1b\\"),
    (
        "hyperlink",
        b"\x1b]8;id=1;https://example.com\x1b\\link\x1b]8;;\x1b\\",
    ),
    ("OSC 133 mark", b"\x1b]133;D;0\x07"),
    (
        "sixel",
        b"\x1bPq#0;2;0;0;0#1;2;100;100;0#1~~@@vv@@~~@@~~$-\x1b\\",
    ),
    ("DECSCA-style DCS", b"\x1bP$t1;1;1;1;1$r\x1b\\"),
    (
        "tmux passthrough DCS",
        b"\x1bPtmux;\x1b\x1b]52;c;aGk=\x07\x1b\\",
    ),
    ("SGR", b"\x1b[0;1;38;2;255;0;0m"),
    ("SGR colon", b"\x1b[38:5:196m"),
    ("cursor position", b"\x1b[24;80H"),
    ("cursor save/restore", b"\x1b7\x1b8"),
    ("erase", b"\x1b[2J\x1b[K"),
    ("alt screen", b"\x1b[?1049h\x1b[?1049l"),
    ("scroll region", b"\x1b[1;24r"),
    ("resize report request", b"\x1b[18t"),
    ("CSI R with one param (not a report)", b"\x1b[5R"),
    ("APC", b"\x1b_Gf=100;AAAA\x1b\\"),
    ("PM", b"\x1b^private\x1b\\"),
    ("SOS", b"\x1bXstring\x1b\\"),
    (
        "text with C1 bytes",
        "caf\u{e9} \u{9b}1c \u{203a}".as_bytes(),
    ),
];

#[test]
fn every_reply_is_removed() {
    for (name, reply) in REPLIES {
        let input = [b"before".as_slice(), reply, b"after"].concat();
        assert_eq!(filter(&input), b"beforeafter", "{name} must be removed");
    }
}

#[test]
fn every_query_and_write_is_kept() {
    for (name, seq) in KEPT {
        let input = [b"before".as_slice(), seq, b"after"].concat();
        assert_eq!(filter(&input), input, "{name} must pass unchanged");
    }
}

#[test]
fn replies_and_writes_interleaved_split_at_every_byte() {
    let mut input = Vec::new();
    let mut want = Vec::new();
    for (i, (_, kept)) in KEPT.iter().enumerate() {
        input.extend_from_slice(kept);
        want.extend_from_slice(kept);
        input.extend_from_slice(REPLIES[i % REPLIES.len()].1);
    }
    for cut in 0..input.len() {
        let mut f = ResponseFilter::new();
        let mut out = Vec::new();
        f.feed(&input[..cut], &mut out);
        f.feed(&input[cut..], &mut out);
        f.flush(&mut out);
        assert_eq!(out, want, "split at {cut}");
    }
}

#[test]
fn counts_what_it_dropped() {
    let mut f = ResponseFilter::new();
    let mut out = Vec::new();
    f.feed(b"\x1b[?62c\x1b[1;1R\x1b[m", &mut out);
    assert_eq!(f.replies_dropped(), 2);
    assert_eq!(out, b"\x1b[m");
}

#[test]
fn malformed_endless_sequence_is_flushed_as_is_at_the_bound() {
    let mut input = b"\x1bP1+r".to_vec();
    input.extend(std::iter::repeat_n(b'7', MAX_PENDING + 100));
    let mut f = ResponseFilter::new();
    let mut out = Vec::new();
    for chunk in input.chunks(512) {
        f.feed(chunk, &mut out);
        assert!(f.pending() < MAX_PENDING);
    }
    // Released as-is: more than the bound is already out, nothing dropped.
    assert!(out.len() >= MAX_PENDING, "released {}", out.len());
    f.flush(&mut out);
    assert_eq!(out, input);
    // The terminator of that overflowed string does not eat what follows.
    f.feed(b"\x1b\\ok", &mut out);
    assert!(out.ends_with(b"\x1b\\ok"));
}

#[test]
fn lone_trailing_esc_is_released_on_next_chunk_or_flush() {
    let mut f = ResponseFilter::new();
    let mut out = Vec::new();
    f.feed(b"text\x1b", &mut out);
    assert_eq!(out, b"text");
    f.feed(b"x", &mut out);
    assert_eq!(out, b"text\x1bx");
    f.feed(b"\x1b", &mut out);
    f.flush(&mut out);
    assert_eq!(out, b"text\x1bx\x1b");
}

#[test]
fn reply_split_across_chunks_is_still_removed() {
    let mut f = ResponseFilter::new();
    let mut out = Vec::new();
    for b in b"a\x1b]11;rgb:0000/0000/0000\x1b\\b\x1bP1+r544e=78\x1b\\c" {
        f.feed(&[*b], &mut out);
    }
    assert_eq!(out, b"abc");
}
