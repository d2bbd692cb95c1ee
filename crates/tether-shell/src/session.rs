//! A persistent shell session: start (with one deadline), restart after the
//! shell exits (cwd and exported variables restored), close.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use tether_transport::{RemoteHost, TermSize, Terminal};

use crate::place::Place;

use crate::defaults::session_env;
use crate::dialect::{Bash, Dialect, SplitNonce};
use crate::error::ShellError;
use crate::launch::{launch, private_dir};
use crate::pump::{Phase, Shared};

/// The variable every local session's processes inherit, set to the
/// session directory's name: ending the session's tree also ends every
/// process of ours that carries it (those that left the session with
/// `setsid`, or double-forked), and a daemon that starts after a crash ends
/// those a dead daemon's sessions left ([`end_leftovers`]).
pub const TREE_MARKER: &str = "TETHER_SESSION_ID";

/// Ends every process of ours that a session with directory name `id`
/// started (found by [`TREE_MARKER`]), for a daemon cleaning up after one
/// that was killed.
pub fn end_leftovers(id: &str) {
    tether_pty::kill_marked(&format!("{TREE_MARKER}={id}"), Duration::from_millis(300));
}

/// How a session is started.
#[derive(Clone, Debug)]
pub struct SessionOptions {
    /// The shell dialect.
    pub dialect: Arc<dyn Dialect>,
    /// Run the user's start-up files (`.bashrc` …) first.
    pub run_rc_files: bool,
    /// The environment the shell inherits (before the defaults).
    pub base_env: Vec<(String, String)>,
    /// Variables that override the defaults.
    pub env_overrides: Vec<(String, String)>,
    /// The starting directory.
    pub cwd: Option<PathBuf>,
    /// The terminal size.
    pub size: TermSize,
    /// Deadline for the shell to report ready.
    pub start_timeout: Duration,
    /// Where private session directories go (default: the user's runtime
    /// directory).
    pub runtime_dir: Option<PathBuf>,
    /// Extra secret values to redact.
    pub secrets: Vec<String>,
    /// Use the transport's kernel evidence (a local PTY's `/proc`) to tell a
    /// program blocked reading the terminal. Off, or on a transport without
    /// evidence, readiness falls back to `silence_fallback`.
    pub kernel_evidence: bool,
    /// How long a running command must be silent before it is reported as
    /// waiting for input when there is no kernel evidence.
    pub silence_fallback: Duration,
    /// Keep output post-processing (OPOST: LF to CRLF) on. Off by default:
    /// a flood of short lines runs about ten times faster without it, the
    /// projection treats LF and CRLF alike, and the headless screen treats
    /// a bare LF as a newline when it is off.
    pub output_processing: bool,
    /// Run the shell on this host instead of a local PTY. Its environment
    /// is then the remote login's, plus the defaults and `env_overrides`
    /// (`base_env` is local and not sent), and `cwd` is a remote path.
    pub host: Option<Arc<dyn RemoteHost>>,
    /// Start as the continuation of a session whose shell was lost (its
    /// daemon was killed): its exports snapshot and cwd are restored, the
    /// first result says `shell_restarted` and carries the notice.
    pub resume: Option<Resume>,
    /// The most bytes the session's spill files (each clipped result's
    /// whole output) may use together; the oldest go first
    /// ([`crate::spill::Spills`]). Default
    /// [`crate::spill::DEFAULT_SPILL_CAP`] (64 MiB).
    pub spill_cap: u64,
}

/// What a session whose shell was lost left to continue from.
#[derive(Clone, Debug, Default)]
pub struct Resume {
    /// Its exported-variables snapshot (`export -p` output), if any.
    pub env: Option<Vec<u8>>,
    /// Its last working directory.
    pub cwd: Option<PathBuf>,
    /// What the first result tells the caller.
    pub notice: String,
    /// The lost shell's directory on its host (command files, the exports
    /// snapshot): swept there, with what it left running, once the host is
    /// reached again.
    pub remote_dir: Option<PathBuf>,
}

impl Default for SessionOptions {
    fn default() -> Self {
        SessionOptions {
            dialect: Arc::new(Bash),
            run_rc_files: true,
            base_env: std::env::vars().collect(),
            env_overrides: Vec::new(),
            cwd: None,
            size: TermSize::default(),
            start_timeout: Duration::from_secs(10),
            runtime_dir: None,
            secrets: Vec::new(),
            kernel_evidence: true,
            silence_fallback: Duration::from_secs(3),
            output_processing: false,
            host: None,
            resume: None,
            spill_cap: crate::spill::DEFAULT_SPILL_CAP,
        }
    }
}

/// A shell that stays alive between commands.
pub struct Session {
    pub(crate) opts: SessionOptions,
    /// Where the shell runs.
    pub(crate) place: Arc<dyn Place>,
    /// The shell's process tree has been ended where it runs (by
    /// [`Session::shut_down`]).
    pub(crate) tree_ended: bool,
    pub(crate) dir: PathBuf,
    /// Where the shell's own files are (setup, command files, the env
    /// snapshot): `dir` locally, a directory on the host remotely.
    pub(crate) shell_dir: PathBuf,
    pub(crate) terminal: Arc<dyn Terminal>,
    pub(crate) shared: Arc<Shared>,
    pub(crate) redactor: crate::secrets::Secrets,
    pub(crate) last_status: i32,
    pub(crate) cwd: Option<PathBuf>,
    pub(crate) seq: u64,
    pub(crate) restarted: bool,
    pub(crate) keep_spills: bool,
    /// What tether must tell the caller, at the head of the next result's
    /// output (a start directory that could not be entered).
    pub(crate) notice: Option<String>,
    /// The spill files and their cap (spills removed to make room are told
    /// at the head of the next result's output, like `notice`).
    pub(crate) spills: Arc<crate::spill::Spills>,
    /// The command files and exports snapshot of a local shell.
    pub(crate) local_files: Option<crate::local_files::LocalFiles>,
    /// The current terminal for watchers; replaced on restart.
    pub(crate) live: tokio::sync::watch::Sender<crate::live::Live>,
    /// A reset or close requested without the call lock.
    pub(crate) pending: Arc<tokio::sync::watch::Sender<Option<crate::control::Pending>>>,
    /// The command in flight's text for followers (kept across restarts).
    pub(crate) follow: Arc<crate::follow::FollowBook>,
    /// Set when the link to the host failed under a call: the next `run`
    /// starts a fresh shell (over a fresh connection).
    pub(crate) link_lost: Option<crate::result::LinkLoss>,
    /// What the host's probes said of the command in flight (remote).
    pub(crate) probes: std::sync::Mutex<crate::remote_probe::ProbeMemory>,
    /// The holders of a remote terminal the last end mark named.
    pub(crate) host_holders: Vec<crate::result::TerminalHolder>,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("dir", &self.dir)
            .finish_non_exhaustive()
    }
}

impl Session {
    /// Starts a shell and waits until it is ready.
    pub async fn start(mut opts: SessionOptions) -> Result<Session, ShellError> {
        let resume = opts.resume.take();
        if let Some(cwd) = resume.as_ref().and_then(|r| r.cwd.clone()) {
            opts.cwd = Some(cwd);
        }
        let mut notice = crate::launch::enterable_cwd(&mut opts);
        if let Some(r) = &resume {
            notice = Some(match notice {
                Some(n) => format!("{}\n{n}", r.notice),
                None => r.notice.clone(),
            });
        }
        let private = private_dir(opts.runtime_dir.as_deref())?;
        let dir = private.path().to_path_buf();
        let place = crate::place::of(opts.host.as_ref());
        let local_files = place
            .host_name()
            .is_none()
            .then(|| crate::local_files::LocalFiles::new(private));
        let env = shell_env(&opts, place.as_ref());
        // One matcher per session; each command's capture takes a fresh clone.
        let redactor = crate::secrets::Secrets::new(secrets_of(&env, &opts.secrets))?;
        let shell_dir = match place.make_dir(&dir).await {
            Ok(d) => d,
            Err(e) => {
                let _ = std::fs::remove_dir_all(&dir);
                return Err(e);
            }
        };
        if let Some(old) = resume.as_ref().and_then(|r| r.remote_dir.as_deref()) {
            place.end_tree(old, true).await;
        }
        let restore = match resume.as_ref().and_then(|r| r.env.as_deref()) {
            Some(snapshot) => {
                let path = shell_dir.join("env");
                place
                    .write_files(vec![(path.clone(), without_marker(snapshot))])
                    .await?;
                Some(Restore {
                    env: path,
                    cwd: None,
                })
            }
            None => None,
        };
        let (terminal, shared) =
            match launch(&opts, place.as_ref(), &shell_dir, &env, restore.as_ref()).await {
                Ok(t) => t,
                Err(e) => {
                    place.end_tree_later(shell_dir);
                    let _ = std::fs::remove_dir_all(&dir);
                    return Err(e);
                }
            };
        let echo = place.remote_echo(&shell_dir);
        let live = tokio::sync::watch::Sender::new(crate::live::Live::new(
            &terminal,
            &shared,
            echo,
            redactor.clone(),
        ));
        Ok(Session {
            spills: Arc::new(crate::spill::Spills::new(opts.spill_cap)),
            local_files,
            live,
            pending: Arc::new(tokio::sync::watch::Sender::new(None)),
            follow: crate::follow::FollowBook::new(),
            probes: Default::default(),
            host_holders: Vec::new(),
            link_lost: None,
            place,
            tree_ended: false,
            shell_dir,
            cwd: opts.cwd.clone(),
            opts,
            dir,
            terminal,
            shared,
            redactor,
            last_status: 0,
            seq: 0,
            restarted: resume.is_some(),
            keep_spills: false,
            notice,
        })
    }

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

    /// The host the shell runs on, `None` when local.
    pub fn host(&self) -> Option<&str> {
        self.place.host_name()
    }

    /// The shell's directory on its host (`None` when local).
    pub fn remote_dir(&self) -> Option<&Path> {
        self.place.host_name().map(|_| self.shell_dir.as_path())
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
        let contents = self.shared.lock().emulator.contents();
        self.redactor.redact(&contents)
    }

    /// Raw output bytes from stream offset `offset` on (bounded: see
    /// `dropped`).
    pub fn raw_since(&self, offset: u64) -> tether_term::Since {
        self.shared.lock().log.since(offset)
    }

    /// Changes the terminal size (the program gets SIGWINCH). A size out
    /// of range is brought into it ([`TermSize::clamped`]).
    pub fn resize(&mut self, size: TermSize) -> Result<(), ShellError> {
        let size = size.clamped();
        self.terminal.resize(size)?;
        self.shared.lock().emulator.resize(size.rows, size.cols);
        self.opts.size = size;
        Ok(())
    }

    /// True when the shell has exited.
    pub fn shell_gone(&self) -> bool {
        self.terminal.exit().borrow().is_some()
    }

    /// Kills the shell and everything it started, and starts a fresh one in
    /// the same directory with the same exported variables.
    pub async fn restart(&mut self) -> Result<(), ShellError> {
        self.take_exit_cwd();
        self.place.end_tree(&self.shell_dir, false).await;
        let _ = self.terminal.kill(Duration::from_millis(300));
        // A person attached may have resized the terminal since the start.
        let (rows, cols) = self.shared.lock().emulator.size();
        self.opts.size = TermSize { rows, cols };
        let env = shell_env(&self.opts, self.place.as_ref());
        let restore = Restore {
            env: self.shell_dir.join("env"),
            cwd: self.cwd.clone(),
        };
        let (terminal, shared) = launch(
            &self.opts,
            self.place.as_ref(),
            &self.shell_dir,
            &env,
            Some(&restore),
        )
        .await?;
        self.live.send_replace(crate::live::Live::new(
            &terminal,
            &shared,
            self.place.remote_echo(&self.shell_dir),
            self.redactor.clone(),
        ));
        self.terminal = terminal;
        self.shared = shared;
        self.last_status = 0;
        self.restarted = true;
        self.host_holders.clear();
        // (Kept until a fresh shell runs: a restart that fails is tried
        // again by the next call.)
        self.link_lost = None;
        Ok(())
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

    /// Ends the shell and, for a remote shell, waits for its process tree
    /// to end and its directory on the host to be removed (dropping only
    /// starts that). The session is
    /// then dropped by the caller.
    pub async fn shut_down(&mut self) {
        if !self.tree_ended {
            self.tree_ended = true;
            self.place.end_tree(&self.shell_dir, true).await;
        }
        let _ = self.terminal.kill(Duration::from_millis(300));
    }

    /// A fresh file path in the local session directory.
    pub(crate) fn next_path(&mut self, stem: &str, ext: &str) -> PathBuf {
        self.seq += 1;
        self.dir.join(format!("{stem}-{}.{ext}", self.seq))
    }

    /// A fresh file path in the shell's directory (remote for a remote
    /// shell).
    pub(crate) fn next_shell_path(&mut self, stem: &str, ext: &str) -> PathBuf {
        self.seq += 1;
        self.shell_dir.join(format!("{stem}-{}.{ext}", self.seq))
    }

    /// Writes a command's file where the shell reads it: through the
    /// session directory's descriptor for a local shell (which removes it
    /// once the next command starts), else by the place. A host's files
    /// go with its directory when the session ends (removing each would
    /// cost a process on the host per command).
    pub(crate) async fn write_command_file(
        &mut self,
        file: PathBuf,
        text: String,
        deadline: std::time::Instant,
    ) -> Result<crate::link::Staged, ShellError> {
        match (
            self.local_files.as_mut(),
            file.file_name().and_then(|n| n.to_str()),
        ) {
            (Some(files), Some(name)) => files
                .write_command(name, text.as_bytes())
                .map(|()| crate::link::Staged::Written),
            _ => {
                self.write_before_typing(vec![(file, text.into_bytes())], deadline)
                    .await
            }
        }
    }

    /// Removes the last command's file: call when no command is in flight
    /// (so the shell has read it), so a session holds one at most.
    pub(crate) fn remove_last_command_file(&mut self) {
        if let Some(files) = self.local_files.as_mut() {
            files.remove_last_command();
        }
    }

    /// Takes the working directory a shell that exited reported from its
    /// exit hook, as the one to restart in.
    pub(crate) fn take_exit_cwd(&mut self) {
        let cwd = self.shared.lock().exit_cwd.take();
        if cwd.is_some() {
            self.cwd = cwd;
        }
    }

    /// True while a command is in flight.
    pub(crate) fn busy(&self) -> bool {
        matches!(self.shared.lock().phase, Phase::Sent | Phase::Started)
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let _ = self.terminal.kill(Duration::from_millis(300));
        if !self.tree_ended {
            self.place.end_tree_later(self.shell_dir.clone());
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

impl SessionOptions {
    /// The line modes this session's terminal is held to before each
    /// command (`echo` on while a person is attached at the prompt).
    pub(crate) fn line_modes(&self, echo: bool) -> tether_transport::LineModes {
        tether_transport::LineModes {
            echo,
            output_processing: self.output_processing,
        }
    }
}

/// True when the shell sets its terminal's line modes itself, before each
/// end mark: where the engine cannot (a remote terminal), and for a shell
/// whose line reader would undo the engine's setting.
pub(crate) fn shell_sets_modes(opts: &SessionOptions, place: &dyn Place) -> bool {
    place.shell_sets_modes() || opts.dialect.line_reader_keeps_modes()
}

/// The shell's environment: the place's base (the local environment here,
/// nothing sent to a host, whose login has its own), then the defaults,
/// then the overrides.
pub(crate) fn shell_env(opts: &SessionOptions, place: &dyn Place) -> Vec<(String, String)> {
    session_env(place.base_env(&opts.base_env), &opts.env_overrides)
}

/// What a restarted shell restores.
pub(crate) struct Restore {
    /// The exported-variables snapshot.
    pub(crate) env: PathBuf,
    /// The directory to return to.
    pub(crate) cwd: Option<PathBuf>,
}

/// An exports snapshot without the line that sets [`TREE_MARKER`] (a
/// continued session has its own).
fn without_marker(snapshot: &[u8]) -> Vec<u8> {
    let marker = format!("{TREE_MARKER}=");
    snapshot
        .split_inclusive(|b| *b == b'\n')
        .filter(|line| !line.windows(marker.len()).any(|w| w == marker.as_bytes()))
        .flatten()
        .copied()
        .collect()
}

/// Fresh random hex: 16 digits per half.
pub(crate) fn split_nonce() -> SplitNonce {
    let mut buf = [0u8; 16];
    // A failing OS RNG leaves zeros; the nonce is then still unknown to the
    // program, only guessable. getrandom does not fail on Linux.
    let _ = getrandom::fill(&mut buf);
    let hex: String = buf.iter().map(|b| format!("{b:02x}")).collect();
    SplitNonce {
        a: hex[..16].to_owned(),
        b: hex[16..].to_owned(),
    }
}

fn secrets_of(env: &[(String, String)], extra: &[String]) -> Vec<String> {
    let mut s: Vec<String> = env
        .iter()
        .filter(|(k, v)| {
            tether_term::redact::is_secret_name(k)
                && v.len() >= tether_term::redact::MIN_ENV_SECRET_LEN
        })
        .map(|(_, v)| v.clone())
        .chain(extra.iter().filter(|s| !s.is_empty()).cloned())
        .collect();
    s.sort();
    s.dedup();
    s
}

/// Ends what a lost remote shell left on `host` (its processes, found by
/// its directory's marker) and removes its directory `dir` there: for a
/// session closed after its daemon was killed, never continued.
pub async fn sweep_remote(host: &dyn tether_transport::RemoteHost, dir: &Path) {
    crate::remote::end_tree(host, dir, true).await;
}
