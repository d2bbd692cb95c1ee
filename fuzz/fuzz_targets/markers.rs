//! MarkerScanner: marks, offset() and forged() are the same whole and
//! chunked; each mark's [start, end) span lies inside the stream, in order
//! and without overlap, and is an OSC sequence (`ESC ]`) whose bytes carry
//! the mark (133 or the engine number plus the nonce).
#![no_main]

use libfuzzer_sys::fuzz_target;
use tether_term::markers::ENGINE_OSC;
use tether_term::{MAX_PENDING, Marker, MarkerEvent, MarkerScanner};
use tether_term_fuzz::Case;

const NONCE: &str = "0123456789abcdef0123";

fn markers(chunks: &[&[u8]]) -> (Vec<MarkerEvent>, u64, u64) {
    let mut m = MarkerScanner::new(NONCE).expect("valid nonce");
    let mut out = Vec::new();
    for c in chunks {
        m.feed(c, &mut out);
    }
    (out, m.offset(), m.forged())
}

fuzz_target!(|input: &[u8]| {
    let case = Case::parse(input, 0);
    let whole = markers(&[&case.data]);
    let parts = markers(&case.chunks());
    assert_eq!(parts, whole, "chunked markers differ");
    let (events, offset, _) = whole;
    let len = case.data.len() as u64;
    assert!(offset <= len, "offset {offset} past the stream ({len})");
    assert!(
        len - offset < MAX_PENDING as u64,
        "offset {offset} lags the stream ({len})"
    );
    let mut prev_end = 0;
    for e in &events {
        assert!(
            prev_end <= e.start && e.start < e.end && e.end <= offset,
            "bad span {e:?}"
        );
        prev_end = e.end;
        let span = &case.data[e.start as usize..e.end as usize];
        assert!(
            span.starts_with(b"\x1b]"),
            "mark span is not an OSC: {span:?}"
        );
        let body = &span[2..];
        match &e.marker {
            Marker::Engine { .. } => {
                let head = format!("{ENGINE_OSC};{NONCE};");
                assert!(
                    body.starts_with(head.as_bytes()),
                    "engine mark without nonce: {span:?}"
                );
            }
            _ => assert!(body.starts_with(b"133;"), "133 mark span: {span:?}"),
        }
    }
});
