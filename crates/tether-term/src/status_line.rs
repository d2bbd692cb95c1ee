//! One status line drawn over the bottom row of a person's screen (for
//! example "the link to HOST is down"), leaving the cursor, its colours
//! and the rest of the screen as they were: the cursor is saved (DECSC),
//! moved to the last row, the row cleared and the text written in reverse
//! video, cut to the width, then the cursor restored (DECRC). Whatever
//! redraws the screen next (a session's redraw) paints the row over.

use unicode_width::UnicodeWidthChar;

use crate::printable::escaped;

/// The bytes that show `text` on the last of `rows` rows, at most `cols`
/// columns wide; text that could act on the terminal is shown escaped.
pub fn status_line(rows: u16, cols: u16, text: &str) -> Vec<u8> {
    let text = escaped(text, false);
    let mut shown = String::new();
    let mut width = 0;
    for c in text.chars() {
        let w = c.width().unwrap_or(0);
        if width + w > usize::from(cols.max(1)) {
            break;
        }
        width += w;
        shown.push(c);
    }
    let mut out = Vec::with_capacity(shown.len() + 24);
    out.extend_from_slice(b"\x1b7");
    out.extend_from_slice(format!("\x1b[{};1H\x1b[0;7m\x1b[2K", rows.max(1)).as_bytes());
    out.extend_from_slice(shown.as_bytes());
    out.extend_from_slice(b"\x1b[0m\x1b8");
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn screen_after(before: &[u8], rows: u16, cols: u16, text: &str) -> vt100::Parser {
        let nz = |n| std::num::NonZeroU16::new(n).unwrap();
        let mut p = vt100::Parser::new(nz(rows), nz(cols), 0);
        p.process(before);
        p.process(&status_line(rows, cols, text));
        p
    }

    #[test]
    fn the_line_is_on_the_last_row_and_the_cursor_and_colours_stay() {
        let p = screen_after(b"\x1b[31mhello\x1b[2;3H", 5, 20, "link down");
        let s = p.screen();
        assert_eq!(s.contents_between(4, 0, 4, 20), "link down");
        assert!(s.cell(4, 0).unwrap().inverse());
        assert_eq!(s.cursor_position(), (1, 2));
        assert_eq!(s.fgcolor(), vt100::Color::Idx(1));
        assert_eq!(s.contents_between(0, 0, 0, 20), "hello");
    }

    #[test]
    fn long_or_hostile_text_is_cut_to_the_width_and_cannot_act() {
        let p = screen_after(b"", 3, 10, "\x1b[2Jab\x1b]0;t\x07cdefghijkl");
        let s = p.screen();
        let last = s.contents_between(2, 0, 2, 10);
        assert_eq!(last, "\\x1b[2Jab\\");
        assert_eq!(s.cursor_position(), (0, 0));
    }
}
