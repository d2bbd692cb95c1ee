//! Copying a forwarded connection both ways, each write as large as what
//! was ready: a channel hands over one SSH packet (32 KiB at most) per read,
//! and a socket written once per packet costs a system call and a TCP push
//! each (tokio's `copy_bidirectional` writes each read as it comes while the
//! socket takes it). OpenSSH writes its whole channel buffer at once; so do
//! we, up to [`BUFFER`].

use std::pin::Pin;
use std::task::{Context, Poll, Waker};

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};

/// Bytes gathered per write at most, each way.
const BUFFER: usize = 256 * 1024;

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
