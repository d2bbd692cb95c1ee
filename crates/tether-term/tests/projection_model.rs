//! The text projector against a plain reference model (a `Vec<char>` line
//! and a column cursor, one character at a time), on random escape-heavy
//! streams: the optimised byte-indexed line buffer must agree exactly.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{cuts, split, stream};
use proptest::prelude::*;
use tether_term::{MAX_PENDING, Scanner, Terminator, TextProjector, Token};

const MAX: usize = 40;

struct Model {
    chars: Vec<char>,
    cursor: usize,
    out: String,
}

impl Model {
    fn bytes(&self) -> usize {
        self.chars.iter().map(|c| c.len_utf8()).sum()
    }

    fn emit(&mut self) {
        self.out.extend(self.chars.drain(..));
        self.cursor = 0;
    }

    fn put(&mut self, c: char) {
        if self.cursor == self.chars.len() {
            self.chars.push(c);
        } else {
            self.chars[self.cursor] = c;
        }
        self.cursor += 1;
        if self.bytes() >= MAX {
            self.emit();
        }
    }

    fn move_to(&mut self, col: usize) {
        if col < self.chars.len() {
            self.cursor = col;
            return;
        }
        let room = MAX.saturating_sub(self.bytes() + 1);
        let pad = (col - self.chars.len()).min(room);
        self.chars.extend(std::iter::repeat_n(' ', pad));
        self.cursor = self.chars.len();
    }

    fn csi(&mut self, final_byte: u8, params: &[Option<u32>]) {
        let first = params.first().copied().flatten();
        let n = first.unwrap_or(1).max(1) as usize;
        match final_byte {
            b'K' => match first.unwrap_or(0) {
                0 => self.chars.truncate(self.cursor),
                1 => {
                    let end = (self.cursor + 1).min(self.chars.len());
                    self.chars[..end].fill(' ');
                }
                2 => self.chars = vec![' '; self.cursor],
                _ => {}
            },
            b'D' => self.cursor = self.cursor.saturating_sub(n),
            b'C' => self.move_to(self.cursor + n),
            b'G' => self.move_to(n - 1),
            _ => {}
        }
    }
}

/// What the model needs of one scanner event.
enum Step {
    Text(Vec<u8>),
    Control(u8),
    Csi(u8, Vec<Option<u32>>),
    Other,
}

/// One scanner event: its bytes, its step (`None` for an overflow piece),
/// and the bytes it gives back.
type Scanned = (Vec<u8>, Option<Step>, Option<Vec<u8>>);

/// The model's steps: the scanner's events of the whole stream at once,
/// with what a control string that does not end properly gives back (see
/// `project.rs`): an aborted, cancelled or unfinished one from its first
/// control on; an overflowing one (its pieces joined) from its first
/// control within the bound, else everything past the bound.
fn steps(data: &[u8]) -> Vec<Step> {
    let mut events: Vec<Scanned> = Vec::new();
    let mut s = Scanner::new();
    let mut take = |raw: &[u8], token: &Token<'_>| {
        let opens = raw.first() == Some(&0x1b)
            && matches!(raw.get(1), Some(b']' | b'P' | b'_' | b'^' | b'X'));
        let from_control = |p: &[u8]| {
            let at = p
                .iter()
                .position(|&b| b < 0x20 || b == 0x7f)
                .unwrap_or(p.len());
            p[at..].to_vec()
        };
        let (step, back) = match token {
            Token::Text(t) => (Some(Step::Text(t.to_vec())), None),
            Token::Control(c) => (Some(Step::Control(*c)), None),
            Token::Csi(csi) if csi.prefix().is_none() && csi.intermediates.is_empty() => {
                match csi.strict_params() {
                    Some(p) => (Some(Step::Csi(csi.final_byte, p.iter().collect())), None),
                    None => (Some(Step::Other), None),
                }
            }
            Token::Str {
                terminator: Terminator::Aborted,
                payload,
                ..
            } => (Some(Step::Other), Some(from_control(payload))),
            Token::Cancelled if opens => (Some(Step::Other), Some(from_control(&raw[2..]))),
            // Overflow pieces are joined below.
            Token::Overflow => (None, None),
            _ => (Some(Step::Other), None),
        };
        events.push((raw.to_vec(), step, back));
    };
    s.feed(data, |e| take(e.raw, &e.token));
    s.flush(|e| take(e.raw, &e.token));
    let mut steps = Vec::new();
    let mut overflow: Option<Vec<u8>> = None;
    let end_overflow = |o: &mut Option<Vec<u8>>, steps: &mut Vec<Step>| {
        if let Some(seq) = o.take() {
            steps.push(Step::Other);
            let opens = matches!(seq.get(1), Some(b']' | b'P' | b'_' | b'^' | b'X'));
            if opens {
                let bound = seq.len().min(MAX_PENDING);
                let back = match seq[2..bound].iter().position(|&b| b < 0x20 || b == 0x7f) {
                    Some(at) => &seq[2 + at..],
                    None => &seq[bound..],
                };
                steps.extend(given_back(back));
            }
        }
    };
    for (raw, step, back) in events {
        match step {
            None => {
                let new = raw.first() == Some(&0x1b) && raw.get(1) != Some(&b'\\');
                if new {
                    end_overflow(&mut overflow, &mut steps);
                }
                overflow
                    .get_or_insert_with(Vec::new)
                    .extend_from_slice(&raw);
            }
            Some(step) => {
                end_overflow(&mut overflow, &mut steps);
                steps.push(step);
                if let Some(back) = back {
                    steps.extend(given_back(&back));
                }
            }
        }
    }
    end_overflow(&mut overflow, &mut steps);
    steps
}

/// Given-back bytes hold text and controls (and at most a dropped `ESC \`).
fn given_back(bytes: &[u8]) -> Vec<Step> {
    let mut s = Scanner::new();
    let mut steps = vec![Step::Other];
    let mut take = |token: &Token<'_>| {
        steps.push(match token {
            Token::Text(t) => Step::Text(t.to_vec()),
            Token::Control(c) => Step::Control(*c),
            _ => Step::Other,
        })
    };
    s.feed(bytes, |e| take(&e.token));
    s.flush(|e| take(&e.token));
    steps.push(Step::Other);
    steps
}

fn model(data: &[u8]) -> String {
    let mut m = Model {
        chars: Vec::new(),
        cursor: 0,
        out: String::new(),
    };
    let mut text = Vec::new();
    let flush_text = |m: &mut Model, text: &mut Vec<u8>| {
        for c in String::from_utf8_lossy(text).chars() {
            m.put(c);
        }
        text.clear();
    };
    for step in steps(data) {
        if let Step::Text(t) = &step {
            text.extend_from_slice(t);
            continue;
        }
        flush_text(&mut m, &mut text);
        match step {
            Step::Control(b'\n' | 0x0b | 0x0c) => {
                m.emit();
                m.out.push('\n');
            }
            Step::Control(b'\r') => m.cursor = 0,
            Step::Control(0x08) => m.cursor = m.cursor.saturating_sub(1),
            Step::Control(b'\t') => m.put('\t'),
            Step::Csi(f, params) => m.csi(f, &params),
            _ => {}
        }
    }
    flush_text(&mut m, &mut text);
    m.emit();
    m.out
}

fn projector(chunks: &[&[u8]]) -> String {
    let mut p = TextProjector::with_max_line(MAX);
    let mut out = String::new();
    for c in chunks {
        p.feed(c, &mut out);
    }
    p.finish(&mut out);
    out
}

proptest! {
    #![proptest_config(common::config(600))]

    #[test]
    fn projector_matches_the_reference_model(data in stream(), cuts in cuts()) {
        prop_assert_eq!(projector(&split(&data, &cuts)), model(&data));
    }
}

#[test]
fn model_agrees_on_hand_cases() {
    for case in [
        &b"abc\rX\x1b[1K\n"[..],
        b"\xe4\xb8\x96x\x08\x08y\x1b[5Cz\n",
        b"ab\x1b[2Kc",
    ] {
        assert_eq!(projector(&[case]), model(case), "{case:?}");
    }
}
