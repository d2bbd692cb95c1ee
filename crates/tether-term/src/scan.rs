//! The streaming scanner: splits a terminal byte stream into [`Event`]s.
//!
//! Written here rather than taken from `vte` because `vte`'s `Perform`
//! callbacks do not expose the raw byte span of a sequence, and every
//! consumer in this crate must be able to pass a sequence through unchanged.
//! `vte` stays the speed reference in the benchmark.

use crate::token::{Csi, Event, StringKind, Terminator, Token};

/// Largest number of bytes of one sequence the scanner holds. Past this the
/// bytes are released as [`Token::Overflow`] pieces, in order, and the rest
/// of that sequence streams through unbuffered.
pub const MAX_PENDING: usize = 4096;

const ESC: u8 = 0x1b;
const BEL: u8 = 0x07;
const CAN: u8 = 0x18;
const SUB: u8 = 0x1a;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Ground,
    Esc,
    EscIntermediate,
    SingleShift(u8),
    Csi,
    Str(StringKind),
    StrEsc(StringKind),
}

/// How a sequence ended, which decides how its bytes are classified.
enum End {
    Esc,
    Csi,
    SingleShift(u8),
    Str(StringKind, Terminator),
    Cancelled,
}

/// A streaming terminal-protocol scanner.
///
/// Feed it chunks in any split; the concatenation of every event's `raw`
/// equals the input, and the classification is the same as for the unsplit
/// stream (only [`Token::Text`] runs and [`Token::Overflow`] pieces may be
/// cut differently). It holds at most [`MAX_PENDING`] bytes.
#[derive(Clone, Debug)]
pub struct Scanner {
    state: State,
    seq: Vec<u8>,
    /// True when the held sequence has C0 controls or DEL mixed into its
    /// ESC/CSI part, which a terminal executes (or ignores) on the spot
    /// while the sequence goes on.
    strays: bool,
    /// The held sequence without those stray bytes, for classification.
    clean: Vec<u8>,
    overflowed: bool,
    split_controls: bool,
}

impl Default for Scanner {
    fn default() -> Self {
        Self::new()
    }
}

impl Scanner {
    /// A scanner that reports each C0 control as [`Token::Control`].
    pub fn new() -> Self {
        Scanner {
            state: State::Ground,
            seq: Vec::with_capacity(64),
            strays: false,
            clean: Vec::new(),
            overflowed: false,
            split_controls: true,
        }
    }

    /// A scanner that leaves C0 controls inside [`Token::Text`] runs, for
    /// consumers that only care about escape sequences (it is faster).
    pub fn escapes_only() -> Self {
        Scanner {
            split_controls: false,
            ..Self::new()
        }
    }

    /// Bytes of an unfinished sequence held from earlier chunks.
    pub fn pending(&self) -> usize {
        self.seq.len()
    }

    /// True while the stream is inside an escape sequence or control string.
    pub fn in_sequence(&self) -> bool {
        self.state != State::Ground
    }

    /// The held bytes of an unfinished escape or control sequence (not a
    /// control string), whose stray C0 controls a terminal has already
    /// executed; empty otherwise.
    pub fn held_sequence(&self) -> &[u8] {
        match self.state {
            State::Ground | State::Str(_) | State::StrEsc(_) => &[],
            _ => &self.seq,
        }
    }

    /// Releases a held, unfinished sequence (for example a lone trailing
    /// ESC) as [`Token::Cancelled`] and returns to ground state.
    pub fn flush(&mut self, mut sink: impl FnMut(Event<'_>)) {
        if !self.seq.is_empty() {
            let token = if self.overflowed {
                Token::Overflow
            } else {
                Token::Cancelled
            };
            sink(Event {
                raw: &self.seq,
                token,
            });
        }
        self.reset();
    }

    /// Scans one chunk, calling `sink` for every complete event.
    pub fn feed(&mut self, input: &[u8], mut sink: impl FnMut(Event<'_>)) {
        let mut i = 0;
        while i < input.len() {
            if self.state == State::Ground {
                i = self.ground(input, i, &mut sink);
            } else if let State::Str(kind) = self.state {
                i = self.string_run(kind, input, i, &mut sink);
            } else {
                let b = input[i];
                if self.step(b, &mut sink) {
                    i += 1;
                }
            }
        }
        if self.overflowed {
            self.spill(&mut sink);
        }
    }

    /// Ground state: emits text up to the next ESC (or control), zero-copy.
    fn ground(&mut self, input: &[u8], i: usize, sink: &mut impl FnMut(Event<'_>)) -> usize {
        let rest = &input[i..];
        let n = if self.split_controls {
            rest.iter()
                .position(|&b| b < 0x20 || b == 0x7f)
                .unwrap_or(rest.len())
        } else {
            memchr::memchr(ESC, rest).unwrap_or(rest.len())
        };
        if n > 0 {
            let text = &rest[..n];
            sink(Event {
                raw: text,
                token: Token::Text(text),
            });
        }
        let Some(&b) = rest.get(n) else {
            return input.len();
        };
        if b == ESC {
            if let Some(len) = complete_csi(&rest[n..]) {
                // The whole CSI is in this chunk: no copy, same token.
                let raw = &rest[n..n + len];
                sink(Event {
                    raw,
                    token: Token::Csi(Csi::parse(raw)),
                });
                return i + n + len;
            }
            self.seq.push(ESC);
            self.state = State::Esc;
        } else {
            sink(Event {
                raw: &rest[n..=n],
                token: Token::Control(b),
            });
        }
        i + n + 1
    }

    /// Inside a control string: copies payload up to the next byte that can
    /// end it, in one step.
    fn string_run(
        &mut self,
        kind: StringKind,
        input: &[u8],
        i: usize,
        sink: &mut impl FnMut(Event<'_>),
    ) -> usize {
        let rest = &input[i..];
        let n = rest
            .iter()
            .position(|&b| b == ESC || b == BEL || b == CAN || b == SUB)
            .unwrap_or(rest.len());
        self.push_run(&rest[..n], sink);
        let Some(&b) = rest.get(n) else {
            return input.len();
        };
        self.seq.push(b);
        match b {
            ESC => self.state = State::StrEsc(kind),
            BEL if kind == StringKind::Osc => self.finish(End::Str(kind, Terminator::Bel), sink),
            CAN | SUB => self.finish(End::Cancelled, sink),
            _ => {}
        }
        self.check_bound(sink);
        i + n + 1
    }

    /// One byte in an escape or CSI state. Returns false when the byte was
    /// not consumed and must be scanned again from the new state.
    fn step(&mut self, b: u8, sink: &mut impl FnMut(Event<'_>)) -> bool {
        match (self.state, b) {
            (State::StrEsc(kind), b'\\') => {
                self.seq.push(b);
                self.finish(End::Str(kind, Terminator::St), sink);
            }
            (State::StrEsc(kind), _) => {
                // The ESC begins a new sequence: the string ends before it.
                self.seq.pop();
                self.finish(End::Str(kind, Terminator::Aborted), sink);
                self.seq.push(ESC);
                self.state = State::Esc;
                return false;
            }
            (State::SingleShift(set), 0x20..=0x7e) => {
                self.seq.push(b);
                self.finish(End::SingleShift(set), sink);
            }
            (State::SingleShift(set), _) => {
                self.finish(End::SingleShift(set), sink);
                return false;
            }
            (_, ESC) => {
                self.finish(End::Cancelled, sink);
                self.seq.push(ESC);
                self.state = State::Esc;
            }
            (_, CAN | SUB) => {
                self.seq.push(b);
                self.finish(End::Cancelled, sink);
            }
            (_, 0x80..=0xff) => {
                // Not ASCII: this was not a sequence; rescan the byte as text.
                self.finish(End::Cancelled, sink);
                return false;
            }
            (State::Esc, _) => {
                self.seq.push(b);
                self.state = match b {
                    b'[' => State::Csi,
                    b']' => State::Str(StringKind::Osc),
                    b'P' => State::Str(StringKind::Dcs),
                    b'_' => State::Str(StringKind::Apc),
                    b'^' => State::Str(StringKind::Pm),
                    b'X' => State::Str(StringKind::Sos),
                    b'N' => State::SingleShift(2),
                    b'O' => State::SingleShift(3),
                    0x20..=0x2f => State::EscIntermediate,
                    0x30..=0x7e => {
                        self.finish(End::Esc, sink);
                        return true;
                    }
                    _ => {
                        // A control (or DEL) inside the sequence: a terminal
                        // executes it and the sequence goes on.
                        self.strays = true;
                        State::Esc
                    }
                };
            }
            (State::EscIntermediate | State::Csi, 0x00..=0x1f | 0x7f) => {
                self.seq.push(b);
                self.strays = true;
            }
            (State::EscIntermediate, _) => {
                self.seq.push(b);
                if (0x30..=0x7e).contains(&b) {
                    self.finish(End::Esc, sink);
                }
            }
            (State::Csi, _) => {
                self.seq.push(b);
                if (0x40..=0x7e).contains(&b) {
                    self.finish(End::Csi, sink);
                }
            }
            (State::Ground | State::Str(_), _) => {
                // Handled by `ground` and `string_run`; never reached.
                self.seq.push(b);
            }
        }
        self.check_bound(sink);
        true
    }

    fn push_run(&mut self, run: &[u8], sink: &mut impl FnMut(Event<'_>)) {
        let mut run = run;
        while !run.is_empty() {
            let room = MAX_PENDING.saturating_sub(self.seq.len()).max(1);
            let take = room.min(run.len());
            self.seq.extend_from_slice(&run[..take]);
            run = &run[take..];
            self.check_bound(sink);
        }
    }

    fn check_bound(&mut self, sink: &mut impl FnMut(Event<'_>)) {
        if self.seq.len() >= MAX_PENDING && self.state != State::Ground {
            self.overflowed = true;
            self.spill(sink);
        }
    }

    /// Releases the held bytes of an overflowed sequence, keeping a trailing
    /// ESC inside a string because it may start the terminator.
    fn spill(&mut self, sink: &mut impl FnMut(Event<'_>)) {
        let keep = usize::from(matches!(self.state, State::StrEsc(_)));
        let n = self.seq.len().saturating_sub(keep);
        if n > 0 {
            sink(Event {
                raw: &self.seq[..n],
                token: Token::Overflow,
            });
            self.seq.drain(..n);
        }
    }

    fn finish(&mut self, end: End, sink: &mut impl FnMut(Event<'_>)) {
        if !self.seq.is_empty() {
            if self.strays && !self.overflowed {
                self.clean = without_strays(&self.seq, matches!(end, End::Str(..)));
            }
            let raw = &self.seq[..];
            let token = if self.overflowed {
                Token::Overflow
            } else if self.strays {
                classify(end, &self.clean)
            } else {
                classify(end, raw)
            };
            sink(Event { raw, token });
        }
        self.reset();
    }

    fn reset(&mut self) {
        self.seq.clear();
        self.strays = false;
        self.state = State::Ground;
        self.overflowed = false;
    }
}

/// `seq` without the C0 controls and DELs mixed into its ESC/CSI part. In a
/// control string only the bytes before the introducer can be strays; its
/// payload is kept whole.
fn without_strays(seq: &[u8], string: bool) -> Vec<u8> {
    let is_stray = |b: &u8| *b < 0x20 || *b == 0x7f;
    let Some((first, rest)) = seq.split_first() else {
        return Vec::new();
    };
    let mut clean = vec![*first];
    if string {
        let intro = rest.iter().position(|b| !is_stray(b)).unwrap_or(rest.len());
        clean.extend_from_slice(&rest[intro..]);
    } else {
        clean.extend(rest.iter().filter(|b| !is_stray(b)));
    }
    clean
}

/// Longest CSI the zero-copy path looks for; anything longer (or unusual)
/// takes the buffered path, which classifies it the same way.
const FAST_CSI_LIMIT: usize = 64;

/// The length of a plain, complete CSI at the start of `s` (`ESC [`, then
/// parameter and intermediate bytes, then a final byte), if there is one
/// within [`FAST_CSI_LIMIT`] bytes.
fn complete_csi(s: &[u8]) -> Option<usize> {
    if s.get(1) != Some(&b'[') {
        return None;
    }
    let body = s.get(2..s.len().min(FAST_CSI_LIMIT))?;
    let at = body.iter().position(|b| !(0x20..=0x3f).contains(b))?;
    (0x40..=0x7e).contains(&body[at]).then_some(at + 3)
}

fn classify(end: End, raw: &[u8]) -> Token<'_> {
    match end {
        End::Cancelled => Token::Cancelled,
        End::Esc => {
            let body = raw.get(1..).unwrap_or(&[]);
            match body.split_last() {
                Some((&final_byte, inter)) if inter.iter().all(|b| (0x20..=0x2f).contains(b)) => {
                    Token::Esc {
                        intermediates: inter,
                        final_byte,
                    }
                }
                _ => Token::Cancelled,
            }
        }
        End::SingleShift(set) => Token::SingleShift {
            set,
            byte: raw.get(2).copied(),
        },
        End::Csi => Token::Csi(Csi::parse(raw)),
        End::Str(kind, terminator) => {
            let tail = match terminator {
                Terminator::Bel => 1,
                Terminator::St => 2,
                Terminator::Aborted => 0,
            };
            let payload = raw.get(2..raw.len().saturating_sub(tail)).unwrap_or(&[]);
            Token::Str {
                kind,
                payload,
                terminator,
            }
        }
    }
}
