//! Printing a shell result the way a terminal user expects: the output on
//! stdout, one note on stderr when the command did not simply exit, and an
//! exit code that tells every status apart (see `EXIT_CODES` in cli.rs).
//! What tether prints itself from session data (names, paths, program
//! names) has its control characters escaped ([`shown`]); the command's
//! output is printed as it came, as a terminal would show it.

use std::io::Write;

use anyhow::Result;
use tether_daemon::protocol::{LinkFailure, LinkLoss, ShellResult, Status};
use tether_term::printable::escaped;

/// Exit code: the command did not parse as complete; nothing ran.
pub const INCOMPLETE: i32 = 121;
/// Exit code: the command ended the shell.
pub const SHELL_EXITED: i32 = 122;
/// Exit code: the command is still running (kept past its deadline).
pub const RUNNING: i32 = 123;
/// Exit code: the deadline passed and the command was interrupted.
pub const TIMED_OUT: i32 = 124;
/// Exit code: the foreground program waits for input.
pub const WAITING: i32 = 125;
/// Exit code: the session was reset or closed while the command ran.
pub const ENDED: i32 = 126;
/// Exit code: the link to the session's host was lost or stopped
/// answering under the call; the command's fate is unknown. 120: beside
/// tether's other statuses, and not 255 (tether failed, nothing known of
/// the call) nor a code a command or a signal (128+N) gives.
pub const CONNECTION_LOST: i32 = 120;
/// Exit code: tether itself failed (daemon, unknown session, bad input).
pub const TETHER_FAILED: i32 = 255;

/// The exit code for `r`.
pub fn exit_code(r: &ShellResult) -> i32 {
    match r.status {
        Status::Exited => r.exit_code.unwrap_or(TETHER_FAILED),
        Status::IncompleteInput => INCOMPLETE,
        Status::ShellExited => SHELL_EXITED,
        Status::Running => RUNNING,
        Status::TimedOut => TIMED_OUT,
        Status::WaitingForInput => WAITING,
        Status::Reset | Status::Closed => ENDED,
        Status::ConnectionLost => CONNECTION_LOST,
        Status::EnteredShell => 0,
    }
}

/// Prints `r` (as JSON with `json`) and returns the exit code.
pub fn print(r: &ShellResult, json: bool) -> Result<i32> {
    print_noted(r, json, note(r))
}

/// Prints `r` like [`print()`], with `note` (if any) on stderr in place of
/// the one its status would get.
pub fn print_noted(r: &ShellResult, json: bool, note: Option<String>) -> Result<i32> {
    let mut out = std::io::stdout().lock();
    if json {
        serde_json::to_writer_pretty(&mut out, r)?;
        out.write_all(b"\n")?;
        out.flush()?;
        return Ok(exit_code(r));
    }
    out.write_all(r.output.as_bytes())?;
    out.flush()?;
    if let Some(t) = &r.truncated {
        let whole = match (&t.full_output_path, &t.note) {
            (Some(path), _) => format!("the whole output is in {}", shown(path)),
            (None, Some(note)) => note.clone(),
            (None, None) => "the output was not saved whole".to_owned(),
        };
        eprintln!(
            "tether: {} of {} characters omitted; {whole}",
            t.omitted_chars, t.total_chars
        );
    }
    if let Some(note) = note {
        eprintln!("tether: {}", escaped(&note, true));
    }
    if let (Some(why), Some(host)) = (&r.agentless, &r.host) {
        eprintln!(
            "tether: {} is agentless ({}): its session does not outlive the link",
            shown(host),
            escaped(why, true)
        );
    }
    if let Some(holders) = holders_note(r) {
        eprintln!("tether: {holders}");
    }
    Ok(exit_code(r))
}

/// The line naming the processes left by earlier commands that hold the
/// session's terminal, `None` when there are none.
pub fn holders_note(r: &ShellResult) -> Option<String> {
    if r.terminal_holders.is_empty() {
        return None;
    }
    let named: Vec<String> = r
        .terminal_holders
        .iter()
        .map(|h| {
            let typing = if h.can_type {
                ", can type into the session by TIOCSTI"
            } else {
                ""
            };
            format!("{} (pid {}{typing})", shown(&h.program), h.pid)
        })
        .collect();
    Some(format!(
        "left by earlier commands or the shell's start-up files, holding this session's terminal (they may read its input): {}; `tether reset -s {}` ends them",
        named.join(", "),
        shown(&r.session)
    ))
}

/// The note on stderr for `r`'s status, `None` for a plain exit.
pub fn note(r: &ShellResult) -> Option<String> {
    let s = shown(&r.session);
    let seconds = r.duration_ms as f64 / 1000.0;
    let program = r.foreground.as_ref().map_or_else(
        || "the command".to_owned(),
        |f| format!("{} (pid {})", shown(&f.command), f.pid),
    );
    let chain = tether_daemon::protocol::ShellLevel::chain(&r.nested);
    if r.status == Status::Exited
        && r.nest_change == Some(tether_daemon::protocol::NestChange::Returned)
    {
        return Some(format!(
            "the shell exited{}; later commands run in {chain}",
            r.exit_code
                .map(|c| format!(" with code {c}"))
                .unwrap_or_default()
        ));
    }
    Some(match r.status {
        Status::EnteredShell => format!(
            "entered a shell: later commands on session {s} run in {chain} until it exits (`exit` returns)"
        ),
        Status::Exited => return None,
        Status::IncompleteInput => {
            "the command is incomplete (an open quote, heredoc or block); nothing was run".into()
        }
        Status::ShellExited => format!(
            "the shell exited{}; the next command starts a fresh shell (cwd and exports restored)",
            r.exit_code
                .map(|c| format!(" with code {c}"))
                .unwrap_or_default()
        ),
        Status::Running => format!(
            "{program} is still running after {seconds:.1} s; `tether read -s {s}` returns the rest"
        ),
        Status::TimedOut => format!("timed out after {seconds:.1} s; the command was interrupted"),
        Status::WaitingForInput if r.secret => format!(
            "{program} asks for a secret (a password prompt); tether typed nothing into it: answer with `tether send -s {s} -f - -k Enter` (the secret on stdin, never on the command line) if you mean to, or `tether attach {s}`"
        ),
        Status::WaitingForInput => format!(
            "{program} is waiting for input; answer with `tether send -s {s} TEXT -k Enter`, or `tether attach {s}`"
        ),
        Status::Reset => format!(
            "session {s} was reset after {seconds:.1} s, while the command ran: its processes were ended (it may have run partly); a fresh shell has the same cwd and exports"
        ),
        Status::Closed => format!(
            "session {s} was closed after {seconds:.1} s, while the command ran (by `tether close`, or the daemon stopping): its processes were ended (it may have run partly)"
        ),
        Status::ConnectionLost => {
            let host = r.host.as_deref().map_or("its host".into(), shown);
            let how = r.link.as_ref().map_or("was lost", |l| match l.failure {
                LinkFailure::Lost => "was lost",
                LinkFailure::Unanswered => "stopped answering",
            });
            let fate = LinkLoss::fate(r.link.as_ref());
            if r.link.as_ref().is_some_and(|l| l.kept) {
                format!(
                    "the connection to {host} {how} after {seconds:.1} s; {fate}: `tether read -s {s}`"
                )
            } else {
                format!(
                    "the connection to {host} {how} after {seconds:.1} s; {fate}; the next command on session {s} starts a fresh shell (cwd restored) and ends what the old one left"
                )
            }
        }
    })
}

/// Session data (a name, a path, a program's name) as it may be printed on
/// a terminal: control and invisible characters escaped.
pub fn shown(text: &str) -> std::borrow::Cow<'_, str> {
    escaped(text, false)
}
