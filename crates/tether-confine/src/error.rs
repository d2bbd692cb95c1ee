//! Why a fence cannot be built.

use std::path::PathBuf;

/// Why a fence cannot be built; nothing is ever run without it.
#[derive(Debug, thiserror::Error)]
pub enum ConfineError {
    /// bubblewrap is not installed.
    #[error(
        "confined sessions need bubblewrap (`bwrap`), which is not on PATH: install it (Debian: apt-get install bubblewrap)"
    )]
    NoBwrap,
    /// A path given is relative; every path of a fence is absolute.
    #[error("{0}: give an absolute path")]
    Relative(PathBuf),
    /// A root (or the temp directory) does not exist or is no directory.
    #[error("{0}: not a directory; a writable root must exist")]
    NotADirectory(PathBuf),
    /// `/` was given (or is the starting directory) as a workspace root.
    #[error(
        "the whole file system (/) cannot be a workspace root: start the session in a project directory, or name its roots (--allow-write DIR)"
    )]
    WholeRoot,
    /// The home directory (or a directory holding it) would be a workspace
    /// root: a confined program could plant code there that runs outside
    /// the fence later (a start-up file that does not exist yet).
    #[error(
        "the whole home directory ({0}) cannot be a workspace root (a program could plant a start-up file there): start the session in a project directory (cd there first; MCP: workdir), or name its roots (--allow-write DIR)"
    )]
    WholeHome(PathBuf),
    /// tether's own binary, which applies Landlock inside the fence, is
    /// not known to this process.
    #[error(
        "confined sessions need tether's own binary to apply Landlock inside the fence, and this process was not given it"
    )]
    NoHelper,
    /// The network allowlist has an entry that is not `HOST:PORT`.
    #[error("{0:?} is not HOST:PORT: name a host (or *.domain) and a port (or *)")]
    BadAllow(String),
    /// The proxy of the network allowlist could not listen.
    #[error("the network allowlist's proxy could not listen on {path}: {source}")]
    Proxy {
        /// Its socket.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The socket where the fence reports what the kernel enforced could
    /// not listen.
    #[error("a confined session's report socket could not listen on {path}: {source}")]
    Report {
        /// Its socket.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A path of `unix_sockets` is no Unix socket (or does not exist).
    #[error(
        "{0}: not a Unix socket; unix_sockets names sockets that exist (their server listening), by absolute path"
    )]
    NotASocket(PathBuf),
    /// A path has a character bubblewrap's arguments cannot carry.
    #[error("{0:?}: a path with a NUL byte cannot be used")]
    Unusable(PathBuf),
}
