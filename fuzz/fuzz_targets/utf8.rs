//! Utf8Decoder: chunked and whole decoding both equal
//! String::from_utf8_lossy of the stream; nothing is pending after finish.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tether_term::utf8::Utf8Decoder;
use tether_term_fuzz::Case;

fn decode(chunks: &[&[u8]]) -> String {
    let mut d = Utf8Decoder::new();
    let mut out = String::new();
    for c in chunks {
        d.decode(c, &mut |s| out.push_str(s));
    }
    d.finish(&mut |s| out.push_str(s));
    assert!(!d.has_pending(), "pending after finish");
    out
}

fuzz_target!(|input: &[u8]| {
    let case = Case::parse(input, 0);
    let lossy = String::from_utf8_lossy(&case.data);
    assert_eq!(
        decode(&[&case.data]),
        lossy,
        "whole decode != from_utf8_lossy"
    );
    assert_eq!(
        decode(&case.chunks()),
        lossy,
        "chunked decode != from_utf8_lossy"
    );
});
