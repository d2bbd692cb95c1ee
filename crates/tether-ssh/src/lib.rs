//! `tether-ssh`: the SSH transport. `russh` (pinned) is used only in this
//! crate. It connects (connect timeout, TCP_NODELAY), checks the host key
//! against OpenSSH `known_hosts` files under a policy, authenticates with
//! the agent and key files, and runs commands on the connection, or a
//! program on a remote PTY as a `tether_transport::Terminal`, and speaks SFTP
//! on it (`russh-sftp`, pinned, only in `sftp.rs`) for file copies, and
//! forwards ports over it (`forward`: -L, -R, -D, -W). It knows
//! nothing of shells, node sets or output formats.

mod agent_forward;
pub mod algorithms;
mod auth;
pub mod config;
mod config_lines;
mod connect;
pub mod directives;
mod error;
mod exec;
mod exec_stop;
pub mod forward;
mod host_key;
pub mod known_hosts;
mod known_hosts_command;
mod match_block;
pub mod percent;
mod proxy;
mod pty;
pub mod pubkey_algorithms;
mod secrets;
mod sftp;
mod steps;

pub use agent_forward::agent_socket;
pub use connect::{ConnectOptions, Connection, HostKeyPolicy, Jump, Target, connect};
pub use error::{ProxyFailure, SftpProblem, SshError};
pub use exec::{Ended, Event, Halted, Input};
pub use pty::{PtyChannel, PtyEvent, PtyRequest, PtyTerminal, PtyWriter, signal_number};
pub use secrets::{Prompter, Secrets};
pub use sftp::{Attrs, DirEntry, Handle, Kind, Reader, Sftp, Writer, maybe_not_utf8};
pub use steps::Steps;
pub use tether_transport::HostFailure;
