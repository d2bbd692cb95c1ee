//! Port forwarding on one connection, as OpenSSH's client does it: `-L`
//! (`local`: a listener here, a `direct-tcpip` or `direct-streamlocal`
//! channel per connection), `-D` (the same with the target taken from a
//! SOCKS 4/4a/5 request, `socks`), `-R` (`remote`: `tcpip-forward` or
//! `streamlocal-forward` asked of the server, whose channels the
//! connection's handler hands to `Registry`; `-R port` answers SOCKS on
//! them), `-W` (`stdio`), and the escape command line `~C` and `~#`
//! (`escape`).
//!
//! Listeners exist only for the forwards asked for. A listener accepts
//! every connection at once, as OpenSSH's does: no limit below the listen
//! backlog (1024) and the process's file limit ([`connection_limit`]: a
//! local listener whose accept finds no descriptor left waits a moment
//! and tries again; a remote forward refuses the server's extra channels
//! with "resource shortage"). A target that refuses closes the
//! one connection; the session goes on. Everything is closed with the
//! [`Forwards`] (or [`Forwards::close`]).

mod escape;
mod local;
mod permit;
mod pipe;
mod registry;
mod remote;
mod socks;
mod spec;
mod stdio;

use std::sync::{Arc, Mutex};

pub use escape::{ESCAPE_COMMAND_HELP, command_line, list};
pub use permit::Permit;
pub(crate) use registry::Registry;
pub use spec::{ForwardKind, ForwardSpec, Place, parse_listen};
pub use stdio::stdio;

use crate::connect::Connection;
use crate::error::SshError;

/// Descriptors kept for everything else (the SSH connection, the
/// terminal, the daemon, logs) when the file limit bounds connections.
const RESERVED_DESCRIPTORS: u64 = 64;

/// Connections one forward serves at once: as many as the process's file
/// limit (`RLIMIT_NOFILE`, its soft value) leaves after
/// [`RESERVED_DESCRIPTORS`], each connection taking one descriptor; at
/// least 64.
pub fn connection_limit() -> usize {
    let soft = nix::sys::resource::getrlimit(nix::sys::resource::Resource::RLIMIT_NOFILE)
        .map_or(1024, |(soft, _)| soft);
    usize::try_from(soft.saturating_sub(RESERVED_DESCRIPTORS).max(64)).unwrap_or(usize::MAX)
}

/// What went wrong with a forward.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ForwardProblem {
    /// A specification that is not one.
    Spec,
    /// A local listener could not be set up (the port is taken, no
    /// permission, no such address).
    Bind,
    /// The server refused (a remote forward, a `-W` target, a cancel).
    Refused,
    /// No forward matches (a cancel).
    NotFound,
    /// tether's own side failed (stdout of `-W`).
    Local,
}

/// Where the lines for the person go (a warning, "Allocated port"): the
/// front-end decides how a line is written (`\r\n` on a raw terminal).
pub type Say = Arc<dyn Fn(&str) + Send + Sync>;

/// How forwards are set up.
#[derive(Clone)]
pub struct Settings {
    /// `GatewayPorts`: a local listener without an address listens on
    /// every interface (else on loopback only).
    pub gateway_ports: bool,
    /// Lines for the person.
    pub say: Say,
    /// `PermitRemoteOpen`: where a dynamic remote forward (`-R port`) may
    /// connect; `None`: anywhere (`any`).
    pub permit_remote_open: Option<Vec<Permit>>,
    /// `StreamLocalBindMask`: the permission bits a local Unix socket
    /// listener does not get (OpenSSH's default 0177: the owner only).
    pub bind_mask: u32,
    /// `StreamLocalBindUnlink`: remove a socket file in the way first.
    pub bind_unlink: bool,
    /// Connections one forward serves at once (a front-end gives
    /// [`connection_limit`]).
    pub max_connections: usize,
}

/// OpenSSH's `StreamLocalBindMask` default.
pub const DEFAULT_BIND_MASK: u32 = 0o177;

impl std::fmt::Debug for Settings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Settings")
            .field("gateway_ports", &self.gateway_ports)
            .finish_non_exhaustive()
    }
}

/// A forward set up.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Added {
    /// What was asked.
    pub spec: ForwardSpec,
    /// The port given for a listen port 0 (`-R 0:...`, `-D 0`).
    pub allocated: Option<u16>,
}

/// A local listener (`-L`, `-D`) and its accept loops.
struct Listening {
    spec: ForwardSpec,
    loops: Vec<tokio::task::JoinHandle<()>>,
    /// A Unix socket this created (removed when it stops).
    socket: Option<std::path::PathBuf>,
}

impl Drop for Listening {
    fn drop(&mut self) {
        for l in &self.loops {
            l.abort();
        }
        if let Some(p) = &self.socket {
            let _ = std::fs::remove_file(p);
        }
    }
}

/// The forwards of one connection.
pub struct Forwards {
    conn: Arc<Connection>,
    reg: Arc<Registry>,
    settings: Settings,
    listening: Mutex<Vec<Listening>>,
}

impl std::fmt::Debug for Forwards {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Forwards").finish_non_exhaustive()
    }
}

pub(crate) fn problem(what: impl Into<String>, problem: ForwardProblem) -> SshError {
    SshError::Forward {
        what: what.into(),
        problem,
    }
}

impl Forwards {
    /// The forwards of `conn` (none yet).
    pub fn new(conn: Arc<Connection>, settings: Settings) -> Forwards {
        let reg = Arc::clone(&conn.inbound);
        reg.set_say(Arc::clone(&settings.say));
        reg.set_permits(settings.permit_remote_open.clone());
        Forwards {
            conn,
            reg,
            settings,
            listening: Mutex::new(Vec::new()),
        }
    }

    /// Sets up one forward: binds its listener here, or asks the server to
    /// listen. The error says what failed (one line).
    pub async fn add(&self, spec: &ForwardSpec) -> Result<Added, SshError> {
        match spec.kind {
            ForwardKind::Local | ForwardKind::Dynamic => {
                let (listening, allocated) =
                    local::listen(spec, &self.conn, &self.reg, &self.settings).await?;
                if let Ok(mut l) = self.listening.lock() {
                    l.push(listening);
                }
                Ok(Added {
                    spec: spec.clone(),
                    allocated,
                })
            }
            ForwardKind::Remote => {
                let allocated =
                    remote::request(spec, &self.conn, &self.reg, self.settings.max_connections)
                        .await?;
                Ok(Added {
                    spec: spec.clone(),
                    allocated,
                })
            }
        }
    }

    /// Stops the forward of `kind` listening at `listen` (`-KL`, `-KR`,
    /// `-KD`); its open connections go on.
    pub async fn cancel(&self, kind: ForwardKind, listen: &Place) -> Result<(), SshError> {
        if kind == ForwardKind::Remote {
            return remote::cancel(listen, &self.conn, &self.reg).await;
        }
        let found = self.listening.lock().ok().and_then(|mut l| {
            let i = l
                .iter()
                .position(|f| f.spec.kind == kind && same_listen(&f.spec.listen, listen))?;
            Some(l.remove(i))
        });
        match found {
            Some(mut l) => {
                // Stopped here and now: the port is free when this returns.
                for task in std::mem::take(&mut l.loops) {
                    task.abort();
                    let _ = task.await;
                }
                Ok(())
            }
            None => Err(problem(
                format!("no -{} forward listens on {listen}", kind.letter()),
                ForwardProblem::NotFound,
            )),
        }
    }

    /// The forwarded connections open now, one line each (`~#`).
    pub fn connections(&self) -> Vec<String> {
        self.reg.connections()
    }

    /// How many forwarded connections are open.
    pub fn open(&self) -> usize {
        self.reg.open()
    }

    /// Returns when no forwarded connection is open (`~&`, and the end of
    /// a session that waits for its forwards).
    pub async fn idle(&self) {
        self.reg.idle().await;
    }

    /// Takes no new forwarded connection (local listeners closed, the
    /// server's new channels refused) while the open ones go on: the first
    /// step of `~&`, which then waits for [`Forwards::idle`].
    pub async fn stop_listening(&self) {
        let listening = self
            .listening
            .lock()
            .map(|mut l| std::mem::take(&mut *l))
            .unwrap_or_default();
        for mut l in listening {
            for task in std::mem::take(&mut l.loops) {
                task.abort();
                let _ = task.await;
            }
        }
        if let Ok(mut r) = self.reg.remotes.lock() {
            r.clear();
        }
    }

    /// Returns when the connection has ended (`-N`: nothing else to wait
    /// for).
    pub async fn until_closed(&self) {
        while !self.conn.is_closed() {
            tokio::time::sleep(std::time::Duration::from_millis(250)).await;
        }
    }

    /// Stops every listener and closes every forwarded connection.
    pub fn close(&self) {
        if let Ok(mut l) = self.listening.lock() {
            l.clear();
        }
        self.reg.close_all();
    }
}

impl Drop for Forwards {
    fn drop(&mut self) {
        self.close();
    }
}

/// Whether a cancel's `[bind:]port` names the listener `have`: the same
/// port, and the same address when the cancel gives one.
fn same_listen(have: &Place, asked: &Place) -> bool {
    match (have, asked) {
        (Place::Unix(a), Place::Unix(b)) => a == b,
        (Place::Tcp { host: h1, port: p1 }, Place::Tcp { host: h2, port: p2 }) => {
            p1 == p2 && (h2.is_none() || h1 == h2)
        }
        _ => false,
    }
}
