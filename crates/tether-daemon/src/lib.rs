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

mod attach;
pub mod client;
mod error;
pub mod frame;
pub mod lines;
pub mod ops;
pub mod paths;
pub mod protocol;
pub mod quiet;
mod recover;
pub mod server;
mod wire;

pub use client::{AsyncClient, Client};
pub use error::{DaemonError, SEND_ATTEMPTS, reusable};
pub use paths::Paths;
pub use server::{ServerOptions, serve};
