//! The JSON shapes of the MCP tools' parameters (with their schemas), and
//! the text rendering of the one result every shell tool returns (its
//! shape is the daemon's `ShellResult`).

use schemars::JsonSchema;
use serde::Deserialize;
use tether_daemon::protocol::{ShellResult, Status};
use tether_transport::Signal;

fn main_session() -> String {
    tether_daemon::protocol::DEFAULT_SESSION.to_owned()
}
fn default_timeout() -> f64 {
    tether_shell::Timeout::default_secs()
}
fn default_limit() -> usize {
    tether_shell::DEFAULT_OUTPUT_LIMIT
}
fn default_wait() -> f64 {
    tether_daemon::protocol::DEFAULT_SEND_WAIT_S
}

pub use tether_daemon::protocol::OnTimeout;

fn keys_description() -> String {
    format!(
        "Keys to press after the text: {}.",
        tether_shell::keys::names_list()
    )
}

fn signal_description() -> String {
    format!("The signal: {}.", Signal::names_list())
}

/// The description of `shell_run`, with the environment defaults in force.
pub fn run_description() -> String {
    let defaults: Vec<String> = tether_shell::defaults::NON_INTERACTIVE_DEFAULTS
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    format!(
        "Run a command in a persistent shell session (created on first use; cd, exports, functions and virtualenvs persist). Returns the exact exit code (and each pipeline stage's in pipe_status) and the output. Non-interactive defaults are set: {}. A program that waits for input returns status waiting_for_input: answer with shell_send.",
        defaults.join(", ")
    )
}

/// The description of `shell_send`.
pub fn send_description() -> String {
    format!(
        "Type input and/or press keys ({}) in a session's foreground program, then wait up to wait_s for it to be ready again.",
        tether_shell::keys::names_list()
    )
}

/// The description of `shell_signal`.
pub fn signal_tool_description() -> String {
    format!(
        "Send a signal ({}) to the session's verified foreground process group.",
        Signal::names_list()
    )
}

/// Parameters of `shell_run`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct RunParams {
    /// The shell command to run (any length; several lines, heredocs and quotes are fine).
    pub command: String,
    /// The persistent session to run it in; created on first use (default: the host's name with `host`, else `main`).
    #[serde(default)]
    pub session: Option<String>,
    /// Run in a persistent shell on this host over SSH (`[user@]host[:port]`, as `tether exec -H` resolves it here: ~/.ssh/config and tether's config defaults); absent runs locally. The session's other tools then need its name.
    #[serde(default)]
    pub host: Option<String>,
    /// Seconds before the command is interrupted (or kept); at most 3600.
    #[serde(default = "default_timeout")]
    pub timeout_s: f64,
    /// `interrupt` (default) or `keep`.
    #[serde(default)]
    pub on_timeout: OnTimeout,
    /// Most characters of output returned (head and tail are kept; the whole output goes to a file named in `truncated`, or `truncated.note` says why it could not be saved).
    #[serde(default = "default_limit")]
    pub output_limit: usize,
    /// Directory to run in (the session stays there afterwards).
    #[serde(default)]
    pub workdir: Option<String>,
    /// The confinement of a session this creates: `workspace` (write only in the starting directory and a temp directory, `.git` read-only) or `read-only`; default: the server's. A call may tighten the server's confinement, never loosen it.
    #[serde(default)]
    pub confine: Option<String>,
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
    #[schemars(description = keys_description())]
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
    #[schemars(description = signal_description())]
    pub signal: String,
}

/// Parameters of tools that name only a session.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct SessionParams {
    /// The session.
    #[serde(default = "main_session")]
    pub session: String,
}

/// What a model is told of a call whose host link failed.
fn link_note(r: &ShellResult) -> String {
    let how = r.link.as_ref().map_or("lost", |l| match l.failure {
        tether_daemon::protocol::LinkFailure::Lost => "lost",
        tether_daemon::protocol::LinkFailure::Unanswered => "not answering",
    });
    let fate = tether_daemon::protocol::LinkLoss::fate(r.link.as_ref());
    format!(
        "connection lost: the link to the host is {how}; {fate}; the next call starts a fresh shell"
    )
}

/// The text a model reads: the output, then one status line.
pub fn render(r: &ShellResult) -> String {
    let code = r.exit_code.map(|c| format!(" {c}")).unwrap_or_default();
    let mut parts = vec![match r.status {
        Status::Exited => format!("exit{code}"),
        Status::ShellExited => {
            format!("shell exited{code}; the next call starts a fresh shell")
        }
        Status::WaitingForInput if r.secret => "waiting for a secret (a password prompt): tether typed nothing; answer with shell_send only if you mean to".to_owned(),
        Status::WaitingForInput => "waiting for input: use shell_send".to_owned(),
        Status::Running => "still running: use shell_read".to_owned(),
        Status::TimedOut => "timed out: interrupted, shell kept".to_owned(),
        Status::IncompleteInput => {
            "incomplete input (open quote, heredoc or block): nothing was run".to_owned()
        }
        Status::Reset => "reset while running: its processes were ended (it may have run partly); a fresh shell has the same cwd and exports".to_owned(),
        Status::Closed => "closed while running: its processes were ended (it may have run partly)".to_owned(),
        Status::ConnectionLost => link_note(r),
        Status::EnteredShell => format!(
            "entered a shell: later commands run in {} until it exits (`exit` returns)",
            tether_daemon::protocol::ShellLevel::chain(&r.nested)
        ),
    }];
    if r.nest_change == Some(tether_daemon::protocol::NestChange::Returned) {
        parts.push(format!(
            "its shell exited: later commands run in {}",
            tether_daemon::protocol::ShellLevel::chain(&r.nested)
        ));
    } else if r.status != Status::EnteredShell && !r.nested.is_empty() {
        parts.push(format!(
            "in {}",
            tether_daemon::protocol::ShellLevel::chain(&r.nested)
        ));
    }
    if let Some(stages) = r.pipe_status.as_ref().filter(|p| p.len() > 1) {
        let stages: Vec<String> = stages.iter().map(i32::to_string).collect();
        parts.push(format!("pipe_status {}", stages.join(" ")));
    }
    if let Some(sig) = &r.signal {
        parts.push(sig.clone());
    }
    if let Some(fg) = &r.foreground {
        parts.push(format!("{} (pid {})", fg.command, fg.pid));
    }
    parts.push(format!("{} ms", r.duration_ms));
    if let Some(cwd) = &r.cwd {
        parts.push(format!("cwd {cwd}"));
    }
    if let Some(t) = &r.truncated {
        let whole = match (&t.full_output_path, &t.note) {
            (Some(path), _) => format!("full output in {path}"),
            (None, Some(note)) => note.clone(),
            (None, None) => "the output was not saved whole".to_owned(),
        };
        parts.push(format!(
            "{} of {} chars omitted, {whole}",
            t.omitted_chars, t.total_chars
        ));
    }
    if !r.terminal_holders.is_empty() {
        let named: Vec<String> = r
            .terminal_holders
            .iter()
            .map(|h| {
                let typing = if h.can_type {
                    ", can type into it by TIOCSTI"
                } else {
                    ""
                };
                format!(
                    "{} (pid {}{typing})",
                    tether_term::printable::escaped(&h.program, false),
                    h.pid
                )
            })
            .collect();
        parts.push(format!(
            "holding the terminal, left by earlier commands or start-up files: {}; shell_reset ends them",
            named.join(", ")
        ));
    }
    let mut text = r.output.clone();
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str(&format!("[{}]", parts.join(" · ")));
    text
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// The schema states the engine's rule: its default and its cap.
    #[test]
    fn the_timeout_schema_states_the_engines_rule() {
        let schema = serde_json::to_value(schemars::schema_for!(RunParams)).unwrap();
        let timeout = &schema["properties"]["timeout_s"];
        assert_eq!(timeout["default"], tether_shell::Timeout::default_secs());
        let cap = format!("at most {}", tether_shell::timeout::MAX_SECONDS);
        let said = timeout["description"].as_str().unwrap();
        assert!(said.contains(&cap), "{said}");
    }
}
