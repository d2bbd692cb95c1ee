//! A bounded byte log with running offsets: "everything since offset N",
//! and how much was dropped before the oldest byte kept.

use std::collections::VecDeque;

use crate::error::TermError;

/// Keeps the last `capacity` bytes of a stream, addressed by stream offset
/// (the count of bytes appended before a byte).
#[derive(Clone, Debug)]
pub struct ByteLog {
    buf: VecDeque<u8>,
    capacity: usize,
    end: u64,
}

/// The answer to [`ByteLog::since`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Since {
    /// Bytes between the requested offset and the oldest byte kept that were
    /// dropped (0 when nothing was lost).
    pub dropped: u64,
    /// The bytes kept from the requested offset (or the oldest kept) to the
    /// end.
    pub bytes: Vec<u8>,
    /// The offset to ask for next time: the end of the stream.
    pub next: u64,
}

impl ByteLog {
    /// A log keeping at most `capacity` bytes.
    pub fn new(capacity: usize) -> Result<Self, TermError> {
        if capacity == 0 {
            return Err(TermError::ZeroCapacity {
                what: "byte log capacity",
            });
        }
        Ok(ByteLog {
            buf: VecDeque::with_capacity(capacity.min(1 << 16)),
            capacity,
            end: 0,
        })
    }

    /// Appends bytes, dropping the oldest past the capacity.
    pub fn append(&mut self, bytes: &[u8]) {
        self.end += bytes.len() as u64;
        append_bounded(&mut self.buf, bytes, self.capacity);
    }

    /// The offset just past the last byte appended.
    pub fn end(&self) -> u64 {
        self.end
    }

    /// The offset of the oldest byte kept.
    pub fn start(&self) -> u64 {
        self.end - self.buf.len() as u64
    }

    /// Total bytes dropped from the front so far.
    pub fn dropped(&self) -> u64 {
        self.start()
    }

    /// Everything from `offset` on. An offset past the end yields nothing.
    pub fn since(&self, offset: u64) -> Since {
        let start = self.start();
        let from = offset.clamp(start, self.end);
        let skip = usize::try_from(from - start).unwrap_or(usize::MAX);
        Since {
            dropped: start.saturating_sub(offset),
            bytes: self
                .buf
                .range(skip.min(self.buf.len())..)
                .copied()
                .collect(),
            next: self.end,
        }
    }

    /// The bytes in `[from, to)` that are still kept.
    pub fn range(&self, from: u64, to: u64) -> Vec<u8> {
        let start = self.start();
        let from = from.clamp(start, self.end);
        let to = to.clamp(from, self.end);
        let a = usize::try_from(from - start).unwrap_or(usize::MAX);
        let b = usize::try_from(to - start).unwrap_or(usize::MAX);
        self.buf.range(a..b).copied().collect()
    }
}

/// Appends `bytes` to `buf`, then drops the oldest bytes past `capacity`
/// (without ever holding more than `capacity`).
pub(crate) fn append_bounded(buf: &mut VecDeque<u8>, bytes: &[u8], capacity: usize) {
    let bytes = &bytes[bytes.len().saturating_sub(capacity)..];
    let overflow = (buf.len() + bytes.len()).saturating_sub(capacity);
    buf.drain(..overflow);
    buf.extend(bytes);
}
