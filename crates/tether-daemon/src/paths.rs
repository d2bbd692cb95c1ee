//! Where the daemon lives: one private directory per user holding the
//! socket, the lock that makes the daemon single, its log, and its
//! sessions' directories (`daemon/sessions/ID`, apart from those of
//! `tether run --once`, which may share the private directory).

use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use crate::error::DaemonError;

/// The daemon's files.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Paths {
    /// The private directory (0700).
    pub dir: PathBuf,
}

impl Paths {
    /// `$TETHER_DIR` when set, else `$XDG_RUNTIME_DIR/tether`, else
    /// `/dev/shm/tether-UID` (memory), else `/tmp/tether-UID`.
    pub fn from_env() -> Paths {
        let uid = nix::unistd::getuid().as_raw();
        let dir = if let Some(d) = std::env::var_os("TETHER_DIR") {
            PathBuf::from(d)
        } else if let Some(d) = std::env::var_os("XDG_RUNTIME_DIR") {
            PathBuf::from(d).join("tether")
        } else if Path::new("/dev/shm").is_dir() {
            PathBuf::from(format!("/dev/shm/tether-{uid}"))
        } else {
            PathBuf::from(format!("/tmp/tether-{uid}"))
        };
        Paths { dir }
    }

    /// The socket.
    pub fn socket(&self) -> PathBuf {
        self.dir.join("daemon.sock")
    }

    /// The lock held by the running daemon.
    pub fn lock(&self) -> PathBuf {
        self.dir.join("daemon.lock")
    }

    /// The daemon's log (its stderr).
    pub fn log(&self) -> PathBuf {
        self.dir.join("daemon.log")
    }

    /// The root of the daemon's session directories (the engine adds
    /// `sessions/ID`).
    pub fn session_root(&self) -> PathBuf {
        self.dir.join("daemon")
    }

    /// Removes the session directories a daemon that did not stop cleanly
    /// (SIGKILL, a crash) left behind; returns how many. Only for the
    /// holder of the lock: no other daemon of this directory is alive then.
    /// Only what the engine makes is removed: a directory (never a symlink
    /// or what it points to) named by 16 hex digits, ours, mode 0700,
    /// inside a `sessions` directory that is ours too.
    pub fn remove_dead_sessions(&self) -> usize {
        let uid = nix::unistd::getuid().as_raw();
        let ours = |p: &Path| {
            std::fs::symlink_metadata(p)
                .is_ok_and(|m| m.is_dir() && !m.file_type().is_symlink() && m.uid() == uid)
        };
        let root = self.session_root();
        let sessions = root.join("sessions");
        if !ours(&root) || !ours(&sessions) {
            return 0;
        }
        let Ok(entries) = std::fs::read_dir(&sessions) else {
            return 0;
        };
        let mut removed = 0;
        for entry in entries.flatten() {
            let name = entry.file_name();
            let session_name = name.to_str().is_some_and(|n| {
                n.len() == 16
                    && n.bytes()
                        .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
            });
            let path = entry.path();
            let private =
                std::fs::symlink_metadata(&path).is_ok_and(|m| m.permissions().mode() & 0o077 == 0);
            // remove_dir_all removes symlinks inside, never what they name.
            if session_name && ours(&path) && private && std::fs::remove_dir_all(&path).is_ok() {
                removed += 1;
            }
        }
        removed
    }

    /// Creates the directory 0700 if needed and checks it is ours: a
    /// symlink, another owner, or access for others is refused.
    pub fn ensure_private(&self) -> Result<(), DaemonError> {
        let io = |source| DaemonError::Dir {
            path: self.dir.clone(),
            problem: format!("cannot be created: {source}"),
        };
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&self.dir)
            .map_err(io)?;
        self.check_private()
    }

    /// Checks the directory is a real directory, owned by us, 0700.
    pub fn check_private(&self) -> Result<(), DaemonError> {
        let bad = |problem: String| DaemonError::Dir {
            path: self.dir.clone(),
            problem,
        };
        let meta = std::fs::symlink_metadata(&self.dir).map_err(|e| bad(e.to_string()))?;
        let uid = nix::unistd::getuid().as_raw();
        if meta.file_type().is_symlink() || !meta.is_dir() {
            return Err(bad("is not a directory (a symlink?); remove it".into()));
        }
        if meta.uid() != uid {
            return Err(bad(format!(
                "belongs to uid {}, not to you (uid {uid}); remove it or set TETHER_DIR",
                meta.uid()
            )));
        }
        if meta.permissions().mode() & 0o077 != 0 {
            std::fs::set_permissions(&self.dir, std::fs::Permissions::from_mode(0o700))
                .map_err(|e| bad(format!("cannot be made private: {e}")))?;
        }
        Ok(())
    }
}
