//! `tether attach SESSION`: the person's terminal joins a session's live
//! terminal through the daemon (`--host H`: a session in tether on H that
//! this machine's daemon does not know yet). Output comes back without the session's
//! queries (the daemon's emulator already answered them) or tether's
//! marks; keys go to the session whole (only late replies to the capture's
//! own queries are dropped, never a key); resizes are forwarded; `~.` at
//! the start of a line detaches. The terminal is restored on every way
//! out.

use anyhow::{Context, Result};
use tether_daemon::frame::{Frame, FrameReader};
use tether_daemon::protocol::Request;
use tether_daemon::quiet::{self, QuietReader, QuietWriter};
use tether_term::{EscapeSet, escape_help};
use tokio::io::AsyncWriteExt;

use crate::cli::AttachArgs;
use crate::daemon_cmd;
use crate::interactive::{Bridge, FarEnd, FarEvent, Gone, Settings, ToFar};
use crate::local_term::{self, LocalTerminal};

/// Exit code: the session ended while attached.
const SESSION_ENDED: i32 = 1;

pub fn run(args: AttachArgs) -> Result<i32> {
    let (rows, cols) = local_term::size();
    let host = crate::session_cmd::named_host(args.host.as_deref(), &args.ssh)?;
    let client = daemon_cmd::connect()?;
    let request = Request::Attach {
        session: args.session,
        rows,
        cols,
        host,
        resume: None,
    };
    let (stream, address, early) = client.attach(&request)?;
    let (mut term, typed) = LocalTerminal::enter()?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let size = (rows, cols);
    let (code, farewell) = runtime.block_on(attached(stream, early, &mut term, typed, size))?;
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
    size: (u16, u16),
) -> Result<(i32, String)> {
    // Each half wakes this thread only for what it waits for (a socket
    // registered both ways wakes it each time the daemon reads a frame).
    let (from_daemon, to_daemon) = quiet::split(stream)?;
    // Frames read in the bridge's own loop (cancel-safe), through a buffer:
    // a frame's header and payload in one read, no task between.
    let from_daemon = FrameReader::new(from_daemon, early);
    let bridge = Bridge {
        term,
        settings: Settings {
            queries_answered_elsewhere: true,
            escape: Some(b'~'),
            escapes: EscapeSet::BASIC,
            escape_help: escape_help(b'~', EscapeSet::BASIC, "detach (the session keeps running)"),
            leaving: "detached",
            left_code: 0,
        },
        far: DaemonFar {
            from_daemon,
            to_daemon,
            size,
        },
    };
    bridge.run(typed).await
}

/// The daemon's attach connection as a far end: frames read and written
/// straight from the bridge's loop.
struct DaemonFar {
    from_daemon: FrameReader<QuietReader>,
    to_daemon: QuietWriter,
    /// The terminal's size as last sent (rows, columns), for a status
    /// line.
    size: (u16, u16),
}

impl FarEnd for DaemonFar {
    async fn recv(&mut self) -> FarEvent {
        loop {
            return match self.from_daemon.next().await {
                Ok(Some(Frame::Output(bytes))) => FarEvent::Output(bytes),
                Ok(Some(Frame::Ended(why))) => FarEvent::Ended {
                    code: SESSION_ENDED,
                    why,
                },
                Ok(Some(Frame::ShellEnded { code, why })) => FarEvent::Ended { code, why },
                // The session's host is out of reach: one status line
                // until the redraw that comes with the link.
                Ok(Some(Frame::Away(why))) => {
                    FarEvent::Output(tether_term::status_line(self.size.0, self.size.1, &why))
                }
                Ok(Some(_)) => continue,
                Ok(None) | Err(_) => FarEvent::Ended {
                    code: SESSION_ENDED,
                    why: "the daemon went away".into(),
                },
            };
        }
    }

    async fn send(&mut self, msg: ToFar) -> Result<(), Gone> {
        let frame = match msg {
            ToFar::Input(bytes) => Frame::Input(bytes),
            ToFar::Resize { rows, cols } => {
                self.size = (rows, cols);
                Frame::Resize { rows, cols }
            }
            ToFar::Detach => Frame::Detach,
        };
        self.to_daemon
            .write_all(&frame.encode())
            .await
            .map_err(|_| Gone)
    }
}
