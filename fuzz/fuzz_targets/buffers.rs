//! ByteLog and HeadTailClip, driven by the fuzz stream as operations and
//! checked against a plain model after every operation:
//! - ByteLog keeps exactly the last `capacity` bytes; start/end/dropped,
//!   since(offset) and range(from, to) match the model for offsets before,
//!   inside and past the kept window; a log fed everything at once, and one
//!   fed the stream in `Case` chunks, give the same since(0);
//! - HeadTailClip: head and tail within their limits, text starts with the
//!   head and ends with the tail, head + tail + omitted == total ==
//!   text length, the clip equals the model (longest char-boundary head,
//!   shortest char-boundary tail of what the head left) and is the same
//!   for the pushes as for the whole text pushed at once or re-chunked.
//!
//! Operation byte `op` (then its bytes):
//!   op % 4 == 0: append the next `op >> 2` bytes (to the log, and lossily
//!                decoded, to the clip);
//!   op % 4 == 1: append the next `16 * (op >> 2)` bytes;
//!   op % 4 == 2: since(offset(a)), one argument byte `a`;
//!   op % 4 == 3: range(offset(a), offset(b)), two argument bytes,
//!   where `op >> 2 & 3` picks the offset: a, end - a, start + a, end + a.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tether_term::{ByteLog, Clipped, HeadTailClip, Since};
use tether_term_fuzz::{Case, split};

/// extra[0..2]: capacity 1 + (u16 % 700); extra[2]: head % 64; extra[3]: tail % 64.
const EXTRA: usize = 4;

struct Model {
    all: Vec<u8>,
    cap: usize,
}

impl Model {
    fn end(&self) -> u64 {
        self.all.len() as u64
    }
    fn start(&self) -> u64 {
        self.end() - self.all.len().min(self.cap) as u64
    }
    fn since(&self, offset: u64) -> Since {
        let from = offset.clamp(self.start(), self.end());
        Since {
            dropped: self.start().saturating_sub(offset),
            bytes: self.all[from as usize..].to_vec(),
            next: self.end(),
        }
    }
    fn range(&self, from: u64, to: u64) -> Vec<u8> {
        let from = from.clamp(self.start(), self.end());
        let to = to.clamp(from, self.end());
        self.all[from as usize..to as usize].to_vec()
    }
    fn offset(&self, how: u8, a: u8) -> u64 {
        let a = u64::from(a);
        match how & 3 {
            0 => a,
            1 => self.end().saturating_sub(a),
            2 => self.start() + a,
            _ => self.end() + a,
        }
    }
}

fn check_log(log: &ByteLog, model: &Model) {
    assert_eq!(log.end(), model.end(), "end");
    assert_eq!(log.start(), model.start(), "start");
    assert_eq!(log.dropped(), model.start(), "dropped");
    let all = log.since(0);
    assert!(
        all.bytes.len() <= model.cap,
        "log keeps {} > capacity {}",
        all.bytes.len(),
        model.cap
    );
    assert_eq!(all, model.since(0), "since(0)");
}

fn clip_model(text: &str, head: usize, tail: usize) -> Clipped {
    let mut h = head.min(text.len());
    while !text.is_char_boundary(h) {
        h -= 1;
    }
    let rest = &text[h..];
    let mut t = rest.len().saturating_sub(tail);
    while !rest.is_char_boundary(t) {
        t += 1;
    }
    Clipped {
        head: text[..h].to_owned(),
        tail: rest[t..].to_owned(),
        omitted: t as u64,
        total: text.len() as u64,
    }
}

fn check_clip(got: &Clipped, text: &str, head: usize, tail: usize) {
    assert!(got.head.len() <= head, "head {} > {head}", got.head.len());
    assert!(got.tail.len() <= tail, "tail {} > {tail}", got.tail.len());
    assert!(text.starts_with(&got.head), "head is not a prefix");
    assert!(text.ends_with(&got.tail), "tail is not a suffix");
    assert_eq!(got.total, text.len() as u64, "total");
    assert_eq!(
        got.head.len() as u64 + got.tail.len() as u64 + got.omitted,
        got.total,
        "head + tail + omitted != total"
    );
    assert_eq!(got.is_complete(), got.omitted == 0);
    assert_eq!(
        *got,
        clip_model(text, head, tail),
        "clip differs from the model"
    );
}

fuzz_target!(|input: &[u8]| {
    assert!(ByteLog::new(0).is_err());
    let case = Case::parse(input, EXTRA);
    let e = &case.extra;
    let cap = 1 + usize::from(u16::from_le_bytes([e[0], e[1]]) % 700);
    let (head, tail) = (usize::from(e[2] % 64), usize::from(e[3] % 64));

    let mut log = ByteLog::new(cap).expect("capacity >= 1");
    let mut model = Model {
        all: Vec::new(),
        cap,
    };
    let mut clip = HeadTailClip::new(head, tail);
    let mut text = String::new();

    let ops = &case.data;
    let mut i = 0;
    let arg = |i: &mut usize| -> u8 {
        let b = ops.get(*i).copied().unwrap_or(0);
        *i += 1;
        b
    };
    while i < ops.len() {
        let op = arg(&mut i);
        let how = op >> 2;
        match op % 4 {
            k @ (0 | 1) => {
                let n = usize::from(how) * if k == 0 { 1 } else { 16 };
                let bytes = &ops[i.min(ops.len())..(i + n).min(ops.len())];
                i += n;
                log.append(bytes);
                model.all.extend_from_slice(bytes);
                let piece = String::from_utf8_lossy(bytes);
                clip.push(&piece);
                text.push_str(&piece);
                check_log(&log, &model);
                check_clip(&clip.clipped(), &text, head, tail);
                assert_eq!(clip.total(), text.len() as u64);
            }
            2 => {
                let offset = model.offset(how, arg(&mut i));
                assert_eq!(log.since(offset), model.since(offset), "since({offset})");
            }
            _ => {
                let from = model.offset(how, arg(&mut i));
                let to = model.offset(how >> 2, arg(&mut i));
                assert_eq!(
                    log.range(from, to),
                    model.range(from, to),
                    "range({from}, {to})"
                );
            }
        }
    }
    check_log(&log, &model);

    // Whole and re-chunked logs agree with the operation-driven one.
    let mut whole = ByteLog::new(cap).expect("capacity >= 1");
    whole.append(&model.all);
    assert_eq!(whole.since(0), log.since(0), "whole log differs");
    let mut parts = ByteLog::new(cap).expect("capacity >= 1");
    for c in split(&model.all, &case.lens) {
        parts.append(c);
    }
    assert_eq!(parts.since(0), log.since(0), "chunked log differs");

    // Whole and re-chunked clips agree with the operation-driven one.
    let got = clip.clipped();
    check_clip(&got, &text, head, tail);
    let mut one = HeadTailClip::new(head, tail);
    one.push(&text);
    assert_eq!(one.clipped(), got, "whole clip differs");
    let mut again = HeadTailClip::new(head, tail);
    let mut at = 0;
    for &len in case.lens.iter().cycle() {
        if at >= text.len() {
            break;
        }
        let mut end = (at + len).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        again.push(&text[at..end]);
        at = end;
    }
    assert_eq!(again.clipped(), got, "re-chunked clip differs");
});
