//! The binary frames of an attached connection: one kind byte, a 4-byte
//! big-endian length, the payload. Terminal bytes pass as they are (no
//! JSON escaping of a flood of output).

use std::io::Read;

use tokio::io::{AsyncRead, AsyncReadExt};

/// The most a frame may carry (a frame this large is a broken peer).
pub const MAX_FRAME: usize = 1 << 24;

/// One frame.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Frame {
    /// Daemon to client: bytes for the terminal.
    Output(Vec<u8>),
    /// Client to daemon: bytes typed.
    Input(Vec<u8>),
    /// Client to daemon: the terminal's new size.
    Resize {
        /// Rows.
        rows: u16,
        /// Columns.
        cols: u16,
    },
    /// Client to daemon: leaving; the session keeps running.
    Detach,
    /// Daemon to client: the session ended (closed, or the daemon stops);
    /// the text says why.
    Ended(String),
    /// Daemon to client: the session's shell ended (it exited, or its
    /// terminal was lost) with this status (128+N for signal N), and no
    /// new one took its place; the text says how.
    ShellEnded {
        /// The exit status.
        code: i32,
        /// How it ended.
        why: String,
    },
    /// Daemon to client: the link to the session's host is down; the
    /// text says so (and what is being done) for one status line. Keys
    /// typed meanwhile are discarded; the next [`Frame::Output`] after
    /// the link is back redraws the whole screen.
    Away(String),
    /// Daemon to client: the next [`Frame::Output`] starts at this display
    /// byte (sent after each redraw; a client that only shows the frames
    /// ignores it, a relay counts from it to come back without a gap).
    Mark(u64),
}

impl Frame {
    /// The frame's bytes on the wire.
    pub fn encode(&self) -> Vec<u8> {
        let (kind, payload): (u8, &[u8]) = match self {
            Frame::Output(b) => (0, b),
            Frame::Input(b) => (1, b),
            Frame::Resize { rows, cols } => {
                let mut out = vec![2, 0, 0, 0, 4];
                out.extend_from_slice(&rows.to_be_bytes());
                out.extend_from_slice(&cols.to_be_bytes());
                return out;
            }
            Frame::Detach => (3, &[]),
            Frame::Ended(why) => (4, why.as_bytes()),
            Frame::Away(why) => (6, why.as_bytes()),
            Frame::Mark(at) => {
                let mut out = vec![7, 0, 0, 0, 8];
                out.extend_from_slice(&at.to_be_bytes());
                return out;
            }
            Frame::ShellEnded { code, why } => {
                let mut out = vec![5];
                out.extend_from_slice(&((4 + why.len()) as u32).to_be_bytes());
                out.extend_from_slice(&code.to_be_bytes());
                out.extend_from_slice(why.as_bytes());
                return out;
            }
        };
        let mut out = Vec::with_capacity(5 + payload.len());
        out.push(kind);
        out.extend_from_slice(&(payload.len() as u32).to_be_bytes());
        out.extend_from_slice(payload);
        out
    }

    fn decode(kind: u8, payload: Vec<u8>) -> std::io::Result<Frame> {
        Ok(match kind {
            0 => Frame::Output(payload),
            1 => Frame::Input(payload),
            2 if payload.len() == 4 => Frame::Resize {
                rows: u16::from_be_bytes([payload[0], payload[1]]),
                cols: u16::from_be_bytes([payload[2], payload[3]]),
            },
            3 => Frame::Detach,
            4 => Frame::Ended(String::from_utf8_lossy(&payload).into_owned()),
            5 if payload.len() >= 4 => Frame::ShellEnded {
                code: i32::from_be_bytes([payload[0], payload[1], payload[2], payload[3]]),
                why: String::from_utf8_lossy(&payload[4..]).into_owned(),
            },
            6 => Frame::Away(String::from_utf8_lossy(&payload).into_owned()),
            7 if payload.len() == 8 => {
                let mut at = [0u8; 8];
                at.copy_from_slice(&payload);
                Frame::Mark(u64::from_be_bytes(at))
            }
            _ => return Err(bad(format!("unknown frame kind {kind}"))),
        })
    }
}

fn bad(what: String) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidData, what)
}

fn length(header: [u8; 5]) -> std::io::Result<usize> {
    let len = u32::from_be_bytes([header[1], header[2], header[3], header[4]]) as usize;
    if len > MAX_FRAME {
        return Err(bad(format!(
            "a frame of {len} bytes came, over the limit of {} per frame",
            crate::lines::human_size(MAX_FRAME as u64)
        )));
    }
    Ok(len)
}

/// The error for a stream that ended inside a frame. (A payload is read
/// as its bytes come, so a header alone never costs its length.)
fn short(len: usize, got: usize) -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::UnexpectedEof,
        format!("the stream ended {got} bytes into a frame of {len}"),
    )
}

/// Reads one frame; `None` at a clean end of stream.
pub fn read_frame(r: &mut impl Read) -> std::io::Result<Option<Frame>> {
    let mut header = [0u8; 5];
    match r.read_exact(&mut header) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(e) => return Err(e),
    }
    let len = length(header)?;
    let mut payload = Vec::new();
    r.take(len as u64).read_to_end(&mut payload)?;
    if payload.len() < len {
        return Err(short(len, payload.len()));
    }
    Frame::decode(header[0], payload).map(Some)
}

/// Frames read through a buffer of its own: [`FrameReader::next`] is
/// cancel-safe (a read cut short by a losing `select!` branch keeps what
/// it read for the next call), so a loop can wait for frames beside other
/// work without a task and a channel between (one wake-up less a key for
/// `tether attach`).
pub struct FrameReader<R> {
    r: R,
    buf: Vec<u8>,
}

/// Bytes asked of the stream per read at most.
const READ_CHUNK: usize = 64 * 1024;

impl<R: AsyncRead + Unpin> FrameReader<R> {
    /// Reads frames from `r`, after the bytes already read from it
    /// (`early`).
    pub fn new(r: R, early: Vec<u8>) -> FrameReader<R> {
        FrameReader { r, buf: early }
    }

    /// The next frame; `None` at a clean end of stream.
    pub async fn next(&mut self) -> std::io::Result<Option<Frame>> {
        loop {
            if let Some(frame) = self.take_frame()? {
                return Ok(Some(frame));
            }
            // Room for more, never the announced length at once (a header
            // alone never costs its length).
            if self.buf.capacity() - self.buf.len() < 4096 {
                self.buf.reserve(READ_CHUNK);
            }
            if self.r.read_buf(&mut self.buf).await? == 0 {
                return match self.buf.len() {
                    0 => Ok(None),
                    n if n < 5 => Err(short(5, n)),
                    n => Err(short(length(header(&self.buf))?, n - 5)),
                };
            }
        }
    }

    /// A whole frame from the buffer, if one is there.
    fn take_frame(&mut self) -> std::io::Result<Option<Frame>> {
        if self.buf.len() < 5 {
            return Ok(None);
        }
        let head = header(&self.buf);
        let len = length(head)?;
        if self.buf.len() < 5 + len {
            return Ok(None);
        }
        let payload = self.buf[5..5 + len].to_vec();
        self.buf.drain(..5 + len);
        Frame::decode(head[0], payload).map(Some)
    }
}

/// The first five bytes of `buf` (at least five long).
fn header(buf: &[u8]) -> [u8; 5] {
    [buf[0], buf[1], buf[2], buf[3], buf[4]]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_frame_reader_cut_short_loses_nothing() {
        use tokio::io::AsyncWriteExt;
        let (mut tx, rx) = tokio::io::duplex(1 << 16);
        let mut reader = FrameReader::new(rx, Vec::new());
        let a = Frame::Input(b"first".to_vec()).encode();
        let b = Frame::Resize {
            rows: 30,
            cols: 100,
        }
        .encode();
        let mut stream = [a.as_slice(), b.as_slice()].concat();
        // Half of the first frame, then a read that is given up.
        tx.write_all(&stream[..4]).await.unwrap();
        let cut = tokio::time::timeout(std::time::Duration::from_millis(20), reader.next()).await;
        assert!(cut.is_err(), "no frame from half a header");
        tx.write_all(&stream[4..a.len() + 3]).await.unwrap();
        let first = reader.next().await.unwrap();
        assert_eq!(first, Some(Frame::Input(b"first".to_vec())));
        let cut = tokio::time::timeout(std::time::Duration::from_millis(20), reader.next()).await;
        assert!(cut.is_err(), "no frame from part of one");
        tx.write_all(&stream.split_off(a.len() + 3)).await.unwrap();
        drop(tx);
        assert_eq!(
            reader.next().await.unwrap(),
            Some(Frame::Resize {
                rows: 30,
                cols: 100
            })
        );
        assert_eq!(reader.next().await.unwrap(), None);
    }

    #[tokio::test]
    async fn a_frame_reader_reports_a_stream_cut_inside_a_frame() {
        let bytes = Frame::Output(vec![b'x'; 100]).encode();
        let mut reader = FrameReader::new(&bytes[..50], Vec::new());
        let err = reader.next().await.unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::UnexpectedEof);
    }

    #[test]
    fn every_frame_reads_back_as_written() {
        let frames = [
            Frame::Output(b"\x1b[1mhi\r\n".to_vec()),
            Frame::Input(vec![]),
            Frame::Resize {
                rows: 50,
                cols: 200,
            },
            Frame::Detach,
            Frame::Ended("closed".into()),
            Frame::ShellEnded {
                code: -7,
                why: "exited".into(),
            },
            Frame::Away("the link to h1 ended; reconnecting".into()),
            Frame::Mark(u64::MAX - 3),
        ];
        let wire: Vec<u8> = frames.iter().flat_map(Frame::encode).collect();
        let mut r = &wire[..];
        for f in &frames {
            assert_eq!(read_frame(&mut r).unwrap().as_ref(), Some(f));
        }
        assert_eq!(read_frame(&mut r).unwrap(), None);
    }

    #[test]
    fn an_oversized_or_unknown_frame_is_an_error() {
        let mut r = &[0u8, 0xff, 0xff, 0xff, 0xff][..];
        assert!(read_frame(&mut r).is_err());
        let mut r = &[9u8, 0, 0, 0, 0][..];
        assert!(read_frame(&mut r).is_err());
    }
}
