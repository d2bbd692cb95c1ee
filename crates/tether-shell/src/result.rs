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
    /// How the call ended.
    pub status: Status,
    /// The exit code, when the command (or the shell) finished.
    pub exit_code: Option<i32>,
    /// Each pipeline stage's status (bash and zsh).
    pub pipe_status: Option<Vec<i32>>,
    /// The terminating signal, e.g. `SIGKILL`, when the status says one.
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
    /// Processes left by earlier commands that hold the session's terminal
    /// (a local shell's; a remote terminal's are not seen), until they exit
    /// or a reset ends them.
    pub terminal_holders: Vec<TerminalHolder>,
}

/// The signal name a shell's `128 + N` status stands for.
pub fn signal_of_status(code: i32) -> Option<String> {
    let name = match code - 128 {
        1 => "SIGHUP",
        2 => "SIGINT",
        3 => "SIGQUIT",
        4 => "SIGILL",
        6 => "SIGABRT",
        8 => "SIGFPE",
        9 => "SIGKILL",
        11 => "SIGSEGV",
        13 => "SIGPIPE",
        14 => "SIGALRM",
        15 => "SIGTERM",
        _ => return None,
    };
    Some(name.to_owned())
}
