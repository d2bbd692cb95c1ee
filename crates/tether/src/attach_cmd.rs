//! `tether attach SESSION`: the person's terminal joins a session's live
//! terminal through the daemon. Output comes back without the session's
//! queries (the daemon's emulator already answered them) or tether's
//! marks; keys go to the session whole (only late replies to the capture's
//! own queries are dropped, never a key); resizes are forwarded; `~.` at
//! the start of a line detaches. The terminal is restored on every way
//! out.

use std::time::Duration;

use anyhow::{Context, Result};
use tether_daemon::frame::{Frame, read_frame_async};
use tether_daemon::protocol::Request;
use tether_term::{ESCAPE_HELP, EscapeScanner, Keyed, QueryFilter, ResponseFilter};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::unix::OwnedWriteHalf;
use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::mpsc;

use crate::cli::AttachArgs;
use crate::daemon_cmd;
use crate::local_term::{self, LocalTerminal};

/// How long a lone ESC (or another partial sequence) is held to see
/// whether it begins a terminal reply.
const PARTIAL_HOLD: Duration = Duration::from_millis(20);

/// Exit code: the session ended while attached.
const SESSION_ENDED: i32 = 1;

pub fn run(args: AttachArgs) -> Result<i32> {
    let (rows, cols) = local_term::size();
    let client = daemon_cmd::connect()?;
    let request = Request::Attach {
        session: args.session,
        rows,
        cols,
    };
    let (stream, address, early) = client.attach(&request)?;
    let (mut term, typed) = LocalTerminal::enter()?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let (code, farewell) = runtime.block_on(attached(stream, early, &mut term, typed))?;
    term.restore(&format!("\r\n[{farewell}: {address}]\r\n"));
    Ok(code)
}

async fn send(w: &mut OwnedWriteHalf, frame: Frame) -> bool {
    w.write_all(&frame.encode()).await.is_ok()
}

async fn attached(
    stream: std::os::unix::net::UnixStream,
    early: Vec<u8>,
    term: &mut LocalTerminal,
    typed: Vec<u8>,
) -> Result<(i32, String)> {
    stream.set_nonblocking(true)?;
    let (from_daemon, mut to_daemon) = tokio::net::UnixStream::from_std(stream)?.into_split();
    let mut from_daemon = std::io::Cursor::new(early).chain(from_daemon);
    let (frames_tx, mut frames) = mpsc::channel::<Frame>(256);
    tokio::spawn(async move {
        while let Ok(Some(f)) = read_frame_async(&mut from_daemon).await {
            if frames_tx.send(f).await.is_err() {
                break;
            }
        }
    });
    let (keys_tx, mut keys) = mpsc::channel::<Vec<u8>>(64);
    if !typed.is_empty() {
        let _ = keys_tx.send(typed).await;
    }
    local_term::spawn_stdin_reader(keys_tx);
    let mut winch = signal(SignalKind::window_change())?;
    let mut term_sig = signal(SignalKind::terminate())?;
    let mut hup = signal(SignalKind::hangup())?;
    let mut int = signal(SignalKind::interrupt())?;
    // The session's queries are answered by the daemon's emulator: they
    // never reach this terminal (nor do tether's marks), so it sends no
    // replies of its own but those to the capture, and what is typed
    // passes whole (Shift-F3 is `CSI 1 ; 2 R`, shaped like a position
    // report).
    let mut queries = QueryFilter::new();
    let mut shown = Vec::new();
    let mut filter = ResponseFilter::for_typed_input();
    let mut escapes = EscapeScanner::new();
    let mut filtered = Vec::new();
    loop {
        let holding = filter.pending() > 0;
        let showing = queries.pending() > 0;
        tokio::select! {
            f = frames.recv() => match f {
                Some(Frame::Output(bytes)) => {
                    shown.clear();
                    queries.feed(&bytes, &mut shown);
                    term.write(&shown)?;
                }
                Some(Frame::Ended(why)) => return Ok((SESSION_ENDED, why)),
                Some(Frame::ShellEnded { code, why }) => return Ok((code, why)),
                Some(_) => {}
                None => return Ok((SESSION_ENDED, "the daemon went away".into())),
            },
            k = keys.recv() => {
                let Some(input) = k else {
                    let _ = send(&mut to_daemon, Frame::Detach).await;
                    return Ok((0, "input closed; detached".into()));
                };
                filtered.clear();
                filter.feed(&input, &mut filtered);
                if let Some(end) = forward(&mut escapes, &filtered, &mut to_daemon, term).await? {
                    return Ok(end);
                }
            }
            _ = tokio::time::sleep(PARTIAL_HOLD), if showing => {
                shown.clear();
                queries.flush(&mut shown);
                term.write(&shown)?;
            }
            _ = tokio::time::sleep(PARTIAL_HOLD), if holding => {
                filtered.clear();
                filter.flush(&mut filtered);
                if let Some(end) = forward(&mut escapes, &filtered, &mut to_daemon, term).await? {
                    return Ok(end);
                }
            }
            _ = winch.recv() => {
                let (rows, cols) = local_term::size();
                let _ = send(&mut to_daemon, Frame::Resize { rows, cols }).await;
            }
            _ = term_sig.recv() => return Ok((143, "terminated; detached".into())),
            _ = hup.recv() => return Ok((129, "hung up; detached".into())),
            _ = int.recv() => return Ok((130, "interrupted; detached".into())),
        }
    }
}

/// Sends the person's keys on, acting on escapes; `Some` when they detach.
async fn forward(
    escapes: &mut EscapeScanner,
    input: &[u8],
    to_daemon: &mut OwnedWriteHalf,
    term: &mut LocalTerminal,
) -> Result<Option<(i32, String)>> {
    for keyed in escapes.feed(input) {
        match keyed {
            Keyed::Send(bytes) => {
                if !send(to_daemon, Frame::Input(bytes)).await {
                    return Ok(Some((SESSION_ENDED, "the daemon went away".into())));
                }
            }
            Keyed::Help => term.write(ESCAPE_HELP.as_bytes())?,
            Keyed::Detach => {
                let _ = send(to_daemon, Frame::Detach).await;
                return Ok(Some((0, "detached".into())));
            }
        }
    }
    Ok(None)
}
