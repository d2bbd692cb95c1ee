//! A scripted stand-in for a shell on a host, for the engine's unit tests:
//! [`FakeHost`] is a [`RemoteHost`] and the terminals it opens are
//! [`FakeTerminal`]s, whose "shell" speaks the engine's protocol as a real
//! dialect would, with a one-line-per-step script language instead of a
//! shell language ([`Scripted`] is its dialect). The engine runs unchanged
//! on it through the remote place: its directory, setup and command files
//! (kept in memory), the typed wrapper line, the marks, the host's `/proc`
//! probes (answered from the fake shell's state in the probe script's own
//! output format), the terminal's C-c and C-\, `link_hung`, the tree's
//! end and a restart. [`FakeLocal`] is a place like this machine's for
//! the same shell, whose terminal shows its foreground as the kernel shows
//! a local PTY's: the engine's local paths (one look at `reading_terminal`,
//! INT, TERM, KILL to the verified foreground). No process is started.
//!
//! A command file holds steps, one a line:
//! - `print TEXT`: writes `TEXT` and a newline;
//! - `exit N`: the command's status (its end mark says it);
//! - `read PROMPT`: writes `PROMPT` and blocks reading the terminal (the
//!   probe says so); a line typed is echoed back as `got LINE`;
//! - `hang [ignore-int|ignore-all]`: runs until C-c (status 130), or C-\
//!   (131) when it ignores C-c, or forever when it ignores both (the probe
//!   says it sleeps);
//! - `quit-shell N`: the shell itself exits with `N`;
//! - `lose-link`: the terminal ends without an exit status.

mod local;
mod shell;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use tether_transport::{
    BoxFuture, HostOutput, RemoteHost, Signal, TermSize, Terminal, TerminalRequest, TransportError,
};

use crate::dialect::{Dialect, SetupContext};
use shell::lock;

pub(crate) use local::FakeLocal;

/// What the fake host and its terminals share: the files written on the
/// host, what was typed and signalled, and the knobs a test turns.
#[derive(Debug, Default)]
pub(crate) struct World {
    /// Files written on the host, by path.
    pub(crate) files: HashMap<PathBuf, Vec<u8>>,
    /// Every byte typed into every terminal, in order.
    pub(crate) typed: Vec<u8>,
    /// The signals sent to a foreground, in order.
    pub(crate) signals: Vec<Signal>,
    /// Terminals opened (a restart opens another).
    pub(crate) terminals: usize,
    /// Probes of `/proc` answered.
    pub(crate) probes: usize,
    /// Commands run on the host to end a shell's tree.
    pub(crate) tree_ends: usize,
    /// What `link_hung` answers.
    pub(crate) link_hung: bool,
    /// The shell of the terminal opened last.
    shell: Option<Arc<Mutex<shell::Shell>>>,
}

/// A host that keeps its files in memory and runs the engine's host
/// commands by recognising them (each is a fixed script of the engine's).
#[derive(Debug, Default, Clone)]
pub(crate) struct FakeHost {
    world: Arc<Mutex<World>>,
}

impl FakeHost {
    /// What the host has seen so far (locked).
    pub(crate) fn world(&self) -> MutexGuard<'_, World> {
        self.world.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The session secret, from the setup file the engine wrote.
    pub(crate) fn nonce(&self) -> Option<String> {
        let w = self.world();
        let setup = w.files.iter().find(|(p, _)| is_setup(p))?.1;
        let text = String::from_utf8_lossy(setup);
        text.strip_prefix("nonce=").map(|n| n.trim().to_owned())
    }

    fn answer(&self, command: &str, input: Vec<u8>) -> HostOutput {
        let ok = |stdout: &str| HostOutput {
            status: Some(0),
            stdout: stdout.as_bytes().to_vec(),
            stderr: Vec::new(),
        };
        let mut w = self.world();
        if command.contains("__tether_mk") {
            return ok("/fake/tether/sessions/s1");
        }
        if let Some(path) = quoted_after(command, "cat > ") {
            w.files.insert(path, input);
            return ok("");
        }
        if let Some(path) = quoted_after(command, "cat -- ") {
            return match w.files.get(&path) {
                Some(bytes) => HostOutput {
                    status: Some(0),
                    stdout: bytes.clone(),
                    stderr: Vec::new(),
                },
                None => HostOutput {
                    status: Some(1),
                    ..HostOutput::default()
                },
            };
        }
        if command.contains("uname -m") {
            w.probes += 1;
            let reading = w.shell.as_ref().is_some_and(|s| lock(s).reading());
            return ok(if reading {
                "arch x86_64\ntty /dev/pts/9\nt 40 0 /dev/pts/9 n_tty_read prog\n"
            } else {
                "arch x86_64\ntty /dev/pts/9\nt 40 230 - hrtimer_nanosleep prog\n"
            });
        }
        if command.contains("TETHER_SESSION_ID=") {
            w.tree_ends += 1;
            return ok("");
        }
        // `rm -f`, `stty`: nothing to keep.
        ok("")
    }
}

impl RemoteHost for FakeHost {
    fn name(&self) -> &str {
        "fake"
    }

    fn run(
        &self,
        command: String,
        input: Vec<u8>,
    ) -> BoxFuture<'_, Result<HostOutput, TransportError>> {
        let out = self.answer(&command, input);
        Box::pin(async move { Ok(out) })
    }

    fn open_terminal(
        &self,
        request: TerminalRequest,
    ) -> BoxFuture<'_, Result<Arc<dyn Terminal>, TransportError>> {
        let opened = self.open(request.size, false);
        Box::pin(async move { opened })
    }

    fn link_hung(&self, _within: Duration) -> BoxFuture<'_, bool> {
        let hung = self.world().link_hung;
        Box::pin(async move { hung })
    }
}

impl FakeHost {
    /// A fresh terminal running the fake shell; with `evidence`, it shows
    /// its foreground as a local PTY does (the kernel's view).
    pub(super) fn open(
        &self,
        size: TermSize,
        evidence: bool,
    ) -> Result<Arc<dyn Terminal>, TransportError> {
        let nonce = self.nonce().ok_or(TransportError::Closed)?;
        let (shell, terminal) = shell::spawn(nonce, &self.world, size, evidence);
        let mut w = self.world();
        w.terminals += 1;
        w.shell = Some(shell);
        Ok(terminal)
    }
}

/// The dialect of the fake shell: its setup file holds the secret, its
/// wrapper line `run SEQ PATH`, its command file the steps as given.
#[derive(Debug)]
pub(crate) struct Scripted;

impl Dialect for Scripted {
    fn name(&self) -> &'static str {
        "fake"
    }

    fn argv(&self, _run_rc_files: bool, setup: &Path) -> (String, Vec<String>) {
        ("fake-shell".to_owned(), vec![setup.display().to_string()])
    }

    fn setup_script(&self, ctx: &SetupContext<'_>) -> String {
        format!("nonce={}\n", ctx.nonce.joined())
    }

    fn load_setup(&self, _run_rc_files: bool, _path: &Path) -> Option<String> {
        None
    }

    fn command_file(&self, code: &str, _last_status: i32) -> String {
        code.to_owned()
    }

    fn wrapper_line(&self, path: &Path, seq: u64, _code: &str) -> String {
        format!("run {seq} {}\n", path.display())
    }

    fn syntax_check(&self, _file: &Path) -> Option<(String, Vec<String>)> {
        None
    }

    fn is_incomplete(&self, _code: &str, _check: &str, _probe: Option<&str>) -> bool {
        false
    }

    fn file_in_messages(&self, _path: &Path) -> Option<(String, String)> {
        None
    }

    fn has_pipe_status(&self) -> bool {
        true
    }
}

fn is_setup(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with("setup."))
}

/// The path in the first single-quoted word after `after` in `command`.
fn quoted_after(command: &str, after: &str) -> Option<PathBuf> {
    let rest = &command[command.find(after)? + after.len()..];
    let rest = rest.strip_prefix('\'')?;
    Some(PathBuf::from(&rest[..rest.find('\'')?]))
}
