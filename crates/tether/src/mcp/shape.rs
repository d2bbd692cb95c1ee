//! The JSON shapes of the MCP tools: parameters (with their schemas) and
//! the one result every shell tool returns.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tether_shell::{RunResult, Status};

fn main_session() -> String {
    "main".to_owned()
}
fn default_timeout() -> f64 {
    120.0
}
fn default_limit() -> usize {
    tether_shell::DEFAULT_OUTPUT_LIMIT
}
fn default_wait() -> f64 {
    10.0
}

/// What to do when `timeout_s` passes.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum OnTimeout {
    /// Interrupt the command (SIGINT, then TERM, then KILL) and keep the shell.
    #[default]
    Interrupt,
    /// Leave it running; `shell_read` returns the rest and the final status.
    Keep,
}

/// Parameters of `shell_run`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct RunParams {
    /// The shell command to run (any length; several lines, heredocs and quotes are fine).
    pub command: String,
    /// The persistent session to run it in; created on first use.
    #[serde(default = "main_session")]
    pub session: String,
    /// A host for the SSH layer to resolve; absent runs locally.
    #[serde(default)]
    pub host: Option<String>,
    /// Seconds before the command is interrupted (or kept); at most 3600.
    #[serde(default = "default_timeout")]
    pub timeout_s: f64,
    /// `interrupt` (default) or `keep`.
    #[serde(default)]
    pub on_timeout: OnTimeout,
    /// Most characters of output returned (head and tail are kept; the whole output goes to a file).
    #[serde(default = "default_limit")]
    pub output_limit: usize,
    /// Directory to run in (the session stays there afterwards).
    #[serde(default)]
    pub workdir: Option<String>,
}

/// Parameters of `shell_send`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct SendParams {
    /// The session.
    #[serde(default = "main_session")]
    pub session: String,
    /// Text to type, as is (include "\n" to press Enter).
    #[serde(default)]
    pub input: Option<String>,
    /// Keys to press after the text: C-c, C-d, C-z, Enter, Tab, Esc, Up, Down, Left, Right, Backspace.
    #[serde(default)]
    pub keys: Vec<String>,
    /// Seconds to wait for the session to be ready again.
    #[serde(default = "default_wait")]
    pub wait_s: f64,
}

/// Parameters of `shell_read`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ReadParams {
    /// The session.
    #[serde(default = "main_session")]
    pub session: String,
    /// Seconds to wait for more output or the final status.
    #[serde(default)]
    pub wait_s: f64,
}

/// Parameters of `shell_signal`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct SignalParams {
    /// The session.
    #[serde(default = "main_session")]
    pub session: String,
    /// INT, TERM, KILL, QUIT, HUP, TSTP or CONT.
    pub signal: String,
}

/// Parameters of tools that name only a session.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct SessionParams {
    /// The session.
    #[serde(default = "main_session")]
    pub session: String,
}

/// Where output was clipped.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Truncated {
    /// Characters left out between head and tail.
    pub omitted_chars: u64,
    /// Characters of output in all.
    pub total_chars: u64,
    /// File holding the complete output.
    pub full_output_path: String,
}

/// The program still in the foreground.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Foreground {
    /// Its process id.
    pub pid: i32,
    /// Its command name.
    pub command: String,
}

/// The result of `shell_run`, `shell_send`, `shell_read` and `shell_signal`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ShellResult {
    /// The session.
    pub session: String,
    /// The host, or null for local.
    pub host: Option<String>,
    /// exited | waiting_for_input | running | timed_out | shell_exited | incomplete_input
    pub status: String,
    /// The exit code, when the command (or the shell) finished.
    pub exit_code: Option<i32>,
    /// The terminating signal (e.g. SIGKILL), when there was one.
    pub signal: Option<String>,
    /// The output (terminal sequences removed, secrets redacted, clipped).
    pub output: String,
    /// Null, or where the output was clipped.
    pub truncated: Option<Truncated>,
    /// The working directory after the command.
    pub cwd: Option<String>,
    /// Null, or the program still in the foreground.
    pub foreground: Option<Foreground>,
    /// Wall time of the call.
    pub duration_ms: u64,
    /// True when the shell was (re)started for this call.
    pub shell_restarted: bool,
}

impl ShellResult {
    /// The MCP shape of an engine result.
    pub fn new(session: &str, r: RunResult) -> Self {
        ShellResult {
            session: session.to_owned(),
            host: None,
            status: r.status.as_str().to_owned(),
            exit_code: r.exit_code,
            signal: r.signal,
            output: r.output,
            truncated: r.truncated.map(|t| Truncated {
                omitted_chars: t.omitted_chars,
                total_chars: t.total_chars,
                full_output_path: t.full_output_path.display().to_string(),
            }),
            cwd: r.cwd.map(|c| c.display().to_string()),
            foreground: r.foreground.map(|f| Foreground {
                pid: f.pid,
                command: f.command,
            }),
            duration_ms: r.duration_ms,
            shell_restarted: r.shell_restarted,
        }
    }

    /// The text a model reads: the output, then one status line.
    pub fn text(&self, status: Status) -> String {
        let mut parts = vec![match (status, self.exit_code) {
            (Status::Exited | Status::ShellExited, Some(code)) if status == Status::Exited => {
                format!("exit {code}")
            }
            (Status::ShellExited, Some(code)) => {
                format!("shell exited {code}; the next call starts a fresh shell")
            }
            (Status::WaitingForInput, _) => "waiting for input: use shell_send".to_owned(),
            (Status::Running, _) => "still running: use shell_read".to_owned(),
            (Status::TimedOut, _) => "timed out: interrupted, shell kept".to_owned(),
            (Status::IncompleteInput, _) => {
                "incomplete input (open quote, heredoc or block): nothing was run".to_owned()
            }
            _ => self.status.clone(),
        }];
        if let Some(sig) = &self.signal {
            parts.push(sig.clone());
        }
        if let Some(fg) = &self.foreground {
            parts.push(format!("{} (pid {})", fg.command, fg.pid));
        }
        parts.push(format!("{} ms", self.duration_ms));
        if let Some(cwd) = &self.cwd {
            parts.push(format!("cwd {cwd}"));
        }
        if let Some(t) = &self.truncated {
            parts.push(format!(
                "{} of {} chars omitted, full output in {}",
                t.omitted_chars, t.total_chars, t.full_output_path
            ));
        }
        let mut text = self.output.clone();
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(&format!("[{}]", parts.join(" · ")));
        text
    }
}
