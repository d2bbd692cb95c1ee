//! Text projection: what a program (an agent) should read of terminal
//! output.
//!
//! Control sequences are removed; `\r`, backspace, erase-in-line and
//! horizontal cursor moves are applied within the current line, so a
//! progress bar that redraws 500 times yields its final frame; CRLF becomes
//! LF; UTF-8 is decoded incrementally (invalid bytes become U+FFFD); tabs and
//! newlines are kept. Cursor moves between lines are not followed: this is a
//! line projection, not a screen (use a headless emulator for full-screen
//! programs).
//!
//! A control string (OSC, DCS, APC, PM, SOS) that does not end with its
//! terminator never swallows the output after it: when it is aborted by
//! another sequence, cancelled (CAN, SUB), or still open when the stream
//! ends, its bytes from its first C0 control on (a line break, say) are
//! projected as output; when it outgrows [`MAX_PENDING`](crate::MAX_PENDING)
//! it is taken to end there, and every byte after the bound is output (a
//! string that long is not one a program meant: even an image is sent in
//! smaller pieces). A string that ends properly within the bound is
//! dropped whole.

use crate::scan::Scanner;
use crate::token::{Csi, Event, Terminator, Token};
use crate::utf8::Utf8Decoder;

/// Longest line, in bytes, held for overwriting; a longer line is released
/// as-is (after the character that reaches the bound) and the rest
/// continues as a new, unterminated line.
pub const DEFAULT_MAX_LINE: usize = 64 * 1024;

/// Streaming text projection.
#[derive(Clone, Debug)]
pub struct TextProjector {
    scanner: Scanner,
    sink: Sink,
}

/// Everything but the main scanner, so its events can be handled while it
/// is borrowed.
#[derive(Clone, Debug)]
struct Sink {
    line: LineBuffer,
    decoder: Utf8Decoder,
    /// Scans the bytes given back by a string that did not end properly
    /// (controls and text; at most an `ESC \` of sequences).
    given_back: Scanner,
    /// Inside an overflowing sequence: whether it is a control string
    /// (whose bytes past the bound are output).
    overflow: Option<bool>,
}

/// The current line. `cursor` is a byte index on a character boundary,
/// never past the end; columns are counted in characters.
#[derive(Clone, Debug)]
struct LineBuffer {
    text: String,
    cursor: usize,
    max: usize,
}

impl Default for TextProjector {
    fn default() -> Self {
        Self::new()
    }
}

impl TextProjector {
    /// A projector with the default line bound.
    pub fn new() -> Self {
        Self::with_max_line(DEFAULT_MAX_LINE)
    }

    /// A projector holding at most `max` bytes of the current line (at
    /// least 1).
    pub fn with_max_line(max: usize) -> Self {
        TextProjector {
            scanner: Scanner::new(),
            sink: Sink {
                line: LineBuffer {
                    text: String::new(),
                    cursor: 0,
                    max: max.max(1),
                },
                decoder: Utf8Decoder::new(),
                given_back: Scanner::new(),
                overflow: None,
            },
        }
    }

    /// Projects one chunk, appending finished lines (each ending in `\n`)
    /// to `out`.
    pub fn feed(&mut self, input: &[u8], out: &mut String) {
        let rest = self.plain_lines(input, out);
        let sink = &mut self.sink;
        self.scanner.feed(rest, |ev| sink.event(&ev, out));
    }

    /// The commonest output, whole lines of printable ASCII, without an
    /// event per line: when nothing is held (no sequence, no partial
    /// character, the cursor at the end of the line), the longest prefix of
    /// `input` made of such lines, each ending in `\n`, is appended as it
    /// is, as the scanner and the line buffer would have appended it.
    /// Returns the rest.
    fn plain_lines<'i>(&mut self, input: &'i [u8], out: &mut String) -> &'i [u8] {
        let sink = &mut self.sink;
        let line = &mut sink.line;
        if self.scanner.in_sequence()
            || self.scanner.pending() > 0
            || sink.decoder.has_pending()
            || line.cursor != line.text.len()
        {
            return input;
        }
        // (A line past the bound would be released in pieces, the same
        // bytes in the same order: the bound does not matter here.)
        let plain = plain_prefix(input);
        let end = memchr::memrchr(b'\n', &input[..plain]).map_or(0, |at| at + 1);
        let Ok(lines) = std::str::from_utf8(&input[..end]) else {
            return input;
        };
        if lines.is_empty() {
            return input;
        }
        sink.overflow = None;
        line.emit(out);
        out.push_str(lines);
        &input[end..]
    }

    /// The unfinished current line as it reads now (for example a prompt
    /// waiting for input).
    pub fn current_line(&self) -> String {
        self.sink.line.text.clone()
    }

    /// Ends the stream: appends the unfinished line (without a newline),
    /// after what an unfinished control string gives back.
    pub fn finish(&mut self, out: &mut String) {
        let sink = &mut self.sink;
        self.scanner.flush(|ev| sink.event(&ev, out));
        let line = &mut sink.line;
        sink.decoder.finish(&mut |s| line.write(s, out));
        line.emit(out);
    }
}

/// The length of the longest prefix of `input` made of printable ASCII
/// and `\n`, checked a block at a time (a check without an early exit in
/// the block, which the compiler vectorizes).
fn plain_prefix(input: &[u8]) -> usize {
    let plain = |b: u8| (0x20..0x7f).contains(&b) || b == b'\n';
    let mut at = 0;
    for block in input.chunks_exact(32) {
        if !block.iter().fold(true, |all, &b| all & plain(b)) {
            break;
        }
        at += 32;
    }
    at + input[at..]
        .iter()
        .position(|&b| !plain(b))
        .unwrap_or(input.len() - at)
}

/// True when `raw` begins a control string (`ESC` and its introducer).
fn opens_string(raw: &[u8]) -> bool {
    raw.first() == Some(&0x1b) && matches!(raw.get(1), Some(b']' | b'P' | b'_' | b'^' | b'X'))
}

/// `payload` from its first C0 control (or DEL) on; empty without one.
fn from_first_control(payload: &[u8]) -> &[u8] {
    let at = payload
        .iter()
        .position(|&b| b < 0x20 || b == 0x7f)
        .unwrap_or(payload.len());
    &payload[at..]
}

impl Sink {
    fn event(&mut self, ev: &Event<'_>, out: &mut String) {
        match ev.token {
            Token::Text(bytes) => {
                self.overflow = None;
                let line = &mut self.line;
                self.decoder.decode(bytes, &mut |s| line.write(s, out));
            }
            Token::Overflow => self.overflowed(ev.raw, out),
            _ => {
                self.overflow = None;
                self.finish_text(out);
                match ev.token {
                    Token::Control(c) => self.line.control(c, out),
                    Token::Csi(csi) => self.line.csi(&csi),
                    Token::Str {
                        terminator: Terminator::Aborted,
                        payload,
                        ..
                    } => self.give_back(from_first_control(payload), out),
                    Token::Cancelled if opens_string(ev.raw) => {
                        self.give_back(from_first_control(&ev.raw[2..]), out);
                    }
                    _ => {}
                }
            }
        }
    }

    /// One piece of a sequence past [`MAX_PENDING`](crate::MAX_PENDING):
    /// the first of a control string gives back what follows its first
    /// control, every later piece is output.
    fn overflowed(&mut self, raw: &[u8], out: &mut String) {
        // Only the first piece starts with ESC (a later one, with its
        // `ESC \` terminator only).
        let first =
            self.overflow.is_none() || (raw.first() == Some(&0x1b) && raw.get(1) != Some(&b'\\'));
        if first {
            self.finish_text(out);
            let string = opens_string(raw);
            self.overflow = Some(string);
            if string {
                self.give_back(from_first_control(&raw[2..]), out);
            }
        } else if self.overflow == Some(true) {
            self.give_back(raw, out);
        }
    }

    /// Projects bytes a string gave back as output (they hold no sequence
    /// but, at the end, an `ESC \` or a lone `ESC`, which are dropped).
    fn give_back(&mut self, bytes: &[u8], out: &mut String) {
        let (line, decoder) = (&mut self.line, &mut self.decoder);
        let mut handle = |ev: Event<'_>| match ev.token {
            Token::Text(t) => decoder.decode(t, &mut |s| line.write(s, out)),
            Token::Control(c) => {
                decoder.finish(&mut |s| line.write(s, out));
                line.control(c, out);
            }
            _ => decoder.finish(&mut |s| line.write(s, out)),
        };
        self.given_back.feed(bytes, &mut handle);
        self.given_back.flush(&mut handle);
    }

    fn finish_text(&mut self, out: &mut String) {
        let line = &mut self.line;
        self.decoder.finish(&mut |s| line.write(s, out));
    }
}

impl LineBuffer {
    fn write(&mut self, mut s: &str, out: &mut String) {
        while !s.is_empty() {
            if self.cursor == self.text.len() {
                s = self.append(s, out);
            } else {
                s = self.overwrite(s, out);
            }
        }
    }

    /// Appends at the end, up to the character that reaches the bound.
    fn append<'s>(&mut self, s: &'s str, out: &mut String) -> &'s str {
        let need = self.max - self.text.len();
        if s.len() < need {
            self.text.push_str(s);
            self.cursor = self.text.len();
            return "";
        }
        let mut cut = need;
        while !s.is_char_boundary(cut) {
            cut += 1;
        }
        self.text.push_str(&s[..cut]);
        self.emit(out);
        &s[cut..]
    }

    /// Replaces the character under the cursor with the first of `s`.
    fn overwrite<'s>(&mut self, s: &'s str, out: &mut String) -> &'s str {
        let mut chars = s.chars();
        let Some(c) = chars.next() else {
            return s;
        };
        let old = self.text[self.cursor..]
            .chars()
            .next()
            .map_or(0, char::len_utf8);
        let mut buf = [0u8; 4];
        let new = c.encode_utf8(&mut buf);
        self.text.replace_range(self.cursor..self.cursor + old, new);
        self.cursor += new.len();
        if self.text.len() >= self.max {
            self.emit(out);
        }
        chars.as_str()
    }

    fn control(&mut self, c: u8, out: &mut String) {
        match c {
            b'\n' | 0x0b | 0x0c => {
                self.emit(out);
                out.push('\n');
            }
            b'\r' => self.cursor = 0,
            0x08 => self.back(1),
            b'\t' => self.write("\t", out),
            _ => {}
        }
    }

    fn csi(&mut self, csi: &Csi<'_>) {
        if !matches!(csi.final_byte, b'K' | b'D' | b'C' | b'G')
            || csi.prefix().is_some()
            || !csi.intermediates.is_empty()
        {
            return;
        }
        let Some(params) = csi.strict_params() else {
            return;
        };
        let n = params.get(0, 1).max(1) as usize;
        match csi.final_byte {
            b'K' => self.erase(params.get(0, 0)),
            b'D' => self.back(n),
            b'C' => self.move_to(self.column().saturating_add(n)),
            _ => self.move_to(n - 1),
        }
    }

    /// The cursor's column, in characters.
    fn column(&self) -> usize {
        self.text[..self.cursor].chars().count()
    }

    fn back(&mut self, n: usize) {
        for _ in 0..n {
            match self.text[..self.cursor].chars().next_back() {
                Some(c) => self.cursor -= c.len_utf8(),
                None => break,
            }
        }
    }

    /// Moves to column `col`, padding with spaces past the end (never to or
    /// past the bound).
    fn move_to(&mut self, col: usize) {
        match self.text.char_indices().nth(col) {
            Some((i, _)) => self.cursor = i,
            None => {
                let have = self.text.chars().count();
                let room = self.max.saturating_sub(self.text.len() + 1);
                let pad = col.saturating_sub(have).min(room);
                self.text.extend(std::iter::repeat_n(' ', pad));
                self.cursor = self.text.len();
            }
        }
    }

    fn erase(&mut self, how: u32) {
        match how {
            0 => self.text.truncate(self.cursor),
            1 => {
                // Columns 0..=cursor become blanks; they are 1 byte each, so
                // the cursor's byte index becomes its column.
                let col = self.column();
                let end = self.column_to_byte(col + 1);
                let blanks = self.text[..end].chars().count();
                self.text.replace_range(..end, &" ".repeat(blanks));
                self.cursor = col;
            }
            2 => {
                let col = self.column();
                self.text.clear();
                self.text.extend(std::iter::repeat_n(' ', col));
                self.cursor = col;
            }
            _ => {}
        }
    }

    fn column_to_byte(&self, col: usize) -> usize {
        self.text
            .char_indices()
            .nth(col)
            .map_or(self.text.len(), |(i, _)| i)
    }

    fn emit(&mut self, out: &mut String) {
        out.push_str(&self.text);
        self.text.clear();
        self.cursor = 0;
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use proptest::prelude::*;

    /// The projection without the plain-lines path: every byte through
    /// the scanner's events.
    fn by_events(input: &[&[u8]], max: usize) -> String {
        let mut p = TextProjector::with_max_line(max);
        let mut out = String::new();
        for chunk in input {
            let sink = &mut p.sink;
            p.scanner.feed(chunk, |ev| sink.event(&ev, &mut out));
        }
        p.finish(&mut out);
        out
    }

    fn projected(input: &[&[u8]], max: usize) -> String {
        let mut p = TextProjector::with_max_line(max);
        let mut out = String::new();
        for chunk in input {
            p.feed(chunk, &mut out);
        }
        p.finish(&mut out);
        out
    }

    /// Pieces that meet the plain path's edges: plain lines, a line kept
    /// open, CR overwrites, erase-in-line, tabs, backspace, split UTF-8,
    /// sequences and control strings, cut anywhere.
    fn piece() -> impl Strategy<Value = Vec<u8>> {
        prop_oneof![
            Just(b"line\n".to_vec()),
            Just(b"y\ny\ny\n".to_vec()),
            Just(b"abc".to_vec()),
            Just(b"\r".to_vec()),
            Just(b"\r\n".to_vec()),
            Just(b"\x1b[K".to_vec()),
            Just(b"\x1b[2D".to_vec()),
            Just(b"\t".to_vec()),
            Just(b"\x08".to_vec()),
            Just("é€".as_bytes().to_vec()),
            Just(b"\xe2\x82".to_vec()),
            Just(b"\x1b]0;title\x07".to_vec()),
            Just(b"\x1b]0;open\n".to_vec()),
            Just(b"\x1b".to_vec()),
            Just(vec![b'x'; 40]),
            Just(b"\n".to_vec()),
        ]
    }

    proptest! {
        #[test]
        fn plain_lines_project_as_the_events_do(
            pieces in proptest::collection::vec(piece(), 0..40),
            cuts in proptest::collection::vec(0usize..64, 0..8),
            max in prop_oneof![Just(8usize), Just(32), Just(DEFAULT_MAX_LINE)],
        ) {
            let stream: Vec<u8> = pieces.concat();
            let mut chunks: Vec<&[u8]> = Vec::new();
            let mut at = 0;
            for c in cuts {
                let end = (at + c).min(stream.len());
                chunks.push(&stream[at..end]);
                at = end;
            }
            chunks.push(&stream[at..]);
            prop_assert_eq!(projected(&chunks, max), by_events(&chunks, max));
        }
    }
}
