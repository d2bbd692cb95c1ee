//! Passphrases and passwords, asked for through a [`Prompter`] the
//! front-end supplies (a terminal's `/dev/tty`, or nothing), at most once
//! per key per run (the decrypted key is kept for the other hosts), and a
//! password once per host, or once per run when the user says so. Secrets
//! live only here: never in argv, a log or an error.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use russh::keys::PrivateKey;

/// Asks the person for a secret.
pub trait Prompter: Send + Sync {
    /// Shows `prompt` and reads one line without echo; `None` when there is
    /// no one to ask (or they gave up).
    fn secret(&self, prompt: &str) -> Option<String>;
}

/// The secrets of one run, shared by all its connections.
pub struct Secrets {
    prompter: Arc<dyn Prompter>,
    /// One question at a time, so concurrent hosts never interleave prompts.
    asking: Mutex<()>,
    keys: Mutex<HashMap<PathBuf, Option<Arc<PrivateKey>>>>,
    password: Mutex<Option<String>>,
    reuse_password: bool,
}

impl std::fmt::Debug for Secrets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Secrets").finish_non_exhaustive()
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Secrets {
    /// Secrets asked of `prompter`; with `reuse_password`, the first
    /// password given serves every host.
    pub fn new(prompter: Arc<dyn Prompter>, reuse_password: bool) -> Arc<Secrets> {
        Arc::new(Secrets {
            prompter,
            asking: Mutex::new(()),
            keys: Mutex::new(HashMap::new()),
            password: Mutex::new(None),
            reuse_password,
        })
    }

    /// The key at `path` decrypted, asking for its passphrase the first
    /// time (three tries); `None` when it cannot be had.
    pub fn key(&self, path: &Path) -> Option<Arc<PrivateKey>> {
        let _one = lock(&self.asking);
        if let Some(k) = lock(&self.keys).get(path) {
            return k.clone();
        }
        let mut key = None;
        for _ in 0..3 {
            let Some(pass) = self
                .prompter
                .secret(&format!("Enter passphrase for key '{}': ", path.display()))
            else {
                break;
            };
            if let Ok(k) = russh::keys::load_secret_key(path, Some(&pass)) {
                key = Some(Arc::new(k));
                break;
            }
        }
        lock(&self.keys).insert(path.to_path_buf(), key.clone());
        key
    }

    /// A password for `user@host`.
    pub fn password(&self, user: &str, host: &str) -> Option<String> {
        let _one = lock(&self.asking);
        if self.reuse_password
            && let Some(p) = lock(&self.password).clone()
        {
            return Some(p);
        }
        let p = self
            .prompter
            .secret(&format!("{user}@{host}'s password: "))?;
        if self.reuse_password {
            *lock(&self.password) = Some(p.clone());
        }
        Some(p)
    }
}
