//! What the shell's marks say: the end mark's fields (exit, pipeline,
//! cwd, whether the command file ran, the terminal's holders on a host),
//! and where the current command is.

use std::path::PathBuf;

/// What the end mark of a command said.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct EndMark {
    /// `$?` after the command.
    pub(crate) exit: i32,
    /// Each pipeline stage's status.
    pub(crate) pipe: Vec<i32>,
    /// The working directory after it.
    pub(crate) cwd: Option<PathBuf>,
    /// Whether the command file started: `Some(false)` when the shell
    /// printed the end mark without running it (the wrapper line was not
    /// delivered whole); `None` from a dialect that does not say.
    pub(crate) ran: Option<bool>,
    /// The processes other than the shell that hold its terminal, as the
    /// shell saw them on the host (`held=`); `None` when it did not look
    /// (a local terminal, which the engine inspects itself).
    pub(crate) held: Option<Vec<crate::result::TerminalHolder>>,
}

/// Where the current command is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Phase {
    /// No command in flight.
    Idle,
    /// Wrapper sent; its start mark not seen yet.
    Sent,
    /// The user's code is running.
    Started,
    /// The end mark arrived.
    Ended(EndMark),
}

pub(crate) fn parse_end(fields: &[(String, String)]) -> EndMark {
    let get = |k: &str| fields.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
    let exit = get("exit").and_then(|v| v.parse().ok()).unwrap_or(-1);
    let pipe = get("pipe")
        .map(|v| v.split(' ').filter_map(|s| s.parse().ok()).collect())
        .unwrap_or_default();
    let cwd = get("cwd").map(|c| {
        use std::os::unix::ffi::OsStringExt;
        PathBuf::from(std::ffi::OsString::from_vec(percent_decode(c)))
    });
    let ran = get("ran").map(|v| v == "1");
    let held = get("held").filter(|v| *v != "-").map(parse_held);
    EndMark {
        exit,
        pipe,
        cwd,
        ran,
        held,
    }
}

/// `PID:T:NAME …` (`T` 1 when it can type by TIOCSTI), as
/// `dialect::held` writes it.
fn parse_held(v: &str) -> Vec<crate::result::TerminalHolder> {
    v.split(' ')
        .filter_map(|h| {
            let mut parts = h.splitn(3, ':');
            Some(crate::result::TerminalHolder {
                pid: parts.next()?.parse().ok()?,
                can_type: parts.next()? == "1",
                program: parts.next()?.to_owned(),
            })
        })
        .collect()
}

/// Undoes the `%XX` escaping the shell applies to the cwd in marks (the
/// bytes of any name, UTF-8 or not).
fn percent_decode(s: &str) -> Vec<u8> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(b)) => {
                out.push(b);
                i += 3;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    out
}
