//! The crate's error type.

use tether_transport::TransportError;

/// Errors from the shell engine. Statuses of commands (non-zero exits,
/// timeouts, a shell that exited) are results, not errors.
#[derive(Debug, thiserror::Error)]
pub enum ShellError {
    /// The transport failed.
    #[error(transparent)]
    Transport(#[from] TransportError),
    /// The shell started but never reported ready before the deadline, or
    /// exited during start-up.
    #[error("the {dialect} shell did not become ready within {waited_ms} ms{}; its output was: {output:?}", if *exited { " (it exited)" } else { "" })]
    StartFailed {
        /// The dialect.
        dialect: &'static str,
        /// How long we waited.
        waited_ms: u64,
        /// Whether it exited.
        exited: bool,
        /// What it printed (projected, clipped).
        output: String,
    },
    /// The session's private directory or a command file could not be
    /// written.
    #[error(
        "could not {what} {path}: {source}; check that the runtime directory is writable and has free space"
    )]
    Files {
        /// What was being done.
        what: &'static str,
        /// The path.
        path: std::path::PathBuf,
        /// What the OS said.
        source: std::io::Error,
    },
    /// A file or directory tether would use is not provably private: a
    /// symlink, another user's, open to others, or under a directory others
    /// could change. Nothing was read or written through it.
    #[error("refusing to use {path}: {problem}")]
    NotPrivate {
        /// The file or directory.
        path: std::path::PathBuf,
        /// What is wrong with it, and what to remove.
        problem: String,
    },
    /// A new command was sent while one is still in flight (kept past its
    /// deadline, or waiting for input).
    #[error(
        "the session is busy with a command that is still running; send it input, read its output, signal it, or reset the session"
    )]
    Busy,
    /// No session of that name belongs to the caller.
    #[error("there is no session named {0:?}; list your sessions, or run a command to create it")]
    UnknownSession(String),
    /// The session's shell was lost with the daemon that held it (killed
    /// or crashed); nothing runs in it now.
    #[error(
        "session {0:?} was lost when the daemon that held it stopped (killed or crashed): its shell and what it ran were ended; run a command in it to continue it with its last cwd and exports, or close it"
    )]
    Lost(String),
    /// A command's timeout out of its range (more than 0, at most
    /// [`crate::timeout::MAX_SECONDS`]).
    #[error("{name} must be more than 0 and at most {max} seconds, got {secs}", max = crate::timeout::MAX_SECONDS)]
    BadTimeout {
        /// How the caller wrote the setting.
        name: String,
        /// What was asked.
        secs: f64,
    },
    /// A key name was not recognised.
    #[error("unknown key {0:?}: use one of {list}", list = crate::keys::names_list())]
    UnknownKey(String),
    /// A command was given stdin in a dialect that cannot pass it on.
    #[error(
        "the {0} dialect cannot give a command stdin; run it in a bash, zsh or sh session, or pass the input as a file"
    )]
    StdinUnsupported(&'static str),
    /// The shell printed a command's end mark without running its file:
    /// the typed line did not reach it as written (a disabled builtin, an
    /// alias over one, a line discipline tether does not know). The command
    /// did not run.
    #[error(
        "the command did not run: the {dialect} shell received the line that runs it but did not run it (a builtin disabled or aliased, or the terminal's line settings changed){}; reset the session (tether reset) to start a fresh shell with the same cwd and exports",
        if output.is_empty() { String::new() } else { format!("; the shell said: {output:?}") }
    )]
    NotDelivered {
        /// The dialect.
        dialect: &'static str,
        /// What the shell printed meanwhile (redacted, clipped).
        output: String,
    },
    /// The session was closed (or the daemon is stopping) while this call
    /// waited for it.
    #[error("the session was closed; run a command to start a new one")]
    Closed,
    /// A confined session's fence cannot be built: nothing was run.
    /// (Its reason is in the message, not also a source, so a chain is
    /// not said twice.)
    #[error("the session's confinement cannot be applied, so nothing was run: {0}")]
    Confine(tether_confine::ConfineError),
    /// A shell driven over the link (an agentless host) was asked to be
    /// confined: only a tether on the host can confine it.
    #[error(
        "a session on an agentless host cannot be confined ({0} was asked): nothing was run there; let tether run on the host (drop --agentless, or deploy), or ask for --confine none"
    )]
    ConfinedRemote(&'static str),
    /// A core component refused its settings.
    #[error(transparent)]
    Term(#[from] tether_term::TermError),
    /// Input meant only for a program waiting for it found none waiting:
    /// nothing was typed.
    #[error("nothing was typed: {0}")]
    NotWaiting(NotWaiting),
}

/// Why input meant for a waiting program was not typed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NotWaiting {
    /// The command ended (its result is read with `read`).
    Ended,
    /// No command is in flight.
    NoCommand,
    /// The command runs but does not read the terminal (the program in
    /// the foreground, when known).
    NotReading(String),
    /// Whether anything reads the terminal cannot be told here.
    CannotTell,
}

impl std::fmt::Display for NotWaiting {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NotWaiting::Ended => f.write_str("the command had already ended"),
            NotWaiting::NoCommand => f.write_str("no command runs in the session"),
            NotWaiting::NotReading(p) if p.is_empty() => {
                f.write_str("the command runs but nothing reads the terminal now")
            }
            NotWaiting::NotReading(p) => write!(
                f,
                "the command runs but nothing reads the terminal now ({p} is in the foreground)"
            ),
            NotWaiting::CannotTell => f.write_str(
                "tether cannot tell whether a program reads the terminal there; attach to answer it",
            ),
        }
    }
}

impl From<tether_confine::ConfineError> for ShellError {
    fn from(e: tether_confine::ConfineError) -> Self {
        ShellError::Confine(e)
    }
}
