//! `tether-transport`: the terminal seam.
//!
//! One small object-safe trait, [`Terminal`], that every transport
//! implements: a local PTY (`tether-pty`) and an SSH PTY channel
//! (`tether-ssh`). The shell engine drives a `dyn Terminal` and never knows
//! which it has. [`RemoteHost`] is the other half of a remote session: the
//! machine its terminal and files are on.
//!
//! [`Terminal`]: ordered writes (and writes past the processes holding the
//! terminal), the output stream, resize, a signal to the verified
//! foreground group, tree kill, the exit watch, inspection (is the
//! foreground blocked reading the terminal?), echo, and the line modes put
//! back. [`RemoteHost`]: run a command with stdin, open a terminal, tell
//! whether the link has hung. [`TermSize`] carries the range a session's
//! terminal may have (`in_range`, `clamped`: 1–500 rows, 1–1000 columns).
//! [`LineModes`] is the line discipline a shell's terminal is held to, as
//! one list, rendered as termios bits for a local PTY and as `stty`
//! arguments for a host's terminal. [`TransportError`] is the error of every
//! transport (`tether-pty` reports it too).
//!
//! This crate holds only the trait and the types that cross it. It does not
//! spawn anything, know about shells, or parse terminal output.

mod exit_signals;
mod far_side;
mod host_failure;
mod modes;

pub use exit_signals::{EXIT_SIGNALS, exit_signal_name, exit_signal_number};
pub use far_side::{DaemonStream, FarSettings, FarSide};
pub use host_failure::HostFailure;
pub use modes::{CONTROL_CHARS, FLAGS, LineModes, ModesRestored};

use std::time::Duration;

use tokio::sync::{mpsc, watch};

/// Errors a transport reports.
#[derive(Debug, thiserror::Error)]
pub enum TransportError {
    /// The program could not be started.
    #[error("could not start {program}: {source}; check that it is installed and on PATH")]
    Spawn {
        /// The program that failed to start.
        program: String,
        /// What the OS said.
        source: std::io::Error,
    },
    /// The program's working directory does not exist, is not a
    /// directory, or may not be entered (no search permission).
    #[error("cannot enter the working directory {}: {source}", path.display())]
    Cwd {
        /// The directory.
        path: std::path::PathBuf,
        /// What the OS said.
        source: std::io::Error,
    },
    /// The terminal could not be set up (allocated, configured, resized).
    #[error("terminal {what} failed: {source}")]
    Setup {
        /// Which step failed.
        what: &'static str,
        /// What the OS said.
        source: std::io::Error,
    },
    /// The terminal has ended: nothing more can be written or signalled.
    #[error("the terminal has closed; start a new session")]
    Closed,
    /// A signal could not be delivered.
    #[error("could not send {signal} to process group {pgid}: {source}")]
    Signal {
        /// The signal.
        signal: Signal,
        /// The process group it was for.
        pgid: i32,
        /// What the OS said.
        source: std::io::Error,
    },
    /// The foreground process group changed between inspection and
    /// signalling (for example its leader exited and the pid was reused);
    /// nothing was signalled.
    #[error("the foreground program changed before it could be signalled; inspect again")]
    ForegroundChanged,
    /// This transport cannot do what was asked.
    #[error("{0} is not supported by this transport")]
    Unsupported(&'static str),
    /// A remote host could not be reached or did not do what was asked.
    #[error("{host}: {message}")]
    Host {
        /// The host, as the caller named it.
        host: String,
        /// What kind of failure.
        kind: HostFailure,
        /// What went wrong, and what to do.
        message: String,
    },
}

/// Signals a caller may send to the foreground program.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Signal {
    /// SIGINT (C-c).
    Int,
    /// SIGTERM.
    Term,
    /// SIGKILL.
    Kill,
    /// SIGQUIT (C-\).
    Quit,
    /// SIGHUP.
    Hup,
    /// SIGTSTP (C-z).
    Tstp,
    /// SIGCONT.
    Cont,
}

impl Signal {
    /// Every signal a caller may send, in the order front-ends list them:
    /// the one list behind the CLI's parser and help, the MCP schema, the
    /// daemon's checks and the README.
    pub const ALL: [Signal; 7] = [
        Signal::Int,
        Signal::Term,
        Signal::Kill,
        Signal::Quit,
        Signal::Hup,
        Signal::Tstp,
        Signal::Cont,
    ];

    /// The names of [`Signal::ALL`] joined with `", "`, for messages and
    /// help.
    pub fn names_list() -> String {
        Signal::ALL.map(Signal::name).join(", ")
    }

    /// The conventional name without `SIG`, e.g. `INT`.
    pub fn name(self) -> &'static str {
        match self {
            Signal::Int => "INT",
            Signal::Term => "TERM",
            Signal::Kill => "KILL",
            Signal::Quit => "QUIT",
            Signal::Hup => "HUP",
            Signal::Tstp => "TSTP",
            Signal::Cont => "CONT",
        }
    }

    /// Parses a name such as `INT`, `SIGINT` or `int`.
    pub fn from_name(name: &str) -> Option<Signal> {
        let upper = name.to_ascii_uppercase();
        let bare = upper.strip_prefix("SIG").unwrap_or(&upper);
        Signal::ALL.into_iter().find(|s| s.name() == bare)
    }
}

impl std::fmt::Display for Signal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SIG{}", self.name())
    }
}

/// A terminal size in character cells.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TermSize {
    /// Rows.
    pub rows: u16,
    /// Columns.
    pub cols: u16,
}

impl Default for TermSize {
    fn default() -> Self {
        TermSize { rows: 24, cols: 80 }
    }
}

impl TermSize {
    /// The most rows a session's terminal may have: a headless screen
    /// holds every cell (32 bytes each), so 500 x 1000 is 16 MiB per screen.
    pub const MAX_ROWS: u16 = 500;
    /// The most columns a session's terminal may have.
    pub const MAX_COLS: u16 = 1000;

    /// True when both dimensions are at least 1 and at most
    /// [`TermSize::MAX_ROWS`] and [`TermSize::MAX_COLS`].
    pub fn in_range(self) -> bool {
        (1..=Self::MAX_ROWS).contains(&self.rows) && (1..=Self::MAX_COLS).contains(&self.cols)
    }

    /// This size brought into range (a dimension of 0 becomes 1).
    pub fn clamped(self) -> TermSize {
        TermSize {
            rows: self.rows.clamp(1, Self::MAX_ROWS),
            cols: self.cols.clamp(1, Self::MAX_COLS),
        }
    }
}

/// How the program at the top of the terminal (the shell) ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ExitInfo {
    /// It exited with this code.
    Code(i32),
    /// It was killed by this signal number.
    Signal(i32),
    /// The link to it failed before it said how it ended (a remote
    /// terminal whose connection died, or whose channel closed without an
    /// exit status): it may have ended, or may still run. Never a code or
    /// signal the program did not report.
    LinkLost,
}

/// A process, identified so that a reused pid is never mistaken for it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ProcessInfo {
    /// The process id.
    pub pid: i32,
    /// Start time in clock ticks after boot (from `/proc/PID/stat`).
    pub start_time: u64,
    /// The command name (`/proc/PID/comm`).
    pub command: String,
}

/// A process outside the terminal's foreground that holds the terminal
/// (a descriptor open on it, or it as controlling terminal): left by an
/// earlier command, it may read what is typed there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Holder {
    /// Its pid.
    pub pid: i32,
    /// Its command name.
    pub program: String,
    /// It can type into the terminal (the kernel allows TIOCSTI, and the
    /// terminal is its controlling terminal or it is privileged).
    pub can_type: bool,
}

/// What is running in the terminal's foreground, from kernel state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Foreground {
    /// The foreground process group.
    pub pgid: i32,
    /// The group's leader, or its oldest member when the leader is gone.
    pub process: Option<ProcessInfo>,
    /// True when some thread of the group is blocked reading the terminal
    /// (`read` on it, or `poll`/`select`/`epoll` waiting on it).
    pub reading_terminal: bool,
    /// True when the foreground group is the top program's own (the shell
    /// itself is in the foreground).
    pub is_top: bool,
}

/// Evidence a transport can give about the terminal's processes.
///
/// A transport that sees the foreground takes the input count before it
/// looks at the processes and the output counts after, each with what its
/// kernel still holds in flight counted: a program seen blocked reading
/// then had no input waiting, and everything it wrote is in
/// `output_delivered` or `output_unread`, so a consumer that had
/// processed `output_delivered` bytes before the look knows, from this one
/// look, that the program is waiting for input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Inspection {
    /// The top program (the shell), while it runs.
    pub top: Option<ProcessInfo>,
    /// The foreground, when the transport can see it (a local PTY can; a
    /// remote one cannot, and readiness then falls back to silence).
    pub foreground: Option<Foreground>,
    /// Bytes given to [`Terminal::write`] that the program has not read yet
    /// (still queued in the transport, or in the terminal's input queue).
    pub input_queued: Option<u64>,
    /// Bytes the program wrote that the transport has not read yet.
    pub output_unread: Option<u64>,
    /// Bytes handed to the output stream so far (compare with what the
    /// consumer has processed to know it has seen everything).
    pub output_delivered: u64,
}

/// Chunks of output as they arrive; the channel closes at end of stream.
pub type OutputStream = mpsc::Receiver<Vec<u8>>;

/// A terminal with a program running on it.
///
/// Writes are queued and delivered in order by the transport; nothing here
/// blocks on the program.
pub trait Terminal: Send + Sync {
    /// Queues `bytes` to be written to the terminal's input, after every
    /// earlier write.
    fn write(&self, bytes: Vec<u8>) -> Result<(), TransportError>;

    /// Takes the output stream. It can be taken once; later calls get `None`.
    fn take_output(&self) -> Option<OutputStream>;

    /// Changes the terminal size (the program gets SIGWINCH).
    fn resize(&self, size: TermSize) -> Result<(), TransportError>;

    /// Sends `signal` to the foreground process group after checking it is
    /// still the one inspected (`expected`, when given). Returns the group
    /// signalled.
    fn signal_foreground(
        &self,
        signal: Signal,
        expected: Option<&Foreground>,
    ) -> Result<i32, TransportError>;

    /// Sends `signal` to the top program (the shell) alone, while it runs
    /// on this terminal. Returns false where the transport cannot (a
    /// remote terminal, where only the terminal's own keys reach it).
    fn signal_top(&self, _signal: Signal) -> Result<bool, TransportError> {
        Ok(false)
    }

    /// Sends `signal` to process `pid` alone, while it is a member of the
    /// terminal's session (a shell started inside the top program's, on
    /// this terminal). Returns false when it is not, or where the
    /// transport cannot.
    fn signal_member(&self, _pid: i32, _signal: Signal) -> Result<bool, TransportError> {
        Ok(false)
    }

    /// Ends the program and every process it started, escalating from
    /// SIGHUP/SIGTERM to SIGKILL within `grace`.
    fn kill(&self, grace: Duration) -> Result<(), TransportError>;

    /// Watches for the top program's exit (`None` while it runs).
    fn exit(&self) -> watch::Receiver<Option<ExitInfo>>;

    /// Inspects the terminal's processes now.
    fn inspect(&self) -> Result<Inspection, TransportError>;

    /// The processes other than the top program and the foreground's that
    /// hold the terminal (see [`Holder`]); empty where the transport
    /// cannot see them (a remote terminal).
    fn holders(&self) -> Vec<Holder> {
        Vec::new()
    }

    /// Writes `bytes` as [`Terminal::write`] does, with every holder that
    /// could read them stopped until the foreground has read them: a line
    /// typed for the shell reaches the shell. A transport that cannot see
    /// holders just writes.
    fn write_past_holders(&self, bytes: Vec<u8>) -> Result<(), TransportError> {
        self.write(bytes)
    }

    /// Turns the terminal's own echo of typed input on or off, but only
    /// while it is in canonical (line) mode: a program in raw mode keeps its
    /// settings. Returns whether the setting was applied.
    fn set_echo(&self, on: bool) -> Result<bool, TransportError> {
        let _ = on;
        Err(TransportError::Unsupported("changing the echo"))
    }

    /// Puts the line discipline back to `modes` when a program left it
    /// otherwise (raw, cbreak, no signals …). A transport that cannot see
    /// the modes returns [`ModesRestored::NotHere`].
    fn restore_modes(&self, modes: LineModes) -> Result<ModesRestored, TransportError> {
        let _ = modes;
        Ok(ModesRestored::NotHere)
    }
}

/// A boxed future, for the object-safe [`RemoteHost`].
pub type BoxFuture<'a, T> = std::pin::Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// What a command run on a host produced.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HostOutput {
    /// Its exit status (`None`: it was killed by a signal or the channel
    /// closed without one).
    pub status: Option<u32>,
    /// Its standard output.
    pub stdout: Vec<u8>,
    /// Its standard error.
    pub stderr: Vec<u8>,
}

/// How to start a program on a remote terminal.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TerminalRequest {
    /// The command line, for the remote user's login shell to run.
    pub command: String,
    /// `TERM`.
    pub term: String,
    /// The size.
    pub size: TermSize,
    /// Echo typed input (ECHO).
    pub echo: bool,
    /// Output processing (OPOST).
    pub output_processing: bool,
}

/// One step of connecting to a host, as `-v` shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LinkStep {
    /// When it happened.
    pub at: std::time::SystemTime,
    /// What happened (`web01: connected to 10.0.0.5:22`).
    pub text: String,
}

/// Another machine a session's shell can run on: commands with their
/// output (to write and remove the session's files there), and programs on
/// terminals. The SSH transport implements it over one connection per
/// host; the engine knows only this trait.
pub trait RemoteHost: Send + Sync + std::fmt::Debug {
    /// The host's name, as the caller wrote it (for messages).
    fn name(&self) -> &str;

    /// Runs `command` (a line for the remote login shell) with `input` on
    /// its stdin, and waits for it to end.
    fn run(
        &self,
        command: String,
        input: Vec<u8>,
    ) -> BoxFuture<'_, Result<HostOutput, TransportError>>;

    /// Starts a program on a fresh terminal.
    fn open_terminal(
        &self,
        request: TerminalRequest,
    ) -> BoxFuture<'_, Result<std::sync::Arc<dyn Terminal>, TransportError>>;

    /// True when the link in use stopped answering: a round trip on it
    /// got no reply within `within` (a hung link or host). The link is
    /// then dropped, so its terminals end ([`ExitInfo::LinkLost`]) and the
    /// next use connects afresh. False when it answered, or when there is
    /// no link now (the next use connects).
    fn link_hung(&self, within: Duration) -> BoxFuture<'_, bool>;

    /// True when the link ended because the host stopped answering (its
    /// keepalives went unanswered): it hung, rather than closed. By
    /// default false.
    fn link_ended_hung(&self) -> bool {
        false
    }

    /// The steps of the connections made to the host since the last call
    /// (resolving aside: connecting, the host key, authentication), each
    /// with when it happened; taken, so each is given once. By default
    /// none are kept.
    fn take_link_steps(&self) -> Vec<LinkStep> {
        Vec::new()
    }

    /// The host's own tether daemon: a new connection to its socket,
    /// carried by the link (found, or copied there and started, on first
    /// use); or why the host is agentless. An error is a failure to reach
    /// the host or a daemon that should be there (a tampered binary is
    /// refused, never used). By default the host is agentless.
    fn far_side(&self) -> BoxFuture<'_, Result<FarSide, TransportError>> {
        Box::pin(async {
            Ok(FarSide::Agentless(
                "tether does not run on this host".into(),
            ))
        })
    }
}
