//! What a session showed the people watching it, kept for one who comes
//! back: the last [`SHOWN_BYTES`] of display output, numbered from the
//! session's start. Kept from the first watch on (a person's session), so
//! that what scrolled past while a person's link was down can be replayed
//! to them when it is back, up to that bound; a session nobody ever
//! watched keeps nothing and builds no display output.

use std::collections::VecDeque;

/// The most display output kept for a replay.
pub(crate) const SHOWN_BYTES: usize = 512 * 1024;

/// The display output kept, and its numbering.
#[derive(Debug, Default)]
pub(crate) struct Shown {
    /// On once someone watched.
    kept: bool,
    ring: VecDeque<u8>,
    /// The number of the byte after the last one shown.
    end: u64,
}

impl Shown {
    /// From now on, display output is kept.
    pub(crate) fn keep(&mut self) {
        self.kept = true;
    }

    /// Display output must be built even with nobody watching.
    pub(crate) fn kept(&self) -> bool {
        self.kept
    }

    /// Records `bytes` as shown.
    pub(crate) fn push(&mut self, bytes: &[u8]) {
        if !self.kept {
            return;
        }
        self.end += bytes.len() as u64;
        let tail = bytes
            .get(bytes.len().saturating_sub(SHOWN_BYTES)..)
            .unwrap_or(bytes);
        let over = (self.ring.len() + tail.len()).saturating_sub(SHOWN_BYTES);
        self.ring.drain(..over.min(self.ring.len()));
        self.ring.extend(tail);
    }

    /// The number of the next byte to be shown.
    pub(crate) fn end(&self) -> u64 {
        self.end
    }

    /// What was shown from byte `from` on, when all of it is still kept.
    pub(crate) fn since(&self, from: u64) -> Option<Vec<u8>> {
        let back = usize::try_from(self.end.checked_sub(from)?).ok()?;
        if back > self.ring.len() {
            return None;
        }
        Some(
            self.ring
                .iter()
                .skip(self.ring.len() - back)
                .copied()
                .collect(),
        )
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn what_is_kept_is_replayed_from_any_byte_within_the_bound() {
        let mut s = Shown::default();
        s.push(b"not kept");
        assert_eq!((s.end(), s.since(0)), (0, Some(Vec::new())));
        s.keep();
        s.push(b"hello ");
        s.push(b"world");
        assert_eq!(s.end(), 11);
        assert_eq!(s.since(6).unwrap(), b"world");
        assert_eq!(s.since(11).unwrap(), b"");
        assert_eq!(s.since(12), None, "from the future");
        let big = vec![b'x'; SHOWN_BYTES];
        s.push(&big);
        assert_eq!(s.since(0), None, "past the bound");
        assert_eq!(s.since(11).unwrap(), big);
        s.push(b"!");
        assert_eq!(s.since(11), None);
        assert_eq!(s.since(12).unwrap().len(), SHOWN_BYTES);
        assert_eq!(s.since(s.end() - 1).unwrap(), b"!");
    }
}
