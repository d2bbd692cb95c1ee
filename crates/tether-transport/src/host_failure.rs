//! How a remote host failed, as a kind the layers above decide by.

use serde::{Deserialize, Serialize};

/// What kind of failure a remote host's is, for callers that decide by it
/// (policies, structured output, retries, the daemon's replies) instead of
/// matching its words. The SSH transport says which (`SshError::kind`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HostFailure {
    /// The host name or user holds what a name cannot (a shell
    /// character, a blank, a control character, a leading `-`): refused
    /// before any use, as OpenSSH refuses it.
    BadName,
    /// The host name did not resolve.
    Unresolvable,
    /// Nothing listens there (connection refused).
    Refused,
    /// The host or network could not be reached otherwise (unreachable,
    /// reset during connect).
    Unreachable,
    /// No answer within the connect timeout.
    TimedOut,
    /// The host key is unknown, changed or revoked.
    HostKey,
    /// Every authentication method failed.
    Auth,
    /// ssh_config (or a known_hosts file) is wrong or unreadable.
    Config,
    /// The session or the connection ended, or an answer never came.
    Lost,
    /// The link hung: the host stopped answering keepalives
    /// (`ServerAliveInterval` × `ServerAliveCountMax`) and the connection
    /// was given up (no FIN came: a stopped host, or a network that drops
    /// everything).
    Hung,
    /// The SSH protocol failed after connecting (a channel refused, a
    /// handshake that failed).
    Protocol,
    /// A file operation failed on the host (SFTP: not found, permission
    /// denied, a full disk …).
    File,
    /// The `ProxyCommand` failed before the handshake finished.
    ProxyCommand,
    /// A command tether runs on the host to set a session up or inspect
    /// it failed there (the host was reached).
    Setup,
}

impl HostFailure {
    /// The kind's name in structured output (`snake_case`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::BadName => "bad_name",
            Self::Unresolvable => "unresolvable",
            Self::Refused => "refused",
            Self::Unreachable => "unreachable",
            Self::TimedOut => "timed_out",
            Self::HostKey => "host_key",
            Self::Auth => "auth",
            Self::Config => "config",
            Self::Lost => "lost",
            Self::Hung => "hung",
            Self::Protocol => "protocol",
            Self::File => "file",
            Self::ProxyCommand => "proxy_command",
            Self::Setup => "setup",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_on_the_wire_are_the_kinds_names() {
        for k in [
            HostFailure::BadName,
            HostFailure::Unresolvable,
            HostFailure::TimedOut,
            HostFailure::ProxyCommand,
            HostFailure::Setup,
            HostFailure::Hung,
        ] {
            let json = serde_json::to_string(&k).unwrap();
            assert_eq!(json, format!("\"{}\"", k.as_str()));
            assert_eq!(serde_json::from_str::<HostFailure>(&json).unwrap(), k);
        }
    }
}
