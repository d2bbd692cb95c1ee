//! The crate's error type.

use std::path::PathBuf;

use crate::protocol::{Failure, FailureKind};

/// Errors of the daemon and its client.
#[derive(Debug, thiserror::Error)]
pub enum DaemonError {
    /// The private directory, or something tether keeps in it, is
    /// missing, unsafe or not ours (or the directory's path is too long).
    #[error("refusing to use {path}: {problem}")]
    Dir {
        /// The directory, or the thing in it.
        path: PathBuf,
        /// What is wrong, and what to do.
        problem: String,
    },
    /// The daemon could not be reached or started.
    #[error("cannot reach the tether daemon at {socket}: {reason}")]
    Unreachable {
        /// The socket.
        socket: PathBuf,
        /// Why, and what to do.
        reason: String,
    },
    /// A process accepted the connection on the daemon's socket but did not
    /// answer the hello in time: the daemon is stopped (SIGSTOP) or hung.
    /// Nothing but the hello was sent.
    #[error(
        "the tether daemon at {socket} took the connection but did not answer within {secs} s \
         (stopped or hung?); nothing was sent to it. `fuser -v {socket}` names it: \
         `kill -CONT` it if it was stopped, or end it (`kill`) and run the command again"
    )]
    NotAnswering {
        /// The socket.
        socket: PathBuf,
        /// How long the hello waited.
        secs: u64,
    },
    /// The connection broke or carried something unreadable.
    #[error("the connection to the tether daemon failed: {0}; run the command again")]
    Connection(String),
    /// The request reached the daemon, but the connection ended before its
    /// answer: the daemon stopped (killed, crashed) during the call. The
    /// request is never sent again: it may have run.
    #[error(
        "the tether daemon stopped during this request ({0}): the command may have run, partly or wholly. A session on this machine lost its shell (the next call on it starts a new shell with its last cwd and exports); a session that lives in a host's tether runs on there, and `tether read` gets its result (see the daemon log for why it stopped)"
    )]
    Lost(String),
    /// The daemon answered a request with a reply of the wrong shape (a
    /// daemon of another build); the request may have been carried out.
    #[error(
        "the tether daemon's reply could not be read ({0}); the request may have been carried out: check with `tether ls`, and restart the daemon (`tether daemon stop`) if it is of another version"
    )]
    BadReply(String),
    /// The daemon refused the request (the message says what to do).
    #[error("{}", .0.message)]
    Refused(Failure),
    /// The socket could not be served.
    #[error("cannot serve {socket}: {source}")]
    Serve {
        /// The socket.
        socket: PathBuf,
        /// What the OS said.
        source: std::io::Error,
    },
}

/// Connections a request is tried on while the daemon does not read it
/// ([`DaemonError::unsent`]): the one at hand, then fresh ones. A request
/// the daemon may have read is never sent again.
pub const SEND_ATTEMPTS: usize = 3;

/// Whether a connection may carry the next request after `outcome`: after
/// an answer (a refusal is one), not after a connection that broke or
/// carried something unreadable.
pub fn reusable<T>(outcome: &Result<T, DaemonError>) -> bool {
    matches!(outcome, Ok(_) | Err(DaemonError::Refused(_)))
}

impl DaemonError {
    /// The daemon never read the request (the connection failed before or
    /// while it was written, or a daemon that went away): it may be sent
    /// again, on a new connection.
    pub fn unsent(&self) -> bool {
        matches!(self, DaemonError::Connection(_))
    }

    /// The failure kind when the daemon refused the request.
    pub fn kind(&self) -> Option<FailureKind> {
        match self {
            DaemonError::Refused(f) => Some(f.kind),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused() -> DaemonError {
        DaemonError::Refused(Failure {
            kind: FailureKind::Busy,
            message: "busy".into(),
            host: None,
        })
    }

    #[test]
    fn only_an_unwritten_request_is_sent_again() {
        assert!(DaemonError::Connection("reset".into()).unsent());
        assert!(!DaemonError::Lost("eof".into()).unsent());
        assert!(!DaemonError::BadReply("shape".into()).unsent());
        assert!(!refused().unsent());
    }

    #[test]
    fn a_connection_is_kept_after_an_answer_only() {
        assert!(reusable(&Ok::<(), _>(())));
        assert!(reusable::<()>(&Err(refused())));
        for e in [
            DaemonError::Connection("reset".into()),
            DaemonError::Lost("eof".into()),
            DaemonError::BadReply("shape".into()),
        ] {
            assert!(!reusable::<()>(&Err(e)));
        }
    }
}
