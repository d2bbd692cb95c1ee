//! `tether daemon`, and the launcher every client uses to start the daemon
//! on demand: `tether daemon start` runs `tether daemon serve --detach` in
//! the background and returns at once, so the daemon is nobody's child
//! (no zombie when it exits) and holds no terminal. `ensure` and `relay`
//! are `daemon_host.rs`.

use std::process::{Command, Stdio};
use std::time::Duration;

use anyhow::{Context, Result};
use tether_daemon::protocol::Request;
use tether_daemon::{Client, DaemonError, Paths, ServerOptions};

use crate::cli::DaemonAction;

/// Seconds with no sessions and no clients before the daemon exits.
const DEFAULT_IDLE_EXIT_S: f64 = 60.0;

/// How long `tether daemon stop` waits for the daemon to end its sessions
/// and exit.
const STOP_DEADLINE: Duration = Duration::from_secs(30);

/// Waits until process `pid` has exited (or is a zombie), up to `deadline`.
/// Ends the daemon of another tether version that listens here: SIGTERM
/// (it ends its sessions as on `daemon stop`), then waits for it.
fn stop_other_version(paths: &Paths) -> Result<i32> {
    let Some(pid) = Client::listener_pid(paths) else {
        anyhow::bail!(
            "the running daemon speaks another protocol and the process behind its socket cannot be told; stop it with kill"
        );
    };
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid),
        nix::sys::signal::Signal::SIGTERM,
    )
    .with_context(|| format!("cannot stop the daemon (pid {pid})"))?;
    let raw = u32::try_from(pid).unwrap_or(u32::MAX);
    if !wait_gone(raw, STOP_DEADLINE) {
        eprintln!(
            "tether: the daemon of another tether version (pid {pid}) was asked to stop and is still \
             ending its sessions after {}s; `kill -KILL {pid}` ends it at once",
            STOP_DEADLINE.as_secs()
        );
        return Ok(1);
    }
    eprintln!("tether: the daemon of another tether version (pid {pid}) stopped");
    Ok(0)
}

fn wait_gone(pid: u32, deadline: Duration) -> bool {
    let Ok(raw) = i32::try_from(pid) else {
        return true;
    };
    let end = std::time::Instant::now() + deadline;
    loop {
        let alive = nix::sys::signal::kill(nix::unistd::Pid::from_raw(raw), None).is_ok();
        let zombie = std::fs::read_to_string(format!("/proc/{raw}/stat"))
            .is_ok_and(|s| s.rsplit_once(')').is_some_and(|(_, r)| r.starts_with(" Z")));
        if !alive || zombie {
            return true;
        }
        if std::time::Instant::now() >= end {
            return false;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// This program, for hellos and welcomes.
pub fn me() -> String {
    format!("tether {}", env!("CARGO_PKG_VERSION"))
}

/// The cap on each session's saved output (spill files): the environment's
/// `TETHER_SPILL_CAP` (bytes, or a number with K, M or G for KiB, MiB,
/// GiB: `64M`), else [`tether_shell::spill::DEFAULT_SPILL_CAP`].
pub fn spill_cap() -> Result<u64> {
    let Some(text) = std::env::var_os("TETHER_SPILL_CAP") else {
        return Ok(tether_shell::spill::DEFAULT_SPILL_CAP);
    };
    let text = text.to_string_lossy();
    parse_size(text.trim()).with_context(|| {
        format!(
            "TETHER_SPILL_CAP={text:?} is not a size: give bytes, or a number with K, M or G (64M)"
        )
    })
}

fn parse_size(text: &str) -> Option<u64> {
    let (digits, shift) = match text.char_indices().last()? {
        (i, 'k' | 'K') => (&text[..i], 10),
        (i, 'm' | 'M') => (&text[..i], 20),
        (i, 'g' | 'G') => (&text[..i], 30),
        _ => (text, 0),
    };
    let n: u64 = digits.parse().ok()?;
    n.checked_mul(1 << shift)
}

/// Starts the daemon in the background (via `tether daemon start`).
pub fn launch() -> std::io::Result<()> {
    start_command(Command::new(std::env::current_exe()?))
}

/// Starts the daemon of directory `dir` in the background.
pub fn launch_at(dir: &std::path::Path) -> std::io::Result<()> {
    let mut command = Command::new(std::env::current_exe()?);
    command.env("TETHER_DIR", dir);
    start_command(command)
}

fn start_command(mut command: Command) -> std::io::Result<()> {
    let status = command
        .args(["daemon", "start"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .status()?;
    if status.success() {
        Ok(())
    } else {
        Err(std::io::Error::other(format!(
            "`tether daemon start` failed ({status})"
        )))
    }
}

/// A connection of the CLI's shared namespace, starting the daemon if
/// needed.
pub fn connect() -> Result<Client, DaemonError> {
    let hello = tether_daemon::client::hello(&me(), None, false);
    Client::connect_or_start(&Paths::from_env(), &hello, &launch)
}

pub fn run(action: DaemonAction) -> Result<i32> {
    let paths = Paths::from_env();
    match action {
        DaemonAction::Serve { idle_exit, detach } => {
            if detach {
                // Leave the caller's terminal session: no SIGHUP when it closes.
                let _ = nix::unistd::setsid();
            }
            let idle = idle_exit
                .or_else(|| std::env::var("TETHER_IDLE_EXIT").ok()?.parse().ok())
                .unwrap_or(DEFAULT_IDLE_EXIT_S);
            let idle_exit = Duration::try_from_secs_f64(idle)
                .context("--idle-exit must be a number of seconds, 0 or more")?;
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .enable_all()
                .build()
                .context("cannot start the async runtime")?;
            runtime.block_on(tether_daemon::serve(ServerOptions {
                paths,
                idle_exit,
                sessions: tether_shell::SessionOptions {
                    spill_cap: spill_cap()?,
                    confine_helper: std::env::current_exe().ok(),
                    ..tether_shell::SessionOptions::default()
                },
                server: me(),
                hosts: Some(crate::remote_hosts::provider()),
            }))?;
            Ok(0)
        }
        DaemonAction::Start => {
            // Created 0600 or proven ours and private; never a symlink.
            let log = paths
                .ensure_private()?
                .file("daemon.log")
                .map_err(|e| paths.refused(e))?;
            Command::new(std::env::current_exe()?)
                .args(["daemon", "serve", "--detach"])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(log)
                .spawn()
                .context("cannot start the daemon")?;
            Ok(0)
        }
        DaemonAction::Stop => {
            let hello = tether_daemon::client::hello(&me(), None, false);
            match Client::connect(&paths, &hello) {
                Ok(mut c) => {
                    c.call(&Request::Stop)?;
                    let pid = c.welcome.pid;
                    drop(c);
                    // Returns once the daemon is gone, so the next command
                    // starts a fresh one instead of reaching (or racing)
                    // the daemon that is ending its sessions.
                    if !wait_gone(pid, STOP_DEADLINE) {
                        eprintln!(
                            "tether: the daemon (pid {pid}) was asked to stop and is still \
                             ending its sessions after {}s; `kill {pid}` ends it at once",
                            STOP_DEADLINE.as_secs()
                        );
                        return Ok(1);
                    }
                    eprintln!("tether: the daemon (pid {pid}) stopped");
                }
                // A daemon of another tether (an upgrade): it cannot be
                // asked, so it is ended as `kill` would, the kernel naming
                // the process behind the socket.
                Err(DaemonError::Refused(f))
                    if f.kind == tether_daemon::protocol::FailureKind::Version =>
                {
                    return stop_other_version(&paths);
                }
                Err(DaemonError::Unreachable { .. }) => eprintln!("tether: no daemon is running"),
                Err(DaemonError::Dir { .. }) if !paths.dir.exists() => {
                    eprintln!("tether: no daemon is running")
                }
                Err(e) => return Err(e.into()),
            }
            Ok(0)
        }
        DaemonAction::Ensure => crate::daemon_host::print_ensured(),
        DaemonAction::Relay { socket } => crate::daemon_host::relay(&socket),
        DaemonAction::Status => {
            let hello = tether_daemon::client::hello(&me(), None, false);
            match Client::connect(&paths, &hello) {
                Ok(c) => {
                    outln!(
                        "running: {} (pid {}) at {}",
                        c.welcome.server,
                        c.welcome.pid,
                        paths.socket().display()
                    );
                    Ok(0)
                }
                Err(DaemonError::Unreachable { .. }) => {
                    outln!("not running ({})", paths.socket().display());
                    Ok(3)
                }
                Err(DaemonError::Dir { .. }) if !paths.dir.exists() => {
                    outln!("not running ({})", paths.socket().display());
                    Ok(3)
                }
                Err(e) => Err(e.into()),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn spill_caps_read_as_people_write_them() {
        use super::parse_size;
        assert_eq!(parse_size("1048576"), Some(1 << 20));
        assert_eq!(parse_size("64M"), Some(64 << 20));
        assert_eq!(parse_size("2g"), Some(2 << 30));
        assert_eq!(parse_size("512k"), Some(512 << 10));
        assert_eq!(parse_size("0"), Some(0));
        for bad in ["", "M", "-1", "1.5M", "64MB", "99999999999G"] {
            assert_eq!(parse_size(bad), None, "{bad}");
        }
    }
}
