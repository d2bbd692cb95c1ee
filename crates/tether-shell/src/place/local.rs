//! This machine: the shell on a fresh local PTY, its files in the
//! session's own directory.
//!
//! The files on the command path are reached through the session
//! directory's descriptor, proven private once when the session starts
//! (the directory is the user's alone, so nobody can swap it afterwards):
//! a command file costs a create, a write and a removal, not a new walk
//! from the root each time; and the exports snapshot the shell rewrites
//! at every end mark (`>|` truncates the same file) is read through a
//! descriptor kept open.

use std::fs::File;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use tether_pty::{LocalPty, SpawnSpec};
use tether_term::Redactor;
use tether_transport::{BoxFuture, Terminal};

use super::syntax::SyntaxCheck;
use super::{Echo, Place, ShellStart, Staged};
use crate::dialect::Dialect;
use crate::error::ShellError;
use crate::private::PrivateDir;
use crate::pump::Shared;
use crate::secrets::Secrets;

/// The snapshot's name in the session directory (the dialects write it).
const ENV: &str = "env";

/// This machine, with the session directory `dir`.
pub(crate) struct Local {
    dir: PathBuf,
    files: Mutex<LocalFiles>,
}

impl Local {
    /// The place of a shell whose files go in `dir`.
    pub(crate) fn new(dir: PrivateDir) -> Local {
        Local {
            dir: dir.path().to_path_buf(),
            files: Mutex::new(LocalFiles {
                dir,
                last_command: None,
                env: None,
                snapshot: Vec::new(),
            }),
        }
    }

    fn files(&self) -> MutexGuard<'_, LocalFiles> {
        self.files.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Place for Local {
    fn host_name(&self) -> Option<&str> {
        None
    }

    fn dir(&self) -> &Path {
        &self.dir
    }

    fn remote_dir(&self) -> Option<&Path> {
        None
    }

    fn cannot_enter(&self, dir: &Path) -> Option<String> {
        tether_pty::check_cwd(dir).err().map(|e| e.to_string())
    }

    fn remove_file<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            let _ = std::fs::remove_file(path);
        })
    }

    fn write_files(&self, files: Vec<(PathBuf, Vec<u8>)>) -> BoxFuture<'_, Result<(), ShellError>> {
        Box::pin(async move {
            for (path, bytes) in &files {
                // The session's directory, or one of its own (zsh's zdot).
                if let Some(parent) = path.parent() {
                    crate::private::ensure_dir(parent)?;
                }
                crate::private::write_file(path, bytes)?;
            }
            Ok(())
        })
    }

    fn inline_command(&self, _: &dyn Dialect, _: &Path, _: &str) -> Option<String> {
        None
    }

    fn write_command(
        &self,
        file: PathBuf,
        text: String,
        deadline: Instant,
    ) -> BoxFuture<'_, Result<Staged, ShellError>> {
        match file.file_name().and_then(|n| n.to_str()) {
            Some(name) => {
                let written = self.files().write_command(name, text.as_bytes());
                Box::pin(async move { written.map(|()| Staged::Written) })
            }
            None => self.write_before_typing(vec![(file, text.into_bytes())], deadline),
        }
    }

    fn command_over(&self) {
        self.files().remove_last_command();
    }

    fn learn_exports<'a>(&'a self, secrets: &'a Secrets) -> BoxFuture<'a, Option<Redactor>> {
        let learned = self.files().read_env().and_then(|s| secrets.learn(s));
        Box::pin(async move { learned })
    }

    fn open_terminal<'a>(
        &'a self,
        start: ShellStart<'a>,
    ) -> BoxFuture<'a, Result<Arc<dyn Terminal>, ShellError>> {
        Box::pin(async move {
            let mut spec = SpawnSpec::new(start.program.to_owned());
            spec.args = start.args.to_vec();
            spec.env = start.env.to_vec();
            spec.cwd = start.cwd.map(Path::to_path_buf);
            spec.size = start.size;
            spec.echo = false;
            spec.output_processing = start.output_processing;
            spec.launcher = start.launcher;
            spec.tree_marker = self
                .dir
                .file_name()
                .and_then(|n| n.to_str())
                .map(|id| (crate::tree::TREE_MARKER.to_owned(), id.to_owned()));
            // The engine runs on the runtime that holds its sessions (the
            // daemon's, or `run --once`'s), which outlives them: reading the
            // output there saves a thread wake-up per chunk, which a person
            // typing into an attached session feels.
            let pty = match tokio::runtime::Handle::try_current() {
                Ok(runtime) => LocalPty::spawn_on(&spec, &runtime)?,
                Err(_) => LocalPty::spawn(&spec)?,
            };
            let pty: Arc<dyn Terminal> = Arc::new(pty);
            Ok(pty)
        })
    }

    fn check_syntax<'a>(
        &'a self,
        check: SyntaxCheck<'a>,
    ) -> BoxFuture<'a, Result<String, ShellError>> {
        Box::pin(super::syntax::check_here(check))
    }

    fn echo(&self) -> Arc<dyn Echo> {
        Arc::new(TerminalEcho)
    }
}

/// Echo changed through the terminal itself, once the kernel shows the
/// shell in the foreground.
struct TerminalEcho;

impl Echo for TerminalEcho {
    fn set(&self, on: bool, terminal: &dyn Terminal, shared: &Arc<Shared>) -> bool {
        let shell_in_front = terminal
            .inspect()
            .ok()
            .and_then(|i| i.foreground)
            .is_some_and(|f| f.is_top);
        let changed = shell_in_front && terminal.set_echo(on).unwrap_or(false);
        if changed {
            shared.lock().set_echo_on(on);
        }
        changed
    }
}

/// The files of a local session on the command path.
#[derive(Debug)]
struct LocalFiles {
    dir: PrivateDir,
    /// The last command's file name, while the shell may still read it.
    last_command: Option<String>,
    /// The exports snapshot, open; reopened when it was replaced.
    env: Option<File>,
    /// The last snapshot read (its buffer is reused).
    snapshot: Vec<u8>,
}

impl LocalFiles {
    /// Writes a command's file `name`, to be removed once the next
    /// command starts (the shell has read it by then).
    fn write_command(&mut self, name: &str, bytes: &[u8]) -> Result<(), ShellError> {
        self.dir.write_new(name, bytes)?;
        self.last_command = Some(name.to_owned());
        Ok(())
    }

    /// Removes the last command's file: call when no command is in flight,
    /// so a session holds one at most.
    fn remove_last_command(&mut self) {
        if let Some(name) = self.last_command.take() {
            self.dir.remove(&name);
        }
    }

    /// The exports snapshot as the shell last wrote it, `None` when there
    /// is none (yet).
    fn read_env(&mut self) -> Option<&[u8]> {
        // Removed or replaced (no name left): open the new one.
        let size = match self.env.as_ref().map(File::metadata) {
            Some(Ok(m)) if m.nlink() > 0 => m.len(),
            _ => {
                let file = self.dir.open_regular(ENV)?;
                let size = file.metadata().ok()?.len();
                self.env = Some(file);
                size
            }
        };
        let file = self.env.as_ref()?;
        // One byte more than its size: a short read is the end of it.
        let mut want = usize::try_from(size).ok()?.saturating_add(1);
        loop {
            self.snapshot.resize(want, 0);
            let n = file.read_at(&mut self.snapshot, 0).ok()?;
            if n < want {
                self.snapshot.truncate(n);
                return Some(&self.snapshot);
            }
            // It grew meanwhile.
            want = want.saturating_mul(2);
        }
    }
}
