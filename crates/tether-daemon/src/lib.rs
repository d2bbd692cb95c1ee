//! `tether-daemon`: the per-user session daemon, so sessions outlive the
//! command that made them and people can attach to an agent's shell.
//!
//! It holds: the JSON-lines [`protocol`] (versioned, its lines read with
//! a bound by [`lines`]) and the binary [`frame`]s of attached
//! connections; the [`server`] over the shell engine's registry
//! (private socket, peer-uid check, single instance, idle exit); the
//! request handling every front-end shares ([`ops`]); and a blocking
//! [`client`]. It does not parse command lines, speak MCP, or touch the
//! user's terminal: those are the front-ends' jobs.
//!
//! In more detail:
//! - [`protocol`]'s replies are typed (`Response` tagged with its kind,
//!   read as the kind a request gets through `ReplyKind`; `Status`,
//!   `FailureKind`); `wire` makes them from the engine's values.
//!   `follow.rs` streams a followed command's text (`follow`, `run` with
//!   `follow`) as `piece` lines before its reply. [`lines`]
//!   reads a line with a bound (`read_line`/`skip_line` over `fill_buf`);
//!   `tether mcp` uses it too. A [`frame`] is at most 16 MiB, its payload
//!   read as it comes.
//! - [`paths`]: the private directory and what it holds, proven by
//!   `tether_shell::private` before use; a socket path over 107 bytes is
//!   refused.
//! - [`server`]: a 0600 socket in a 0700 directory, flock for a single
//!   instance, peer-uid check, idle exit, signals; `recover.rs` ends and
//!   registers as lost what a killed daemon's sessions left.
//! - [`ops`]: every request's checks and messages, shared by the CLI and
//!   MCP; a session is addressed as `name` or `namespace/name`, each part
//!   1–128 bytes, no `/`, controls or invisible characters, not `.`/`..`.
//!   A `run`'s host is a typed `protocol::HostRoute` (the name and the
//!   `tether_ssh::Route` the caller resolved): the daemon reads no SSH or
//!   tether config of its own, and `ops::HostProvider` connects with the
//!   route as given; a session keeps the route it started with
//!   (`recover.rs` keeps it beside the record for a session lost with a
//!   killed daemon).
//! - `relay` and `hosted`: sessions that live in a host's own tether
//!   daemon (reached through `RemoteHost::far_side`), their requests
//!   carried there and the replies back; the hosted book on disk, the cut
//!   call a lost link leaves, and (on the host) each session's last named
//!   result for `recall`; `relay_request`: a request as the host's daemon
//!   gets it; `relay_open`: the host's daemon reached and greeted within
//!   the call's deadline (a hung link said so); `relay_lost`: what came of a call before its
//!   link was lost, carried by its lost result and not given again by the
//!   recall. `ending`: the sessions on hosts of an owner
//!   whose lease ended (or whose process is gone) closed there, tried
//!   again until the host answers.
//! - `attach`: the daemon's side of a person's terminal.
//! - `quiet`: a connection's halves (server and async client alike): the
//!   read half registered for readability only, the write half written at
//!   once and registered for room only while the socket is full (a Unix
//!   socket registered both ways wakes its thread each time the peer
//!   reads).
//! - [`conn`]: the one rule every blocking door sends by (resend only
//!   what the daemon never read; keep a connection only after an answer).
//! - [`client`]: its hello has a 10 s deadline, so a stopped or hung daemon
//!   is reported, not waited for; the calls after it have none.

mod attach;
pub mod client;
pub mod conn;
mod ending;
mod error;
mod follow;
pub mod frame;
mod hosted;
pub mod lines;
mod nested;
pub mod ops;
pub mod paths;
pub mod protocol;
pub mod quiet;
mod recover;
mod relay;
mod relay_attach;
mod relay_lost;
mod relay_open;
mod relay_request;
pub mod server;
mod wire;

pub use client::{AsyncClient, Client};
pub use conn::Conn;
pub use error::{DaemonError, SEND_ATTEMPTS, reusable};
pub use paths::Paths;
pub use server::{ServerOptions, serve};
