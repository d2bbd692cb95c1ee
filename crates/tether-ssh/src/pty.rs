//! A program on a remote PTY (an SSH session channel with `pty-req`), as a
//! [`Terminal`]: what the engine needs to drive a remote shell.
//!
//! What SSH cannot give, compared with a local PTY: no view of the remote
//! processes ([`Terminal::inspect`] has no top program, no foreground group
//! and no queue sizes, so readiness falls back to silence), and signals
//! reach the foreground group only as the terminal's own control
//! characters (INT as C-c, QUIT as C-\, TSTP as C-z, through the remote
//! line discipline); TERM, KILL, HUP and CONT go, as SSH `signal`
//! requests, to the session's program (the shell), not to the foreground.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use russh::{ChannelMsg, ChannelReadHalf, Pty, Sig};
use tether_transport::{
    ExitInfo, Foreground, Inspection, OutputStream, Signal, TermSize, Terminal, TransportError,
};
use tokio::sync::{mpsc, watch};

use crate::connect::Connection;
use crate::error::SshError;

/// How the remote terminal is set up.
#[derive(Clone, Debug)]
pub struct PtyRequest {
    /// `TERM`.
    pub term: String,
    /// The size.
    pub size: TermSize,
    /// Echo typed input (ECHO).
    pub echo: bool,
    /// Output processing (OPOST: LF to CRLF).
    pub output_processing: bool,
    /// Variables to ask for (`set_env`; a server that refuses one ignores it).
    pub env: Vec<(String, String)>,
    /// The command to run; `None`: the user's login shell.
    pub command: Option<String>,
}

#[derive(Debug)]
enum Cmd {
    Write(Vec<u8>),
    Resize(TermSize),
    Signal(Sig),
    Close,
}

/// A program on a remote PTY.
pub struct PtyTerminal {
    cmds: mpsc::UnboundedSender<Cmd>,
    output: Mutex<Option<OutputStream>>,
    exit: watch::Receiver<Option<ExitInfo>>,
    delivered: Arc<AtomicU64>,
}

impl std::fmt::Debug for PtyTerminal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PtyTerminal").finish_non_exhaustive()
    }
}

/// The Linux number of the signal a host named in an `exit-signal`
/// (`KILL`, `SIGKILL`, `USR2`); `None` for a name not in
/// [`tether_transport::EXIT_SIGNALS`].
pub fn signal_number(name: &str) -> Option<i32> {
    tether_transport::exit_signal_number(name)
}

/// The name a host sent in an `exit-signal`, without `SIG` (russh names
/// the signals it knows; any other, such as `USR2`, comes as sent).
pub(crate) fn signal_name(sig: &russh::Sig) -> String {
    match sig {
        russh::Sig::Custom(name) => name.strip_prefix("SIG").unwrap_or(name).to_owned(),
        known => format!("{known:?}"),
    }
}

/// What a remote PTY's channel says.
#[derive(Debug)]
pub enum PtyEvent {
    /// Output (stdout and stderr alike, as a terminal mixes them).
    Output(Vec<u8>),
    /// The channel closed: the program's exit status, or
    /// [`ExitInfo::LinkLost`] when it ended without one (the connection
    /// died, or the server closed it without a status): never a code or
    /// signal the host did not send.
    Ended(ExitInfo),
}

/// A program on a remote PTY, read by its owner directly: for a front-end
/// that reads nothing else (`tether ssh`), one task less between the
/// connection and the person's terminal than [`PtyTerminal`].
pub struct PtyChannel {
    read: ChannelReadHalf,
    status: Option<ExitInfo>,
    writer: PtyWriter,
}

/// What goes to a remote PTY: keys, sizes, signals, the close. Writes are
/// queued (a paste waits there for the channel's window, while its owner
/// goes on reading output), in order.
#[derive(Clone, Debug)]
pub struct PtyWriter {
    cmds: mpsc::UnboundedSender<Cmd>,
}

impl PtyWriter {
    /// Queues bytes typed.
    pub fn write(&self, bytes: Vec<u8>) -> Result<(), TransportError> {
        self.send(Cmd::Write(bytes))
    }

    /// Queues a window change.
    pub fn resize(&self, size: TermSize) -> Result<(), TransportError> {
        self.send(Cmd::Resize(size))
    }

    /// Hangs up: a HUP to the session's program, then the channel closed
    /// (sshd hangs up the terminal, as closing an ssh connection does).
    pub fn hang_up(&self) -> Result<(), TransportError> {
        let _ = self.send(Cmd::Signal(Sig::HUP));
        self.send(Cmd::Close)
    }

    fn send(&self, cmd: Cmd) -> Result<(), TransportError> {
        self.cmds.send(cmd).map_err(|_| TransportError::Closed)
    }
}

impl PtyChannel {
    /// The next output chunk, or the end with the exit status.
    /// Cancel-safe: a `select!` branch that loses drops nothing.
    pub async fn next(&mut self) -> PtyEvent {
        loop {
            match self.read.wait().await {
                Some(ChannelMsg::Data { data } | ChannelMsg::ExtendedData { data, .. }) => {
                    return PtyEvent::Output(data.to_vec());
                }
                Some(ChannelMsg::ExitStatus { exit_status }) => {
                    let code = i32::try_from(exit_status).unwrap_or(255);
                    self.status = Some(ExitInfo::Code(code));
                }
                Some(ChannelMsg::ExitSignal {
                    signal_name: sig, ..
                }) => {
                    // A name tether does not know is no signal number
                    // it may invent: 255, as for a failure.
                    self.status = Some(match signal_number(&signal_name(&sig)) {
                        Some(n) => ExitInfo::Signal(n),
                        None => ExitInfo::Code(255),
                    });
                }
                Some(ChannelMsg::Close) | None => {
                    return PtyEvent::Ended(self.status.unwrap_or(ExitInfo::LinkLost));
                }
                Some(_) => {}
            }
        }
    }

    /// Where keys, sizes and the close go.
    pub fn writer(&self) -> &PtyWriter {
        &self.writer
    }
}

impl Connection {
    /// Opens a session channel with a PTY and starts `req.command` (or the
    /// login shell) on it, for its owner to read.
    pub async fn open_pty_channel(&self, req: &PtyRequest) -> Result<PtyChannel, SshError> {
        let channel = self.session_channel(&req.env).await?;
        let modes = [
            (Pty::ECHO, u32::from(req.echo)),
            (Pty::OPOST, u32::from(req.output_processing)),
        ];
        let (cols, rows) = (u32::from(req.size.cols), u32::from(req.size.rows));
        if let Err(e) = channel
            .request_pty(true, &req.term, cols, rows, 0, 0, &modes)
            .await
        {
            return Err(self
                .channel_failed("the server refused a terminal", e)
                .await);
        }
        let started = match &req.command {
            Some(c) => channel.exec(true, c.as_str()).await,
            None => channel.request_shell(true).await,
        };
        if let Err(e) = started {
            return Err(self.channel_failed("cannot start the program", e).await);
        }
        let (read, write) = channel.split();
        let (cmds, mut cmd_rx) = mpsc::unbounded_channel::<Cmd>();
        tokio::spawn(async move {
            while let Some(cmd) = cmd_rx.recv().await {
                let done = match cmd {
                    // The bytes move into the packet as they are. `data`
                    // goes through `tokio::io::copy`: an 8 KiB buffer
                    // allocated and zeroed for every write (every
                    // keystroke), a second copy into the packet, and
                    // packets of at most 8 KiB for a paste.
                    Cmd::Write(bytes) => write.data_bytes(bytes).await.is_err(),
                    Cmd::Resize(s) => write
                        .window_change(u32::from(s.cols), u32::from(s.rows), 0, 0)
                        .await
                        .is_err(),
                    Cmd::Signal(sig) => write.signal(sig).await.is_err(),
                    Cmd::Close => {
                        let _ = write.eof().await;
                        let _ = write.close().await;
                        true
                    }
                };
                if done {
                    break;
                }
            }
        });
        Ok(PtyChannel {
            read,
            status: None,
            writer: PtyWriter { cmds },
        })
    }

    /// Opens a session channel with a PTY and starts `req.command` (or the
    /// login shell) on it, as a [`Terminal`].
    pub async fn open_pty(&self, req: &PtyRequest) -> Result<PtyTerminal, SshError> {
        let mut channel = self.open_pty_channel(req).await?;
        let cmds = channel.writer.cmds.clone();
        let (out_tx, out_rx) = mpsc::channel::<Vec<u8>>(64);
        let (exit_tx, exit) = watch::channel(None);
        let delivered = Arc::new(AtomicU64::new(0));
        let counter = Arc::clone(&delivered);
        tokio::spawn(async move {
            let info = loop {
                match channel.next().await {
                    PtyEvent::Output(data) => {
                        counter.fetch_add(data.len() as u64, Ordering::AcqRel);
                        if out_tx.send(data).await.is_err() {
                            break channel.status.unwrap_or(ExitInfo::LinkLost);
                        }
                    }
                    PtyEvent::Ended(info) => break info,
                }
            };
            // Output first, then the exit: a reader of both sees all bytes.
            drop(out_tx);
            exit_tx.send_replace(Some(info));
        });
        Ok(PtyTerminal {
            cmds,
            output: Mutex::new(Some(out_rx)),
            exit,
            delivered,
        })
    }
}

impl PtyTerminal {
    fn send(&self, cmd: Cmd) -> Result<(), TransportError> {
        self.cmds.send(cmd).map_err(|_| TransportError::Closed)
    }
}

impl Terminal for PtyTerminal {
    fn write(&self, bytes: Vec<u8>) -> Result<(), TransportError> {
        self.send(Cmd::Write(bytes))
    }

    fn take_output(&self) -> Option<OutputStream> {
        self.output.lock().ok()?.take()
    }

    fn resize(&self, size: TermSize) -> Result<(), TransportError> {
        self.send(Cmd::Resize(size))
    }

    fn signal_foreground(
        &self,
        signal: Signal,
        _expected: Option<&Foreground>,
    ) -> Result<i32, TransportError> {
        match signal {
            Signal::Int => self.send(Cmd::Write(vec![0x03]))?,
            Signal::Quit => self.send(Cmd::Write(vec![0x1c]))?,
            Signal::Tstp => self.send(Cmd::Write(vec![0x1a]))?,
            Signal::Term => self.send(Cmd::Signal(Sig::TERM))?,
            Signal::Kill => self.send(Cmd::Signal(Sig::KILL))?,
            Signal::Hup => self.send(Cmd::Signal(Sig::HUP))?,
            Signal::Cont => self.send(Cmd::Signal(Sig::Custom("CONT".into())))?,
        }
        // The remote process group is not known.
        Ok(0)
    }

    fn kill(&self, _grace: Duration) -> Result<(), TransportError> {
        // Closing the channel makes sshd hang up the terminal (SIGHUP to
        // its session), as closing an ssh connection does.
        let _ = self.send(Cmd::Signal(Sig::HUP));
        self.send(Cmd::Close)
    }

    fn exit(&self) -> watch::Receiver<Option<ExitInfo>> {
        self.exit.clone()
    }

    fn inspect(&self) -> Result<Inspection, TransportError> {
        Ok(Inspection {
            top: None,
            foreground: None,
            input_queued: None,
            output_unread: None,
            output_delivered: self.delivered.load(Ordering::Acquire),
        })
    }
}
