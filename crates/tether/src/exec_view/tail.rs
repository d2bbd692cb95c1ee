//! A host's latest output lines for the live view, bounded in bytes (the
//! run keeps the whole output for the printing at the end).

use std::collections::VecDeque;

use tether_cluster::exec::Stream;

/// Bytes of a host's latest output kept for the view (older lines go).
pub const TAIL_BYTES: usize = 64 * 1024;

/// One line of a host's output, as it came (bytes, no newline).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Line {
    /// The stream it came on.
    pub stream: Stream,
    /// Its bytes.
    pub bytes: Vec<u8>,
}

/// A host's latest lines, at most [`TAIL_BYTES`] (and always the last).
#[derive(Clone, Debug, Default)]
pub struct Tail {
    lines: VecDeque<Line>,
    bytes: usize,
    /// Lines dropped from the front.
    pub dropped: u64,
}

impl Tail {
    pub(super) fn push(&mut self, line: Line) {
        self.bytes += line.bytes.len();
        self.lines.push_back(line);
        while self.bytes > TAIL_BYTES && self.lines.len() > 1 {
            if let Some(old) = self.lines.pop_front() {
                self.bytes -= old.bytes.len();
                self.dropped += 1;
            }
        }
    }

    /// The lines kept, oldest first.
    pub fn lines(&self) -> &VecDeque<Line> {
        &self.lines
    }
}
