//! EscapeScanner over typed input: the same result whole and chunked, the
//! held bytes bounded, every byte sent is the input's (an escape's keys
//! removed, nothing added), and with escapes off every byte is sent.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tether_term::keys::MAX_KEY;
use tether_term::{EscapeScanner, EscapeSet, Keyed};
use tether_term_fuzz::{Case, is_subsequence};

fn scan(chunks: &[&[u8]], escape: Option<u8>) -> (Vec<u8>, Vec<Keyed>) {
    let mut s = EscapeScanner::with_escapes(escape, EscapeSet::ALL);
    let (mut sent, mut escapes) = (Vec::new(), Vec::new());
    let mut take = |k: Keyed| match k {
        Keyed::Send(b) => sent.extend_from_slice(&b),
        k => escapes.push(k),
    };
    for c in chunks {
        s.feed(c).into_iter().for_each(&mut take);
        assert!(s.pending() < MAX_KEY, "held {}", s.pending());
    }
    s.flush().into_iter().for_each(&mut take);
    assert_eq!(s.pending(), 0, "pending after flush");
    (sent, escapes)
}

fuzz_target!(|input: &[u8]| {
    let case = Case::parse(input, 0);
    let whole = scan(&[&case.data], Some(b'~'));
    assert_eq!(scan(&case.chunks(), Some(b'~')), whole, "chunked differs");
    assert!(is_subsequence(&whole.0, &case.data), "sent bytes not the input's");
    let (off, none) = scan(&case.chunks(), None);
    assert_eq!(off, case.data, "escapes off changed the input");
    assert!(none.is_empty());
});
