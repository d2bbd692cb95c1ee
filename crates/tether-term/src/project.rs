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

use crate::scan::Scanner;
use crate::token::{Csi, Token};
use crate::utf8::Utf8Decoder;

/// Longest line, in bytes, held for overwriting; a longer line is released
/// as-is (after the character that reaches the bound) and the rest
/// continues as a new, unterminated line.
pub const DEFAULT_MAX_LINE: usize = 64 * 1024;

/// Streaming text projection.
#[derive(Clone, Debug)]
pub struct TextProjector {
    scanner: Scanner,
    line: LineBuffer,
    decoder: Utf8Decoder,
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
            line: LineBuffer {
                text: String::new(),
                cursor: 0,
                max: max.max(1),
            },
            decoder: Utf8Decoder::new(),
        }
    }

    /// Projects one chunk, appending finished lines (each ending in `\n`)
    /// to `out`.
    pub fn feed(&mut self, input: &[u8], out: &mut String) {
        let (line, decoder) = (&mut self.line, &mut self.decoder);
        self.scanner.feed(input, |ev| {
            if let Token::Text(bytes) = ev.token {
                decoder.decode(bytes, &mut |s| line.write(s, out));
                return;
            }
            decoder.finish(&mut |s| line.write(s, out));
            match ev.token {
                Token::Control(c) => line.control(c, out),
                Token::Csi(csi) => line.csi(&csi),
                _ => {}
            }
        });
    }

    /// The unfinished current line as it reads now (for example a prompt
    /// waiting for input).
    pub fn current_line(&self) -> String {
        self.line.text.clone()
    }

    /// Ends the stream: appends the unfinished line (without a newline).
    pub fn finish(&mut self, out: &mut String) {
        self.scanner.flush(|_| {});
        let line = &mut self.line;
        self.decoder.finish(&mut |s| line.write(s, out));
        line.emit(out);
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
