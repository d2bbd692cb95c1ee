//! Redactor: output and redaction count are the same whole and chunked;
//! pending() < the longest secret after every feed; and both equal a naive
//! reference (scan left to right, replace the longest secret starting at
//! each position with REDACTED), which also means no secret survives in
//! the bytes that were passed through.
//!
//! Secrets come from the header: extra[0] % 5 secrets (0 = pass-through),
//! each picked from the stream by a (position, 1 + len % 12) byte pair, as
//! tests/chunking.rs does, so that they actually occur. No long-run splice
//! (bit 4 of the first byte is ignored).
#![no_main]

use libfuzzer_sys::fuzz_target;
use tether_term::Redactor;
use tether_term::redact::REDACTED;
use tether_term_fuzz::Case;

const EXTRA: usize = 9;

fn secrets(extra: &[u8], data: &[u8]) -> Vec<Vec<u8>> {
    let n = usize::from(extra[0] % 5);
    (0..n)
        .map(|k| {
            let (pos, len) = (extra[1 + 2 * k], extra[2 + 2 * k]);
            let len = 1 + usize::from(len % 12);
            let start = usize::from(pos) * data.len() / 256;
            match data.get(start..(start + len).min(data.len())) {
                Some(s) if !s.is_empty() => s.to_vec(),
                _ => b"secret".to_vec(),
            }
        })
        .collect()
}

fn redact(secrets: &[Vec<u8>], chunks: &[&[u8]]) -> (Vec<u8>, u64) {
    let mut r = Redactor::new(secrets).expect("non-empty secrets");
    let longest = secrets.iter().map(Vec::len).max().unwrap_or(0);
    let mut out = Vec::new();
    for c in chunks {
        r.feed(c, &mut out);
        assert!(
            r.pending() < longest.max(1),
            "redactor held {} (longest secret {longest})",
            r.pending()
        );
    }
    r.finish(&mut out);
    assert_eq!(r.pending(), 0, "pending after finish");
    (out, r.redactions())
}

/// Leftmost-longest, non-overlapping replacement, the slow obvious way.
fn reference(secrets: &[Vec<u8>], data: &[u8]) -> (Vec<u8>, u64) {
    let mut out = Vec::new();
    let mut count = 0;
    let mut i = 0;
    while i < data.len() {
        let best = secrets
            .iter()
            .filter(|s| data[i..].starts_with(s))
            .map(Vec::len)
            .max();
        match best {
            Some(len) => {
                out.extend_from_slice(REDACTED.as_bytes());
                count += 1;
                i += len;
            }
            None => {
                out.push(data[i]);
                i += 1;
            }
        }
    }
    (out, count)
}

fuzz_target!(|input: &[u8]| {
    let case = Case::parse_opts(input, EXTRA, false);
    let secrets = secrets(&case.extra, &case.data);
    let whole = redact(&secrets, &[&case.data]);
    let parts = redact(&secrets, &case.chunks());
    assert_eq!(
        parts, whole,
        "chunked redaction differs (secrets {secrets:?})"
    );
    assert_eq!(
        whole,
        reference(&secrets, &case.data),
        "differs from the reference (secrets {secrets:?})"
    );
});
