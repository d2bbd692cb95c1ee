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
//! One thread waits on the command's pipes and its exit (a pidfd)
//! together. It does not cache (`cache.rs` does) or parse what the
//! command prints.

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
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

/// Runs `command` with `/bin/sh -c` in `dir` (stdin empty), for at most
/// `limit`; its stdout, trimmed. One thread: the pipes and the child's
/// exit (a pidfd) are waited on together with `poll`.
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
    let gathered = gather(&mut child, Instant::now() + limit);
    // Whatever the command left behind in its group (all of it, when the
    // time ran out).
    kill_group(pid);
    let (stdout, stderr, status) = match gathered {
        Ok(g) => g,
        Err(e) => {
            let _ = child.wait();
            return Err(e.unwrap_or(UpcallFailure::TimedOut(limit)));
        }
    };
    if stdout.len() > MAX_OUTPUT {
        return Err(UpcallFailure::Output(format!(
            "more than {} MiB",
            MAX_OUTPUT >> 20
        )));
    }
    let stderr = redacted_tail(&stderr);
    if let Some(signal) = std::os::unix::process::ExitStatusExt::signal(&status) {
        return Err(UpcallFailure::Signal { signal, stderr });
    }
    if !status.success() {
        let code = status.code().unwrap_or(-1);
        return Err(UpcallFailure::Exit { code, stderr });
    }
    let text = String::from_utf8(stdout)
        .map_err(|_| UpcallFailure::Output("bytes that are not UTF-8".into()))?;
    Ok(text.trim().to_owned())
}

/// What a finished upcall left: stdout, the end of stderr, its status.
type Gathered = (Vec<u8>, Vec<u8>, std::process::ExitStatus);

/// Reads `child`'s pipes to their ends and waits for its exit, until
/// `deadline`: `Err(None)` when the time ran out.
fn gather(
    child: &mut std::process::Child,
    deadline: Instant,
) -> Result<Gathered, Option<UpcallFailure>> {
    use rustix::event::{PollFd, PollFlags, Timespec, poll};
    let failed = |e: std::io::Error| Some(UpcallFailure::Output(format!("unreadable output: {e}")));
    let mut out = child.stdout.take();
    let mut err = child.stderr.take();
    let (mut stdout, mut stderr) = (Vec::new(), Vec::new());
    // No pidfd (a kernel before 5.3): the exit is looked for between
    // short waits instead.
    let pidfd = i32::try_from(child.id())
        .ok()
        .and_then(rustix::process::Pid::from_raw)
        .and_then(|p| rustix::process::pidfd_open(p, rustix::process::PidfdFlags::empty()).ok());
    let mut status = None;
    let mut chunk = vec![0u8; 64 << 10];
    loop {
        if status.is_none() {
            status = child
                .try_wait()
                .map_err(|e| Some(UpcallFailure::Start(e.to_string())))?;
        }
        if let (None, None, Some(s)) = (&out, &err, status) {
            return Ok((stdout, stderr, s));
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(None);
        }
        let wait = match (&pidfd, status) {
            (None, None) => left.min(Duration::from_millis(10)),
            _ => left,
        };
        let (o, e) = (out.as_ref(), err.as_ref());
        let mut fds: Vec<PollFd<'_>> = Vec::with_capacity(3);
        fds.extend(o.map(|o| PollFd::new(o, PollFlags::IN)));
        fds.extend(e.map(|e| PollFd::new(e, PollFlags::IN)));
        if status.is_none() {
            fds.extend(pidfd.as_ref().map(|p| PollFd::new(p, PollFlags::IN)));
        }
        let timeout = Timespec::try_from(wait).ok();
        match poll(&mut fds, timeout.as_ref()) {
            Ok(_) | Err(rustix::io::Errno::INTR) => {}
            Err(e) => return Err(failed(e.into())),
        }
        let ready: Vec<bool> = fds.iter().map(|f| !f.revents().is_empty()).collect();
        drop(fds);
        let mut at = 0;
        if let Some(pipe) = out.as_mut() {
            if ready[at] {
                let n = pipe.read(&mut chunk).map_err(failed)?;
                stdout.extend_from_slice(&chunk[..n]);
                if n == 0 || stdout.len() > MAX_OUTPUT {
                    out = None;
                }
            }
            at += 1;
        }
        if let Some(pipe) = err.as_mut()
            && ready[at]
        {
            let n = pipe.read(&mut chunk).map_err(failed)?;
            stderr.extend_from_slice(&chunk[..n]);
            if stderr.len() > 2 * STDERR_TAIL {
                stderr.drain(..stderr.len() - STDERR_TAIL);
            }
            if n == 0 {
                err = None;
            }
        }
    }
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
        // Pipes closed, still running: the limit holds too.
        let e = run("exec >&- 2>&-; sleep 30", &dir, Duration::from_millis(200)).unwrap_err();
        assert!(matches!(e, UpcallFailure::TimedOut(_)), "{e}");
        // Much more than a pipe holds, on both pipes at once.
        let big = run(
            "head -c 3000000 /dev/zero | tr '\\0' a; head -c 300000 /dev/zero >&2",
            &dir,
            long,
        )
        .unwrap();
        assert_eq!(
            (big.len(), big.bytes().all(|b| b == b'a')),
            (3_000_000, true)
        );
        let e = run(
            "echo start >&2; head -c 300000 /dev/zero | tr '\\0' b >&2; echo end >&2; exit 1",
            &dir,
            long,
        )
        .unwrap_err();
        let UpcallFailure::Exit { stderr, .. } = e else {
            panic!("{e}")
        };
        assert!(
            stderr.ends_with("bbbend") && stderr.starts_with('…') && stderr.len() < 3000,
            "{stderr}"
        );
    }
}
