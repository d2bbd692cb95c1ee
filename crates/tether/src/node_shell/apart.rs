//! The nodes `!drop --keep` took out of a `tether shell` session while
//! their shells keep running in its daemon namespace (as tmux's
//! `break-pane` takes a pane out of its window and keeps it running): kept
//! in a file of the session, in the daemon's private directory, so that
//! `--attach NAME` comes back to the session's nodes without them, and
//! names them with how to reach them. `!add` takes one back; a session
//! started again with `-H` or `-C` takes back the nodes it names. It does
//! not close or watch those shells: they are plain sessions of the
//! namespace (`tether attach`, `tether close`).

use std::collections::BTreeSet;
use std::os::unix::fs::DirBuilderExt;
use std::path::PathBuf;

/// The session's nodes kept apart, and their file.
pub struct Apart {
    path: Option<PathBuf>,
    /// The node names.
    pub nodes: BTreeSet<String>,
}

impl Apart {
    /// What the file of the session whose daemon namespace is `ns` says
    /// (nothing when there is none or it cannot be read).
    pub fn load(ns: &str) -> Apart {
        let dir = tether_daemon::Paths::from_env().dir.join("shell-apart");
        let path = std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&dir)
            .ok()
            .map(|()| dir.join(ns));
        let nodes = path
            .as_ref()
            .and_then(|p| std::fs::read(p).ok())
            .and_then(|bytes| serde_json::from_slice(&bytes).ok())
            .unwrap_or_default();
        Apart { path, nodes }
    }

    /// Writes the set (the file removed when it is empty): written aside,
    /// then renamed over it.
    pub fn save(&self) {
        let Some(path) = &self.path else {
            eprintln!(
                "tether: cannot keep the list of shells kept apart: `--attach` will count them in the session"
            );
            return;
        };
        super::journal::save_private(path, &self.nodes, self.nodes.is_empty());
    }

    /// Forgets the nodes whose shell is not among `sessions` (those of
    /// the namespace) any more: closed since.
    pub fn forget_closed(&mut self, sessions: &[tether_daemon::protocol::SessionEntry]) {
        let gone: Vec<String> = self
            .nodes
            .iter()
            .filter(|n| !sessions.iter().any(|s| &s.name == *n))
            .cloned()
            .collect();
        self.take_back(&gone);
    }

    /// Takes `names` back into the session (saved when that changed).
    pub fn take_back(&mut self, names: &[String]) {
        let before = self.nodes.len();
        for n in names {
            self.nodes.remove(n);
        }
        if self.nodes.len() != before {
            self.save();
        }
    }
}
