//! `ProxyCommand`, run as `ssh` runs it: `$SHELL -c "exec COMMAND"` (or
//! `/bin/sh` when `SHELL` is unset), its tokens expanded (`%h %p %r %n %k
//! %%`), its stdin and stdout the SSH transport, its stderr ours. It stays
//! in tether's process group, as in ssh, so it can still ask on the
//! terminal (a bastion's passphrase). It is ended with its process tree
//! (itself and every descendant, found in `/proc`: `SIGHUP` as ssh sends,
//! then `SIGTERM`) when the connection it carries is dropped (the
//! [`ProxyProcess`] belongs to the `Connection`, not to the stream russh's
//! session task holds, so the end does not wait for that task). A command that
//! cannot start, exits with a failure, or closes its output before the
//! server's first byte is reported as the ProxyCommand's failure, not as
//! a handshake error.

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, Join, ReadBuf};
use tokio::process::{Child, ChildStdin, ChildStdout};

use crate::connect::Target;
use crate::destination::sh_word;
use crate::error::{ProxyFailure, SshError};

/// The values a ProxyCommand's tokens stand for.
pub(crate) struct Tokens<'a> {
    /// `%h`: the address (`HostName`).
    pub hostname: &'a str,
    /// `%p`: the port.
    pub port: u16,
    /// `%r`: the remote user.
    pub user: &'a str,
    /// `%n`: the host as the user named it.
    pub original: &'a str,
    /// `%k`: `HostKeyAlias`, else `%n`.
    pub alias: &'a str,
}

/// `command` with its tokens expanded, or the token tether does not know
/// (OpenSSH refuses those too).
pub(crate) fn expand(command: &str, t: &Tokens<'_>) -> Result<String, String> {
    if command.trim() == "-" {
        return Err(
            "ProxyCommand - (the connection on tether's own stdin and stdout) is not supported; give a command".into(),
        );
    }
    let mut out = String::new();
    let mut chars = command.chars();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        match chars.next() {
            // Each value one `sh` word: plain as it is, else quoted.
            Some('h') => out.push_str(&sh_word(t.hostname)),
            Some('p') => out.push_str(&t.port.to_string()),
            Some('r') => out.push_str(&sh_word(t.user)),
            Some('n') => out.push_str(&sh_word(t.original)),
            Some('k') => out.push_str(&sh_word(t.alias)),
            Some('%') => out.push('%'),
            Some(other) => {
                return Err(format!(
                    "ProxyCommand {command:?}: %{other} is not a token it takes (it takes %h %p %r %n %k and %%)"
                ));
            }
            None => return Err(format!("ProxyCommand {command:?} ends in a lone %")),
        }
    }
    Ok(out)
}

/// The running command; dropping it ends its process tree.
pub(crate) struct ProxyProcess {
    child: tokio::sync::Mutex<Child>,
    pid: Option<i32>,
    /// The command as run (tokens expanded), for messages.
    command: String,
    /// Bytes read from it so far.
    read: Arc<AtomicU64>,
}

impl Drop for ProxyProcess {
    fn drop(&mut self) {
        use nix::sys::signal::{Signal, kill};
        let Some(pid) = self.pid else { return };
        let mut tree = descendants(pid);
        tree.insert(0, pid);
        // As ssh ends its proxy (SIGHUP), then SIGTERM for a command that
        // ignores hang-ups; SIGCONT wakes a stopped one to die.
        for sig in [Signal::SIGHUP, Signal::SIGTERM, Signal::SIGCONT] {
            for p in &tree {
                let _ = kill(nix::unistd::Pid::from_raw(*p), sig);
            }
        }
    }
}

/// Every process below `root` (children, theirs …), from `/proc`.
fn descendants(root: i32) -> Vec<i32> {
    let parent_of = |pid: i32| -> Option<i32> {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        // `pid (comm) state ppid …`: the name may hold spaces and parens.
        stat.rsplit_once(')')?
            .1
            .split_whitespace()
            .nth(1)?
            .parse()
            .ok()
    };
    let all: Vec<(i32, i32)> = std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter_map(|pid| Some((pid, parent_of(pid)?)))
        .collect();
    let mut found = vec![root];
    let mut at = 0;
    while at < found.len() {
        let parent = found[at];
        found.extend(all.iter().filter(|(_, pp)| *pp == parent).map(|(p, _)| *p));
        at += 1;
    }
    found.remove(0);
    found
}

/// The command's stdout and stdin as one byte stream, for the handshake.
pub(crate) struct ProxyStream {
    io: Join<ChildStdout, ChildStdin>,
    read: Arc<AtomicU64>,
}

impl AsyncRead for ProxyStream {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let r = Pin::new(&mut self.io).poll_read(cx, buf);
        let n = buf.filled().len().saturating_sub(before);
        self.read
            .fetch_add(u64::try_from(n).unwrap_or(u64::MAX), Ordering::Relaxed);
        r
    }
}

impl AsyncWrite for ProxyStream {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.io).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_shutdown(cx)
    }
}

/// Starts `command` (tokens already expanded) for `target`.
pub(crate) fn spawn(
    command: &str,
    target: &Target,
) -> Result<(ProxyStream, ProxyProcess), SshError> {
    let shell = std::env::var_os("SHELL")
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "/bin/sh".into());
    let failed = |what: ProxyFailure| SshError::ProxyCommand {
        host: target.host.clone(),
        command: command.to_owned(),
        what,
    };
    let mut child = tokio::process::Command::new(&shell)
        .arg("-c")
        .arg(format!("exec {command}"))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| {
            failed(ProxyFailure::NotStarted(format!(
                "{}: {e}",
                std::path::Path::new(&shell).display()
            )))
        })?;
    let (Some(stdout), Some(stdin)) = (child.stdout.take(), child.stdin.take()) else {
        return Err(failed(ProxyFailure::NotStarted("no pipes".into())));
    };
    let pid = child.id().and_then(|id| i32::try_from(id).ok());
    let read = Arc::new(AtomicU64::new(0));
    let process = ProxyProcess {
        child: tokio::sync::Mutex::new(child),
        pid,
        command: command.to_owned(),
        read: Arc::clone(&read),
    };
    let stream = ProxyStream {
        io: tokio::io::join(stdout, stdin),
        read,
    };
    Ok((stream, process))
}

impl ProxyProcess {
    /// What a failed handshake through this command says: the command's
    /// failure when it exited with one, or closed before the server's
    /// first byte; else `e` itself (a refused host key, failed
    /// authentication, a server that hung up).
    pub(crate) async fn explain(&self, host: &str, e: SshError) -> SshError {
        if !matches!(e, SshError::Protocol { .. }) {
            return e;
        }
        // It is ending, or its output would not have closed: a moment for
        // its status.
        let status = {
            let mut child = self.child.lock().await;
            tokio::time::timeout(Duration::from_secs(2), child.wait()).await
        };
        let nothing_read = self.read.load(Ordering::Relaxed) == 0;
        let what = match status {
            Ok(Ok(s)) if !s.success() || nothing_read => match s.code() {
                Some(code) => ProxyFailure::Exited(code),
                None => ProxyFailure::Killed(
                    std::os::unix::process::ExitStatusExt::signal(&s).unwrap_or(0),
                ),
            },
            Err(_) if nothing_read => ProxyFailure::ClosedEarly,
            _ => return e,
        };
        SshError::ProxyCommand {
            host: host.to_owned(),
            command: self.command.clone(),
            what,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_expand_as_openssh_and_unknown_ones_are_refused() {
        let t = Tokens {
            hostname: "10.0.0.1",
            port: 2222,
            user: "alice",
            original: "web01",
            alias: "web01-key",
        };
        assert_eq!(
            expand("nc %h %p # %r@%n %k 100%%", &t).as_deref(),
            Ok("nc 10.0.0.1 2222 # alice@web01 web01-key 100%")
        );
        assert!(expand("nc %h %x", &t).is_err());
        // A value a shell would read otherwise is one quoted word.
        let odd = Tokens {
            hostname: "10.0.0.1",
            port: 22,
            user: "a$(touch x)",
            original: "it's",
            alias: "it's",
        };
        assert_eq!(
            expand("nc %h %p # %r %n", &odd).as_deref(),
            Ok(r"nc 10.0.0.1 22 # 'a$(touch x)' 'it'\''s'")
        );
        assert!(expand("nc %h %", &t).is_err());
        assert!(expand("-", &t).is_err());
    }
}
