//! The result every call returns.

use std::path::PathBuf;

/// How a call ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Status {
    /// The command completed; `exit_code` is exact.
    Exited,
    /// A foreground program is blocked reading the terminal.
    WaitingForInput,
    /// A command kept past its deadline is still running.
    Running,
    /// The deadline passed (and, with the default policy, the command was
    /// interrupted and the shell kept).
    TimedOut,
    /// The command ended the shell; the next call starts a fresh one.
    ShellExited,
    /// The command was unfinished (open quote, heredoc, block) and was not
    /// run.
    IncompleteInput,
    /// The session was reset while the command was in flight: its process
    /// tree is ended and a fresh shell started (cwd and exports restored).
    Reset,
    /// The session was closed (or the daemon stopped) while the command
    /// was in flight: its process tree is ended.
    Closed,
    /// The link to the session's host was lost, or stopped answering,
    /// while the call waited: the command's fate is unknown (see
    /// [`RunResult::link`]); the next call starts a fresh shell.
    ConnectionLost,
    /// The command started an interactive shell in the session's terminal
    /// (`bash`, `exec zsh`, `sudo -i`, `su - USER`), and the session armed
    /// it: later commands run there, with exact statuses, until it exits
    /// (see [`RunResult::nested`]).
    EnteredShell,
}

impl Status {
    /// The snake_case name front-ends show.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Exited => "exited",
            Status::WaitingForInput => "waiting_for_input",
            Status::Running => "running",
            Status::TimedOut => "timed_out",
            Status::ShellExited => "shell_exited",
            Status::IncompleteInput => "incomplete_input",
            Status::Reset => "reset",
            Status::Closed => "closed",
            Status::ConnectionLost => "connection_lost",
            Status::EnteredShell => "entered_shell",
        }
    }
}

/// Where output was clipped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Truncation {
    /// Characters left out between head and tail.
    pub omitted_chars: u64,
    /// Characters of output in all.
    pub total_chars: u64,
    /// The spill file holding the complete output; `None` when it could
    /// not be kept whole (then `note` says why).
    pub full_output_path: Option<PathBuf>,
    /// Why the output was not saved whole (the session's cap on saved
    /// output, a full disk), and what to do.
    pub note: Option<String>,
}

/// How the link to a session's host failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LinkFailure {
    /// The connection (or the terminal's channel) ended without the
    /// shell's exit status.
    Lost,
    /// The host stopped answering (a hung link or host): no reply within
    /// the grace after the call's deadline, or its keepalives went
    /// unanswered (`RemoteHost::link_ended_hung`).
    Unanswered,
}

impl LinkFailure {
    /// The snake_case name front-ends show.
    pub fn as_str(self) -> &'static str {
        match self {
            LinkFailure::Lost => "lost",
            LinkFailure::Unanswered => "unanswered",
        }
    }
}

/// What is known of a command whose host link failed under the call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LinkLoss {
    /// How the link failed.
    pub failure: LinkFailure,
    /// True when the host's shell was seen starting the command (its
    /// start mark came back): it ran, at least partly. False: it was not
    /// seen to start; it may never have reached the host, or may still run
    /// there if the line arrives when the link recovers.
    pub command_started: bool,
}

/// The program still in the foreground.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ForegroundProgram {
    /// Its pid.
    pub pid: i32,
    /// Its command name.
    pub command: String,
}

/// A process left by an earlier command that still holds the session's
/// terminal (a descriptor open on it, or it as controlling terminal): it
/// may read what is typed there. Lines tether types reach the shell (such
/// a process is stopped while one is read), and hold no mark's nonce.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TerminalHolder {
    /// Its pid.
    pub pid: i32,
    /// Its command name.
    pub program: String,
    /// It can type into the session (the kernel allows TIOCSTI and the
    /// terminal is its controlling terminal, or it is privileged): what it
    /// types runs as the session's commands.
    pub can_type: bool,
}

/// One call's result.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunResult {
    /// The session's confinement (`None`: no fence), with what the fence
    /// refused since the last result.
    pub confinement: Option<tether_confine::Confinement>,
    /// How the call ended.
    pub status: Status,
    /// The exit code, when the command (or the shell) finished.
    pub exit_code: Option<i32>,
    /// Each pipeline stage's status (bash and zsh).
    pub pipe_status: Option<Vec<i32>>,
    /// The terminating signal, e.g. `SIGKILL`, when the status says one;
    /// for `timed_out`, the signal of the escalation that ended the command
    /// (SIGINT, SIGTERM, SIGKILL).
    pub signal: Option<String>,
    /// The projected, redacted, clipped output.
    pub output: String,
    /// Set when output was clipped.
    pub truncated: Option<Truncation>,
    /// The working directory after the command.
    pub cwd: Option<PathBuf>,
    /// The foreground program, when one is still running.
    pub foreground: Option<ForegroundProgram>,
    /// Wall time of the call.
    pub duration_ms: u64,
    /// True when the shell was (re)started for or by this call.
    pub shell_restarted: bool,
    /// With [`Status::ConnectionLost`]: how the link failed and what is
    /// known of the command.
    pub link: Option<LinkLoss>,
    /// Processes left by earlier commands that hold the session's terminal
    /// (a local shell's as the engine sees them; a remote one's as the last
    /// end mark named them), until they exit or a reset ends them.
    pub terminal_holders: Vec<TerminalHolder>,
    /// The shells the session armed inside its own, outermost first,
    /// where the next command runs (empty: the session's own shell).
    pub nested: Vec<ShellLevel>,
    /// How this call changed that chain.
    pub nest_change: Option<NestChange>,
    /// With `waiting_for_input`: the program asks for a secret (a password
    /// or passphrase prompt). The session types nothing into it unless
    /// asked.
    pub secret: bool,
}

/// A shell a command started inside the session's own, which the session
/// armed (or found it could not).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShellLevel {
    /// Its program (`bash`, `zsh`, `sh`).
    pub program: String,
    /// Its pid.
    pub pid: i32,
    /// The user it runs as, where known.
    pub user: Option<String>,
    /// It replaced the shell it was started from (`exec bash`).
    pub replaced: bool,
}

/// How a call changed the chain of shells commands run in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NestChange {
    /// The command started a shell, now armed: later commands run there.
    Entered,
    /// The shell commands ran in exited (`exit`): later commands run in
    /// the one around it again.
    Returned,
    /// The command started an interactive shell the session cannot arm
    /// (the output's first line says why): it waits for input as any
    /// program does.
    NotArmed,
}

impl NestChange {
    /// The snake_case name front-ends show.
    pub fn as_str(self) -> &'static str {
        match self {
            NestChange::Entered => "entered",
            NestChange::Returned => "returned",
            NestChange::NotArmed => "not_armed",
        }
    }
}

/// The signal name a shell's `128 + N` status stands for (`SIGKILL`), for
/// the signals of [`tether_transport::EXIT_SIGNALS`].
pub fn signal_of_status(code: i32) -> Option<String> {
    tether_transport::exit_signal_name(code.saturating_sub(128)).map(|n| format!("SIG{n}"))
}
