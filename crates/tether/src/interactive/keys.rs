//! The person's keys, as the bridge reads them.
//!
//! Where stdin is a terminal this process may open again, the keys are
//! read on the async runtime itself: a file description of our own for
//! the same terminal (`/proc/self/fd/0` opened anew, non-blocking, never a
//! controlling terminal), so the non-blocking flag never reaches the
//! person's shell, which shares the original description. A keystroke
//! then wakes one thread, the one that sends it, where a reader thread
//! costs a second wake-up and a channel hop per key (measured: about a
//! third of `tether ssh`'s keystroke-to-echo time; docs/BENCHMARKS.md).
//! Anything else (no `/proc`, a terminal owned by another user after
//! `su`) falls back to the reader thread of [`local_term`].

use std::os::fd::OwnedFd;

use rustix::fs::{Mode, OFlags};
use tokio::io::AsyncReadExt;
use tokio::net::unix::pipe;
use tokio::sync::mpsc;

use crate::local_term::{self, StdinReader};

/// Bytes per read: a paste arrives in few reads.
const READ_SIZE: usize = 16 * 1024;

/// Where the keys come from.
pub enum Keys {
    /// Our own non-blocking description of the terminal, registered for
    /// readability with the runtime.
    Runtime {
        /// The terminal, read with `read(2)` when the reactor says it is
        /// readable.
        tty: pipe::Receiver,
        /// The read buffer.
        buf: Vec<u8>,
    },
    /// A thread reading stdin, stopped when this is dropped.
    Thread {
        /// What it read.
        rx: mpsc::Receiver<Vec<u8>>,
        /// Its stop guard.
        _reader: StdinReader,
    },
}

impl Keys {
    /// Starts reading the keys. Must run inside the runtime that reads
    /// them.
    pub fn start() -> Keys {
        match reopen_stdin_terminal() {
            Some(tty) => Keys::Runtime {
                tty,
                buf: vec![0u8; READ_SIZE],
            },
            None => {
                let (tx, rx) = mpsc::channel(64);
                let reader = local_term::spawn_stdin_reader(tx);
                Keys::Thread {
                    rx,
                    _reader: reader,
                }
            }
        }
    }

    /// The next bytes typed; `None` when input ended (end of file, or the
    /// terminal hung up). Cancel-safe: nothing read is lost when another
    /// branch of a `select!` wins.
    pub async fn recv(&mut self) -> Option<Vec<u8>> {
        match self {
            Keys::Runtime { tty, buf } => loop {
                match tty.read(buf).await {
                    Ok(0) => return None,
                    Ok(n) => return Some(buf[..n].to_vec()),
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    // EIO: the terminal hung up.
                    Err(_) => return None,
                }
            },
            Keys::Thread { rx, .. } => rx.recv().await,
        }
    }
}

/// Our own non-blocking description of the terminal on stdin, registered
/// with the runtime for readability only; `None` when stdin is not a
/// terminal or cannot be opened again.
fn reopen_stdin_terminal() -> Option<pipe::Receiver> {
    if !rustix::termios::isatty(std::io::stdin()) {
        return None;
    }
    let flags = OFlags::RDONLY | OFlags::NOCTTY | OFlags::NONBLOCK | OFlags::CLOEXEC;
    let fd: OwnedFd = rustix::fs::open("/proc/self/fd/0", flags, Mode::empty()).ok()?;
    if !rustix::termios::isatty(&fd) {
        return None;
    }
    // tokio's pipe receiver makes no assumption about the descriptor in its
    // unchecked form: it registers it for readability (a terminal supports
    // epoll as a pipe does) and reads it with read(2). `AsyncFd` would do
    // the same, but its safe constructors are deprecated and `unsafe` is
    // denied here.
    pipe::Receiver::from_owned_fd_unchecked(fd).ok()
}
