//! The lines whose end `tether shell` has not shown yet, per node, kept in
//! a file of the session (in the daemon's private directory) so that a
//! client that comes back (`--attach` after `!detach`, or after the last
//! one was killed) knows which node still owes an end, and for which line:
//! it collects those first, showing their output not yet shown and their
//! end, once. Written before a line is sent and after its ends are shown;
//! removed by `!exit`.

use std::collections::BTreeMap;
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::PathBuf;

/// Node → the line sent there whose end was not shown.
pub type Owed = BTreeMap<String, String>;

/// The session's file (none when the private directory cannot be made).
pub struct Journal {
    path: Option<PathBuf>,
}

impl Journal {
    /// The file of the session whose daemon namespace is `ns`.
    pub fn new(ns: &str) -> Journal {
        let dir = tether_daemon::Paths::from_env().dir.join("shell-lines");
        let made = std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&dir);
        if let Err(e) = &made {
            eprintln!(
                "tether: cannot create {} ({e}); a client that comes back will not know which lines still owe an end",
                dir.display()
            );
        }
        Journal {
            path: made.ok().map(|()| dir.join(ns)),
        }
    }

    /// What the file says (nothing when there is none, or it is not
    /// readable as written).
    pub fn load(&self) -> Owed {
        self.path
            .as_ref()
            .and_then(|p| std::fs::read(p).ok())
            .and_then(|bytes| serde_json::from_slice(&bytes).ok())
            .unwrap_or_default()
    }

    /// Replaces the file with `owed` (removed when empty): written aside,
    /// then renamed over it, so a client killed meanwhile leaves the old
    /// or the new one whole.
    pub fn save(&self, owed: &Owed) {
        let Some(path) = &self.path else { return };
        save_private(path, owed, owed.is_empty());
    }

    /// Removes the file (the session is closed).
    pub fn remove(&self) {
        if let Some(path) = &self.path {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// Replaces the file at `path` with `value` as JSON, private to the user
/// (0600), or removes it when `empty`: written aside, then renamed over it,
/// so a client killed meanwhile leaves the old or the new one whole.
pub(super) fn save_private(path: &std::path::Path, value: &impl serde::Serialize, empty: bool) {
    if empty {
        let _ = std::fs::remove_file(path);
        return;
    }
    let aside = path.with_extension("new");
    let written = serde_json::to_vec(value)
        .map_err(std::io::Error::other)
        .and_then(|bytes| {
            let mut f = std::fs::OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(true)
                .mode(0o600)
                .open(&aside)?;
            f.write_all(&bytes)
        })
        .and_then(|()| std::fs::rename(&aside, path));
    if let Err(e) = written {
        eprintln!("tether: cannot write {} ({e})", path.display());
    }
}
