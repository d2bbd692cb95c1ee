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
//! a fresh shell with cwd and exported variables restored),
//! `incomplete_input`, `reset`, `closed` (a reset or close asked while the
//! call waited) or `connection_lost` (a remote session's link).
//!
//! It knows the [`tether_transport::Terminal`] trait, not whether the
//! terminal is local or remote: a session starts on a local PTY, or, given
//! a [`tether_transport::RemoteHost`], on that host's terminal with its
//! command files written there (spill files stay local). Remotely the
//! foreground is read from the host's `/proc` when a command goes quiet
//! (`remote_probe.rs`); where that cannot tell, `waiting_for_input` comes
//! from silence, and an interrupt is the terminal's C-c, then C-\, then a
//! fresh shell.
//!
//! Where things live:
//! - `launch.rs` starts the shell and waits for it to be ready, within one
//!   deadline; `place.rs` is the one home for what differs between a
//!   `Local` and a `Remote` shell (its directory and files, its terminal,
//!   the syntax check, ending its tree, foreground probes, who sets the line
//!   modes and the echo, its base environment), so nothing else branches
//!   on a host; `remote.rs` writes a remote shell's files on its host.
//! - [`dialect`]: bash, zsh, POSIX sh, pwsh: the wrapper line, the marks,
//!   the setup script.
//! - `pump.rs` feeds the output to the headless emulator (vt100, which
//!   answers the shell's queries), the marker scanner, the byte log and the
//!   command's [`capture`].
//! - `answer.rs`: `Session::send_if_waiting` types only while the command
//!   in flight reads the terminal, checked under the session's lock (the
//!   kernel locally, the host's `/proc` remotely); else
//!   [`NotWaiting`] and nothing is typed.
//! - [`Registry`] keeps sessions by (owner, name), and the *lost* ones a
//!   killed daemon left; [`Control`] signals, peeks, resets and closes
//!   without the call lock; [`Live`] is what a person attached watches.
//! - [`follow`]: the command in flight's text as it comes, with offsets,
//!   for followers ([`Control::follow`], [`Session::follow_next`]).
//! - [`private`]: directories and files trusted only when proven (0700,
//!   ours, no symlink on the way), never repaired.
//! - [`keys`] is the one list of named keys, [`defaults`] the one list of
//!   the non-interactive defaults.

mod answer;
pub mod capture;
mod control;
pub mod defaults;
pub mod dialect;
mod emulator;
mod error;
pub mod exports;
pub mod follow;
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
pub use follow::{FollowBook, Follower, Piece};
pub use live::{Live, LiveWatch, Watcher};
pub use registry::{LostSession, Registry, SessionInfo};
pub use result::TerminalHolder;
pub use result::{ForegroundProgram, LinkFailure, LinkLoss, RunResult, Status, Truncation};
pub use run::{DEFAULT_OUTPUT_LIMIT, OnTimeout, RunOptions};
pub use session::{Resume, Session, SessionOptions, TREE_MARKER, end_leftovers, sweep_remote};
pub use timeout::Timeout;
