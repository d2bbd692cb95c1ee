//! How a session starts ([`SessionOptions`], [`Resume`]) and how one
//! command runs ([`RunOptions`], [`OnTimeout`]): the typed requests with
//! their defaults in one place.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tether_transport::{RemoteHost, TermSize};

use crate::dialect::{Bash, Dialect};

/// How a session is started.
#[derive(Clone, Debug)]
pub struct SessionOptions {
    /// Arm an interactive shell a command starts in the terminal (`bash`,
    /// `sudo -i`, `su -`), so that later commands run there (see
    /// [`crate::RunResult::nested`]); off, it is a program waiting for
    /// input like any other.
    pub arm_nested: bool,
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
    /// The session's confinement (`tether-confine`): a local shell runs
    /// in its fence, a remote one asked for a fence is refused.
    pub confine: tether_confine::Confine,
    /// Paths hidden from a confined shell besides its deny list (the
    /// daemon's directory, whose socket would run commands outside).
    pub hide: Vec<PathBuf>,
    /// tether's own binary, run inside a fence first (`tether
    /// confine-exec`: Landlock, the allowlist's forwarder); a confined
    /// session cannot start without it.
    pub confine_helper: Option<PathBuf>,
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
            confine: tether_confine::Confine::default(),
            hide: Vec::new(),
            confine_helper: None,
            arm_nested: true,
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

/// Default characters per result.
pub const DEFAULT_OUTPUT_LIMIT: usize = 16_000;

/// What to do when a command's deadline passes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum OnTimeout {
    /// Interrupt the foreground (INT, then TERM, then KILL), keep the shell.
    #[default]
    Interrupt,
    /// Leave the command running; later reads return its output and status.
    Keep,
}

/// Options of one `run`.
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// The deadline.
    pub timeout: Duration,
    /// The policy when it passes.
    pub on_timeout: OnTimeout,
    /// Most characters of output in the result.
    pub output_limit: usize,
    /// The command's stdin, written to a private file in the shell's
    /// directory; `None`: it reads the session's terminal.
    pub stdin: Option<Vec<u8>>,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            timeout: crate::timeout::Timeout::DEFAULT.duration(),
            on_timeout: OnTimeout::Interrupt,
            output_limit: DEFAULT_OUTPUT_LIMIT,
            stdin: None,
        }
    }
}
