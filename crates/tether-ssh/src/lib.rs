//! `tether-ssh`: the SSH transport. `russh` (pinned `=0.65.1`, ring
//! backend) is used only in this crate. It connects, checks the host key,
//! authenticates, runs commands on the connection, runs a program on a
//! remote PTY as a `tether_transport::Terminal`, speaks SFTP for file
//! copies and forwards ports. It knows nothing of shells, node sets or
//! output formats.
//!
//! - `connect`: TCP with TCP_NODELAY, or a `ProxyCommand` (`proxy.rs`:
//!   `$SHELL -c "exec …"`, its stdin/stdout as the stream, its process tree
//!   ended with the [`Connection`]); one deadline for connect, handshake and
//!   authentication; keepalive; ProxyJump over direct-tcpip channels, each
//!   hop with its own options, a failing hop reported as [`SshError::Jump`]
//!   naming it. The server's banner is kept (`Connection::banner`); each
//!   step (connected where, which known_hosts line vouched for the key,
//!   which method authenticated) is told to `ConnectOptions::steps` for
//!   `-v` ([`Steps`]). Agent channels the server opens are served from the
//!   forwarded agent's socket (`agent_forward.rs`, asked for only under
//!   `ForwardAgent`/`-A`).
//! - Host keys (`host_key.rs`, [`known_hosts`]: our own reader, since
//!   russh's lacks wildcards, negation and markers): looked up under
//!   `HostKeyAlias` and with `KnownHostsCommand`'s lines; an unknown key is
//!   learned under `accept-new` and `no` (hashed under `HashKnownHosts`); a
//!   changed key accepted under `StrictHostKeyChecking=no` warns and turns
//!   passwords off; a revoked key is refused under any policy.
//! - `auth.rs`: the agent, key files and certificates (`CertificateFile`,
//!   `KEY-cert.pub`, the agent's) before their plain keys, then password
//!   and keyboard-interactive; `secrets.rs` asks for passphrases (once per
//!   key per run) and passwords through a front-end's [`Prompter`].
//! - [`destination`]: a host name and user a caller gives, checked as
//!   OpenSSH checks them before any use (no shell character, blank,
//!   control character or leading `-`), and [`destination::sh_word`],
//!   which quotes a token's value for a command a shell reads.
//! - [`config`]: the OpenSSH client config (Host, Include, `Match` for
//!   host/originalhost/user/localuser/all/exec, first value wins, `-o`
//!   options read as lines before the files); [`directives`] is the one
//!   list of what is applied, harmless to leave out, or refused with
//!   file:line; [`percent`] expands `%` tokens, `${VAR}` and `~`;
//!   [`algorithms`] maps Ciphers/MACs/KexAlgorithms/HostKeyAlgorithms (with
//!   `+ - ^`) onto russh's names and answers `-Q`; [`pubkey_algorithms`]
//!   is `PubkeyAcceptedAlgorithms`.
//! - `exec.rs`: a command on a channel (output events awaited one by one
//!   for backpressure, stdin, SetEnv, exit status or signal, deadline,
//!   cancellation); `exec_stop.rs` ends a stopped command's processes on a
//!   second channel and says whether that was confirmed ([`Halted`]).
//! - [`Route`] (`route.rs`): a [`Target`] and its [`ConnectOptions`] as
//!   data (serde), resolved by the process that named the host and
//!   carried to the daemon, which connects with it as given.
//! - `pty.rs`: [`PtyTerminal`], a remote PTY as a `Terminal` (no process
//!   evidence; INT/QUIT/TSTP as control characters, TERM/KILL/HUP as SSH
//!   signals; a channel that ends without an exit status is
//!   `ExitInfo::LinkLost`), built on [`PtyChannel`], which `tether ssh`
//!   reads in its own loop.
//! - `sftp/` (the only user of `russh-sftp`, pinned `=3.0.1`): [`Sftp`] on
//!   a channel, pumped by `channel.rs` so that the subsystem's end ends
//!   every request at once with its reason; `pipe.rs` writes or reads a
//!   file's pieces with many requests outstanding within a window the
//!   caller shares between files; [`maybe_not_utf8`] tells a name the crate
//!   may have decoded lossily.
//! - `stream.rs`: a channel as a byte stream ([`ChannelStream`]): an
//!   OpenSSH `direct-streamlocal` channel to a Unix socket on the host
//!   (`Connection::open_unix_socket`, a refusal typed as
//!   [`ChannelRefusal`]), or a command's stdin and stdout
//!   (`Connection::exec_stream`).
//! - [`forward`]: `-L/-R/-D/-W` (`spec.rs` parses OpenSSH's forms,
//!   `local.rs` binds listeners, `socks.rs` is a bounded SOCKS 4/4a/5
//!   parser, `remote.rs` and `registry.rs` take the server's forwarded
//!   channels, `stdio.rs` is `-W`, `pipe.rs` copies both ways, `permit.rs`
//!   is `PermitRemoteOpen`, `escape.rs` the `~C` line and `~#` list).
//!
//! Errors are one [`SshError`] whose `kind()` is a typed [`HostFailure`]
//! (bad_name, unresolvable, refused, unreachable, timed_out, host_key, auth, config,
//! lost, protocol, file, proxy_command, setup; the one list, in
//! `tether-transport`) for callers to decide by instead of
//! matching words.

mod agent_forward;
pub mod algorithms;
mod auth;
pub mod config;
mod config_lines;
mod connect;
pub mod destination;
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
mod route;
mod secrets;
mod sftp;
mod steps;
mod stream;

pub use agent_forward::agent_socket;
pub use connect::{
    AddressFamily, ConnectOptions, Connection, HostKeyPolicy, Jump, Target, connect,
};
pub use error::{ChannelRefusal, ProxyFailure, SftpProblem, SshError};
pub use exec::{CommandTerminal, Ended, Event, Halted, Input};
pub use pty::{PtyChannel, PtyEvent, PtyRequest, PtyTerminal, PtyWriter, signal_number};
pub use route::Route;
pub use secrets::{Prompter, Secrets};
pub use sftp::{Attrs, DirEntry, Handle, Kind, Reader, Sftp, Writer, maybe_not_utf8};
pub use steps::Steps;
pub use stream::ChannelStream;
pub use tether_transport::HostFailure;
