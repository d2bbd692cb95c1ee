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
