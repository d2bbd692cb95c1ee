//! Text from elsewhere (a session's name, its working directory, the name
//! of the program in its foreground, a host) made safe to print on a
//! person's terminal: the characters that would act instead of show are
//! shown escaped, so such text cannot move the cursor, recolour, retitle
//! or reorder what the person sees. [`escaped`] is for text;
//! [`Escaper`] (and [`escaped_bytes`]) for a host's output bytes, as they
//! come in pieces: the one escape `tether exec`'s live view and every
//! printer of host output on a terminal use.

use std::borrow::Cow;

/// True for a character that acts on a terminal or hides itself instead
/// of showing: C0 controls (ESC among them), DEL, C1 controls, and the
/// invisible format characters that reorder or hide text (bidi controls,
/// zero-width characters, line and paragraph separators, the BOM).
pub fn is_unsafe(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061c}'
                | '\u{200b}'..='\u{200f}'
                | '\u{2028}'..='\u{202e}'
                | '\u{2060}'..='\u{2064}'
                | '\u{2066}'..='\u{206f}'
                | '\u{feff}'
        )
}

/// `text` with every [`is_unsafe`] character escaped: `\n`, `\r`, `\t`,
/// `\x1b` for the other ASCII controls, `\u{9b}` for the rest. With
/// `keep_lines`, newlines and tabs pass as they are (for messages of
/// several lines). Text with nothing to escape is borrowed.
pub fn escaped(text: &str, keep_lines: bool) -> Cow<'_, str> {
    if text.chars().all(|c| passes(c, keep_lines)) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        push_escaped(c, keep_lines, &mut out);
    }
    Cow::Owned(out)
}

/// True for a character that [`escaped`] leaves as it is.
fn passes(c: char, keep_lines: bool) -> bool {
    !is_unsafe(c) || (keep_lines && matches!(c, '\n' | '\t'))
}

/// `c` as [`escaped`] shows it, onto `out`.
fn push_escaped(c: char, keep_lines: bool, out: &mut String) {
    use std::fmt::Write;
    let _ = match c {
        c if passes(c, keep_lines) => out.write_char(c),
        '\n' => out.write_str("\\n"),
        '\r' => out.write_str("\\r"),
        '\t' => out.write_str("\\t"),
        c if c.is_ascii() => write!(out, "\\x{:02x}", c as u32),
        c => write!(out, "\\u{{{:x}}}", c as u32),
    };
}

/// A host's output bytes made safe for a person's terminal, as they come
/// in pieces: every character [`escaped`] escapes is shown the same way,
/// a byte that is not UTF-8 (a raw 8-bit C1 control among them) as
/// `\x9b`; with `keep_lines`, newlines and tabs pass, and so does a
/// carriage return right before a newline (a CRLF line end moves nothing
/// it could hide). A character cut between pieces is held (at most 4
/// bytes) until the next; the output is the same however the bytes are
/// cut.
#[derive(Clone, Debug, Default)]
pub struct Escaper {
    keep_lines: bool,
    held: Vec<u8>,
}

impl Escaper {
    /// An escaper; `keep_lines` as in [`escaped`].
    pub fn new(keep_lines: bool) -> Escaper {
        Escaper {
            keep_lines,
            held: Vec::new(),
        }
    }

    /// `bytes`, escaped, onto `out` (what may still change with the next
    /// piece held back).
    pub fn push(&mut self, bytes: &[u8], out: &mut Vec<u8>) {
        if self.held.is_empty() {
            self.run(bytes, out);
        } else {
            // Only a piece that ended inside a character (or on a CR)
            // leaves bytes held: the next piece is joined to them.
            let mut joined = std::mem::take(&mut self.held);
            joined.extend_from_slice(bytes);
            self.run(&joined, out);
        }
    }

    /// The end of the output: anything held, escaped, onto `out`.
    pub fn finish(&mut self, out: &mut Vec<u8>) {
        for b in std::mem::take(&mut self.held) {
            match b {
                b'\r' => out.extend_from_slice(b"\\r"),
                b => push_byte(b, out),
            }
        }
    }

    /// Escapes `bytes` onto `out`, holding an unfinished character or a
    /// final CR in `self.held`.
    fn run(&mut self, mut bytes: &[u8], out: &mut Vec<u8>) {
        let mut text = String::new();
        while !bytes.is_empty() {
            let plain = bytes
                .iter()
                .position(|&b| !(0x20..0x7f).contains(&b))
                .unwrap_or(bytes.len());
            out.extend_from_slice(&bytes[..plain]);
            bytes = &bytes[plain..];
            let Some(&b) = bytes.first() else { return };
            let c = if b < 0x80 {
                if self.keep_lines && b == b'\r' {
                    match bytes.get(1) {
                        None => {
                            self.held.push(b);
                            return;
                        }
                        Some(b'\n') => {
                            out.extend_from_slice(b"\r\n");
                            bytes = &bytes[2..];
                            continue;
                        }
                        Some(_) => {}
                    }
                }
                char::from(b)
            } else {
                let window = &bytes[..bytes.len().min(4)];
                let valid = match std::str::from_utf8(window) {
                    Ok(s) => s,
                    Err(e) if e.valid_up_to() > 0 => {
                        std::str::from_utf8(&window[..e.valid_up_to()]).unwrap_or_default()
                    }
                    // Cut short by the end of the piece: held for the next.
                    Err(e) if e.error_len().is_none() && bytes.len() < 4 => {
                        self.held.extend_from_slice(bytes);
                        return;
                    }
                    Err(_) => {
                        push_byte(b, out);
                        bytes = &bytes[1..];
                        continue;
                    }
                };
                match valid.chars().next() {
                    Some(c) => c,
                    None => return,
                }
            };
            let len = c.len_utf8();
            if passes(c, self.keep_lines) {
                out.extend_from_slice(&bytes[..len]);
            } else {
                text.clear();
                push_escaped(c, self.keep_lines, &mut text);
                out.extend_from_slice(text.as_bytes());
            }
            bytes = &bytes[len..];
        }
    }
}

/// A byte that is not UTF-8, shown as `\xNN`.
fn push_byte(b: u8, out: &mut Vec<u8>) {
    out.extend_from_slice(format!("\\x{b:02x}").as_bytes());
}

/// `bytes` made safe for a terminal, as [`Escaper`] does it in one piece;
/// borrowed when nothing needs escaping.
pub fn escaped_bytes(bytes: &[u8], keep_lines: bool) -> Cow<'_, [u8]> {
    let clean = |&b: &u8| (0x20..0x7f).contains(&b) || (keep_lines && matches!(b, b'\n' | b'\t'));
    if bytes.iter().all(clean) {
        return Cow::Borrowed(bytes);
    }
    let mut out = Vec::with_capacity(bytes.len() + 16);
    let mut e = Escaper::new(keep_lines);
    e.push(bytes, &mut out);
    e.finish(&mut out);
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_and_invisible_characters_are_shown_escaped() {
        assert_eq!(escaped("main", false), "main");
        assert!(matches!(escaped("/tmp/ok", false), Cow::Borrowed(_)));
        assert_eq!(escaped("a\x1b[31mb", false), "a\\x1b[31mb");
        assert_eq!(escaped("a\u{9b}2Jb", false), "a\\u{9b}2Jb");
        assert_eq!(escaped("\x7f\x07\r", false), "\\x7f\\x07\\r");
        assert_eq!(escaped("ab\u{202e}cd", false), "ab\\u{202e}cd");
        assert_eq!(escaped("x\ny\tz", false), "x\\ny\\tz");
        assert_eq!(escaped("x\ny\tz\x1b", true), "x\ny\tz\\x1b");
        assert_eq!(escaped("café ünïcode", false), "café ünïcode");
    }

    fn all(bytes: &[u8], keep_lines: bool) -> String {
        String::from_utf8(escaped_bytes(bytes, keep_lines).into_owned()).unwrap()
    }

    #[test]
    fn a_hosts_bytes_are_shown_as_the_view_shows_text() {
        let osc = b"\x1b]0;pwned\x07\x1b]52;c;aGk=\x07ok\n";
        assert_eq!(all(osc, true), "\\x1b]0;pwned\\x07\\x1b]52;c;aGk=\\x07ok\n");
        assert_eq!(all(b"a\tb\r\nc\rd\x7f", true), "a\tb\r\nc\\rd\\x7f");
        assert_eq!(all(b"a\tb\n", false), "a\\tb\\n");
        // 8-bit C1 (not UTF-8) as a byte; UTF-8 C1 and bidi as the view.
        assert_eq!(all(b"\x9b2J \xc2\x9b2J", true), "\\x9b2J \\u{9b}2J");
        assert_eq!(all("é\u{202e}ü".as_bytes(), true), "é\\u{202e}ü");
        assert_eq!(all(b"\xff\xe2\x82", true), "\\xff\\xe2\\x82");
        assert!(matches!(escaped_bytes(b"plain\n", true), Cow::Borrowed(_)));
        // The same text as `escaped` gives, for text.
        let t = "x\u{1b}[31m\u{7}é\u{2066}\t";
        assert_eq!(all(t.as_bytes(), false), escaped(t, false));
    }

    #[test]
    fn the_escape_is_the_same_however_the_bytes_are_cut() {
        let whole: &[u8] = b"a\r\nb\r\xe2\x82\xac\x1b]0;t\x07\xc2\x9b\xf0\x9f\x98\x80\xffz\r";
        let want = all(whole, true);
        for cut in 0..=whole.len() {
            for cut2 in cut..=whole.len() {
                let mut e = Escaper::new(true);
                let mut out = Vec::new();
                e.push(&whole[..cut], &mut out);
                e.push(&whole[cut..cut2], &mut out);
                e.push(&whole[cut2..], &mut out);
                e.finish(&mut out);
                assert_eq!(
                    String::from_utf8(out).unwrap(),
                    want,
                    "cut at {cut}, {cut2}"
                );
            }
        }
    }
}
