//! The escape command line (`~C`, prompt `ssh>`), as OpenSSH's: `-L`,
//! `-R`, `-D` add a forward, `-KL`, `-KR`, `-KD` cancel one, `?` or `h`
//! print the help; and `~#`'s list of forwarded connections. The
//! front-end reads the line and prints what these return.

use super::{ForwardKind, ForwardProblem, ForwardSpec, Forwards, problem, spec::parse_listen};
use crate::error::SshError;

/// What `?` on the command line prints.
pub const ESCAPE_COMMAND_HELP: &str = "Commands:\n      \
-L[bind_address:]port:host:hostport    Request local forward\n      \
-R[bind_address:]port:host:hostport    Request remote forward\n      \
-D[bind_address:]port                  Request dynamic forward\n      \
-KL[bind_address:]port                 Cancel local forward\n      \
-KR[bind_address:]port                 Cancel remote forward\n      \
-KD[bind_address:]port                 Cancel dynamic forward\n";

fn kind_of(c: Option<char>) -> Option<ForwardKind> {
    match c {
        Some('L') => Some(ForwardKind::Local),
        Some('R') => Some(ForwardKind::Remote),
        Some('D') => Some(ForwardKind::Dynamic),
        _ => None,
    }
}

/// Runs one `~C` command line on `forwards`; Ok: the text to show (each
/// line ends with `\n`; empty for an empty line), Err: why nothing was
/// done.
pub async fn command_line(forwards: &Forwards, line: &str) -> Result<String, SshError> {
    let s = line.trim();
    let s = s.strip_prefix('-').unwrap_or(s);
    let mut chars = s.chars();
    let invalid = || {
        problem(
            "Invalid command; ? lists the commands",
            ForwardProblem::Spec,
        )
    };
    let (cancel, kind) = match chars.next() {
        None => return Ok(String::new()),
        Some('h' | 'H' | '?') => return Ok(ESCAPE_COMMAND_HELP.to_owned()),
        Some('K') => (true, kind_of(chars.next()).ok_or_else(invalid)?),
        c => (false, kind_of(c).ok_or_else(invalid)?),
    };
    let rest = chars.as_str().trim();
    if cancel {
        let listen = parse_listen(rest).map_err(|e| {
            problem(
                format!("Bad forwarding close specification: {e}"),
                ForwardProblem::Spec,
            )
        })?;
        forwards.cancel(kind, &listen).await?;
        return Ok("Canceled forwarding.\n".to_owned());
    }
    let spec = ForwardSpec::parse(kind, rest).map_err(|e| {
        problem(
            format!("Bad forwarding specification: {e}"),
            ForwardProblem::Spec,
        )
    })?;
    let added = forwards.add(&spec).await?;
    Ok(match (added.allocated, &spec.target) {
        (Some(p), Some(t)) if kind == ForwardKind::Remote => {
            format!("Allocated port {p} for remote forward to {t}\nForwarding port.\n")
        }
        (Some(p), _) => format!("Allocated port {p} for {spec}\nForwarding port.\n"),
        (None, _) => "Forwarding port.\n".to_owned(),
    })
}

/// `~#`: the forwarded connections open now.
pub fn list(forwards: &Forwards) -> String {
    let conns = forwards.connections();
    if conns.is_empty() {
        return "No forwarded connections are open.\n".to_owned();
    }
    let mut out = "The following connections are open:\n".to_owned();
    for c in conns {
        out.push_str("  ");
        out.push_str(&c);
        out.push('\n');
    }
    out
}
