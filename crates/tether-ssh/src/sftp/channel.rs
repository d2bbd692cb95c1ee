//! The SFTP subsystem's channel, pumped by hand rather than handed to
//! `russh-sftp` whole: its data goes to the SFTP client through a pipe,
//! and its end is watched, so that a subsystem that ends (a login shell of
//! `nologin`, a missing `sftp-server`, a server that died) is known at
//! once with its reason (the exit status or signal, its stderr, and what it
//! printed when that was not SFTP), instead of each request waiting out
//! its timeout.

use russh::ChannelMsg;
use tokio::io::{AsyncWriteExt, DuplexStream};
use tokio::sync::watch;

/// How much of the subsystem's stderr and first output is kept for the
/// reason.
const KEPT: usize = 2048;

/// How long output that is not SFTP waits for the subsystem's end (which
/// says more) before it is reported itself; under `sftp::ENDING_S`, so a
/// failing request sees either.
const GRACE: std::time::Duration = std::time::Duration::from_secs(1);

/// The piece the client's requests are read in, towards the channel.
const COPY_BUF: usize = 256 * 1024;

/// Bytes between the pump and the SFTP client (a few requests' worth).
const PIPE: usize = 512 * 1024;

/// What went wrong with the subsystem.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Trouble {
    /// It prints what is not SFTP (and may still be running).
    NotSftp(String),
    /// It ended: why.
    Ended(String),
}

impl std::fmt::Display for Trouble {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::NotSftp(printed) => write!(
                f,
                "does not speak SFTP: it printed {printed} (start-up files that print?)"
            ),
            Self::Ended(why) => write!(f, "ended: {why}"),
        }
    }
}

/// What went wrong with the subsystem, once something has.
pub(crate) type Ended = watch::Receiver<Option<Trouble>>;

/// Pumps `channel` (the subsystem already started): the stream for the
/// SFTP client, and the watch that says when and why the subsystem ended.
pub(crate) fn pump(channel: russh::Channel<russh::client::Msg>) -> (DuplexStream, Ended) {
    let (client, mine) = tokio::io::duplex(PIPE);
    let (mut from_client, mut to_client) = tokio::io::split(mine);
    let (mut rd, wr) = channel.split();
    let (tx, rx) = watch::channel(None);
    let mut ended = rx.clone();
    tokio::spawn(async move {
        let mut w = wr.make_writer();
        // Read in large pieces: each read becomes channel data, and 8 KiB
        // ones (`io::copy`'s) would be four times the packets.
        let mut from_client = tokio::io::BufReader::with_capacity(COPY_BUF, &mut from_client);
        let _ = tokio::io::copy_buf(&mut from_client, &mut w).await;
        // The client is done (or gone): the subsystem's input ends, and
        // the channel is closed only once the server has said how the
        // subsystem ended (closing first would lose its exit status).
        let _ = wr.eof().await;
        let _ = ended
            .wait_for(|t| matches!(t, Some(Trouble::Ended(_))))
            .await;
        let _ = wr.close().await;
    });
    tokio::spawn(async move {
        let mut end = End::default();
        let mut client_gone = false;
        let mut told = false;
        // Set when the output is not SFTP: said then unless the subsystem
        // ends first (its end says more: nologin exits at once).
        let mut not_sftp: Option<std::pin::Pin<Box<tokio::time::Sleep>>> = None;
        loop {
            let grace = async {
                match not_sftp.as_mut() {
                    Some(s) => s.as_mut().await,
                    None => std::future::pending().await,
                }
            };
            let msg = tokio::select! {
                msg = rd.wait() => msg,
                () = grace, if !told => {
                    told = true;
                    let _ = tx.send(Some(Trouble::NotSftp(printed(&end.first))));
                    continue;
                }
            };
            let Some(msg) = msg else { break };
            match msg {
                ChannelMsg::Data { data } => {
                    keep(&mut end.first, &data);
                    if not_sftp.is_none() && end.first.len() >= 5 && !looks_like_sftp(&end.first) {
                        // The client stops at such bytes and would wait for
                        // answers that never come.
                        not_sftp = Some(Box::pin(tokio::time::sleep(GRACE)));
                    }
                    // A client that stopped reading (it met bytes that are
                    // not SFTP) has dropped its end: the rest is only kept.
                    if !client_gone && to_client.write_all(&data).await.is_err() {
                        client_gone = true;
                    }
                }
                ChannelMsg::ExtendedData { data, ext: 1 } => keep(&mut end.stderr, &data),
                ChannelMsg::ExitStatus { exit_status } => end.status = Some(exit_status),
                ChannelMsg::ExitSignal { signal_name, .. } => {
                    end.signal = Some(crate::pty::signal_name(&signal_name))
                }
                ChannelMsg::Close => {
                    end.closed = true;
                    break;
                }
                _ => {}
            }
        }
        let _ = to_client.shutdown().await;
        let _ = tx.send(Some(Trouble::Ended(end.reason())));
    });
    (client, rx)
}

fn keep(buf: &mut Vec<u8>, data: &[u8]) {
    let room = KEPT.saturating_sub(buf.len());
    buf.extend_from_slice(&data[..data.len().min(room)]);
}

/// What is known of the subsystem's end.
#[derive(Default)]
struct End {
    status: Option<u32>,
    signal: Option<String>,
    stderr: Vec<u8>,
    first: Vec<u8>,
    /// The server closed the channel (else the connection ended first).
    closed: bool,
}

/// Printable text of `bytes`, on one line, escapes and controls shown as
/// `?` (a host's bytes never reach a terminal raw).
fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .chars()
        .map(|c| if c.is_control() { '?' } else { c })
        .take(300)
        .collect()
}

/// The text a subsystem printed before anything else: up to its first
/// byte that text does not hold (where SFTP, or garbage, begins).
fn printed(first: &[u8]) -> String {
    let end = first
        .iter()
        .position(|b| (*b < 0x20 && !b"\n\r\t".contains(b)) || *b == 0x7f)
        .unwrap_or(first.len());
    text(&first[..end])
}

/// True when `first` starts as an SFTP server's first packet does: a
/// length the client takes, then `SSH_FXP_VERSION` (2).
fn looks_like_sftp(first: &[u8]) -> bool {
    match first {
        [a, b, c, d, kind, ..] => u32::from_be_bytes([*a, *b, *c, *d]) < 256 * 1024 && *kind == 2,
        _ => first.is_empty(),
    }
}

impl End {
    fn reason(&self) -> String {
        let mut parts = Vec::new();
        match (&self.status, &self.signal) {
            (Some(s), _) => parts.push(format!("it exited with status {s}")),
            (None, Some(sig)) => parts.push(format!("it was killed by signal {sig}")),
            (None, None) if self.closed => {
                parts.push("the server closed it without an exit status".to_owned())
            }
            (None, None) => parts.push("the connection ended under it".to_owned()),
        }
        let err = text(&self.stderr);
        if !err.is_empty() {
            parts.push(format!("its stderr: {err}"));
        }
        if !looks_like_sftp(&self.first) {
            let out = printed(&self.first);
            if !out.is_empty() {
                parts.push(format!("it printed, instead of speaking SFTP: {out}"));
            }
        }
        let mut reason = parts.join("; ");
        if self.status == Some(127) || self.status == Some(126) {
            reason.push_str(" (sshd_config's `Subsystem sftp` program is missing or cannot run?)");
        } else if !looks_like_sftp(&self.first) {
            reason.push_str(
                " (a login shell that refuses commands, such as nologin, or start-up files that print?)",
            );
        }
        reason
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasons_say_what_the_server_said() {
        let end = End {
            status: Some(1),
            first: b"This account is currently not available.\n".to_vec(),
            ..End::default()
        };
        let r = end.reason();
        assert!(
            r.contains("status 1") && r.contains("not available") && r.contains("nologin"),
            "{r}"
        );
        let end = End {
            status: Some(127),
            stderr: b"sh: 1: /nope: not found\n\x1b[31m".to_vec(),
            ..End::default()
        };
        let r = end.reason();
        assert!(
            r.contains("127") && r.contains("/nope: not found ?[31m"),
            "{r}"
        );
        assert!(looks_like_sftp(&[0, 0, 0, 5, 2, 0, 0, 0, 3]));
    }
}
