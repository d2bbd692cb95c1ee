//! Running a group source's upcall as ClusterShell does: the command's
//! `$GROUP`, `$NODE`, `$SOURCE` and `$CFGDIR` replaced in its text
//! (Python's `Template.safe_substitute`: `$$` is `$`, other names are
//! left for the shell), run by `/bin/sh -c` in the source's directory,
//! its trimmed output the answer and a non-zero exit a failure. Unlike
//! ClusterShell, an upcall has a time limit: past it the command and
//! everything it started (its own process group) are killed. A failure
//! says the exit code or signal and the last lines of its stderr, with
//! the values of secret-named environment variables redacted.
//!
//! It does not cache (`cache.rs` does) or parse what the command prints.

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// The most bytes of output an upcall may print.
const MAX_OUTPUT: usize = 64 << 20;

/// The most bytes of stderr a failure quotes (its end).
const STDERR_TAIL: usize = 2048;

/// A group source's upcalls, as `groups.conf` names them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Upcall {
    /// `map`: the nodes of `$GROUP`.
    Map,
    /// `all`: every node of the source.
    All,
    /// `list`: the names of its groups.
    List,
    /// `reverse`: the groups of `$NODE`.
    Reverse,
}

impl std::fmt::Display for Upcall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Map => "map",
            Self::All => "all",
            Self::List => "list",
            Self::Reverse => "reverse",
        })
    }
}

/// How an upcall failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum UpcallFailure {
    /// It exited with a code other than 0.
    Exit {
        /// The code.
        code: i32,
        /// The end of its stderr, redacted.
        stderr: String,
    },
    /// A signal ended it.
    Signal {
        /// The signal's number.
        signal: i32,
        /// The end of its stderr, redacted.
        stderr: String,
    },
    /// It ran past the time limit (it and its process group were killed).
    TimedOut(Duration),
    /// `/bin/sh` could not be started.
    Start(String),
    /// Its output is not UTF-8 or too large.
    Output(String),
}

impl std::fmt::Display for UpcallFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let said = |f: &mut std::fmt::Formatter<'_>, stderr: &str| {
            if stderr.is_empty() {
                f.write_str(" (its stderr was empty)")
            } else {
                write!(f, "; its stderr: {stderr}")
            }
        };
        match self {
            Self::Exit { code, stderr } => {
                write!(f, "exited with code {code}")?;
                said(f, stderr)
            }
            Self::Signal { signal, stderr } => {
                write!(f, "was killed by signal {signal}")?;
                said(f, stderr)
            }
            Self::TimedOut(limit) => write!(
                f,
                "did not finish in {}s and was killed with what it started; raise [group_sources] timeout in tether's config if it is only slow",
                limit.as_secs_f64()
            ),
            Self::Start(e) => write!(f, "could not start: {e}"),
            Self::Output(e) => write!(f, "printed {e}"),
        }
    }
}

/// `template` with `$NAME` and `${NAME}` replaced for each of `vars`,
/// `$$` made `$`, and everything else kept (Python's
/// `string.Template.safe_substitute`, which ClusterShell uses).
pub fn substitute(template: &str, vars: &[(&str, &str)]) -> String {
    let ident = |s: &str| -> usize {
        let mut n = 0;
        for (i, c) in s.char_indices() {
            let ok = c == '_' || c.is_ascii_alphabetic() || (i > 0 && c.is_ascii_digit());
            if !ok {
                break;
            }
            n = i + 1;
        }
        n
    };
    let value = |name: &str| vars.iter().find(|(k, _)| *k == name).map(|(_, v)| *v);
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        if let Some(tail) = after.strip_prefix('$') {
            out.push('$');
            rest = tail;
            continue;
        }
        if let Some(braced) = after.strip_prefix('{') {
            let n = ident(braced);
            if n > 0
                && braced[n..].starts_with('}')
                && let Some(v) = value(&braced[..n])
            {
                out.push_str(v);
                rest = &braced[n + 1..];
                continue;
            }
        } else {
            let n = ident(after);
            if let Some(v) = (n > 0).then(|| value(&after[..n])).flatten() {
                out.push_str(v);
                rest = &after[n..];
                continue;
            }
        }
        out.push('$');
        rest = after;
    }
    out.push_str(rest);
    out
}

/// What the pipes and the child report to the waiting thread.
enum Event {
    Stdout(std::io::Result<Vec<u8>>),
    Stderr(Vec<u8>),
    Exited(std::io::Result<std::process::ExitStatus>),
}

/// Runs `command` with `/bin/sh -c` in `dir` (stdin empty), for at most
/// `limit`; its stdout, trimmed.
pub fn run(command: &str, dir: &Path, limit: Duration) -> Result<String, UpcallFailure> {
    let mut child = Command::new("/bin/sh")
        .arg("-c")
        .arg(command)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .map_err(|e| UpcallFailure::Start(format!("/bin/sh in {}: {e}", dir.display())))?;
    let pid = child.id();
    let (tx, rx) = mpsc::channel();
    if let Some(mut out) = child.stdout.take() {
        let tx = tx.clone();
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            let got = (&mut out)
                .take(MAX_OUTPUT as u64 + 1)
                .read_to_end(&mut buf)
                .map(|_| buf);
            let _ = tx.send(Event::Stdout(got));
        });
    }
    if let Some(mut err) = child.stderr.take() {
        let tx = tx.clone();
        std::thread::spawn(move || {
            let mut tail = Vec::new();
            let mut chunk = [0u8; 4096];
            while let Ok(n @ 1..) = err.read(&mut chunk) {
                tail.extend_from_slice(&chunk[..n]);
                if tail.len() > 2 * STDERR_TAIL {
                    tail.drain(..tail.len() - STDERR_TAIL);
                }
            }
            let _ = tx.send(Event::Stderr(tail));
        });
    }
    std::thread::spawn(move || {
        let _ = tx.send(Event::Exited(child.wait()));
    });
    let deadline = Instant::now() + limit;
    let (mut stdout, mut stderr, mut status) = (None, None, None);
    while stdout.is_none() || stderr.is_none() || status.is_none() {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(Event::Stdout(o)) => stdout = Some(o),
            Ok(Event::Stderr(e)) => stderr = Some(e),
            Ok(Event::Exited(s)) => status = Some(s),
            Err(_) => {
                kill_group(pid);
                return Err(UpcallFailure::TimedOut(limit));
            }
        }
    }
    // The group's other processes, if the command left any behind with
    // its pipes closed.
    kill_group(pid);
    let stderr = redacted_tail(&stderr.unwrap_or_default());
    let status = match status {
        Some(Ok(s)) => s,
        Some(Err(e)) => return Err(UpcallFailure::Start(e.to_string())),
        None => return Err(UpcallFailure::Start("no exit status".into())),
    };
    if let Some(signal) = std::os::unix::process::ExitStatusExt::signal(&status) {
        return Err(UpcallFailure::Signal { signal, stderr });
    }
    if !status.success() {
        let code = status.code().unwrap_or(-1);
        return Err(UpcallFailure::Exit { code, stderr });
    }
    let out = match stdout {
        Some(Ok(o)) => o,
        Some(Err(e)) => return Err(UpcallFailure::Output(format!("unreadable output: {e}"))),
        None => Vec::new(),
    };
    if out.len() > MAX_OUTPUT {
        return Err(UpcallFailure::Output(format!(
            "more than {} MiB",
            MAX_OUTPUT >> 20
        )));
    }
    let text = String::from_utf8(out)
        .map_err(|_| UpcallFailure::Output("bytes that are not UTF-8".into()))?;
    Ok(text.trim().to_owned())
}

/// Kills the process group `pid` leads (the upcall's shell and all it
/// started); one that is gone already is no error.
fn kill_group(pid: u32) {
    let pid = i32::try_from(pid)
        .ok()
        .and_then(rustix::process::Pid::from_raw);
    if let Some(pid) = pid {
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    }
}

/// The end of `stderr` as text on one line, with the values of
/// secret-named environment variables redacted.
pub fn redacted_tail(stderr: &[u8]) -> String {
    let text = String::from_utf8_lossy(stderr);
    let mut text = redact(text.trim());
    if text.len() > STDERR_TAIL {
        let mut cut = text.len() - STDERR_TAIL;
        while !text.is_char_boundary(cut) {
            cut += 1;
        }
        text = format!("…{}", &text[cut..]);
    }
    text.lines().collect::<Vec<_>>().join(" | ")
}

/// `text` with the values of secret-named environment variables (those
/// tether redacts from a session's output) replaced.
pub fn redact(text: &str) -> String {
    let vars = std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)));
    let Ok(mut r) = tether_term::redact::Redactor::from_env(vars, &[]) else {
        return text.to_owned();
    };
    let mut out = Vec::with_capacity(text.len());
    r.feed(text.as_bytes(), &mut out);
    r.finish(&mut out);
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn substitution_is_pythons_safe_substitute() {
        let vars = [("GROUP", "web"), ("CFGDIR", "/etc/cs")];
        for (t, want) in [
            (
                "sed -n 's/^$GROUP:\\(.*\\)/\\1/p' $f",
                "sed -n 's/^web:\\(.*\\)/\\1/p' $f",
            ),
            ("${GROUP}x $GROUPS $$GROUP $", "webx $GROUPS $GROUP $"),
            (
                "$CFGDIR/groups ${NODE} $1 ${GROUP",
                "/etc/cs/groups ${NODE} $1 ${GROUP",
            ),
            ("awk '{print $$1}'", "awk '{print $1}'"),
        ] {
            assert_eq!(substitute(t, &vars), want, "{t}");
        }
    }

    #[test]
    fn output_failures_and_the_time_limit() {
        let dir = std::env::temp_dir();
        let long = Duration::from_secs(30);
        assert_eq!(run("echo ' a b '; echo c", &dir, long).unwrap(), "a b \nc");
        let e = run("echo oops >&2; exit 3", &dir, long).unwrap_err();
        assert_eq!(
            e,
            UpcallFailure::Exit {
                code: 3,
                stderr: "oops".into()
            }
        );
        let e = run("sleep 30 & wait", &dir, Duration::from_millis(200)).unwrap_err();
        assert!(matches!(e, UpcallFailure::TimedOut(_)), "{e}");
    }
}
