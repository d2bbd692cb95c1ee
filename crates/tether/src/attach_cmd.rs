//! `tether attach SESSION`: the person's terminal joins a session's live
//! terminal through the daemon. Output comes back without the session's
//! queries (the daemon's emulator already answered them) or tether's
//! marks; keys go to the session whole (only late replies to the capture's
//! own queries are dropped, never a key); resizes are forwarded; `~.` at
//! the start of a line detaches. The terminal is restored on every way
//! out.

use anyhow::{Context, Result};
use tether_daemon::frame::{Frame, read_frame_async};
use tether_daemon::protocol::Request;
use tether_term::ESCAPE_HELP;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::mpsc;

use crate::cli::AttachArgs;
use crate::daemon_cmd;
use crate::interactive::{Bridge, FarEnd, FarEvent, Gone, Settings, ToFar};
use crate::local_term::{self, LocalTerminal};

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

/// The daemon's attach connection as the bridge's far end: frames in,
/// frames out.
async fn attached(
    stream: std::os::unix::net::UnixStream,
    early: Vec<u8>,
    term: &mut LocalTerminal,
    typed: Vec<u8>,
) -> Result<(i32, String)> {
    stream.set_nonblocking(true)?;
    let (from_daemon, to_daemon) = tokio::net::UnixStream::from_std(stream)?.into_split();
    // Buffered: a frame's header and payload in one read, not three.
    let mut from_daemon = tokio::io::BufReader::with_capacity(
        64 * 1024,
        std::io::Cursor::new(early).chain(from_daemon),
    );
    let (far_tx, from_far) = mpsc::channel::<FarEvent>(256);
    tokio::spawn(async move {
        let gone = FarEvent::Ended {
            code: SESSION_ENDED,
            why: "the daemon went away".into(),
        };
        loop {
            let ev = match read_frame_async(&mut from_daemon).await {
                Ok(Some(Frame::Output(bytes))) => FarEvent::Output(bytes),
                Ok(Some(Frame::Ended(why))) => FarEvent::Ended {
                    code: SESSION_ENDED,
                    why,
                },
                Ok(Some(Frame::ShellEnded { code, why })) => FarEvent::Ended { code, why },
                Ok(Some(_)) => continue,
                Ok(None) | Err(_) => {
                    let _ = far_tx.send(gone).await;
                    return;
                }
            };
            let last = matches!(ev, FarEvent::Ended { .. });
            if far_tx.send(ev).await.is_err() || last {
                return;
            }
        }
    });
    let bridge = Bridge {
        term,
        settings: Settings {
            queries_answered_elsewhere: true,
            escape: Some(b'~'),
            escape_help: ESCAPE_HELP.to_owned(),
            leaving: "detached",
            left_code: 0,
        },
        far: DaemonFar {
            from_daemon: from_far,
            to_daemon,
        },
    };
    bridge.run(typed).await
}

/// The daemon's attach connection as a far end: frames read by a task
/// (a frame read cut short by another `select!` branch would lose bytes),
/// frames written straight from the bridge (one wake-up less a key).
struct DaemonFar {
    from_daemon: mpsc::Receiver<FarEvent>,
    to_daemon: tokio::net::unix::OwnedWriteHalf,
}

impl FarEnd for DaemonFar {
    async fn recv(&mut self) -> FarEvent {
        self.from_daemon.recv().await.unwrap_or(FarEvent::Ended {
            code: SESSION_ENDED,
            why: "the daemon went away".into(),
        })
    }

    async fn send(&mut self, msg: ToFar) -> Result<(), Gone> {
        let frame = match msg {
            ToFar::Input(bytes) => Frame::Input(bytes),
            ToFar::Resize { rows, cols } => Frame::Resize { rows, cols },
            ToFar::Detach => Frame::Detach,
        };
        self.to_daemon
            .write_all(&frame.encode())
            .await
            .map_err(|_| Gone)
    }
}
