//! Where the daemon lives: one private directory per user holding the
//! socket, the lock that makes the daemon single, its log, and its
//! sessions' directories (`daemon/sessions/ID`, apart from those of
//! `tether run --once`, which may share the private directory).

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use tether_shell::ShellError;
use tether_shell::private::{Kind, PrivateDir};

use crate::error::DaemonError;

/// The longest socket path a unix socket address holds: `sun_path` is 108
/// bytes, the last a NUL.
pub const MAX_SOCKET_PATH: usize = 107;

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

    /// The daemon a tether on another machine starts on this host over
    /// SSH: `$TETHER_DIR` when set, else `/tmp/tether-UID` — never under
    /// `$XDG_RUNTIME_DIR` or `/dev/shm`, which the system empties when the
    /// user's last login ends (systemd-logind), while this daemon is
    /// there to outlive the logins that start it.
    pub fn for_host() -> Paths {
        match std::env::var_os("TETHER_DIR") {
            Some(d) => Paths {
                dir: PathBuf::from(d),
            },
            None => Paths {
                dir: PathBuf::from(format!("/tmp/tether-{}", nix::unistd::getuid().as_raw())),
            },
        }
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
        self.dead_sessions()
            .into_iter()
            // remove_dir_all removes symlinks inside, never what they name.
            .filter(|(_, path)| std::fs::remove_dir_all(path).is_ok())
            .count()
    }

    /// The session directories a dead daemon left, by id and path: only
    /// what the engine makes (a real directory named by 16 hex digits,
    /// ours, mode 0700, inside a `daemon/sessions` that is ours too).
    pub fn dead_sessions(&self) -> Vec<(String, PathBuf)> {
        let uid = nix::unistd::getuid().as_raw();
        let ours = |p: &Path| {
            std::fs::symlink_metadata(p)
                .is_ok_and(|m| m.is_dir() && !m.file_type().is_symlink() && m.uid() == uid)
        };
        let root = self.session_root();
        let sessions = root.join("sessions");
        if !ours(&root) || !ours(&sessions) {
            return Vec::new();
        }
        let Ok(entries) = std::fs::read_dir(&sessions) else {
            return Vec::new();
        };
        entries
            .flatten()
            .filter_map(|entry| {
                let id = entry.file_name().to_str()?.to_owned();
                let session_name = id.len() == 16
                    && id
                        .bytes()
                        .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
                let path = entry.path();
                let private = std::fs::symlink_metadata(&path)
                    .is_ok_and(|m| m.permissions().mode() & 0o077 == 0);
                (session_name && ours(&path) && private).then_some((id, path))
            })
            .collect()
    }

    /// Creates the directory 0700 if needed (or proves it private) and
    /// checks what tether keeps in it: see [`Paths::check_private`].
    pub fn ensure_private(&self) -> Result<PrivateDir, DaemonError> {
        self.socket_fits()?;
        let dir = PrivateDir::root(&self.dir).map_err(|e| self.refused(e))?;
        self.check_layout(&dir)?;
        Ok(dir)
    }

    /// Proves the existing directory private (`tether_shell::private`): a
    /// real directory, ours, no access for others, under directories only
    /// we or root can change; and each thing tether keeps in it that
    /// exists (`daemon.lock`, `daemon.log`, `daemon.sock`, `daemon/`,
    /// `daemon/sessions/`, `sessions/`) ours, of its kind, private (but for
    /// the socket, whose peers the daemon checks), never a symlink.
    /// Anything else is refused with what to remove; nothing is repaired.
    pub fn check_private(&self) -> Result<PrivateDir, DaemonError> {
        self.socket_fits()?;
        let dir = PrivateDir::existing_root(&self.dir).map_err(|e| self.refused(e))?;
        self.check_layout(&dir)?;
        Ok(dir)
    }

    /// The error for `e`, which the private directory's checks returned.
    pub fn refused(&self, e: ShellError) -> DaemonError {
        match e {
            ShellError::NotPrivate { path, problem } => DaemonError::Dir { path, problem },
            other => DaemonError::Dir {
                path: self.dir.clone(),
                problem: other.to_string(),
            },
        }
    }

    fn check_layout(&self, dir: &PrivateDir) -> Result<(), DaemonError> {
        let entries = [
            ("daemon.lock", Kind::File),
            ("daemon.log", Kind::File),
            ("daemon.sock", Kind::Socket),
            ("sessions", Kind::Dir),
        ];
        for (name, kind) in entries {
            dir.check(name, kind).map_err(|e| self.refused(e))?;
        }
        let daemon = dir.existing_dir("daemon").map_err(|e| self.refused(e))?;
        if let Some(daemon) = daemon {
            daemon
                .check("sessions", Kind::Dir)
                .map_err(|e| self.refused(e))?;
        }
        Ok(())
    }

    /// A socket's path must fit a unix socket address (`sun_path`).
    fn socket_fits(&self) -> Result<(), DaemonError> {
        let len = self.socket().as_os_str().len();
        if len > MAX_SOCKET_PATH {
            return Err(DaemonError::Dir {
                path: self.dir.clone(),
                problem: format!(
                    "its socket {} would be a {len}-byte path, and a unix socket path holds at most {MAX_SOCKET_PATH} bytes (sun_path is 108 bytes with the final NUL): set TETHER_DIR to a shorter path",
                    self.socket().display()
                ),
            });
        }
        Ok(())
    }
}
