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
    /// The connection broke or carried something unreadable.
    #[error("the connection to the tether daemon failed: {0}; run the command again")]
    Connection(String),
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

impl DaemonError {
    /// The failure kind when the daemon refused the request.
    pub fn kind(&self) -> Option<FailureKind> {
        match self {
            DaemonError::Refused(f) => Some(f.kind),
            _ => None,
        }
    }
}
