//! `tether-pty`: the local PTY transport.
//!
//! [`LocalPty`] starts a program as the session leader of a fresh PTY (its
//! controlling terminal), with IUTF8 set and default signal dispositions,
//! and implements [`tether_transport::Terminal`] for it: ordered writes
//! (at once while nothing is queued, else by a writer thread), a bounded
//! output stream (EIO on the master is end of stream) read by a thread or,
//! with [`LocalPty::spawn_on`], by a task on a runtime, resize,
//! verified foreground signalling, whole-tree kill, exit status, and the
//! `/proc` process inspector ([`inspect`]) that tells whether the
//! foreground program is blocked reading the terminal.
//!
//! The master is non-blocking (`master.rs`): a write goes to the kernel at
//! once while nothing is queued, and a writer thread takes the rest and
//! waits for room. `holders.rs` finds, incrementally, the processes outside
//! the foreground that hold the slave, and stops those that could read a
//! line while it is typed past them. `signals.rs` holds one of the
//! workspace's two `unsafe` blocks: the `pre_exec` that resets signal
//! dispositions in the child (raw `rt_sigaction`, async-signal-safe).
//!
//! It knows nothing of shells, and it is Linux-only where it reads `/proc`.

pub mod holders;
pub mod inspect;
mod local;
mod master;
mod modes;
pub mod procfs;
mod signals;
mod tree;

pub use local::{LocalPty, SpawnSpec, check_cwd};
pub use tree::kill_marked;
