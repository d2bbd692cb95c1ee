//! Head+tail clipping: keep the first H and last T bytes of text, count
//! exactly what was left out, and never split a UTF-8 character.

use std::collections::VecDeque;

use crate::bytelog::append_bounded;

/// Streaming head+tail clip of UTF-8 text.
#[derive(Clone, Debug)]
pub struct HeadTailClip {
    head: String,
    head_max: usize,
    head_closed: bool,
    tail: VecDeque<u8>,
    tail_max: usize,
    total: u64,
}

/// The clipped text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Clipped {
    /// The first bytes kept.
    pub head: String,
    /// The last bytes kept.
    pub tail: String,
    /// Bytes between head and tail that were left out.
    pub omitted: u64,
    /// Bytes pushed in all.
    pub total: u64,
}

impl Clipped {
    /// True when nothing was left out.
    pub fn is_complete(&self) -> bool {
        self.omitted == 0
    }

    /// Head and tail joined with `marker` where bytes were left out, when
    /// any were (`marker` may mention [`Clipped::omitted`]).
    pub fn render(&self, marker: impl FnOnce(u64) -> String) -> String {
        if self.is_complete() {
            return format!("{}{}", self.head, self.tail);
        }
        format!("{}{}{}", self.head, marker(self.omitted), self.tail)
    }
}

impl HeadTailClip {
    /// Keeps up to `head` bytes from the start and `tail` bytes from the end.
    pub fn new(head: usize, tail: usize) -> Self {
        HeadTailClip {
            head: String::new(),
            head_max: head,
            head_closed: head == 0,
            tail: VecDeque::new(),
            tail_max: tail,
            total: 0,
        }
    }

    /// Keeps `limit` bytes in all: half from the start, the rest from the
    /// end (how every result's output is clipped).
    pub fn halves(limit: usize) -> Self {
        HeadTailClip::new(limit / 2, limit - limit / 2)
    }

    /// Appends text.
    pub fn push(&mut self, mut text: &str) {
        self.total += text.len() as u64;
        if !self.head_closed {
            let room = self.head_max - self.head.len();
            let mut cut = room.min(text.len());
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            self.head.push_str(&text[..cut]);
            text = &text[cut..];
            if !text.is_empty() {
                self.head_closed = true;
            }
        }
        append_bounded(&mut self.tail, text.as_bytes(), self.tail_max);
    }

    /// Bytes pushed so far.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// The clip as it stands.
    pub fn clipped(&self) -> Clipped {
        let (a, b) = self.tail.as_slices();
        let mut tail = [a, b].concat();
        // Drop a character whose leading bytes fell off the front.
        let skip = tail
            .iter()
            .position(|b| (b & 0xc0) != 0x80)
            .unwrap_or(tail.len());
        tail.drain(..skip);
        let tail = String::from_utf8(tail).unwrap_or_default();
        let kept = (self.head.len() + tail.len()) as u64;
        Clipped {
            head: self.head.clone(),
            tail,
            omitted: self.total - kept,
            total: self.total,
        }
    }
}

/// What stands between head and tail in a clipped result: the number of
/// characters left out.
pub fn omitted_marker(chars: u64) -> String {
    format!("\n[… {chars} characters omitted …]\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn halves_keep_the_first_and_last_bytes_of_the_limit() {
        let mut clip = HeadTailClip::halves(5);
        clip.push("0123456789");
        let c = clip.clipped();
        assert_eq!(
            (c.head.as_str(), c.tail.as_str(), c.omitted),
            ("01", "789", 5)
        );
        assert_eq!(
            c.render(omitted_marker),
            "01\n[… 5 characters omitted …]\n789"
        );
        let mut clip = HeadTailClip::halves(10);
        clip.push("0123456789");
        assert!(clip.clipped().is_complete());
    }
}
