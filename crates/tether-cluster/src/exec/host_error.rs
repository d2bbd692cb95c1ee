//! Why a host's command did not run or did not finish: a typed kind (for
//! policies, folding and structured output) with the one line a person
//! reads. The line never names the host (tether-ssh's messages name none,
//! nor do the resolver's); the front-end puts it in front. An SSH failure
//! keeps its typed `HostFailure` from tether-ssh.

use std::time::Duration;

/// What stopped the hosts that were cancelled.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum StopReason {
    /// Another host failed and the run was asked to fail fast.
    FailFast,
    /// The run was interrupted (Ctrl-C, or the caller's stop signal).
    Interrupted,
    /// This host alone was asked to stop ([`HostStops::stop`](super::HostStops::stop):
    /// the live view's cancel); the others go on.
    ThisHost,
}

impl StopReason {
    /// How the reason reads in a message.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::FailFast => "fail fast",
            Self::Interrupted => "interrupted",
            Self::ThisHost => "this host",
        }
    }
}

/// What became of a host's command (or copy) that tether stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Halt {
    /// Nothing had been sent to the host.
    NotStarted,
    /// The host confirmed the command's end (its exit status or its
    /// channel's close after the kill, or the kill's own report).
    Ended,
    /// Asked to stop; the host confirmed nothing: it may still be running.
    MayStillRun,
    /// A copy: tether stopped sending and receiving (no command of its own
    /// runs on the host).
    CopyStopped,
}

impl Halt {
    /// Its name in structured output (`snake_case`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::NotStarted => "not_started",
            Self::Ended => "ended",
            Self::MayStillRun => "may_still_run",
            Self::CopyStopped => "copy_stopped",
        }
    }

    /// What a confirmation from the host says.
    pub fn of(halted: tether_ssh::Halted) -> Self {
        match halted {
            tether_ssh::Halted::Confirmed => Self::Ended,
            tether_ssh::Halted::Unconfirmed => Self::MayStillRun,
        }
    }

    fn says(self) -> &'static str {
        match self {
            Self::NotStarted => "not started",
            Self::Ended => "asked to stop; the host confirmed its end",
            Self::MayStillRun => "asked to stop; it may still be running on the host",
            Self::CopyStopped => "the copy was stopped",
        }
    }
}

/// The kinds of per-host errors, as `--output json` and MCP name them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum HostErrorKind {
    /// Cancelled before or while running (fail fast, interrupt).
    Cancelled,
    /// The command outlived the command timeout.
    Timeout,
    /// The host could not be resolved into where and how to connect
    /// (ssh_config, tether's config).
    Resolve,
    /// Connecting, the host key, authentication, or the channel failed.
    Ssh,
    /// A file could not be copied (a path that is missing or of the wrong
    /// kind, permission denied, a full disk).
    Copy,
    /// The command's channel ended without an exit status (the connection
    /// was lost, or the server sent none): its end is unknown.
    ConnectionLost,
    /// sudo refused the password given with `--sudo`.
    SudoRefused,
}

impl HostErrorKind {
    /// The kind's name in structured output (`snake_case`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Cancelled => "cancelled",
            Self::Timeout => "timeout",
            Self::Resolve => "resolve",
            Self::Ssh => "ssh",
            Self::Copy => "copy",
            Self::ConnectionLost => "connection_lost",
            Self::SudoRefused => "sudo_refused",
        }
    }
}

/// What ended under a command whose end the host never told.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Lost {
    /// The command's channel closed without an exit status; the connection
    /// stayed.
    Channel,
    /// The connection itself closed.
    Connection,
    /// The link hung: the host answered no keepalive, and the connection
    /// was given up.
    Hung,
}

/// Why one host's command did not run or finish.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum HostError {
    /// Cancelled: `halt` tells whether the command had been sent, and if
    /// so whether the host confirmed its end.
    Cancelled {
        /// What stopped the run.
        why: StopReason,
        /// What became of the command.
        halt: Halt,
    },
    /// The command outlived the command timeout, in milliseconds, and was
    /// stopped.
    Timeout {
        /// The timeout.
        after_ms: u64,
        /// Whether the host confirmed the command's end.
        halt: Halt,
    },
    /// The host could not be resolved.
    Resolve(String),
    /// An SSH failure (connect, host key, auth, channel): its kind, from
    /// tether-ssh, and its one line.
    Ssh {
        /// What kind of failure (unresolvable, refused, auth, host key …).
        failure: tether_transport::HostFailure,
        /// The line, without the host.
        message: String,
    },
    /// A copy failure (a file operation here or on the host), as one line.
    Copy(String),
    /// The command had been sent and its channel ended without an exit
    /// status or signal: the host told nothing of its end.
    ConnectionLost {
        /// How: the channel alone, the connection, or a hung link.
        how: Lost,
    },
    /// `--sudo`: sudo asked again after the password was typed (it refused
    /// it, or a later sudo asked anew); the command was interrupted, the
    /// password not typed again.
    SudoRefused,
}

impl HostError {
    /// An SSH failure, with its kind.
    pub fn ssh(e: &tether_ssh::SshError) -> Self {
        Self::Ssh {
            failure: e.kind(),
            message: e.to_string(),
        }
    }

    /// An SSH error met while copying: a lost session or connection is an
    /// SSH failure, a file operation's failure a copy failure.
    pub fn from_ssh(e: tether_ssh::SshError) -> Self {
        match e {
            tether_ssh::SshError::Sftp {
                problem,
                what,
                reason,
                ..
            } if problem != tether_ssh::SftpProblem::Lost => {
                Self::Copy(format!("{what}: {reason}"))
            }
            e => Self::ssh(&e),
        }
    }

    /// The kind of an SSH failure.
    pub fn failure(&self) -> Option<tether_transport::HostFailure> {
        match self {
            Self::Ssh { failure, .. } => Some(*failure),
            Self::ConnectionLost { how: Lost::Hung } => Some(tether_transport::HostFailure::Hung),
            _ => None,
        }
    }

    /// A timeout after `d`, the command then stopped as `halt` says.
    pub fn timeout(d: Duration, halt: Halt) -> Self {
        Self::Timeout {
            after_ms: d.as_millis().min(u64::MAX as u128) as u64,
            halt,
        }
    }

    /// What became of the command, for a cancel or a timeout.
    pub fn halt(&self) -> Option<Halt> {
        match self {
            Self::Cancelled { halt, .. } | Self::Timeout { halt, .. } => Some(*halt),
            _ => None,
        }
    }

    /// Its kind.
    pub fn kind(&self) -> HostErrorKind {
        match self {
            Self::Cancelled { .. } => HostErrorKind::Cancelled,
            Self::Timeout { .. } => HostErrorKind::Timeout,
            Self::Resolve(_) => HostErrorKind::Resolve,
            Self::Ssh { .. } => HostErrorKind::Ssh,
            Self::Copy(_) => HostErrorKind::Copy,
            Self::ConnectionLost { .. } => HostErrorKind::ConnectionLost,
            Self::SudoRefused => HostErrorKind::SudoRefused,
        }
    }
}

impl std::fmt::Display for HostError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Cancelled { why, halt } => {
                write!(f, "cancelled ({}): {}", why.as_str(), halt.says())
            }
            Self::Timeout { after_ms, halt } => write!(
                f,
                "the command did not finish within {:.1} s (command timeout); {}",
                *after_ms as f64 / 1000.0,
                halt.says()
            ),
            Self::Resolve(m) | Self::Ssh { message: m, .. } | Self::Copy(m) => f.write_str(m),
            Self::ConnectionLost {
                how: Lost::Connection,
            } => f.write_str(
                "the connection was lost before the command's end; it may have run partly, \
                 or may still be running on the host (no exit status came)",
            ),
            Self::ConnectionLost { how: Lost::Hung } => f.write_str(
                "the link hung before the command's end: the host stopped answering (no reply \
                 to the keepalives, ServerAliveInterval × ServerAliveCountMax), so the \
                 connection was given up; the command may have run partly, or may still be \
                 running on the host (no exit status came): check the host and the network to it",
            ),
            Self::ConnectionLost { how: Lost::Channel } => f.write_str(
                "the command's channel closed without an exit status; its end is unknown \
                 (it may still be running on the host)",
            ),
            Self::SudoRefused => f.write_str(
                "sudo asked for the password a second time (it refused the one typed, or a \
                 later sudo asked anew); tether types it once per host, so the command was \
                 interrupted: check the password, or the user's sudo rights on this host",
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_no_host_and_keep_their_kind() {
        let e = HostError::ssh(&tether_ssh::SshError::Connect {
            host: "web1".into(),
            addr: "1.2.3.4:22".into(),
            source: std::io::Error::from(std::io::ErrorKind::ConnectionRefused),
        });
        assert!(
            e.to_string().starts_with("cannot connect to 1.2.3.4:22: "),
            "{e}"
        );
        assert_eq!(e.kind(), HostErrorKind::Ssh);
        assert_eq!(e.failure(), Some(tether_transport::HostFailure::Refused));
        let e = HostError::timeout(Duration::from_millis(500), Halt::MayStillRun);
        assert_eq!(e.kind().as_str(), "timeout");
        assert!(
            e.to_string().contains("within 0.5 s")
                && e.to_string().contains("may still be running"),
            "{e}"
        );
        let e = HostError::Cancelled {
            why: StopReason::FailFast,
            halt: Halt::NotStarted,
        };
        assert_eq!(e.to_string(), "cancelled (fail fast): not started");
        let e = HostError::ConnectionLost {
            how: Lost::Connection,
        };
        assert_eq!(e.kind().as_str(), "connection_lost");
        assert!(e.to_string().contains("connection was lost"), "{e}");
        assert_eq!(e.failure(), None);
        let e = HostError::ConnectionLost { how: Lost::Hung };
        assert_eq!(e.kind().as_str(), "connection_lost");
        assert!(e.to_string().contains("the link hung"), "{e}");
        assert_eq!(e.failure(), Some(tether_transport::HostFailure::Hung));
    }
}
