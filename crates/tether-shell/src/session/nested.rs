//! Shells started inside the session (`bash`, `exec zsh`, `sudo -i`,
//! `su - USER`): when a command's foreground is an interactive shell
//! reading the terminal (`crate::nested`), the session arms it as it armed
//! its own, and later commands run there until it exits.
//!
//! Arming types one line into the new shell: `. FILE`, a setup file with
//! the engine's functions and a secret of the new shell's own (0600; for a
//! shell of another user, in a 0700 directory of that user's, which only
//! root can make). The marks of the shell around it (the command that
//! started the new one) still count: its end mark says the new shell has
//! exited, and the session is back in the shell around it. A shell that
//! replaced the session's (`exec bash`) ends the session's shell when it
//! exits (`shell_exited`, a fresh shell next).

use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::Session;
use crate::dialect::{Dialect, SetupContext};
use crate::error::ShellError;
use crate::nested::Found;
use crate::result::{ForegroundProgram, NestChange, ShellLevel};

/// The longest the session waits for an armed shell's ready mark.
const ARM_MAX: Duration = Duration::from_secs(10);

/// How long a relay may have started nothing before it is taken to ask
/// for input (a password) rather than to be starting its shell.
const RELAY_QUIET: Duration = Duration::from_millis(300);

/// Between looks at a relay's processes.
const RELAY_LOOK: Duration = Duration::from_millis(20);

/// A shell armed inside the session's.
pub(super) struct Level {
    /// What results say of it.
    pub(super) shown: ShellLevel,
    /// The dialect of the shell around it, current again when it exits.
    outer: Arc<dyn Dialect>,
    /// The processes that relay the session's terminal to it (`sudo`'s):
    /// they hold the terminal as part of the chain, not left behind.
    relays: Vec<i32>,
    /// The processes between it and the shell around it on the same
    /// terminal (`su` waiting for it): part of the chain, not holders.
    between: Vec<i32>,
    /// Its own directory, for a shell of another user (its setup, command
    /// and stdin files); `None`: the session's directory.
    own: Option<Owned>,
}

/// A directory made for a shell of another user.
struct Owned {
    dir: PathBuf,
    uid: u32,
    gid: u32,
}

impl Drop for Owned {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

impl Session {
    /// The chain of armed shells, outermost first.
    pub(super) fn chain(&self) -> Vec<ShellLevel> {
        self.levels.iter().map(|l| l.shown.clone()).collect()
    }

    /// The pid of the armed shell commands run in, `None` for the
    /// session's own.
    pub(super) fn current_shell_pid(&self) -> Option<i32> {
        self.levels.last().map(|l| l.shown.pid)
    }

    /// Whether the shell commands run in sits behind a relay (its own
    /// terminal, which this one's signals do not reach).
    pub(super) fn behind_relay(&self) -> bool {
        self.levels.last().is_some_and(|l| !l.relays.is_empty())
    }

    /// One step of a timeout's escalation inside a shell behind a relay,
    /// whose terminal this machine's kernel shows but the session's does
    /// not: the terminal's C-c through the relay (to the shell's
    /// foreground), then SIGINT to the shell itself (so that it abandons
    /// the rest of the line) with SIGTERM to its foreground group, then
    /// SIGKILL to that group. The signal sent, `None` after the last step.
    pub(super) fn relay_step(
        &self,
        step: usize,
    ) -> Result<Option<tether_transport::Signal>, ShellError> {
        use nix::sys::signal::{Signal as Sig, kill, killpg};
        use nix::unistd::Pid;
        use tether_transport::Signal;
        let Some(shell) = self.current_shell_pid() else {
            return Ok(None);
        };
        let fg = crate::nested::foreground_group_of(shell).map(Pid::from_raw);
        Ok(match step {
            0 => {
                self.terminal.write(b"\x03".to_vec())?;
                Some(Signal::Int)
            }
            1 => {
                let _ = kill(Pid::from_raw(shell), Sig::SIGINT);
                if let Some(g) = fg {
                    let _ = killpg(g, Sig::SIGTERM);
                }
                Some(Signal::Term)
            }
            2 => {
                if let Some(g) = fg {
                    let _ = killpg(g, Sig::SIGKILL);
                }
                Some(Signal::Kill)
            }
            _ => None,
        })
    }

    /// Whether `pid` relays the terminal to an armed shell.
    pub(super) fn relays(&self, pid: i32) -> bool {
        self.levels.iter().any(|l| l.relays.contains(&pid))
    }

    /// Whether `pid` is part of the chain of armed shells (a relay, or
    /// what waits between two shells), never a holder of the terminal.
    pub(super) fn in_chain(&self, pid: i32) -> bool {
        self.levels
            .iter()
            .any(|l| l.relays.contains(&pid) || l.between.contains(&pid))
    }

    /// The directory the current shell reads its command files from, when
    /// it is not the session's (a shell of another user).
    pub(super) fn level_dir(&self) -> Option<&Path> {
        self.levels
            .last()
            .and_then(|l| l.own.as_ref())
            .map(|o| o.dir.as_path())
    }

    /// Writes a file the current shell reads, in its own directory (owned
    /// by its user, 0600): `false` when the current shell reads the
    /// session's directory (the place writes it then).
    pub(super) fn write_for_level(&self, path: &Path, bytes: &[u8]) -> std::io::Result<bool> {
        let Some(own) = self.levels.last().and_then(|l| l.own.as_ref()) else {
            return Ok(false);
        };
        write_owned(path, bytes, own.uid, own.gid)?;
        Ok(true)
    }

    /// Goes back to the shell at depth `depth` (0: the session's own),
    /// its dialect current again; true when a level was left.
    pub(super) fn leave_levels(&mut self, depth: usize) -> bool {
        let mut left = false;
        while self.levels.len() > depth {
            if let Some(l) = self.levels.pop() {
                self.opts.dialect = l.outer;
                left = true;
            }
        }
        left
    }

    /// After marks came: the shells the pump saw exit are left.
    pub(super) fn settle_levels(&mut self) {
        let returned = self.shared.lock().take_returned();
        if let Some(depth) = returned
            && self.leave_levels(depth)
        {
            self.nest_change = Some(NestChange::Returned);
        }
    }

    /// When `fg` (a program waiting for input) is an interactive shell the
    /// command started: arms it (true), or says why it cannot (the next
    /// result's notice). A local terminal's processes are read here, a
    /// host's there.
    pub(super) async fn try_enter(&mut self, fg: Option<&ForegroundProgram>) -> bool {
        if !self.opts.arm_nested {
            return false;
        }
        let Some(fg) = fg else { return false };
        if crate::nested::is_remote_login(&fg.command) {
            self.not_armed(
                fg.pid,
                format!(
                    "tether: {} (pid {}) runs a shell on another host, which the session does not arm: it waits for input; type into it with send (`exit` returns to the session's shell), or run commands there with --host",
                    fg.command, fg.pid
                ),
            );
            return false;
        }
        let found = if self.place.prober().is_some() {
            self.shell_on_host(fg).await
        } else {
            let session_shell = self.shell_pid();
            self.shell_behind(fg)
                .await
                .map(|(found, relays)| (found, relays, session_shell))
        };
        let Some((found, relays, session_shell)) = found else {
            return false;
        };
        // The session's own shell, reading in a builtin (`read x`), or
        // one already armed.
        let own = Some(&found.argv) == self.own_argv.as_ref() && Some(found.pid) == session_shell;
        if own || self.levels.iter().any(|l| l.shown.pid == found.pid) {
            return false;
        }
        match self.arm(&found, relays, session_shell).await {
            Ok(()) => true,
            Err(why) => {
                self.not_armed(
                    found.pid,
                    format!(
                        "tether: {} (pid {}) is an interactive shell the session cannot arm: {why}. It waits for input: type into it with send (`exit` returns to the session's shell), or reset the session",
                        found.program, found.pid
                    ),
                );
                false
            }
        }
    }

    /// The interactive shell `fg` is on the host, as the host's `/proc`
    /// says, with the pid of the session's shell there. A shell behind a
    /// relay there (`sudo -i`), or of another user, is said not armed: the
    /// session's files on the host are its login user's, and the relay's
    /// own terminal is not looked at from here.
    async fn shell_on_host(
        &mut self,
        fg: &ForegroundProgram,
    ) -> Option<(Found, Vec<i32>, Option<i32>)> {
        let host = self.place.host_name().unwrap_or("the host").to_owned();
        let unarmed = |what: &str| {
            format!(
                "tether: {} (pid {}) on {host} {what}, which a session reached without tether on the host does not arm: it waits for input; type into it with send (`exit` returns to the session's shell), or deploy tether on the host (deploy = true) to arm it",
                fg.command, fg.pid
            )
        };
        if crate::nested::is_relay(&fg.command) {
            self.not_armed(fg.pid, unarmed("relays the terminal to a shell of its own"));
            return None;
        }
        crate::nested::shell_program(&fg.command)?;
        let looked = self.place.look_at(fg.pid).await?;
        let (session_shell, uid) = (looked.session_shell, looked.uid);
        let found =
            crate::nested::shell_of(fg.pid, looked.argv, (uid, uid), looked.user, looked.cwd)?;
        if looked.session_uid != uid {
            self.not_armed(fg.pid, unarmed("is a shell of another user"));
            return None;
        }
        Some((found, Vec::new(), Some(session_shell)))
    }

    /// Says once per program (`pid`) that its shell is not armed, and why.
    fn not_armed(&mut self, pid: i32, why: String) {
        if self.told_not_armed != Some(pid) {
            self.told_not_armed = Some(pid);
            self.nest_change = Some(NestChange::NotArmed);
            self.notice = Some(why);
        }
    }

    /// The interactive shell `fg` is, or that it relays the terminal to
    /// (`sudo` with `use_pty`): a relay's shell may still be starting (its
    /// start-up files run), and is waited for while the relay has started
    /// something, up to [`ARM_MAX`]; a relay that started nothing asks for
    /// a password (or is about to start), and waits for input.
    async fn shell_behind(&self, fg: &ForegroundProgram) -> Option<(Found, Vec<i32>)> {
        let t0 = Instant::now();
        loop {
            if let Some(found) = crate::nested::look_through(fg.pid, &fg.command) {
                return Some(found);
            }
            let relay = crate::nested::is_relay(&fg.command);
            if relay && self.asks_secret_now() {
                return None;
            }
            let starting = crate::nested::has_children(fg.pid) || t0.elapsed() < RELAY_QUIET;
            if !relay || !starting || t0.elapsed() >= ARM_MAX || self.shell_gone() {
                return None;
            }
            tokio::time::sleep(RELAY_LOOK).await;
        }
    }

    /// Whether the command's output so far ends in a password prompt.
    fn asks_secret_now(&self) -> bool {
        let raw = self.shared.lock().look(4096).raw;
        crate::secret_prompt::asks_secret(&crate::text::project_all(&raw, 4096))
    }

    /// Arms `found` (behind `relays`; `session_shell`: the session's own
    /// shell's pid, which `found` replaced if it is the same).
    async fn arm(
        &mut self,
        found: &Found,
        relays: Vec<i32>,
        session_shell: Option<i32>,
    ) -> Result<(), String> {
        let dialect = found.dialect().ok_or_else(|| {
            format!(
                "tether arms bash, zsh and sh started inside a session, not {}",
                found.program
            )
        })?;
        let me = nix::unistd::getuid().as_raw();
        // On a host the session's directory is the login user's, as the
        // shell's is (`shell_on_host` said so).
        let on_host = self.place.remote_dir().is_some();
        let own = if on_host || found.uid == me {
            None
        } else if me == 0 {
            Some(own_dir(found).map_err(|e| format!("cannot make its directory: {e}"))?)
        } else {
            return Err(format!(
                "it runs as {}, who cannot read this session's private files",
                found.user.as_deref().unwrap_or("another user")
            ));
        };
        let seq = self.shared.lock().command_seq();
        let nonce = crate::nonce::split();
        let dir = own.as_ref().map_or(self.place.dir(), |o| o.dir.as_path());
        // A host's terminal has its modes set by its shell, as the
        // session's own does there.
        let modes = self
            .place
            .shell_sets_modes()
            .then(|| self.opts.line_modes(false).stty_args(false));
        let setup = dialect
            .nested_setup(
                &SetupContext {
                    dir,
                    nonce: &nonce,
                    run_rc_files: false,
                    restore_env: None,
                    restore_cwd: None,
                    line_modes: modes.as_deref(),
                    look_for_holders: false,
                },
                seq,
            )
            .ok_or_else(|| format!("the {} dialect cannot be armed", dialect.name()))?;
        self.seq += 1;
        let path = dir.join(format!("nested-{}.{}", self.seq, dialect.name()));
        if on_host {
            let files = vec![(path.clone(), setup.into_bytes())];
            self.place
                .write_files(files)
                .await
                .map_err(|e| format!("cannot write its setup file on the host: {e}"))?;
        } else {
            match &own {
                Some(o) => write_owned(&path, setup.as_bytes(), o.uid, o.gid),
                None => write_owned(&path, setup.as_bytes(), me, nix::unistd::getgid().as_raw()),
            }
            .map_err(|e| format!("cannot write its setup file: {e}"))?;
        }
        let depth = self.shared.lock().depth();
        self.shared
            .lock()
            .enter_shell(&nonce.joined(), seq)
            .map_err(|e| e.to_string())?;
        let mut line = dialect.line_kill().to_vec();
        line.extend(dialect.nested_load(&path).bytes());
        let typed = self.terminal.write_past_holders(line);
        let ready = typed.is_ok() && self.wait_ready(Instant::now() + ARM_MAX).await;
        if on_host {
            self.place.remove_file(&path).await;
        } else {
            let _ = std::fs::remove_file(&path);
        }
        if !ready {
            self.shared.lock().leave_shell(depth);
            return Err("it did not load tether's setup (no ready mark)".to_owned());
        }
        self.shared.lock().entered();
        let replaced = Some(found.pid) == session_shell;
        // Locally, what waits between the shell around it and it.
        let around = self.current_shell_pid().or(session_shell);
        let between = match around {
            Some(outer) if !on_host && relays.is_empty() && !replaced => {
                crate::nested::between(found.pid, outer)
            }
            _ => Vec::new(),
        };
        let outer = std::mem::replace(&mut self.opts.dialect, dialect);
        self.levels.push(Level {
            shown: ShellLevel {
                program: found.program.clone(),
                pid: found.pid,
                user: found.user.clone(),
                replaced,
            },
            outer,
            own,
            relays,
            between,
        });
        self.nest_change = Some(NestChange::Entered);
        self.last_status = 0;
        if found.cwd.is_some() {
            self.cwd = found.cwd.clone();
        }
        Ok(())
    }

    /// Waits for a ready mark by `deadline`; false when the shell exited
    /// or none came.
    async fn wait_ready(&self, deadline: Instant) -> bool {
        let mut exit = self.terminal.exit();
        loop {
            let changed = self.shared.changed();
            if self.shared.lock().progress().at_prompt {
                return true;
            }
            if exit.borrow().is_some() || Instant::now() >= deadline {
                return false;
            }
            let tick = deadline.saturating_duration_since(Instant::now());
            tokio::select! {
                _ = changed => {}
                _ = exit.changed() => {}
                _ = tokio::time::sleep(tick) => {}
            }
        }
    }
}

/// A fresh 0700 directory for a shell of another user, owned by that user.
fn own_dir(found: &Found) -> std::io::Result<Owned> {
    let name = format!("tether-nested-{}", crate::nonce::split().a);
    let dir = std::env::temp_dir().join(name);
    std::fs::DirBuilder::new().mode(0o700).create(&dir)?;
    let owned = Owned {
        dir,
        uid: found.uid,
        gid: found.gid,
    };
    std::os::unix::fs::chown(&owned.dir, Some(found.uid), Some(found.gid))?;
    Ok(owned)
}

/// Writes a new file `path` (0600), owned by `uid`:`gid`.
fn write_owned(path: &Path, bytes: &[u8], uid: u32, gid: u32) -> std::io::Result<()> {
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)?;
    if nix::unistd::getuid().as_raw() != uid {
        std::os::unix::fs::fchown(&f, Some(uid), Some(gid))?;
    }
    f.write_all(bytes)
}
