//! Byte log and head+tail clip cases.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use tether_term::{ByteLog, HeadTailClip, Since, TermError};

#[test]
fn byte_log_since_offsets_and_drops() {
    let mut log = ByteLog::new(8).unwrap();
    log.append(b"hello");
    assert_eq!(
        log.since(0),
        Since {
            dropped: 0,
            bytes: b"hello".to_vec(),
            next: 5
        }
    );
    log.append(b" world");
    assert_eq!((log.start(), log.end(), log.dropped()), (3, 11, 3));
    assert_eq!(
        log.since(0),
        Since {
            dropped: 3,
            bytes: b"lo world".to_vec(),
            next: 11
        }
    );
    assert_eq!(
        log.since(5),
        Since {
            dropped: 0,
            bytes: b" world".to_vec(),
            next: 11
        }
    );
    assert_eq!(log.since(11).bytes, b"");
    assert_eq!(log.since(99).bytes, b"");
    assert_eq!(log.range(4, 7), b"o w");
    // One append larger than the whole log.
    log.append(b"0123456789abcdef");
    assert_eq!(
        log.since(0),
        Since {
            dropped: 19,
            bytes: b"89abcdef".to_vec(),
            next: 27
        }
    );
}

#[test]
fn byte_log_needs_capacity() {
    assert_eq!(
        ByteLog::new(0).unwrap_err(),
        TermError::ZeroCapacity {
            what: "byte log capacity"
        }
    );
}

#[test]
fn clip_keeps_head_and_tail_and_counts_exactly() {
    let mut c = HeadTailClip::new(4, 3);
    c.push("0123456789");
    let got = c.clipped();
    assert_eq!(
        (got.head.as_str(), got.tail.as_str(), got.omitted, got.total),
        ("0123", "789", 3, 10)
    );
    assert_eq!(
        got.render(|n| format!("[…{n} bytes…]")),
        "0123[…3 bytes…]789"
    );
    let mut small = HeadTailClip::new(4, 3);
    small.push("abc");
    assert!(small.clipped().is_complete());
    assert_eq!(small.clipped().render(|_| unreachable!()), "abc");
}

#[test]
fn clip_never_splits_a_character() {
    // "é" is 2 bytes, "世" 3, "🦀" 4.
    let mut c = HeadTailClip::new(3, 5);
    c.push("aé世🦀");
    let got = c.clipped();
    assert_eq!(got.head, "aé");
    assert_eq!(got.tail, "🦀");
    assert_eq!(got.omitted, got.total - 3 - 4);
    assert_eq!((got.total, got.omitted), (10, 3));
}

#[test]
fn clip_is_the_same_for_any_chunking() {
    let text = "héllo wörld, 世界 and 🦀🦀 again and again";
    let mut whole = HeadTailClip::new(7, 9);
    whole.push(text);
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    for (cut, _) in chars {
        let mut c = HeadTailClip::new(7, 9);
        c.push(&text[..cut]);
        c.push(&text[cut..]);
        assert_eq!(c.clipped(), whole.clipped(), "split at {cut}");
    }
}
