//! The crate's error type. No message carries a secret: passwords and
//! passphrases never reach an error. No message names the host it is
//! about either (as russh's `Error` names none): the caller knows which
//! host it asked for and says it once, in front (`tether ssh`, the
//! executor's per-host lines, the daemon's `TransportError::Host`); the
//! variants keep the host as data.

use std::path::PathBuf;

use tether_transport::HostFailure;

/// Errors of SSH connections.
#[derive(Debug, thiserror::Error)]
pub enum SshError {
    /// A host name or user a caller gave holds what a name cannot
    /// ([`crate::destination`]): refused before any use, as OpenSSH
    /// refuses it.
    #[error("{problem}")]
    BadName {
        /// The name as given (never printed by this message: it may hold
        /// controls; the caller shows it escaped).
        name: String,
        /// Why.
        problem: crate::destination::NameProblem,
    },
    /// The host name did not resolve.
    #[error("cannot resolve the host name: {reason}")]
    Resolve {
        /// The host.
        host: String,
        /// What the resolver said.
        reason: String,
    },
    /// The TCP connection failed (refused, unreachable).
    #[error("cannot connect to {addr}: {source}")]
    Connect {
        /// The host.
        host: String,
        /// The address tried.
        addr: String,
        /// What the OS said.
        source: std::io::Error,
    },
    /// No answer within the connect timeout.
    #[error("no answer within {seconds} s (connect timeout); is the host up?")]
    Timeout {
        /// The host.
        host: String,
        /// The timeout.
        seconds: f64,
    },
    /// The host key is not in known_hosts and the policy refuses unknown keys.
    #[error(
        "the host key ({fingerprint}) is not known; add it to {file} (ssh-keyscan), or connect once with StrictHostKeyChecking=accept-new"
    )]
    UnknownHostKey {
        /// The host.
        host: String,
        /// SHA256 fingerprint of the presented key.
        fingerprint: String,
        /// The file new keys go to.
        file: PathBuf,
    },
    /// The host key differs from the one known.
    #[error(
        "THE HOST KEY HAS CHANGED ({fingerprint}); the known key is at {place}. Someone may be intercepting the connection; if the change is expected, remove that line (ssh-keygen -R)"
    )]
    ChangedHostKey {
        /// The host.
        host: String,
        /// SHA256 fingerprint of the presented key.
        fingerprint: String,
        /// Where the known key is.
        place: crate::known_hosts::Place,
    },
    /// The host key is marked `@revoked`.
    #[error("the host key ({fingerprint}) is revoked at {place}; refusing to connect")]
    RevokedHostKey {
        /// The host.
        host: String,
        /// SHA256 fingerprint of the presented key.
        fingerprint: String,
        /// The `@revoked` line.
        place: crate::known_hosts::Place,
    },
    /// Every authentication method failed.
    #[error(
        "authentication failed for user {user} (tried: {tried}); check the key, the agent, or the user name"
    )]
    Auth {
        /// The host.
        host: String,
        /// The user.
        user: String,
        /// The methods tried.
        tried: String,
    },
    /// A known_hosts file could not be read or written.
    #[error("cannot update {file}: {source}")]
    KnownHosts {
        /// The file.
        file: PathBuf,
        /// What the OS said.
        source: std::io::Error,
    },
    /// A jump host (`ProxyJump`, `-J`) could not be reached, or would not
    /// let tether through: the jump host is named, not the target.
    #[error("cannot get through the jump host {jump}: {source}")]
    Jump {
        /// The host tether was going to.
        host: String,
        /// The jump host that failed.
        jump: String,
        /// What failed there.
        source: Box<SshError>,
    },
    /// The `ProxyCommand` could not start, or failed (exited with a
    /// failure, or closed its output before the server's first byte)
    /// before the SSH handshake finished. Its own messages went to
    /// stderr.
    #[error(
        "the ProxyCommand `{command}` {what}; its own messages, if any, are above. Check the command (run it by hand: it should print the server's SSH banner)"
    )]
    ProxyCommand {
        /// The host.
        host: String,
        /// The command as run (tokens expanded).
        command: String,
        /// How it failed.
        what: ProxyFailure,
    },
    /// An ssh_config file is unreadable or has a bad value.
    #[error("ssh config {place}: {problem}")]
    Config {
        /// The file (and line).
        place: String,
        /// What is wrong.
        problem: String,
    },
    /// The SSH protocol failed after connecting.
    #[error("{what}")]
    Protocol {
        /// The host.
        host: String,
        /// What failed.
        what: String,
    },
    /// An SFTP request failed (a file operation on the host).
    #[error("{what}: {reason}")]
    Sftp {
        /// The host.
        host: String,
        /// What was being done, and to which path.
        what: String,
        /// Why it failed, in words.
        reason: String,
        /// The kind of failure.
        problem: SftpProblem,
    },
    /// The server would not open a channel (a `direct-streamlocal` one to
    /// a socket on the host): `refusal` says why, for callers that fall
    /// back to another way.
    #[error("{what}: {refusal}")]
    ChannelRefused {
        /// The host.
        host: String,
        /// What was being opened, and to where.
        what: String,
        /// Why the server refused.
        refusal: ChannelRefusal,
    },
    /// The link hung: the host answered no keepalive for
    /// `ServerAliveInterval` × (`ServerAliveCountMax` + 1) and the
    /// connection was given up.
    #[error(
        "the link hung: the host stopped answering (no reply to the keepalives, ServerAliveInterval × ServerAliveCountMax), so the connection was given up; the host or the network to it may be stopped or overloaded: check it, then try again"
    )]
    Hung {
        /// The host.
        host: String,
    },
    /// Port forwarding: a specification, a listener, a refusal (the
    /// message says which forward and what to do).
    #[error("{what}")]
    Forward {
        /// What happened.
        what: String,
        /// Which kind of problem.
        problem: crate::forward::ForwardProblem,
    },
}

/// How a `ProxyCommand` failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ProxyFailure {
    /// It could not be started (the shell is missing …).
    NotStarted(String),
    /// It exited with this status before the handshake finished.
    Exited(i32),
    /// A signal ended it before the handshake finished.
    Killed(i32),
    /// It closed its output without a byte from the server, and is still
    /// running.
    ClosedEarly,
}

impl std::fmt::Display for ProxyFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::NotStarted(why) => write!(f, "could not be started ({why})"),
            Self::Exited(code) => write!(
                f,
                "exited with status {code} before the SSH handshake finished"
            ),
            Self::Killed(sig) => write!(
                f,
                "was ended by signal {sig} before the SSH handshake finished"
            ),
            Self::ClosedEarly => write!(f, "closed its output before the server said anything"),
        }
    }
}

/// Why the server refused to open a channel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChannelRefusal {
    /// Its configuration forbids it (`administratively prohibited`: for a
    /// socket, `AllowStreamLocalForwarding no` or `DisableForwarding yes`).
    Prohibited,
    /// It could not connect to the target (nothing listens there).
    ConnectFailed,
    /// It does not know the channel type.
    UnknownType,
    /// Another reason (resource shortage, its own words).
    Other,
}

impl std::fmt::Display for ChannelRefusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Prohibited => "the server forbids it (its forwarding settings)",
            Self::ConnectFailed => "the server could not connect to it (nothing listens there)",
            Self::UnknownType => "the server does not know this kind of channel",
            Self::Other => "the server refused",
        })
    }
}

/// The kinds of SFTP failures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SftpProblem {
    /// The path does not exist.
    NotFound,
    /// Permission denied.
    PermissionDenied,
    /// The server's catch-all failure (full disk, read-only file system …).
    Failure,
    /// The server does not support the request.
    Unsupported,
    /// The session or the connection ended, or an answer never came.
    Lost,
    /// Anything else.
    Other,
}

impl SshError {
    /// Its kind; a jump host's failure is the kind of what failed there
    /// (the `Jump` variant says it was the jump host).
    pub fn kind(&self) -> HostFailure {
        match self {
            Self::BadName { .. } => HostFailure::BadName,
            Self::Resolve { .. } => HostFailure::Unresolvable,
            Self::Connect { source, .. }
                if source.kind() == std::io::ErrorKind::ConnectionRefused =>
            {
                HostFailure::Refused
            }
            Self::Connect { .. } => HostFailure::Unreachable,
            Self::Timeout { .. } => HostFailure::TimedOut,
            Self::UnknownHostKey { .. }
            | Self::ChangedHostKey { .. }
            | Self::RevokedHostKey { .. } => HostFailure::HostKey,
            Self::Auth { .. } => HostFailure::Auth,
            Self::KnownHosts { .. } | Self::Config { .. } => HostFailure::Config,
            Self::Jump { source, .. } => source.kind(),
            Self::Protocol { .. } | Self::ChannelRefused { .. } => HostFailure::Protocol,
            Self::ProxyCommand { .. } => HostFailure::ProxyCommand,
            Self::Sftp { problem, .. } if *problem == SftpProblem::Lost => HostFailure::Lost,
            Self::Sftp { .. } => HostFailure::File,
            Self::Forward { problem, .. } if *problem == crate::forward::ForwardProblem::Spec => {
                HostFailure::Config
            }
            Self::Forward { .. } => HostFailure::Protocol,
            Self::Hung { .. } => HostFailure::Hung,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_follow_the_variant_and_a_jump_its_cause() {
        let refused = SshError::Connect {
            host: "h".into(),
            addr: "h:22".into(),
            source: std::io::Error::from(std::io::ErrorKind::ConnectionRefused),
        };
        assert_eq!(refused.kind(), HostFailure::Refused);
        let jump = SshError::Jump {
            host: "t".into(),
            jump: "j".into(),
            source: Box::new(SshError::Timeout {
                host: "j".into(),
                seconds: 1.0,
            }),
        };
        assert_eq!(jump.kind(), HostFailure::TimedOut);
        assert_eq!(jump.kind().as_str(), "timed_out");
        assert_eq!(
            jump.to_string(),
            "cannot get through the jump host j: no answer within 1 s (connect timeout); is the host up?"
        );
    }
}
