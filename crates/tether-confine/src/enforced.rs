//! What the kernel enforced in a confined session (issue 36), as
//! `tether confine-exec` found it inside the fence, and how it reaches
//! the daemon: confine-exec connects to a socket in the session's own
//! directory before the seccomp filter closes Unix sockets, writes one
//! line of JSON, and waits for the daemon's answer before it runs the
//! shell, so the report is in before the shell's first line. After the
//! filter nothing in the session can make a Unix socket, so no program
//! of the session can send another. One report per shell start (a
//! restarted shell sends its own).

use std::io::{Read, Write};
use std::path::Path;
use std::sync::{Arc, Mutex};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::UnixListener;

/// The most bytes of a report.
const MAX_REPORT: u64 = 16 << 10;

/// How long confine-exec waits for the daemon to take its report.
const ANSWER_WITHIN: std::time::Duration = std::time::Duration::from_secs(30);

/// What the kernel enforced, as every confined result says it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Enforced {
    /// The Landlock ABI in force: the highest both the kernel and tether
    /// know; `None`: no Landlock (a kernel without it, under best effort).
    pub landlock_abi: Option<u8>,
    /// The ABI the session asked for (its features, or an error unless
    /// best effort).
    pub landlock_asked: u8,
    /// How much of what was asked Landlock enforces.
    pub landlock: Landlock,
    /// What was asked and not enforced (best effort on an older kernel).
    #[serde(default)]
    pub skipped: Vec<Skipped>,
    /// The seccomp filter (no Unix or vsock socket, no io_uring) is in
    /// force, as the kernel says (`/proc/self/status`).
    pub seccomp: bool,
    /// The terminals in the fence are a devpts of its own: the session's
    /// terminal is not on it, so no terminal of the host's is.
    pub own_devpts: bool,
    /// The pathname Unix sockets the session may connect to (Landlock
    /// refuses every other); empty: the seccomp filter refuses every
    /// Unix socket.
    #[serde(default)]
    pub unix_sockets: Vec<std::path::PathBuf>,
}

/// How much of the asked Landlock ruleset the kernel enforces.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Landlock {
    /// Everything asked.
    Full,
    /// Some of it (best effort: see `skipped`).
    Partial,
    /// None of it (best effort, on a kernel without Landlock).
    None,
}

/// A Landlock feature asked and not enforced, named by what it keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Skipped {
    /// ABI 1: the filesystem rules (writes outside the roots).
    Filesystem,
    /// ABI 2: renaming and linking across directories.
    Refer,
    /// ABI 3: truncating files.
    Truncate,
    /// ABI 5: `ioctl` on devices.
    IoctlDev,
    /// ABI 6: the scope of abstract Unix sockets.
    AbstractUnixSockets,
    /// ABI 6: the scope of signals.
    Signals,
    /// ABI 9: connecting to pathname Unix sockets (the seccomp filter
    /// refuses Unix sockets whatever the ABI).
    ResolveUnix,
}

impl Skipped {
    /// What ABI `asked` has that ABI `given` (the one in force, 0 for
    /// none) lacks, of what a fence asks.
    pub fn between(given: u8, asked: u8) -> Vec<Skipped> {
        let by_abi: &[(u8, Skipped)] = &[
            (1, Skipped::Filesystem),
            (2, Skipped::Refer),
            (3, Skipped::Truncate),
            (5, Skipped::IoctlDev),
            (6, Skipped::AbstractUnixSockets),
            (6, Skipped::Signals),
            (9, Skipped::ResolveUnix),
        ];
        by_abi
            .iter()
            .filter(|(abi, _)| *abi > given && *abi <= asked)
            .map(|(_, s)| *s)
            .collect()
    }
}

/// Where the daemon keeps the last report of a session's shell.
pub type Reported = Arc<Mutex<Option<Enforced>>>;

/// The daemon's end: a listener on the session's report socket. It stops
/// (and its socket is removed) when dropped.
#[derive(Debug)]
pub struct ReportListener {
    task: tokio::task::JoinHandle<()>,
    socket: std::path::PathBuf,
}

impl Drop for ReportListener {
    fn drop(&mut self) {
        self.task.abort();
        let _ = std::fs::remove_file(&self.socket);
    }
}

impl ReportListener {
    /// Listens on `socket` (made private to the user) on the current
    /// runtime, keeping each report in `into`.
    pub fn start(socket: &Path, into: Reported) -> std::io::Result<ReportListener> {
        let listener = UnixListener::bind(socket)?;
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(socket, std::fs::Permissions::from_mode(0o600))?;
        let task = tokio::spawn(async move {
            while let Ok((conn, _)) = listener.accept().await {
                let into = Arc::clone(&into);
                tokio::spawn(async move {
                    let mut conn = BufReader::new(conn).take(MAX_REPORT);
                    let mut line = String::new();
                    if conn.read_line(&mut line).await.is_err() {
                        return;
                    }
                    let Ok(report) = serde_json::from_str::<Enforced>(&line) else {
                        return;
                    };
                    if let Ok(mut r) = into.lock() {
                        *r = Some(report);
                    }
                    let _ = conn.into_inner().into_inner().write_all(b"1").await;
                });
            }
        });
        Ok(ReportListener {
            task,
            socket: socket.to_owned(),
        })
    }
}

/// confine-exec's end: a connection to the daemon's report socket, made
/// before the seccomp filter closes Unix sockets, and used after it, once
/// all is in force.
#[derive(Debug)]
pub struct ReportSender(std::os::unix::net::UnixStream);

impl ReportSender {
    /// Connects to the daemon's `socket`.
    pub fn connect(socket: &Path) -> std::io::Result<ReportSender> {
        let conn = std::os::unix::net::UnixStream::connect(socket)?;
        // A daemon that never answers fails the start, never hangs it.
        conn.set_read_timeout(Some(ANSWER_WITHIN))?;
        Ok(ReportSender(conn))
    }

    /// Sends `report` and waits for the daemon's answer.
    pub fn send(mut self, report: &Enforced) -> std::io::Result<()> {
        let mut line = serde_json::to_string(report).map_err(std::io::Error::other)?;
        line.push('\n');
        self.0.write_all(line.as_bytes())?;
        // EOF before the answer: the daemon did not take it.
        let mut ack = [0u8; 1];
        self.0.read_exact(&mut ack)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_an_older_kernel_lacks_is_named() {
        assert_eq!(Skipped::between(6, 6), vec![]);
        assert_eq!(
            Skipped::between(4, 6),
            vec![
                Skipped::IoctlDev,
                Skipped::AbstractUnixSockets,
                Skipped::Signals
            ]
        );
        assert_eq!(Skipped::between(0, 1), vec![Skipped::Filesystem]);
        assert_eq!(Skipped::between(7, 6), vec![]);
        assert_eq!(Skipped::between(7, 10), vec![Skipped::ResolveUnix]);
    }
}
