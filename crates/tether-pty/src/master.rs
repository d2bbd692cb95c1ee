//! Reading and writing the PTY master.
//!
//! The master is non-blocking (`O_NONBLOCK`, a file-status flag shared by
//! every descriptor of it), so that [`Writer::write`] can hand the kernel a
//! keystroke at once, on the caller's thread, without waking another one.
//! The writer thread then takes only what the kernel did not accept, and
//! waits for room with `poll`. Output is read either by a thread
//! ([`read_on_thread`]) or, when a runtime outlives the PTY, by a task on
//! it ([`read_on_runtime`]): one wake-up fewer per chunk of output.

use std::os::fd::{AsFd, BorrowedFd};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, mpsc as std_mpsc};

use rustix::event::{PollFd, PollFlags};
use rustix::io::Errno;
use tether_transport::{OutputStream, TransportError};
use tokio::sync::mpsc;

use crate::local::setup;

type Pty = pty_process::blocking::Pty;

/// Output chunks buffered between the reader and the consumer; when full,
/// the reader stops reading and the kernel's flow control holds the
/// program, so a flood cannot grow memory.
const OUTPUT_QUEUE: usize = 64;
/// Bytes per read from the PTY master.
const READ_SIZE: usize = 64 * 1024;

/// Makes the master non-blocking (for every descriptor of it).
pub(crate) fn set_nonblocking(pty: &Pty) -> Result<(), TransportError> {
    use rustix::fs::OFlags;
    let fd = pty.as_fd();
    let flags = rustix::fs::fcntl_getfl(fd).map_err(|e| setup("non-blocking")(e.into()))?;
    rustix::fs::fcntl_setfl(fd, flags | OFlags::NONBLOCK)
        .map_err(|e| setup("non-blocking")(e.into()))
}

/// Bytes the reader has taken from the master, counted under a lock held
/// across each read: whoever holds the lock sees every read either done
/// and counted, or not begun. A look at the terminal that flushes the
/// kernel's pending output and then finds none unread, under this lock,
/// knows the count covers everything written before it looked
/// (`LocalPty::inspect`).
#[derive(Debug, Default)]
pub(crate) struct Delivered(Mutex<u64>);

impl Delivered {
    /// The count, locked (a poisoned lock is still usable: it is a number).
    pub(crate) fn lock(&self) -> MutexGuard<'_, u64> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// What a read of the master came to.
enum Read {
    /// Bytes, counted in `delivered` already.
    Bytes(Vec<u8>),
    /// Nothing now: wait for readiness.
    Again,
    /// EIO (every slave descriptor is closed) or another error.
    End,
}

fn read_once(fd: BorrowedFd<'_>, buf: &mut [u8], delivered: &Delivered) -> Read {
    loop {
        // The master is non-blocking: the lock is held for one system call.
        let mut count = delivered.lock();
        return match rustix::io::read(fd, &mut *buf) {
            Ok(0) => Read::End,
            Ok(n) => {
                // Counted under the lock of the read, so bytes between here
                // and the consumer never look settled.
                *count += n as u64;
                Read::Bytes(buf[..n].to_vec())
            }
            Err(Errno::INTR) => continue,
            Err(Errno::AGAIN) => Read::Again,
            Err(_) => Read::End,
        };
    }
}

/// Reads the master on a thread of its own (for a PTY spawned outside a
/// runtime that outlives it).
pub(crate) fn read_on_thread(
    pty: Arc<Pty>,
    delivered: Arc<Delivered>,
) -> Result<OutputStream, TransportError> {
    let (tx, rx) = mpsc::channel(OUTPUT_QUEUE);
    std::thread::Builder::new()
        .name("tether-pty-read".into())
        .spawn(move || {
            let mut buf = vec![0u8; READ_SIZE];
            loop {
                match read_once(pty.as_fd(), &mut buf, &delivered) {
                    Read::Bytes(chunk) => {
                        if tx.blocking_send(chunk).is_err() {
                            break;
                        }
                    }
                    // A hang-up wakes the poll too; the next read is EIO.
                    Read::Again => {
                        if !wait(pty.as_fd(), PollFlags::IN) {
                            break;
                        }
                    }
                    Read::End => break,
                }
            }
        })
        .map_err(setup("reader thread"))?;
    Ok(rx)
}

/// Reads the master in a task on `runtime`, through a readable-only
/// registration of a descriptor of its own. The stream ends if the
/// runtime shuts down first.
///
/// # Panics
///
/// When `runtime`'s IO driver is not enabled (tokio panics registering
/// the descriptor).
pub(crate) fn read_on_runtime(
    pty: &Pty,
    runtime: &tokio::runtime::Handle,
    delivered: Arc<Delivered>,
) -> Result<OutputStream, TransportError> {
    let fd = pty
        .as_fd()
        .try_clone_to_owned()
        .map_err(setup("reader descriptor"))?;
    // A pipe's receiver assumes nothing of its descriptor: it registers
    // READABLE only and reads with read(2), which is all a PTY master
    // needs (the safe `AsyncFd` constructors are deprecated).
    let source = {
        let _entered = runtime.enter();
        tokio::net::unix::pipe::Receiver::from_owned_fd_unchecked(fd)
            .map_err(setup("reader registration"))?
    };
    let (tx, rx) = mpsc::channel(OUTPUT_QUEUE);
    runtime.spawn(async move {
        let mut buf = vec![0u8; READ_SIZE];
        loop {
            if source.readable().await.is_err() {
                break;
            }
            let read = source.try_io(|| match read_once(source.as_fd(), &mut buf, &delivered) {
                Read::Again => Err(std::io::ErrorKind::WouldBlock.into()),
                other => Ok(other),
            });
            match read {
                Ok(Read::Bytes(chunk)) => {
                    if tx.send(chunk).await.is_err() {
                        break;
                    }
                }
                // Readiness cleared by `try_io`: wait again.
                Ok(Read::Again) | Err(_) => {}
                Ok(Read::End) => break,
            }
        }
    });
    Ok(rx)
}

/// Waits until `fd` is ready for `want`; false when it never will be (an
/// error, or a hang-up while waiting for room to write: nobody reads the
/// terminal any more).
fn wait(fd: BorrowedFd<'_>, want: PollFlags) -> bool {
    let mut fds = [PollFd::new(&fd, want)];
    loop {
        match rustix::event::poll(&mut fds, None) {
            Ok(_) => break,
            Err(Errno::INTR) => {}
            Err(_) => return false,
        }
    }
    let got = fds[0].revents();
    if got.intersects(want) {
        return true;
    }
    // Reading after a hang-up drains what is left, then meets EIO.
    want.contains(PollFlags::IN) && got.contains(PollFlags::HUP)
}

/// Writes `bytes` from `done` until the kernel takes no more; returns the
/// new `done` and whether the master failed (anything but "full").
fn write_some(
    fd: BorrowedFd<'_>,
    bytes: &[u8],
    mut done: usize,
    written: &AtomicU64,
) -> (usize, bool) {
    while done < bytes.len() {
        match rustix::io::write(fd, &bytes[done..]) {
            Ok(k) => {
                done += k;
                written.fetch_add(k as u64, Ordering::Release);
            }
            Err(Errno::INTR) => {}
            Err(Errno::AGAIN) => return (done, false),
            Err(_) => return (done, true),
        }
    }
    (done, false)
}

/// The ordered input of a PTY: written at once when nothing is queued,
/// else (and for what the kernel does not take) by the writer thread.
pub(crate) struct Writer {
    pty: Arc<Pty>,
    queue: Mutex<Option<std_mpsc::Sender<Vec<u8>>>>,
    /// Bytes taken by [`Writer::write`].
    accepted: AtomicU64,
    /// Bytes the kernel took; never more than `accepted`.
    written: Arc<AtomicU64>,
}

impl Writer {
    pub(crate) fn start(pty: Arc<Pty>) -> Result<Writer, TransportError> {
        let (tx, rx) = std_mpsc::channel::<Vec<u8>>();
        let written = Arc::new(AtomicU64::new(0));
        let (thread_pty, thread_written) = (Arc::clone(&pty), Arc::clone(&written));
        std::thread::Builder::new()
            .name("tether-pty-write".into())
            .spawn(move || write_queued(&thread_pty, &rx, &thread_written))
            .map_err(setup("writer thread"))?;
        Ok(Writer {
            pty,
            queue: Mutex::new(Some(tx)),
            accepted: AtomicU64::new(0),
            written,
        })
    }

    pub(crate) fn write(&self, mut bytes: Vec<u8>) -> Result<(), TransportError> {
        let guard = self.queue.lock().map_err(|_| TransportError::Closed)?;
        let tx = guard.as_ref().ok_or(TransportError::Closed)?;
        let n = bytes.len() as u64;
        // Under the lock, everything handed to the thread is written when
        // the counts meet: the thread is idle, so writing here keeps the
        // order. Accepted is counted first so that `written` never passes
        // it and `unwritten` never reads low.
        let idle = self.accepted.load(Ordering::Acquire) == self.written.load(Ordering::Acquire);
        self.accepted.fetch_add(n, Ordering::Release);
        let done = if idle {
            // A failure is left to the thread, which meets it too and
            // stops, so later writes fail as they did before.
            write_some(self.pty.as_fd(), &bytes, 0, &self.written).0
        } else {
            0
        };
        if done == bytes.len() {
            return Ok(());
        }
        bytes.drain(..done);
        let rest = bytes.len() as u64;
        tx.send(bytes).map_err(|_| {
            self.accepted.fetch_sub(rest, Ordering::Release);
            TransportError::Closed
        })
    }

    /// Bytes accepted and not yet taken by the kernel. Read `written`
    /// first: a write in between can only make this larger (unsettled).
    pub(crate) fn unwritten(&self) -> u64 {
        let written = self.written.load(Ordering::Acquire);
        self.accepted
            .load(Ordering::Acquire)
            .saturating_sub(written)
    }

    /// No more writes; the thread ends once its queue is written.
    pub(crate) fn close(&self) {
        if let Ok(mut q) = self.queue.lock() {
            q.take();
        }
    }
}

fn write_queued(pty: &Pty, rx: &std_mpsc::Receiver<Vec<u8>>, written: &AtomicU64) {
    for bytes in rx {
        let mut done = 0;
        loop {
            let (now, failed) = write_some(pty.as_fd(), &bytes, done, written);
            done = now;
            if failed || (done < bytes.len() && !wait(pty.as_fd(), PollFlags::OUT)) {
                return;
            }
            if done == bytes.len() {
                break;
            }
        }
    }
}
