//! A pooled host's far side: its own tether daemon, found or brought
//! there over the SSH connection the pool holds, or why it stays
//! agentless. Once per pool slot (and again after a reconnect, since the
//! host's daemon may have exited when idle):
//!
//! 1. `identity.rs`: this tether's binary and its SHA-256 (once per
//!    process).
//! 2. `probe.rs`: one command on the host: `uname -sm` (another system or
//!    machine: agentless), the uid, the cache directory, and what is at
//!    the binary's place (the config's path, else
//!    `CACHE/tether/bin/SHA16/tether`). What is there runs only when it is
//!    the user's own, private, with our hash; otherwise it is refused with
//!    what to remove, never repaired or overwritten.
//! 3. `deploy.rs`: nothing there (and no path from the config): copied
//!    over SFTP, checked on the host, linked into place; a copy that does
//!    not start leaves the host agentless.
//! 4. `start.rs`: `tether daemon ensure` there, then a `direct-streamlocal`
//!    channel to its socket, or `tether daemon relay` on an exec channel
//!    where the server forbids that.

mod deploy;
mod identity;
mod probe;
mod start;

use std::path::Path;
use std::pin::Pin;
use std::sync::{Arc, Weak};
use std::task::{Context, Poll};
use std::time::Duration;

use tether_ssh::{ChannelStream, Connection, Event, SshError};
use tether_transport::{FarSettings, FarSide, HostFailure, TransportError};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use deploy::Copied;
use start::Reach;

pub(crate) use identity::identity;

/// Longest one setup command on the host may take (a hash of the binary,
/// starting the daemon).
const COMMAND_TIMEOUT: Duration = Duration::from_secs(60);

/// Most output kept from a setup command (each says a few lines).
const MAX_OUTPUT: usize = 64 * 1024;

/// What a pool slot knows of its host's far side.
#[derive(Debug, Default)]
pub(crate) struct Known {
    /// How it stands now.
    found: Found,
    /// The binary whose hash was checked on the host last, with the seal
    /// it had then: while the seal is the same, the file is the one that
    /// was hashed, and a new connection does not hash it again.
    verified: Option<probe::Verified>,
}

/// How a slot's far side stands.
#[derive(Debug, Default)]
enum Found {
    /// Nothing yet (or the last try failed).
    #[default]
    Nothing,
    /// tether cannot run there (why): the host stays agentless.
    Agentless(String),
    /// Its daemon is reached so, on that connection.
    Ready {
        /// The connection this was found on.
        conn: Weak<Connection>,
        /// How.
        reach: Reach,
    },
}

/// The far side of `host` on `conn`, with what the slot knows (`known`,
/// held while it is found out, so concurrent users set it up once).
/// `binary`: what to copy there (`None`: this process's own). A new
/// connection is set up afresh: the binary checked again, the daemon
/// ensured (it may have exited when idle). The caller answers
/// `settings.agentless` itself, without connecting.
pub(crate) async fn far_side(
    host: &str,
    conn: &Arc<Connection>,
    settings: &FarSettings,
    binary: Option<&Path>,
    known: &tokio::sync::Mutex<Known>,
) -> Result<FarSide, TransportError> {
    let far = Far { host, conn };
    let mut known = known.lock().await;
    let known = &mut *known;
    let (mut reach, fresh) = match &known.found {
        Found::Agentless(why) => return Ok(FarSide::Agentless(why.clone())),
        Found::Ready { conn: on, reach } if on.upgrade().is_some_and(|c| Arc::ptr_eq(&c, conn)) => {
            (reach.clone(), false)
        }
        _ => match far.set_up(settings, binary, &mut known.verified).await {
            Ok(Ok(reach)) => (reach, true),
            Ok(Err(why)) => {
                known.found = Found::Agentless(why.clone());
                return Ok(FarSide::Agentless(why));
            }
            Err(e) => {
                known.found = Found::Nothing;
                return Err(e);
            }
        },
    };
    match far.open(&mut reach, fresh).await {
        Ok(stream) => {
            known.found = Found::Ready {
                conn: Arc::downgrade(conn),
                reach,
            };
            Ok(FarSide::Daemon(Box::new(Held {
                stream,
                _conn: Arc::clone(conn),
            })))
        }
        Err(e) => {
            known.found = Found::Nothing;
            Err(e)
        }
    }
}

/// The setup steps on one host and connection.
pub(crate) struct Far<'a> {
    host: &'a str,
    conn: &'a Connection,
}

/// What a setup command did.
#[derive(Debug, Default)]
pub(crate) struct Out {
    status: Option<u32>,
    stdout: Vec<u8>,
    stderr: Vec<u8>,
}

impl Out {
    fn stderr_text(&self) -> String {
        String::from_utf8_lossy(&self.stderr).trim().to_owned()
    }
}

impl Far<'_> {
    /// A failure of this host (`TransportError::Host` names it).
    fn fail(&self, kind: HostFailure, message: String) -> TransportError {
        TransportError::Host {
            host: self.host.to_owned(),
            kind,
            message,
        }
    }

    /// The link's failure, as its kind.
    fn ssh(&self, e: SshError) -> TransportError {
        self.fail(e.kind(), e.to_string())
    }

    /// Runs `command` (a line for the login shell) with its stdin closed.
    async fn sh(&self, command: &str) -> Result<Out, TransportError> {
        let mut out = Out::default();
        let ended = self
            .conn
            .exec_with_input(
                command,
                None,
                Some(COMMAND_TIMEOUT),
                std::future::pending(),
                |e| {
                    let (buf, b) = match e {
                        Event::Stdout(b) => (&mut out.stdout, b),
                        Event::Stderr(b) => (&mut out.stderr, b),
                    };
                    let room = MAX_OUTPUT.saturating_sub(buf.len());
                    buf.extend_from_slice(b.get(..room.min(b.len())).unwrap_or_default());
                },
            )
            .await
            .map_err(|e| self.ssh(e))?;
        if ended.timed_out {
            return Err(self.fail(
                HostFailure::TimedOut,
                format!(
                    "a command tether runs there to set itself up did not finish within {} s",
                    COMMAND_TIMEOUT.as_secs()
                ),
            ));
        }
        out.status = ended.exit_code;
        Ok(out)
    }

    /// Finds or brings tether there and starts its daemon: how to reach
    /// it, or why the host stays agentless. `verified`: the binary hashed
    /// there before and its seal (not hashed again while the seal holds),
    /// updated when it is hashed now.
    async fn set_up(
        &self,
        settings: &FarSettings,
        binary: Option<&Path>,
        verified: &mut Option<probe::Verified>,
    ) -> Result<Result<Reach, String>, TransportError> {
        let id = match identity::identity(binary).await {
            Ok(id) => id,
            Err(why) => return Ok(Err(why)),
        };
        let given = settings.path.as_deref();
        if let Some(p) = given
            && !(p.starts_with('/') || p.starts_with("~/"))
        {
            return Err(self.fail(
                HostFailure::Config,
                format!("tether's path there, {p:?}, must be absolute or start with ~/"),
            ));
        }
        // A second look when another first contact put it there meanwhile.
        for _ in 0..2 {
            let out = self
                .sh(&probe::command(given, id.short(), verified.as_ref()))
                .await?;
            let text = String::from_utf8_lossy(&out.stdout);
            let Some(found) = probe::parse(&text).filter(|_| out.status == Some(0)) else {
                return Err(self.fail(
                    HostFailure::Setup,
                    format!(
                        "cannot tell whether tether can run there (uname, id, stat, sha256sum): {}",
                        deploy::clip(&out.stderr_text())
                    ),
                ));
            };
            if !probe::os_matches(&found.os) {
                return Ok(Err(format!(
                    "the host is {}; this tether is built for {}",
                    found.os,
                    probe::built_for()
                )));
            }
            let path = found.path.clone();
            if found.file.is_some() {
                if let Some(problem) = found.trust(&id.sha256, given.is_some(), verified.as_ref()) {
                    *verified = None;
                    return Err(self.refuse(&path, problem, given.is_some(), &id.sha256));
                }
                *verified = found.verified();
                let socket = self.ensure(&path).await?;
                return Ok(Ok(Reach {
                    bin: path,
                    socket,
                    relay: false,
                }));
            }
            if given.is_some() {
                return Err(self.fail(
                    HostFailure::Setup,
                    format!(
                        "{path} does not exist: install this tether there (SHA-256 {}), or take the path out of the config",
                        id.sha256
                    ),
                ));
            }
            if let Some(problem) = found.dir_problem(false) {
                return Err(self.refuse(&path, problem, false, &id.sha256));
            }
            if !path.starts_with('/') {
                return Err(self.fail(
                    HostFailure::Setup,
                    format!("the cache directory there is not an absolute path ({path})"),
                ));
            }
            match self.deploy(&id, &path).await? {
                Copied::InPlace(seal) => {
                    *verified = seal.map(|seal| probe::Verified {
                        path: path.clone(),
                        seal,
                    });
                    let socket = self.ensure(&path).await?;
                    return Ok(Ok(Reach {
                        bin: path,
                        socket,
                        relay: false,
                    }));
                }
                Copied::Taken => continue,
                Copied::CannotRun(why) => return Ok(Err(why)),
            }
        }
        Err(self.fail(
            HostFailure::Setup,
            "tether's binary there changed while it was being put in place; try again".into(),
        ))
    }

    /// A binary (or its directory) that may not run: what to do about it.
    fn refuse(
        &self,
        path: &str,
        problem: probe::Untrusted,
        given: bool,
        sha256: &str,
    ) -> TransportError {
        let todo = if given {
            format!(
                "put this tether there (SHA-256 {sha256}), owned by you and writable only by you, or take the path out of the config"
            )
        } else if problem.dir {
            format!(
                "remove {} (rm -rf -- {}) and tether copies itself there again",
                probe::dir_of(path),
                sh_quote(probe::dir_of(path))
            )
        } else {
            format!(
                "remove it (rm -f -- {}) and tether copies itself there again",
                sh_quote(path)
            )
        };
        self.fail(
            HostFailure::Setup,
            format!(
                "tether will not run {path}: it {}. It never repairs or replaces what it finds; {todo}",
                problem.why
            ),
        )
    }
}

/// `s` in single quotes for a POSIX shell (and csh, fish: one line).
pub(crate) fn sh_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// A one-line POSIX `script` as a command any login shell runs (csh and
/// fish have no `$(…)`, `if …; then`).
pub(crate) fn posix(script: &str) -> String {
    format!("exec /bin/sh -c {}", sh_quote(script))
}

/// The stream to the host's daemon, keeping the connection it is a
/// channel of open while it is used.
struct Held {
    stream: ChannelStream,
    _conn: Arc<Connection>,
}

impl AsyncRead for Held {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.stream).poll_read(cx, buf)
    }
}

impl AsyncWrite for Held {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }
}
