//! CaptureParser: replies and forwarded bytes are the same whole and
//! chunked; forwarded bytes are the input with pieces removed (all of it
//! when nothing was consumed); is_complete agrees with the replies; and
//! baseline_from agrees with active_screen.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tether_term::capture::baseline_from;
use tether_term::{Baseline, CaptureParser, CaptureReplies};
use tether_term_fuzz::{Case, is_subsequence};

fn capture(chunks: &[&[u8]]) -> (CaptureReplies, Vec<u8>) {
    let mut p = CaptureParser::new();
    for c in chunks {
        p.feed(c);
    }
    let complete = p.is_complete();
    let got = p.finish();
    assert_eq!(
        complete, got.0.complete,
        "is_complete disagrees with replies"
    );
    got
}

fuzz_target!(|input: &[u8]| {
    let case = Case::parse(input, 0);
    let whole = capture(&[&case.data]);
    let parts = capture(&case.chunks());
    assert_eq!(parts, whole, "chunked capture differs");
    let (replies, forward) = whole;
    assert!(
        is_subsequence(&forward, &case.data),
        "forwarded bytes are not the input minus replies"
    );
    if replies == CaptureReplies::default() {
        assert_eq!(
            forward, case.data,
            "nothing consumed but bytes were not all forwarded"
        );
    } else {
        assert!(forward.len() < case.data.len());
    }
    match baseline_from(&replies, &replies) {
        Baseline::Fallback => assert!(!replies.complete || replies.active_screen().is_none()),
        Baseline::Captured(c) => {
            assert!(replies.complete);
            assert_eq!(Some(c.screen), replies.active_screen());
            assert_eq!(c.modify_other_keys, replies.modify_other_keys.unwrap_or(0));
            assert_eq!(c.kitty_main, replies.kitty_flags.unwrap_or(0));
            assert_eq!(c.kitty_alt, replies.kitty_flags.unwrap_or(0));
        }
    }
});
