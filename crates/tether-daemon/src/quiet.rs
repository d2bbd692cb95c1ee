//! A Unix stream, split for the async runtime so that it wakes its thread
//! only for what someone waits for.
//!
//! tokio registers a socket for reading and writing at once, edge
//! triggered: every time the peer reads, our side becomes writable again
//! and the thread waiting in `epoll_wait` wakes for nothing. On the
//! daemon's connections (one request or one keystroke at a time) that is a
//! wake-up per message on each side: measured on an attach, 6.3 context
//! switches a keystroke, client and daemon together (4.0 with this),
//! against tmux's 1.9 (docs/BENCHMARKS.md). Here the read half is registered for readability
//! only, and the write half writes with `write(2)` directly, registering
//! for writability only while the kernel's buffer is full, and dropping
//! that registration once the write goes through.

use std::io::{self, Write};
use std::net::Shutdown;
use std::os::fd::OwnedFd;
use std::os::unix::net::UnixStream;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::unix::pipe;

/// The read half: registered with the runtime for readability only.
#[derive(Debug)]
pub struct QuietReader {
    // tokio's pipe receiver in its unchecked form registers any descriptor
    // for readability and reads it with read(2); a socket's description
    // serves as a pipe's does. `AsyncFd` would do the same, but its safe
    // constructors are deprecated and `unsafe` is denied here.
    rx: pipe::Receiver,
}

/// The write half: `write(2)` at once, a writability registration only
/// while the socket's buffer is full.
#[derive(Debug)]
pub struct QuietWriter {
    stream: UnixStream,
    /// Registered while a write waits for room; dropped after.
    waiting: Option<pipe::Sender>,
}

/// Splits a connected stream (made non-blocking here). Call it within a
/// runtime: the read half is registered with its reactor.
pub fn split(stream: UnixStream) -> io::Result<(QuietReader, QuietWriter)> {
    stream.set_nonblocking(true)?;
    let rx = pipe::Receiver::from_owned_fd_unchecked(OwnedFd::from(stream.try_clone()?))?;
    Ok((
        QuietReader { rx },
        QuietWriter {
            stream,
            waiting: None,
        },
    ))
}

impl AsyncRead for QuietReader {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.rx).poll_read(cx, buf)
    }
}

impl AsyncWrite for QuietWriter {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        loop {
            if let Some(waiting) = self.waiting.as_mut() {
                let done = std::task::ready!(Pin::new(waiting).poll_write(cx, buf));
                // Room again (or an error): no more wake-ups for room.
                self.waiting = None;
                return Poll::Ready(done);
            }
            match (&self.stream).write(buf) {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    // A registration made now reports the socket writable at
                    // once if room came in between: no wake-up is lost.
                    let fd = OwnedFd::from(self.stream.try_clone()?);
                    self.waiting = Some(pipe::Sender::from_owned_fd_unchecked(fd)?);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                done => return Poll::Ready(done),
            }
        }
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        // Nothing is buffered here.
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(match self.stream.shutdown(Shutdown::Write) {
            Err(e) if e.kind() == io::ErrorKind::NotConnected => Ok(()),
            other => other,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    #[tokio::test]
    async fn a_write_larger_than_the_socket_buffer_waits_for_room_and_arrives_whole() {
        let (a, b) = UnixStream::pair().unwrap();
        let (mut a_read, mut a_write) = split(a).unwrap();
        let (mut b_read, mut b_write) = split(b).unwrap();
        // Far more than a Unix socket buffers (about 200 KiB here): the
        // writer must wait for room, then finish.
        let sent: Vec<u8> = (0..8 << 20).map(|i| (i % 251) as u8).collect();
        let want = sent.clone();
        let writer = tokio::spawn(async move {
            a_write.write_all(&sent).await.unwrap();
            assert!(
                a_write.waiting.is_none(),
                "the writability registration stays"
            );
            a_write.shutdown().await.unwrap();
        });
        let mut got = Vec::new();
        // A wait for room that is never woken would hang: bounded.
        let within = std::time::Duration::from_secs(60);
        tokio::time::timeout(within, b_read.read_to_end(&mut got))
            .await
            .expect("the write never finished")
            .unwrap();
        writer.await.unwrap();
        assert_eq!(got.len(), want.len());
        assert!(got == want, "the bytes arrived changed");
        // And the other way, after the first direction ended.
        b_write.write_all(b"back").await.unwrap();
        b_write.shutdown().await.unwrap();
        let mut back = Vec::new();
        a_read.read_to_end(&mut back).await.unwrap();
        assert_eq!(back, b"back");
    }

    #[tokio::test]
    async fn a_peer_that_went_away_is_an_error_for_the_writer() {
        let (a, b) = UnixStream::pair().unwrap();
        let (_a_read, mut a_write) = split(a).unwrap();
        drop(b);
        let err = a_write.write_all(b"anyone?").await.unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::BrokenPipe);
    }
}
