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
    /// A path has a character bubblewrap's arguments cannot carry.
    #[error("{0:?}: a path with a NUL byte cannot be used")]
    Unusable(PathBuf),
}
