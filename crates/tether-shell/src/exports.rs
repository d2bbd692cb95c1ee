//! Reading the exported-variables snapshot a shell writes at every end mark
//! (`export -p`, or pwsh's `$env:` lines) back into names and values, so
//! the engine learns the secret values a session sets itself.
//!
//! Formats, as each shell prints them:
//! - bash: `declare -x N="v"` (`\` before `"`, `\`, `$` and `` ` ``),
//!   `declare -x N=$'v'` when `v` has control or non-ASCII bytes, and
//!   `declare -x N` for a variable exported without a value;
//! - zsh: `export N=v`, quoted as needed (`'…'`, `\'`, `$'…'` with C
//!   escapes and zsh's `\M-` / `\C-` meta and control notation);
//! - dash and busybox sh: `export N='v'` (`'"'"'` for a quote);
//! - pwsh (the dialect's own snapshot): `$env:N = 'v'` (`''` for a quote);
//! - fish (the dialect's own snapshot): `set -gx N 'v'` (`\\` and `\'`).
//!
//! Values are bytes (a value need not be UTF-8). A line this parser does not
//! recognise is skipped.

/// Every `(name, value)` in `snapshot`, in order (a variable exported
/// without a value is left out).
pub fn parse_exports(snapshot: &[u8]) -> Vec<(String, Vec<u8>)> {
    let mut p = Parser { s: snapshot, at: 0 };
    let mut out = Vec::new();
    while p.at < p.s.len() {
        p.skip_blanks_and_newlines();
        if p.at >= p.s.len() {
            break;
        }
        if let Some(pair) = p.entry() {
            out.push(pair);
        }
        p.skip_line();
    }
    out
}

struct Parser<'a> {
    s: &'a [u8],
    at: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.at).copied()
    }

    fn eat(&mut self, prefix: &[u8]) -> bool {
        if self.s[self.at..].starts_with(prefix) {
            self.at += prefix.len();
            true
        } else {
            false
        }
    }

    fn skip_blanks(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t')) {
            self.at += 1;
        }
    }

    fn skip_blanks_and_newlines(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    /// Skips the rest of the current line (after an entry, nothing; after
    /// an unknown line, all of it).
    fn skip_line(&mut self) {
        while let Some(c) = self.peek() {
            self.at += 1;
            if c == b'\n' {
                break;
            }
        }
    }

    /// One entry at the start of a line, `None` when the line is not one.
    fn entry(&mut self) -> Option<(String, Vec<u8>)> {
        if self.eat(b"$env:") {
            return self.pwsh_entry();
        }
        if self.eat(b"set -gx ") {
            return self.fish_entry();
        }
        let word = self.bare_word();
        if !matches!(word, b"declare" | b"typeset" | b"export" | b"readonly") {
            return None;
        }
        self.skip_blanks();
        // Flags: `-x`, `-rx`, `-ix`; `--` ends them.
        while self.peek() == Some(b'-') {
            let end = self.bare_word() == b"--";
            self.skip_blanks();
            if end {
                break;
            }
        }
        let name = self.name()?;
        if !self.eat(b"=") {
            return None;
        }
        let value = self.shell_word();
        Some((name, value))
    }

    /// `$env:N = 'v'` (after `$env:`).
    fn pwsh_entry(&mut self) -> Option<(String, Vec<u8>)> {
        let start = self.at;
        while self.peek().is_some_and(|c| c != b' ' && c != b'\n') {
            self.at += 1;
        }
        let name = String::from_utf8_lossy(&self.s[start..self.at]).into_owned();
        self.skip_blanks();
        if !self.eat(b"=") {
            return None;
        }
        self.skip_blanks();
        if !self.eat(b"'") {
            return None;
        }
        let mut value = Vec::new();
        while let Some(c) = self.peek() {
            self.at += 1;
            if c == b'\'' {
                if self.peek() == Some(b'\'') {
                    self.at += 1;
                    value.push(b'\'');
                    continue;
                }
                return Some((name, value));
            }
            value.push(c);
        }
        None
    }

    /// `set -gx N 'v'` (after `set -gx `): fish's single quotes, in which
    /// only `\\` and `\'` are escapes.
    fn fish_entry(&mut self) -> Option<(String, Vec<u8>)> {
        let name = self.name()?;
        self.skip_blanks();
        if !self.eat(b"'") {
            return None;
        }
        let mut value = Vec::new();
        while let Some(c) = self.peek() {
            self.at += 1;
            match c {
                b'\\' if matches!(self.peek(), Some(b'\\' | b'\'')) => {
                    value.extend(self.peek());
                    self.at += 1;
                }
                b'\'' => return Some((name, value)),
                c => value.push(c),
            }
        }
        None
    }

    /// Bytes up to a blank, a newline or `=`.
    fn bare_word(&mut self) -> &[u8] {
        let start = self.at;
        while self
            .peek()
            .is_some_and(|c| !matches!(c, b' ' | b'\t' | b'\n' | b'='))
        {
            self.at += 1;
        }
        &self.s[start..self.at]
    }

    /// A variable name (`[A-Za-z_][A-Za-z0-9_]*`).
    fn name(&mut self) -> Option<String> {
        let start = self.at;
        while self
            .peek()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == b'_')
        {
            self.at += 1;
        }
        let name = &self.s[start..self.at];
        let ok = name
            .first()
            .is_some_and(|c| c.is_ascii_alphabetic() || *c == b'_');
        ok.then(|| String::from_utf8_lossy(name).into_owned())
    }

    /// One shell word: bare bytes, `\x`, `'…'`, `"…"` and `$'…'` pieces,
    /// up to an unquoted blank or newline.
    fn shell_word(&mut self) -> Vec<u8> {
        let mut out = Vec::new();
        while let Some(c) = self.peek() {
            match c {
                b' ' | b'\t' | b'\n' => break,
                b'\'' => {
                    self.at += 1;
                    while let Some(c) = self.peek() {
                        self.at += 1;
                        if c == b'\'' {
                            break;
                        }
                        out.push(c);
                    }
                }
                b'"' => {
                    self.at += 1;
                    self.double_quoted(&mut out);
                }
                b'$' if self.s.get(self.at + 1) == Some(&b'\'') => {
                    self.at += 2;
                    self.ansi_c(&mut out);
                }
                b'\\' => {
                    self.at += 1;
                    match self.peek() {
                        Some(b'\n') => self.at += 1,
                        Some(c) => {
                            self.at += 1;
                            out.push(c);
                        }
                        None => {}
                    }
                }
                _ => {
                    self.at += 1;
                    out.push(c);
                }
            }
        }
        out
    }

    /// The rest of a `"…"` piece.
    fn double_quoted(&mut self, out: &mut Vec<u8>) {
        while let Some(c) = self.peek() {
            self.at += 1;
            match c {
                b'"' => return,
                b'\\' => match self.peek() {
                    Some(e @ (b'"' | b'\\' | b'$' | b'`')) => {
                        self.at += 1;
                        out.push(e);
                    }
                    Some(b'\n') => self.at += 1,
                    _ => out.push(b'\\'),
                },
                _ => out.push(c),
            }
        }
    }

    /// The rest of a `$'…'` piece.
    fn ansi_c(&mut self, out: &mut Vec<u8>) {
        while let Some(c) = self.peek() {
            self.at += 1;
            match c {
                b'\'' => return,
                b'\\' => {
                    let b = self.escape();
                    out.extend_from_slice(&b);
                }
                _ => out.push(c),
            }
        }
    }

    /// One escape inside `$'…'` (after the backslash).
    fn escape(&mut self) -> Vec<u8> {
        let Some(c) = self.peek() else {
            return vec![b'\\'];
        };
        self.at += 1;
        let byte = match c {
            b'a' => 0x07,
            b'b' => 0x08,
            b'e' | b'E' => 0x1b,
            b'f' => 0x0c,
            b'n' => b'\n',
            b'r' => b'\r',
            b't' => b'\t',
            b'v' => 0x0b,
            b'0'..=b'7' => {
                let mut v = u32::from(c - b'0');
                for _ in 0..2 {
                    match self.peek() {
                        Some(d @ b'0'..=b'7') => {
                            self.at += 1;
                            v = v * 8 + u32::from(d - b'0');
                        }
                        _ => break,
                    }
                }
                (v & 0xff) as u8
            }
            b'x' => match self.hex(2) {
                Some(v) => (v & 0xff) as u8,
                None => return b"\\x".to_vec(),
            },
            b'u' | b'U' => {
                let digits = if c == b'u' { 4 } else { 8 };
                let Some(v) = self.hex(digits) else {
                    return vec![b'\\', c];
                };
                let ch = char::from_u32(v).unwrap_or(char::REPLACEMENT_CHARACTER);
                return ch.to_string().into_bytes();
            }
            b'c' => match self.peek() {
                Some(x) => {
                    self.at += 1;
                    control(x)
                }
                None => return b"\\c".to_vec(),
            },
            // zsh: `\M-X` is X with the high bit set, `\C-X` a control
            // character (X may itself be an escape).
            b'M' | b'C' if self.peek() == Some(b'-') => {
                self.at += 1;
                let inner = match self.peek() {
                    Some(b'\\') => {
                        self.at += 1;
                        self.escape()
                    }
                    Some(x) => {
                        self.at += 1;
                        vec![x]
                    }
                    None => Vec::new(),
                };
                let Some(&x) = inner.first() else {
                    return Vec::new();
                };
                if c == b'M' { x | 0x80 } else { control(x) }
            }
            other => other,
        };
        vec![byte]
    }

    /// Up to `max` hex digits, `None` when there is none.
    fn hex(&mut self, max: usize) -> Option<u32> {
        let mut v = 0u32;
        let mut n = 0;
        while n < max {
            let Some(d) = self.peek().and_then(|c| (c as char).to_digit(16)) else {
                break;
            };
            self.at += 1;
            v = v * 16 + d;
            n += 1;
        }
        (n > 0).then_some(v)
    }
}

/// `^X`: the control character for `x` (`?` is DEL).
fn control(x: u8) -> u8 {
    if x == b'?' { 0x7f } else { x & 0x1f }
}
