//! A persistent shell session. This directory is the only place that
//! extends [`Session`], one job per file, and its fields are private to it:
//! - `start.rs`: start (within one deadline), restart after the shell exits
//!   or a reset (cwd and exported variables restored), shut down;
//! - `call.rs`: `run`, `send`, `read`;
//! - `ready.rs`: the wait for the session to be ready again;
//! - `interrupt.rs`: a command past its deadline, and signals;
//! - `syntax.rs`: unfinished input, and a command that never ran;
//! - `outcome.rs`: a call's result;
//! - `link.rs`: a remote link that failed under a call;
//! - `learn.rs`: secrets learned from the exports snapshot;
//! - `answer.rs`: input typed only into a program waiting for it;
//! - `nested.rs`: shells a command started inside the session's, armed.

mod answer;
mod call;
mod interrupt;
mod learn;
mod link;
mod nested;
mod outcome;
mod ready;
mod start;
mod syntax;
#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use tether_transport::{TermSize, Terminal};

use crate::control::Pending;
use crate::error::ShellError;
use crate::live::{Live, LiveWatch};
use crate::options::SessionOptions;
use crate::place::Place;
use crate::pump::Shared;

/// A shell that stays alive between commands.
pub struct Session {
    opts: SessionOptions,
    /// Where the shell runs.
    place: Arc<dyn Place>,
    /// The shell's process tree has been ended where it runs (by
    /// [`Session::shut_down`]).
    tree_ended: bool,
    /// The session's private local directory (spill files; the shell's
    /// own files too when the place is this machine).
    dir: PathBuf,
    terminal: Arc<dyn Terminal>,
    shared: Arc<Shared>,
    redactor: crate::secrets::Secrets,
    last_status: i32,
    cwd: Option<PathBuf>,
    seq: u64,
    restarted: bool,
    keep_spills: bool,
    /// What tether must tell the caller, at the head of the next result's
    /// output (a start directory that could not be entered).
    notice: Option<String>,
    /// The spill files and their cap (spills removed to make room are told
    /// at the head of the next result's output, like `notice`).
    spills: Arc<crate::spill::Spills>,
    /// The current terminal for watchers; replaced on restart.
    live: tokio::sync::watch::Sender<crate::live::Live>,
    /// A reset or close requested without the call lock.
    pending: Arc<tokio::sync::watch::Sender<Option<crate::control::Pending>>>,
    /// The command in flight's text for followers (kept across restarts).
    follow: Arc<crate::follow::FollowBook>,
    /// Set when the link to the host failed under a call: the next `run`
    /// starts a fresh shell (over a fresh connection).
    link_lost: Option<crate::result::LinkLoss>,
    /// What the host's probes said of the command in flight (remote).
    probes: std::sync::Mutex<crate::place::probe::ProbeMemory>,
    /// The holders of a remote terminal the last end mark named.
    host_holders: Vec<crate::result::TerminalHolder>,
    /// Holders the prompt hooks started, held back for one result.
    hook_holders: crate::holders::HookHolders,
    /// The shells armed inside the session's own, outermost first.
    levels: Vec<nested::Level>,
    /// How the chain of shells changed since the last result.
    nest_change: Option<crate::result::NestChange>,
    /// The last program told to be a shell the session does not arm.
    told_not_armed: Option<i32>,
    /// The session's own shell's argv as it started (a shell found in the
    /// foreground with it is the session's, reading in a builtin).
    own_argv: Option<Vec<String>>,
    /// Its confinement's report (`None`: no fence).
    fenced: Option<Arc<crate::fence::Fenced>>,
    /// Its fence's report socket and its network allowlist's proxy,
    /// while the session lives.
    _listening: Option<crate::fence::Listening>,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("dir", &self.dir)
            .finish_non_exhaustive()
    }
}

impl Session {
    /// The dialect's name.
    pub fn dialect(&self) -> &'static str {
        self.opts.dialect.name()
    }

    /// The session's private local directory (spill files; command files
    /// too when the shell is local).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// True when the shell ran the user's start-up files.
    pub fn runs_rc_files(&self) -> bool {
        self.opts.run_rc_files
    }

    /// The session's confinement as listings show it (`None`: no fence).
    pub fn confinement(&self) -> Option<tether_confine::Confinement> {
        self.fenced.as_ref().and_then(|f| f.listed())
    }

    /// What the session was asked to be confined to (for its record).
    pub fn confine(&self) -> &tether_confine::Confine {
        &self.opts.confine
    }

    /// The host the shell runs on, `None` when local.
    pub fn host(&self) -> Option<&str> {
        self.place.host_name()
    }

    /// The shell's directory on its host (`None` when local).
    pub fn remote_dir(&self) -> Option<&Path> {
        self.place.remote_dir()
    }

    /// The working directory after the last command.
    pub fn cwd(&self) -> Option<&Path> {
        self.cwd.as_deref()
    }

    /// The shell's pid, while it runs.
    pub fn shell_pid(&self) -> Option<i32> {
        self.terminal.inspect().ok()?.top.map(|p| p.pid)
    }

    /// The current screen as text (for full-screen programs), secrets
    /// redacted.
    pub fn screen(&self) -> String {
        let contents = self.shared.lock().screen_text();
        self.redactor.redact(&contents)
    }

    /// Raw output bytes from stream offset `offset` on (bounded: see
    /// `dropped`).
    pub fn raw_since(&self, offset: u64) -> tether_term::Since {
        self.shared.lock().raw_since(offset)
    }

    /// Changes the terminal size (the program gets SIGWINCH). A size out
    /// of range is brought into it ([`TermSize::clamped`]).
    pub fn resize(&mut self, size: TermSize) -> Result<(), ShellError> {
        let size = size.clamped();
        self.terminal.resize(size)?;
        self.shared.lock().resize(size.rows, size.cols);
        self.opts.size = size;
        Ok(())
    }

    /// True when the shell has exited.
    pub fn shell_gone(&self) -> bool {
        self.terminal.exit().borrow().is_some()
    }

    /// The control handle: signal, reset, close and a look at the command
    /// in flight, without the call lock.
    pub fn control(&self) -> crate::control::Control {
        crate::control::Control {
            pending: Arc::clone(&self.pending),
            live: self.live.subscribe(),
            follow: Arc::clone(&self.follow),
        }
    }

    /// Follows the next command this session types (see
    /// [`crate::follow`]): taken under the call lock before `run`, it
    /// follows that run's command.
    pub fn follow_next(&self) -> crate::follow::Follower {
        self.follow.follow_next()
    }

    /// Keeps the spill files (`out-*.txt`) when the session ends, for a
    /// caller that has handed their paths on.
    pub fn keep_spill_files(&mut self) {
        self.keep_spills = true;
    }

    /// Ends the shell's whole process tree and removes the session's files
    /// (command files, spill files). Dropping a session does the same.
    pub fn close(self) {
        drop(self);
    }

    /// Carries out a reset or close requested through the session's
    /// [`crate::Control`] before this call: a close refuses the call, a
    /// reset restarts the shell first.
    async fn settle_pending(&mut self) -> Result<(), ShellError> {
        let p = *self.pending.borrow();
        match p {
            Some(Pending::Close) => Err(ShellError::Closed),
            Some(Pending::Reset) => {
                self.restart().await?;
                // A close requested meanwhile stays.
                self.pending.send_if_modified(|p| {
                    let was_reset = *p == Some(Pending::Reset);
                    if was_reset {
                        *p = None;
                    }
                    was_reset
                });
                Ok(())
            }
            None => Ok(()),
        }
    }

    /// Carries out a requested reset (if no other call has yet); true
    /// when this call restarted the shell.
    pub async fn take_reset(&mut self) -> Result<bool, ShellError> {
        if *self.pending.borrow() == Some(Pending::Reset) {
            self.settle_pending().await?;
            return Ok(true);
        }
        Ok(false)
    }

    /// A fresh file path in the local session directory.
    fn next_path(&mut self, stem: &str, ext: &str) -> PathBuf {
        self.seq += 1;
        self.dir.join(format!("{stem}-{}.{ext}", self.seq))
    }

    /// A fresh file path in the shell's directory (remote for a remote
    /// shell).
    fn next_shell_path(&mut self, stem: &str, ext: &str) -> PathBuf {
        self.seq += 1;
        let dir = self.level_dir().unwrap_or(self.place.dir());
        dir.join(format!("{stem}-{}.{ext}", self.seq))
    }

    /// Takes the working directory a shell that exited reported from its
    /// exit hook, as the one to restart in.
    fn take_exit_cwd(&mut self) {
        let cwd = self.shared.lock().take_exit_cwd();
        if cwd.is_some() {
            self.cwd = cwd;
        }
    }

    /// True while a command is in flight.
    fn busy(&self) -> bool {
        self.shared.lock().busy()
    }

    /// A handle on the current terminal, for watching and typing.
    pub fn live(&self) -> Live {
        self.live.borrow().clone()
    }

    /// The current handle and every later one (after restarts), usable
    /// without the session's call lock.
    pub fn live_watch(&self) -> LiveWatch {
        self.live.subscribe()
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let _ = self.terminal.kill(Duration::from_millis(300));
        if !self.tree_ended {
            self.place.end_tree_later();
        }
        if !self.keep_spills {
            let _ = std::fs::remove_dir_all(&self.dir);
            return;
        }
        let entries = std::fs::read_dir(&self.dir).into_iter().flatten().flatten();
        for e in entries {
            let spill = e
                .file_name()
                .to_str()
                .is_some_and(|n| n.starts_with("out-"));
            if !spill {
                let _ =
                    std::fs::remove_file(e.path()).or_else(|_| std::fs::remove_dir_all(e.path()));
            }
        }
    }
}

/// Ends what a lost remote shell left on `host` (its processes, found by
/// its directory's marker) and removes its directory `dir` there: for a
/// session closed after its daemon was killed, never continued.
pub async fn sweep_remote(host: &dyn tether_transport::RemoteHost, dir: &Path) {
    crate::place::end_tree(host, dir, true).await;
}
