//! Copying a forwarded connection both ways, each write as large as what
//! was ready: a channel hands over one SSH packet (32 KiB at most) per read,
//! and a socket written once per packet costs a system call and a TCP push
//! each (tokio's `copy_bidirectional` writes each read as it comes while the
//! socket takes it). OpenSSH writes its whole channel buffer at once; so do
//! we, up to [`BUFFER`].

use std::collections::VecDeque;
use std::future::Future;
use std::io::IoSlice;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

use bytes::{Buf, Bytes, BytesMut};
use russh::client::Msg;
use russh::{Channel, ChannelMsg, ChannelReadHalf, ChannelWriteHalf};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};

/// Bytes gathered per write at most, each way.
const BUFFER: usize = 256 * 1024;

/// Bytes read from a socket at first (see `near_to_far`).
const FIRST_READ: usize = 16 * 1024;

/// Slices written per vectored write at most.
const SLICES: usize = 64;

/// [`pipe`] between a socket and an SSH channel, without a copy of our own
/// either way: the channel's packets are written to the socket as they
/// came, several per (vectored) write; what the socket gives is sent as
/// packets that share its buffer. The channel is closed at the end.
pub(super) async fn pipe_channel<S>(sock: S, channel: Channel<Msg>)
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let (mut far_read, far_write) = channel.split();
    let (mut near_read, mut near_write) = tokio::io::split(sock);
    let _ = tokio::try_join!(
        near_to_far(&mut near_read, &far_write),
        far_to_near(&mut far_read, &mut near_write)
    );
    let _ = far_write.close().await;
}

/// The socket's bytes to the channel until the socket ends (then EOF).
async fn near_to_far<R>(from: &mut R, to: &ChannelWriteHalf<Msg>) -> std::io::Result<()>
where
    R: AsyncRead + Unpin,
{
    let mut buf = BytesMut::new();
    // A short exchange (a request, an answer) needs no large buffer: the
    // room read into doubles each time a read fills it, up to BUFFER.
    let mut room = FIRST_READ;
    loop {
        buf.reserve(room);
        let n = from.read_buf(&mut buf).await?;
        if n == 0 {
            return to.eof().await.map_err(closed);
        }
        if n >= room {
            room = (room * 2).min(BUFFER);
        }
        to.data_bytes(buf.split().freeze()).await.map_err(closed)?;
    }
}

/// The channel's data to the socket until the channel ends (then the
/// socket's writing side is shut).
async fn far_to_near<W>(from: &mut ChannelReadHalf, to: &mut W) -> std::io::Result<()>
where
    W: AsyncWrite + Unpin,
{
    let mut batch = VecDeque::new();
    loop {
        let ended = take(from.wait().await, &mut batch) || gather_messages(from, &mut batch);
        write_batch(to, &mut batch).await?;
        if ended {
            return to.shutdown().await;
        }
    }
}

/// Adds to `batch` the data that has come already, without waiting, up to
/// [`BUFFER`] held: whether the channel has ended.
fn gather_messages(from: &mut ChannelReadHalf, batch: &mut VecDeque<Bytes>) -> bool {
    // As in `gather`: a no-op waker left behind is replaced at the next
    // awaited read.
    let mut cx = Context::from_waker(Waker::noop());
    while batch.iter().map(Bytes::len).sum::<usize>() < BUFFER {
        match std::pin::pin!(from.wait()).poll(&mut cx) {
            Poll::Ready(msg) => {
                if take(msg, batch) {
                    return true;
                }
            }
            Poll::Pending => break,
        }
    }
    false
}

/// Keeps a message's data; whether the channel has ended with it.
fn take(msg: Option<ChannelMsg>, batch: &mut VecDeque<Bytes>) -> bool {
    match msg {
        Some(ChannelMsg::Data { data }) => {
            if !data.is_empty() {
                batch.push_back(data);
            }
            false
        }
        Some(ChannelMsg::Eof | ChannelMsg::Close) | None => true,
        Some(_) => false,
    }
}

/// Writes every byte of `batch`, several pieces per system call.
async fn write_batch<W>(to: &mut W, batch: &mut VecDeque<Bytes>) -> std::io::Result<()>
where
    W: AsyncWrite + Unpin,
{
    while !batch.is_empty() {
        let slices: Vec<IoSlice<'_>> = batch.iter().take(SLICES).map(|b| IoSlice::new(b)).collect();
        let mut n = to.write_vectored(&slices).await?;
        if n == 0 {
            return Err(std::io::ErrorKind::WriteZero.into());
        }
        while n > 0 {
            let Some(front) = batch.front_mut() else {
                break;
            };
            let step = n.min(front.len());
            front.advance(step);
            n -= step;
            if front.is_empty() {
                batch.pop_front();
            }
        }
    }
    Ok(())
}

fn closed(e: russh::Error) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::BrokenPipe, e)
}

/// Copies both ways until both sides have ended (each end's EOF passed on
/// as a shutdown of the other's writing side), or until either fails.
pub(super) async fn pipe<A, B>(a: A, b: B)
where
    A: AsyncRead + AsyncWrite + Unpin,
    B: AsyncRead + AsyncWrite + Unpin,
{
    let (mut a_read, mut a_write) = tokio::io::split(a);
    let (mut b_read, mut b_write) = tokio::io::split(b);
    let _ = tokio::try_join!(
        one_way(&mut a_read, &mut b_write),
        one_way(&mut b_read, &mut a_write)
    );
}

/// Copies `from` to `to` until `from` ends, then shuts `to`'s writing down.
async fn one_way<R, W>(from: &mut R, to: &mut W) -> std::io::Result<()>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut buf = vec![0u8; BUFFER];
    loop {
        let n = from.read(&mut buf).await?;
        if n == 0 {
            return to.shutdown().await;
        }
        let (filled, ended) = gather(from, &mut buf, n)?;
        to.write_all(&buf[..filled]).await?;
        if ended {
            return to.shutdown().await;
        }
    }
}

/// Adds to `buf[..filled]` what `from` has ready now, without waiting:
/// the bytes now held and whether `from` has ended.
fn gather<R>(from: &mut R, buf: &mut [u8], mut filled: usize) -> std::io::Result<(usize, bool)>
where
    R: AsyncRead + Unpin,
{
    // A poll that finds nothing ready leaves the no-op waker behind; the
    // next read is awaited with the task's own waker, which replaces it.
    let mut cx = Context::from_waker(Waker::noop());
    while filled < buf.len() {
        let mut rest = ReadBuf::new(&mut buf[filled..]);
        match Pin::new(&mut *from).poll_read(&mut cx, &mut rest) {
            Poll::Ready(Ok(())) if rest.filled().is_empty() => return Ok((filled, true)),
            Poll::Ready(Ok(())) => filled += rest.filled().len(),
            Poll::Ready(Err(e)) => return Err(e),
            Poll::Pending => break,
        }
    }
    Ok((filled, false))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn both_ways_with_half_close_and_large_data() {
        let (near, mut near_peer) = tokio::io::duplex(4096);
        let (far, mut far_peer) = tokio::io::duplex(4096);
        let task = tokio::spawn(pipe(near, far));
        let data: Vec<u8> = (0..3_000_000u32).map(|i| (i % 251) as u8).collect();
        let sent = data.clone();
        let writer = tokio::spawn(async move {
            near_peer.write_all(&sent).await.unwrap();
            near_peer.shutdown().await.unwrap();
            let mut back = Vec::new();
            near_peer.read_to_end(&mut back).await.unwrap();
            back
        });
        let mut got = Vec::new();
        far_peer.read_to_end(&mut got).await.unwrap();
        assert_eq!(got, data, "what reached the far side");
        far_peer
            .write_all(b"reply after the near side's EOF")
            .await
            .unwrap();
        far_peer.shutdown().await.unwrap();
        assert_eq!(writer.await.unwrap(), b"reply after the near side's EOF");
        task.await.unwrap();
    }

    #[tokio::test]
    async fn a_batch_is_written_whole_through_short_writes() {
        let (mut near, mut peer) = tokio::io::duplex(7);
        let pieces: Vec<Bytes> = (0..100u32)
            .map(|i| Bytes::from(vec![(i % 256) as u8; (i as usize * 37) % 500]))
            .collect();
        let want: Vec<u8> = pieces.iter().flat_map(|b| b.to_vec()).collect();
        let reader = tokio::spawn(async move {
            let mut got = Vec::new();
            peer.read_to_end(&mut got).await.unwrap();
            got
        });
        let mut batch: VecDeque<Bytes> = pieces.into_iter().collect();
        write_batch(&mut near, &mut batch).await.unwrap();
        assert!(batch.is_empty());
        drop(near);
        assert_eq!(reader.await.unwrap(), want);
    }

    #[tokio::test]
    async fn a_write_that_fails_ends_the_pipe_while_the_other_end_stays_open() {
        let (near, mut near_peer) = tokio::io::duplex(64);
        let (far, far_peer) = tokio::io::duplex(64);
        let task = tokio::spawn(pipe(near, far));
        // The far end goes away; the near end stays open and keeps sending,
        // so only the failed write to the far end can end the pipe.
        drop(far_peer);
        let writer = tokio::spawn(async move {
            while near_peer.write_all(b"more").await.is_ok() {
                tokio::task::yield_now().await;
            }
        });
        tokio::time::timeout(std::time::Duration::from_secs(30), task)
            .await
            .expect("the pipe ended after the failed write")
            .unwrap();
        writer.abort();
    }
}
