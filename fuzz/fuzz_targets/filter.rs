//! ResponseFilter: chunking invariance of the output and of the reply
//! count, the MAX_PENDING bound, output is the input with pieces removed,
//! and a stream without ESC passes through untouched.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tether_term::{MAX_PENDING, ResponseFilter};
use tether_term_fuzz::{Case, is_subsequence};

fn filter(chunks: &[&[u8]]) -> (Vec<u8>, u64) {
    let mut f = ResponseFilter::new();
    let mut out = Vec::new();
    for c in chunks {
        f.feed(c, &mut out);
        assert!(f.pending() < MAX_PENDING, "filter held {}", f.pending());
    }
    f.flush(&mut out);
    assert_eq!(f.pending(), 0, "pending after flush");
    (out, f.replies_dropped())
}

fuzz_target!(|input: &[u8]| {
    let case = Case::parse(input, 0);
    let whole = filter(&[&case.data]);
    let parts = filter(&case.chunks());
    assert_eq!(parts, whole, "chunked filter output differs");
    let (out, dropped) = whole;
    assert!(
        is_subsequence(&out, &case.data),
        "output is not the input minus pieces"
    );
    if !case.data.contains(&0x1b) {
        assert_eq!(out, case.data, "stream without ESC was changed");
        assert_eq!(dropped, 0);
    }
    if dropped == 0 {
        assert_eq!(out, case.data, "nothing dropped but output differs");
    } else {
        assert!(out.len() < case.data.len());
    }
});
