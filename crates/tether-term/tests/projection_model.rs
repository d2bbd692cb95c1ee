//! The text projector against a plain reference model (a `Vec<char>` line
//! and a column cursor, one character at a time), on random escape-heavy
//! streams: the optimised byte-indexed line buffer must agree exactly.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{cuts, split, stream};
use proptest::prelude::*;
use tether_term::{Scanner, TextProjector, Token};

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

fn steps(data: &[u8]) -> Vec<Step> {
    let mut s = Scanner::new();
    let mut steps = Vec::new();
    let mut take = |token: &Token<'_>| {
        steps.push(match token {
            Token::Text(t) => Step::Text(t.to_vec()),
            Token::Control(c) => Step::Control(*c),
            Token::Csi(csi) if csi.prefix().is_none() && csi.intermediates.is_empty() => {
                match csi.strict_params() {
                    Some(p) => Step::Csi(csi.final_byte, p.iter().collect()),
                    None => Step::Other,
                }
            }
            _ => Step::Other,
        })
    };
    s.feed(data, |e| take(&e.token));
    s.flush(|e| take(&e.token));
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
