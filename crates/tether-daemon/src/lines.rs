//! Reading newline-ended lines with a bound: a line is collected only up
//! to the bound, so a peer that sends a huge line (or one with no newline
//! at all) costs at most the bound in memory, never the size it sends.
//!
//! Used by the daemon for its protocol lines and by `tether mcp` for its
//! JSON-RPC requests on stdin.

use tokio::io::{AsyncBufRead, AsyncBufReadExt};

/// The most bytes a hello line may have (it is a few dozen).
pub const MAX_HELLO_LINE: usize = 64 << 10;

/// The most bytes a request line to the daemon may have: 128 MiB, room for
/// a command's stdin at its limit ([`crate::protocol::MAX_STDIN`], 64 MiB,
/// which is 85.4 MiB in base64) and a long command text beside it.
pub const MAX_REQUEST_LINE: usize = 128 << 20;

/// What [`read_line`] found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LineRead {
    /// A line is in the buffer, without its newline (the last line of a
    /// stream may have none).
    Line,
    /// The stream ended with nothing more.
    Eof,
    /// The line grew past the bound before its newline: what was read of
    /// it is dropped, the rest is still unread (skip it with
    /// [`skip_line`], or close the stream).
    TooLong,
}

/// Reads one line into `line` (appending; the caller clears it), at most
/// `max` bytes without the newline. Memory stays within `max` plus the
/// reader's own buffer whatever the peer sends.
///
/// Cancel-safe: bytes taken from the reader are in `line` when the future
/// is dropped, and a later call with the same `line` goes on with the
/// same line.
pub async fn read_line<R: AsyncBufRead + Unpin>(
    r: &mut R,
    line: &mut Vec<u8>,
    max: usize,
) -> std::io::Result<LineRead> {
    loop {
        let available = r.fill_buf().await?;
        if available.is_empty() {
            return Ok(if line.is_empty() {
                LineRead::Eof
            } else {
                LineRead::Line
            });
        }
        let newline = memchr::memchr(b'\n', available);
        let part = newline.unwrap_or(available.len());
        if line.len().saturating_add(part) > max {
            // The bytes that do not fit are left unread.
            line.clear();
            line.shrink_to(0);
            return Ok(LineRead::TooLong);
        }
        line.extend_from_slice(&available[..part]);
        match newline {
            Some(at) => {
                r.consume(at + 1);
                return Ok(LineRead::Line);
            }
            None => r.consume(part),
        }
    }
}

/// Reads and drops bytes up to and including the next newline (or to the
/// end of the stream), holding none of them. Returns how many were
/// dropped. Cancel-safe: what was dropped stays dropped.
pub async fn skip_line<R: AsyncBufRead + Unpin>(r: &mut R) -> std::io::Result<u64> {
    let mut skipped = 0u64;
    loop {
        let available = r.fill_buf().await?;
        if available.is_empty() {
            return Ok(skipped);
        }
        match memchr::memchr(b'\n', available) {
            Some(at) => {
                r.consume(at + 1);
                return Ok(skipped + at as u64 + 1);
            }
            None => {
                let n = available.len();
                r.consume(n);
                skipped += n as u64;
            }
        }
    }
}

/// `bytes` in MiB or KiB, for messages.
pub fn human_size(bytes: u64) -> String {
    if bytes >= 1 << 20 && bytes.is_multiple_of(1 << 20) {
        format!("{} MiB", bytes >> 20)
    } else if bytes >= 1 << 10 && bytes.is_multiple_of(1 << 10) {
        format!("{} KiB", bytes >> 10)
    } else {
        format!("{bytes} bytes")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn lines(input: &[u8], max: usize, chunk: usize) -> Vec<Result<Vec<u8>, u64>> {
        let mut r = tokio::io::BufReader::with_capacity(chunk, input);
        let mut out = Vec::new();
        let mut line = Vec::new();
        loop {
            line.clear();
            match read_line(&mut r, &mut line, max).await.unwrap() {
                LineRead::Eof => return out,
                LineRead::Line => out.push(Ok(line.clone())),
                LineRead::TooLong => out.push(Err(skip_line(&mut r).await.unwrap())),
            }
        }
    }

    #[tokio::test]
    async fn lines_within_the_bound_pass_and_longer_ones_are_skipped_whole() {
        for chunk in [1, 2, 3, 7, 64] {
            let got = lines(b"ab\nabcdef\n\nabcd\nxyz", 4, chunk).await;
            assert_eq!(got.len(), 5, "chunk {chunk}: {got:?}");
            assert_eq!(got[0], Ok(b"ab".to_vec()));
            assert!(got[1].is_err(), "chunk {chunk}: {got:?}");
            assert_eq!(got[2], Ok(vec![]));
            assert_eq!(got[3], Ok(b"abcd".to_vec()));
            assert_eq!(got[4], Ok(b"xyz".to_vec()));
        }
    }

    #[tokio::test]
    async fn an_unended_line_over_the_bound_is_refused_without_reading_it_all() {
        let input = vec![b'x'; 1 << 16];
        let mut r = tokio::io::BufReader::with_capacity(1024, &input[..]);
        let mut line = Vec::new();
        let got = read_line(&mut r, &mut line, 4096).await.unwrap();
        assert_eq!(got, LineRead::TooLong);
        assert!(line.capacity() <= 4096, "{}", line.capacity());
        // What was not read is still there: most of the input.
        assert_eq!(skip_line(&mut r).await.unwrap() as usize, (1 << 16) - 4096);
    }

    #[test]
    fn sizes_read_as_people_write_them() {
        assert_eq!(human_size(128 << 20), "128 MiB");
        assert_eq!(human_size(64 << 10), "64 KiB");
        assert_eq!(human_size(1000), "1000 bytes");
    }
}
