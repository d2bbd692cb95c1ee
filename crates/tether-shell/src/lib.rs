//! `tether-shell`: the persistent shell engine.
//!
//! A [`Session`] is a shell (bash, zsh, POSIX sh, fish, pwsh) on a terminal that stays alive
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
//! call waited), `connection_lost` (a remote session's link) or
//! `entered_shell` (the command started an interactive shell, armed by
//! `session/nested.rs`: later commands run there until it exits).
//!
//! It knows the [`tether_transport::Terminal`] trait, not whether the
//! terminal is local or remote: a session starts on a local PTY, or, given
//! a [`tether_transport::RemoteHost`], on that host's terminal with its
//! command files written there (spill files stay local). Remotely the
//! foreground is read from the host's `/proc` when a command goes quiet
//! (`place/probe.rs`); where that cannot tell, `waiting_for_input` comes
//! from silence, and an interrupt is the terminal's C-c, then C-\, then a
//! fresh shell.
//!
//! The flow at a glance (one `run`):
//! 1. [`Session::start`] makes the private directory (`launch.rs`), opens
//!    the session's place (`place/`: this machine, or a directory on the
//!    host), writes the dialect's setup file there (the session secret is
//!    in it, never typed), starts the shell on a terminal and waits for its
//!    `ready` mark, within one deadline.
//! 2. `session/call.rs`: a call settles a reset or close asked meanwhile
//!    (a [`Control`] request), restarts a shell that exited, refuses
//!    unfinished input (`session/syntax.rs`), writes the command's file
//!    (and its stdin) where the shell reads it, and types the wrapper line.
//! 3. `pump/`: one task per shell feeds every output chunk to the headless
//!    emulator (which answers queries), the marker scanner, the byte log
//!    and the command's [`capture`]; `pump/state.rs` owns that state and
//!    the verbs the rest of the engine uses on it.
//! 4. `session/ready.rs`: the call waits for the end mark, a program
//!    blocked reading the terminal (the kernel's word locally; the host's
//!    `/proc`, twice, remotely: `place/probe.rs`), the shell's exit, a
//!    reset or close, or the deadline.
//! 5. `session/interrupt.rs`: past the deadline, INT, TERM, KILL to the
//!    verified foreground (remotely C-c, C-\, then a look at the link:
//!    `session/link.rs`), else a fresh shell; or the command is kept.
//! 6. `session/outcome.rs`: the result: the capture's output (redacted,
//!    clipped, spilled), exit code and pipeline, cwd, the terminal's
//!    holders, and the notes owed to the caller; after an end mark the
//!    exports snapshot teaches the redactor new secrets
//!    (`session/learn.rs`).
//!
//! Where things live (one owner per piece of state):
//! - `session/` is the only place that extends [`Session`], one job per
//!   file (`start`, `call`, `ready`, `interrupt`, `syntax`, `outcome`,
//!   `link`, `learn`, `answer`); the fields are private to it.
//! - `place/` owns everything that differs between a shell here
//!   (`local.rs`: a PTY, files through the directory's descriptor) and one
//!   on a host (`remote.rs`, with the host's commands in `host.rs` and its
//!   `/proc` probe in `probe.rs`), as behaviours of one `Place`; what only
//!   a host can do is a capability returning `Option` (`prober`). Nothing
//!   else branches on a host.
//! - `pump/` owns the output's state; `launch.rs` starts a shell and waits
//!   for it to be ready.
//! - Leaves: `options.rs` (the typed requests [`SessionOptions`] and
//!   [`RunOptions`], with their defaults), `nonce.rs`, `text.rs` (text
//!   projection, clipping), `tree.rs` ([`TREE_MARKER`]), `secrets.rs`,
//!   `emulator.rs`, `holders.rs`.
//! - [`dialect`]: bash, zsh, POSIX sh, fish, pwsh: the wrapper line, the marks,
//!   the setup script.
//! - `session/answer.rs`: `Session::send_if_waiting` types only while the
//!   command in flight reads the terminal, checked under the session's
//!   lock (the kernel locally, the host's `/proc` remotely); else
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
//!
//! `scripts/import-circles.py` checks that no import circle between the
//! crate's files is longer than two. The engine's unit tests run on a
//! scripted shell behind a fake host (`testing.rs`, test builds only).

pub mod capture;
mod control;
pub mod defaults;
pub mod dialect;
mod emulator;
mod error;
pub mod exports;
mod fence;
pub mod follow;
mod holders;
pub mod keys;
mod launch;
mod live;
mod nested;
mod nonce;
mod options;
mod place;
pub mod private;
mod pump;
pub mod registry;
pub mod result;
mod secret_prompt;
mod secrets;
mod session;
pub mod spill;
#[cfg(test)]
mod testing;
mod text;
pub mod timeout;
mod tree;

pub use control::{Control, Pending};
pub use error::{NotWaiting, ShellError};
pub use follow::{FollowBook, Follower, Piece};
pub use live::{Live, LiveWatch, Watcher, Watching};
pub use options::{DEFAULT_OUTPUT_LIMIT, OnTimeout, Resume, RunOptions, SessionOptions};
pub use registry::{LostSession, Registry, SessionInfo};
pub use result::TerminalHolder;
pub use result::{
    ForegroundProgram, LinkFailure, LinkLoss, NestChange, RunResult, ShellLevel, Status, Truncation,
};
pub use session::{Session, sweep_remote};
pub use timeout::Timeout;
pub use tree::{TREE_MARKER, end_leftovers};
