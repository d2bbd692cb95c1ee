//! The session's secrets: the values it started with (secret-named
//! variables of the shell's environment, configured secrets) and the
//! secret-named values the session exports itself, learned from the
//! `export -p` snapshot the shell writes at every end mark. One matcher for
//! all of them, shared by every capture (a fresh clone each) and the screen
//! view.
//!
//! Locally the snapshot is a file in the session directory, read after
//! every end mark. Remotely it is on the host, and reading it takes a
//! channel and a process there (about as much as the command itself), so it
//! is read after the shell's first command (which sees the remote login's
//! own environment) and after any command that could change a secret-named
//! export: one that names a secret-looking variable, or uses `source`, `.`,
//! `eval`, `set`, `export`, `declare`, `typeset` or `readonly`.

use std::sync::{Arc, Mutex, MutexGuard};

use tether_term::Redactor;
use tether_term::redact::{MIN_ENV_SECRET_LEN, is_secret_name};

use crate::error::ShellError;
use crate::exports::parse_exports;

/// Most values learned from a session's exports (the oldest are kept: a
/// session that exports ever new secrets stops learning, it never forgets).
const MAX_LEARNED: usize = 1024;

/// Words after which a remote session's snapshot is read again.
const CHANGES_EXPORTS: [&str; 8] = [
    "source", ".", "eval", "set", "export", "declare", "typeset", "readonly",
];

/// The session's secrets, shared with its [`crate::Live`] handles.
#[derive(Clone, Debug)]
pub(crate) struct Secrets {
    inner: Arc<Mutex<Inner>>,
}

#[derive(Debug)]
struct Inner {
    /// Every secret value, sorted and without duplicates.
    known: Vec<Vec<u8>>,
    /// How many of them were learned from the session's exports.
    learned: usize,
    redactor: Redactor,
    /// A remote snapshot should be read after the current command.
    read_remote: bool,
    /// The exports snapshot learned last (an unchanged one is not parsed
    /// again).
    last_snapshot: Vec<u8>,
}

impl Secrets {
    /// The secrets a session starts with (empty values are ignored).
    pub(crate) fn new(base: Vec<String>) -> Result<Secrets, ShellError> {
        let mut known: Vec<Vec<u8>> = base
            .into_iter()
            .filter(|s| !s.is_empty())
            .map(String::into_bytes)
            .collect();
        known.sort();
        known.dedup();
        let redactor = Redactor::new(&known)?;
        Ok(Secrets {
            inner: Arc::new(Mutex::new(Inner {
                known,
                learned: 0,
                redactor,
                read_remote: true,
                last_snapshot: Vec::new(),
            })),
        })
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A redactor for every secret known now, holding nothing.
    pub(crate) fn fresh(&self) -> Redactor {
        self.lock().redactor.fresh()
    }

    /// `text` with every known secret replaced.
    pub(crate) fn redact(&self, text: &str) -> String {
        let mut r = self.fresh();
        let mut out = Vec::with_capacity(text.len());
        r.feed(text.as_bytes(), &mut out);
        r.finish(&mut out);
        String::from_utf8_lossy(&out).into_owned()
    }

    /// Learns the secret-named values of an exports snapshot; returns the
    /// redactor with them when any was new.
    pub(crate) fn learn(&self, snapshot: &[u8]) -> Option<Redactor> {
        let mut inner = self.lock();
        // Most commands export nothing new: the same snapshot is not
        // parsed again.
        if inner.last_snapshot == snapshot {
            return None;
        }
        inner.last_snapshot.clear();
        inner.last_snapshot.extend_from_slice(snapshot);
        let mut added = false;
        for (name, value) in parse_exports(snapshot) {
            if inner.learned >= MAX_LEARNED {
                break;
            }
            if !is_secret_name(&name) || value.len() < MIN_ENV_SECRET_LEN {
                continue;
            }
            if let Err(at) = inner.known.binary_search(&value) {
                inner.known.insert(at, value);
                inner.learned += 1;
                added = true;
            }
        }
        if !added {
            return None;
        }
        // The values are non-empty and few: building cannot fail, and if it
        // did the old matcher would stay.
        let rebuilt = Redactor::new(&inner.known).ok()?;
        inner.redactor = rebuilt.fresh();
        Some(rebuilt)
    }

    /// Notes the command about to run: a remote snapshot is read after it
    /// when it could change a secret-named export.
    pub(crate) fn note_command(&self, code: &str) {
        if could_change_secrets(code) {
            self.lock().read_remote = true;
        }
    }

    pub(crate) fn take_read_remote(&self) -> bool {
        std::mem::take(&mut self.lock().read_remote)
    }
}

/// True when `code` names a secret-looking variable or uses a builtin that
/// can change exports without naming them.
fn could_change_secrets(code: &str) -> bool {
    let names = code.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'));
    let words = code.split(|c: char| c.is_whitespace() || ";&|()`".contains(c));
    names.clone().any(|w| !w.is_empty() && is_secret_name(w))
        || names.chain(words).any(|w| CHANGES_EXPORTS.contains(&w))
}
