//! `tether-shell`: the persistent shell engine.
//!
//! A [`Session`] is a shell (bash, zsh, POSIX sh, pwsh) on a terminal that stays alive
//! between commands. [`Session::run`] delivers any command text through a
//! private file and a short wrapper line, detects completion by nonce marks
//! (not by prompts or silence), and returns one [`RunResult`]: exact exit
//! code and pipeline statuses, projected, redacted and clipped output (the
//! whole output goes to a spill file, within a per-session cap:
//! [`spill`]), cwd, and a [`Status`]:
//! `exited`, `waiting_for_input` (from kernel evidence that the foreground
//! program is blocked reading the terminal), `running`, `timed_out`
//! (interrupted and recovered, or kept), `shell_exited` (the next call gets
//! a fresh shell with cwd and exported variables restored) or
//! `incomplete_input`.
//!
//! It knows the [`tether_transport::Terminal`] trait, not whether the
//! terminal is local or remote: a session starts on a local PTY, or, given
//! a [`tether_transport::RemoteHost`], on that host's terminal with its
//! command files written there (spill files stay local). Remotely the
//! foreground is read from the host's `/proc` when a command goes quiet
//! (`remote_probe.rs`); where that cannot tell, `waiting_for_input` comes
//! from silence, and an interrupt is the terminal's C-c, then C-\, then a
//! fresh shell.

mod answer;
pub mod capture;
mod control;
pub mod defaults;
pub mod dialect;
mod emulator;
mod error;
pub mod exports;
mod holders;
pub mod keys;
mod launch;
mod link;
mod live;
mod local_files;
mod place;
pub mod private;
mod pump;
pub mod registry;
mod remote;
mod remote_probe;
pub mod result;
mod run;
mod secrets;
mod session;
pub mod spill;
pub mod timeout;

pub use control::{Control, Pending};
pub use error::{NotWaiting, ShellError};
pub use live::{Live, LiveWatch, Watcher};
pub use registry::{LostSession, Registry, SessionInfo};
pub use result::TerminalHolder;
pub use result::{ForegroundProgram, LinkFailure, LinkLoss, RunResult, Status, Truncation};
pub use run::{DEFAULT_OUTPUT_LIMIT, OnTimeout, RunOptions};
pub use session::{Resume, Session, SessionOptions, TREE_MARKER, end_leftovers, sweep_remote};
pub use timeout::Timeout;
