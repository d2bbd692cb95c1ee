//! Text from elsewhere (a session's name, its working directory, the name
//! of the program in its foreground, a host) made safe to print on a
//! person's terminal: the characters that would act instead of show are
//! shown escaped, so such text cannot move the cursor, recolour, retitle
//! or reorder what the person sees.

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
    let passes = |c: char| !is_unsafe(c) || (keep_lines && matches!(c, '\n' | '\t'));
    if text.chars().all(passes) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            c if passes(c) => out.push(c),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_ascii() => out.push_str(&format!("\\x{:02x}", c as u32)),
            c => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
        }
    }
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
}
