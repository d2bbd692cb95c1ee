//! A file's pieces written or read with many requests outstanding at once,
//! within a window of permits shared between files, in order.

use std::collections::VecDeque;
use std::sync::Arc;

use russh_sftp::client::error::Error as RawError;
use russh_sftp::protocol::StatusCode;
use tokio::sync::Semaphore;
use tokio::task::JoinHandle;

use super::{Handle, Sftp};
use crate::error::SshError;

impl Sftp {
    /// A writer for `h` that keeps up to the `window`'s permits of writes
    /// outstanding (the window may be shared by several files).
    pub fn writer<'a>(&'a self, h: &'a Handle, window: Arc<Semaphore>) -> Writer<'a> {
        Writer {
            sftp: self,
            handle: h,
            window,
            offset: 0,
            pending: VecDeque::new(),
        }
    }

    /// A reader for `h` that keeps up to the `window`'s permits of reads
    /// outstanding, reading `size` bytes (fewer when the file ends first).
    pub fn reader<'a>(&'a self, h: &'a Handle, size: u64, window: Arc<Semaphore>) -> Reader<'a> {
        Reader {
            sftp: self,
            handle: h,
            window,
            size,
            asked: 0,
            pending: VecDeque::new(),
        }
    }
}

type Pending<T> = JoinHandle<Result<T, RawError>>;

/// A read asked for: its offset, its length, its answer to come.
type Ahead = (u64, u32, Pending<Option<Vec<u8>>>);

/// Writes pieces of a file in order, many at once.
pub struct Writer<'a> {
    sftp: &'a Sftp,
    handle: &'a Handle,
    window: Arc<Semaphore>,
    offset: u64,
    pending: VecDeque<Pending<()>>,
}

impl Writer<'_> {
    /// Sends `data` as the next piece (at most [`Sftp::chunk`] bytes); waits
    /// only while the window is full. An earlier piece's failure is
    /// returned here or by [`Writer::finish`].
    pub async fn write(&mut self, data: Vec<u8>) -> Result<(), SshError> {
        while self.pending.front().is_some_and(JoinHandle::is_finished) {
            self.settle_front().await?;
        }
        let permit = Arc::clone(&self.window)
            .acquire_owned()
            .await
            .map_err(|_| {
                self.sftp
                    .fail("write", &self.handle.path, RawError::Timeout)
            })?;
        let (raw, h, offset) = (
            Arc::clone(&self.sftp.raw),
            Arc::clone(&self.handle.handle),
            self.offset,
        );
        self.offset += data.len() as u64;
        self.pending.push_back(tokio::spawn(async move {
            let r = raw.write(h.as_ref(), offset, data).await.map(drop);
            drop(permit);
            r
        }));
        Ok(())
    }

    async fn settle_front(&mut self) -> Result<(), SshError> {
        let Some(front) = self.pending.pop_front() else {
            return Ok(());
        };
        let r = self
            .sftp
            .ask(async {
                front
                    .await
                    .unwrap_or_else(|e| Err(RawError::UnexpectedBehavior(e.to_string())))
            })
            .await;
        r.map_err(|e| self.sftp.fail("write", &self.handle.path, e))
    }

    /// Waits for every piece; the bytes written.
    pub async fn finish(mut self) -> Result<u64, SshError> {
        while !self.pending.is_empty() {
            self.settle_front().await?;
        }
        Ok(self.offset)
    }
}

/// Reads a file's pieces in order, many at once.
pub struct Reader<'a> {
    sftp: &'a Sftp,
    handle: &'a Handle,
    window: Arc<Semaphore>,
    size: u64,
    asked: u64,
    pending: VecDeque<Ahead>,
}

impl Reader<'_> {
    fn spawn(&self, offset: u64, len: u32) -> Pending<Option<Vec<u8>>> {
        let (raw, h) = (Arc::clone(&self.sftp.raw), Arc::clone(&self.handle.handle));
        tokio::spawn(async move {
            match raw.read(h.as_ref(), offset, len).await {
                Ok(d) => Ok(Some(d.data)),
                Err(RawError::Status(s)) if s.status_code == StatusCode::Eof => Ok(None),
                Err(e) => Err(e),
            }
        })
    }

    /// The next piece, in order; `None` at the end.
    pub async fn next(&mut self) -> Result<Option<Vec<u8>>, SshError> {
        // Ask ahead while the window has room (one request always).
        while self.asked < self.size {
            let permit = if self.pending.is_empty() {
                Arc::clone(&self.window).acquire_owned().await.ok()
            } else {
                Arc::clone(&self.window).try_acquire_owned().ok()
            };
            let Some(permit) = permit else { break };
            permit.forget();
            let len = (self.size - self.asked).min(self.sftp.chunk);
            let len32 = u32::try_from(len).unwrap_or(u32::MAX);
            self.pending
                .push_back((self.asked, len32, self.spawn(self.asked, len32)));
            self.asked += len;
        }
        let Some((offset, len, front)) = self.pending.pop_front() else {
            return Ok(None);
        };
        self.window.add_permits(1);
        let got = self
            .sftp
            .ask(async {
                front
                    .await
                    .unwrap_or_else(|e| Err(RawError::UnexpectedBehavior(e.to_string())))
            })
            .await
            .map_err(|e| self.sftp.fail("read", &self.handle.path, e))?;
        let Some(mut data) = got else {
            // The file ended before its size: nothing more to read.
            self.drain();
            return Ok(None);
        };
        // A short answer: the rest of this piece, one request at a time.
        let want = u64::from(len);
        while (data.len() as u64) < want {
            let at = offset + data.len() as u64;
            let rest = u32::try_from(want - data.len() as u64).unwrap_or(u32::MAX);
            let more = self.spawn(at, rest);
            match self.sftp.ask(async { Ok(more.await) }).await {
                Ok(Ok(Ok(Some(more)))) if !more.is_empty() => data.extend_from_slice(&more),
                Ok(Ok(Ok(_))) => {
                    self.drain();
                    return Ok((!data.is_empty()).then_some(data));
                }
                Ok(Ok(Err(e))) => return Err(self.sftp.fail("read", &self.handle.path, e)),
                Ok(Err(e)) => {
                    let e = RawError::UnexpectedBehavior(e.to_string());
                    return Err(self.sftp.fail("read", &self.handle.path, e));
                }
                Err(e) => return Err(self.sftp.fail("read", &self.handle.path, e)),
            }
        }
        Ok(Some(data))
    }

    /// Drops the reads still out (the file ended).
    fn drain(&mut self) {
        let n = self.pending.len();
        self.pending.clear();
        self.window.add_permits(n);
        self.size = self.asked;
    }
}

impl Drop for Reader<'_> {
    fn drop(&mut self) {
        self.drain();
    }
}
