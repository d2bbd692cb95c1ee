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

/// Longest line, in characters, held for overwriting; a longer line is
/// released as-is and the rest continues as a new (unterminated) line.
pub const DEFAULT_MAX_LINE: usize = 64 * 1024;

/// Streaming text projection.
#[derive(Clone, Debug)]
pub struct TextProjector {
    scanner: Scanner,
    line: LineBuffer,
    decoder: Utf8Decoder,
}

#[derive(Clone, Debug)]
struct LineBuffer {
    chars: Vec<char>,
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

    /// A projector holding at most `max` characters of the current line
    /// (at least 1).
    pub fn with_max_line(max: usize) -> Self {
        TextProjector {
            scanner: Scanner::new(),
            line: LineBuffer {
                chars: Vec::new(),
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
        self.line.chars.iter().collect()
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
    fn write(&mut self, s: &str, out: &mut String) {
        for c in s.chars() {
            if self.cursor == self.chars.len() {
                self.chars.push(c);
            } else {
                self.chars[self.cursor] = c;
            }
            self.cursor += 1;
            if self.chars.len() >= self.max {
                self.emit(out);
            }
        }
    }

    fn control(&mut self, c: u8, out: &mut String) {
        match c {
            b'\n' | 0x0b | 0x0c => {
                self.emit(out);
                out.push('\n');
            }
            b'\r' => self.cursor = 0,
            0x08 => self.cursor = self.cursor.saturating_sub(1),
            b'\t' => self.write("\t", out),
            _ => {}
        }
    }

    fn csi(&mut self, csi: &Csi<'_>) {
        if csi.prefix().is_some() || !csi.intermediates.is_empty() {
            return;
        }
        let Some(params) = csi.strict_params() else {
            return;
        };
        let n = params.get(0, 1).max(1) as usize;
        match csi.final_byte {
            b'K' => self.erase(params.get(0, 0)),
            b'D' => self.cursor = self.cursor.saturating_sub(n),
            b'C' => self.move_to(self.cursor.saturating_add(n)),
            b'G' => self.move_to(n - 1),
            _ => {}
        }
    }

    fn move_to(&mut self, col: usize) {
        let col = col.min(self.max - 1);
        if col > self.chars.len() {
            self.chars.resize(col, ' ');
        }
        self.cursor = col;
    }

    fn erase(&mut self, how: u32) {
        match how {
            0 => self.chars.truncate(self.cursor),
            1 => {
                let end = (self.cursor + 1).min(self.chars.len());
                self.chars[..end].fill(' ');
            }
            2 => {
                self.chars.clear();
                self.chars.resize(self.cursor, ' ');
            }
            _ => {}
        }
    }

    fn emit(&mut self, out: &mut String) {
        out.extend(self.chars.iter());
        self.chars.clear();
        self.cursor = 0;
    }
}
