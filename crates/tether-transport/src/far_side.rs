//! The far side of a remote host: its own tether daemon, when tether runs
//! there. A host that has one serves its sessions as local sessions on the
//! host (they outlive the link); one that has not is agentless (a shell on
//! a terminal over the link, driven from this side).

use tokio::io::{AsyncRead, AsyncWrite};

/// A byte stream to a tether daemon's socket (on another host, carried
/// by the link to it).
pub trait DaemonStream: AsyncRead + AsyncWrite + Send + Unpin {}

impl<T: AsyncRead + AsyncWrite + Send + Unpin> DaemonStream for T {}

/// How a host's sessions are served.
pub enum FarSide {
    /// A new connection to the host's own tether daemon: speak the daemon
    /// protocol on it, as to this machine's daemon.
    Daemon(Box<dyn DaemonStream>),
    /// tether does not run there (why, for results and messages: another
    /// architecture, a home that cannot run programs, deployment turned
    /// off): sessions are shells on terminals over the link.
    Agentless(String),
}

impl std::fmt::Debug for FarSide {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FarSide::Daemon(_) => f.write_str("FarSide::Daemon"),
            FarSide::Agentless(why) => f.debug_tuple("FarSide::Agentless").field(why).finish(),
        }
    }
}

/// How the caller wants a host's far side: whether tether may run there,
/// and where its binary is. Resolved with the rest of the host's route, in
/// the caller's process (tether's config for that host or cluster, a flag).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct FarSettings {
    /// Keep the host agentless, and why (`deploy = false` in the config
    /// for that host or cluster, or a flag): tether is neither copied
    /// there nor used when found.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agentless: Option<String>,
    /// tether's path on the host (the config's), used instead of the
    /// cache; checked as the cache is, never copied over.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// The longest wait, in seconds, between tries to reach the host's
    /// daemon again after a lost link (`reconnect_max` in the config);
    /// the daemon's default when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reconnect_max_s: Option<u32>,
}
