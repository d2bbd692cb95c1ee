//! A command on a connection (an exec channel): its stdout and stderr, as
//! they arrive or whole, its exit status or signal, with a deadline.

use std::time::Duration;

use russh::{ChannelMsg, Pty};

use crate::connect::Connection;
use crate::error::SshError;
pub use crate::exec_stop::Halted;

/// How long a closed connection is given to say it was given up for
/// unanswered keepalives ([`Connection::channel_failed`]).
const HUNG_SAID_WITHIN: Duration = Duration::from_secs(1);

/// What a remote command produced, as it arrives.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    /// Bytes on stdout.
    Stdout(Vec<u8>),
    /// Bytes on stderr.
    Stderr(Vec<u8>),
}

/// What a remote command reads on its stdin.
#[derive(Debug, Default)]
pub enum Input<'a> {
    /// Nothing: stdin is closed at once.
    #[default]
    Closed,
    /// These bytes, then end of file.
    Bytes(&'a [u8]),
    /// Chunks as they arrive, then end of file when the sender is dropped.
    Stream(tokio::sync::mpsc::Receiver<Vec<u8>>),
}

/// Where a remote command runs: on a plain channel (stdout and stderr
/// apart, no terminal: `ssh HOST CMD`), or on a terminal of its own that
/// neither echoes nor rewrites output (`ssh -t HOST CMD` with `stty -echo
/// -opost`: what the command writes to stdout, stderr or `/dev/tty` comes as
/// stdout, byte for byte). A terminal is what lets a program that asks on
/// `/dev/tty` (sudo) be answered through the channel.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CommandTerminal {
    /// No terminal.
    #[default]
    None,
    /// A quiet terminal (`TERM=dumb`, 80x24, no echo, no output
    /// processing).
    Quiet,
}

/// How a remote command ended.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Ended {
    /// Its exit status, when it exited.
    pub exit_code: Option<u32>,
    /// The signal that ended it (`TERM`, …), when one did.
    pub signal: Option<String>,
    /// True when the deadline passed and the channel was closed.
    pub timed_out: bool,
    /// True when `stop` fired and the channel was closed.
    pub cancelled: bool,
    /// After a timeout or a stop: whether the host confirmed the
    /// command's end (see [`Halted`]).
    pub halted: Option<Halted>,
    /// After a timeout or a stop: the exit code the channel reported while
    /// the command was being stopped (it ended by itself, before the stop
    /// reached it or despite it); `None` when it reported a signal (the
    /// stop) or nothing. `exit_code` stays what came before the stop.
    pub code_after_stop: Option<u32>,
}

impl Connection {
    /// Runs `command` with its stdin closed, passing output to `on_event`,
    /// until it ends or `timeout` passes (then it is stopped: TERM, and its
    /// process tree on the host ended, see [`Halted`]).
    pub async fn exec(
        &self,
        command: &str,
        timeout: Option<Duration>,
        on_event: impl FnMut(Event),
    ) -> Result<Ended, SshError> {
        self.exec_until(command, timeout, std::future::pending(), on_event)
            .await
    }

    /// [`Connection::exec`], also stopped (as at the deadline) when `stop`
    /// completes.
    pub async fn exec_until(
        &self,
        command: &str,
        timeout: Option<Duration>,
        stop: impl Future<Output = ()>,
        on_event: impl FnMut(Event),
    ) -> Result<Ended, SshError> {
        self.exec_with_input(command, None, timeout, stop, on_event)
            .await
    }

    /// [`Connection::exec_until`], with `input` written to the command's
    /// stdin before it is closed.
    pub async fn exec_with_input(
        &self,
        command: &str,
        input: Option<&[u8]>,
        timeout: Option<Duration>,
        stop: impl Future<Output = ()>,
        mut on_event: impl FnMut(Event),
    ) -> Result<Ended, SshError> {
        let input = input.map_or(Input::Closed, Input::Bytes);
        self.exec_async(command, input, timeout, stop, |e| {
            on_event(e);
            std::future::ready(())
        })
        .await
    }

    /// [`Connection::exec_with_input`] whose `on_event` is awaited before
    /// more output is read: a slow consumer slows the remote command (the
    /// SSH window fills) instead of memory growing. Input is written while
    /// output is read, so neither side's window can stall the other.
    pub async fn exec_async<F: Future<Output = ()>>(
        &self,
        command: &str,
        input: Input<'_>,
        timeout: Option<Duration>,
        stop: impl Future<Output = ()>,
        on_event: impl FnMut(Event) -> F,
    ) -> Result<Ended, SshError> {
        self.exec_on(
            CommandTerminal::None,
            command,
            input,
            timeout,
            stop,
            on_event,
        )
        .await
    }

    /// [`Connection::exec_async`] with the command on `terminal`.
    pub async fn exec_on<F: Future<Output = ()>>(
        &self,
        terminal: CommandTerminal,
        command: &str,
        input: Input<'_>,
        timeout: Option<Duration>,
        stop: impl Future<Output = ()>,
        mut on_event: impl FnMut(Event) -> F,
    ) -> Result<Ended, SshError> {
        let channel = self.session_channel(&[]).await?;
        if terminal == CommandTerminal::Quiet {
            let modes = [(Pty::ECHO, 0), (Pty::OPOST, 0)];
            if let Err(e) = channel
                .request_pty(true, "dumb", 80, 24, 0, 0, &modes)
                .await
            {
                return Err(self
                    .channel_failed("the server refused a terminal", e)
                    .await);
            }
        }
        // An empty command is the login shell without a terminal (ssh's
        // `shell` request, as `ssh HOST < script` makes).
        let started = if command.is_empty() {
            channel.request_shell(true).await
        } else {
            channel.exec(true, command).await
        };
        if let Err(e) = started {
            return Err(self.channel_failed("cannot start the command", e).await);
        }
        let (mut read, write) = channel.split();
        let writer = async {
            match input {
                Input::Closed => {}
                Input::Bytes(b) => {
                    let _ = write.data(b).await;
                }
                Input::Stream(mut chunks) => {
                    while let Some(c) = chunks.recv().await {
                        // Moved into the packet, not copied (see pty.rs).
                        if write.data_bytes(c).await.is_err() {
                            break;
                        }
                    }
                }
            }
            let _ = write.eof().await;
            // Done writing; the output decides when this ends.
            std::future::pending::<()>().await
        };
        let mut ended = Ended::default();
        let deadline = async {
            match timeout {
                Some(t) => tokio::time::sleep(t).await,
                None => std::future::pending().await,
            }
        };
        tokio::pin!(deadline, stop, writer);
        loop {
            let msg = tokio::select! {
                m = read.wait() => m,
                _ = &mut writer => None,
                _ = &mut deadline => {
                    ended.timed_out = true;
                    None
                }
                _ = &mut stop => {
                    ended.cancelled = true;
                    None
                }
            };
            if ended.timed_out || ended.cancelled {
                let (halted, code) = self.halt(&mut read, &write, &mut on_event).await;
                ended.halted = Some(halted);
                ended.code_after_stop = code;
                return Ok(ended);
            }
            let Some(msg) = msg else { break };
            match msg {
                ChannelMsg::Data { data } => on_event(Event::Stdout(data.to_vec())).await,
                ChannelMsg::ExtendedData { data, ext: 1 } => {
                    on_event(Event::Stderr(data.to_vec())).await
                }
                ChannelMsg::ExitStatus { exit_status } => ended.exit_code = Some(exit_status),
                ChannelMsg::ExitSignal { signal_name, .. } => {
                    ended.signal = Some(crate::pty::signal_name(&signal_name));
                }
                ChannelMsg::Close => break,
                _ => {}
            }
        }
        Ok(ended)
    }

    /// A fault of this connection's protocol, for messages.
    pub(crate) fn protocol(&self, what: String) -> SshError {
        SshError::Protocol {
            host: self.host.clone(),
            what,
        }
    }

    /// A step on a channel (opening it, a request on it) that failed with
    /// `e`: [`SshError::Hung`] when the connection was given up because
    /// its keepalives went unanswered, else a fault of the protocol. (The
    /// channels hear of the connection's end just before the handler
    /// hears why: a closed connection is given a moment to say so.)
    pub(crate) async fn channel_failed(&self, what: &str, e: russh::Error) -> SshError {
        let t0 = std::time::Instant::now();
        while self.is_closed() && !self.hung() && t0.elapsed() < HUNG_SAID_WITHIN {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        if self.hung() {
            return self.hung_error();
        }
        self.protocol(format!("{what}: {e}"))
    }

    /// A new session channel with `extra` and then the configured
    /// variables asked for (no reply asked: a variable the server refuses
    /// is simply not set).
    pub(crate) async fn session_channel(
        &self,
        extra: &[(String, String)],
    ) -> Result<russh::Channel<russh::client::Msg>, SshError> {
        let channel = match self.handle.channel_open_session().await {
            Ok(c) => c,
            Err(e) => return Err(self.channel_failed("cannot open a channel", e).await),
        };
        for (k, v) in extra.iter().chain(&self.env) {
            let _ = channel.set_env(false, k.clone(), v.clone()).await;
        }
        if self.forward_agent {
            // `ForwardAgent`: the host opens agent channels (`agent_forward`).
            let _ = channel.agent_forward(false).await;
        }
        Ok(channel)
    }

    /// True when the connection has ended (the peer went away, keepalives
    /// went unanswered, or it was disconnected).
    pub fn is_closed(&self) -> bool {
        self.handle.is_closed()
    }

    /// Ends the connection politely.
    pub async fn disconnect(&self) {
        let _ = self
            .handle
            .disconnect(russh::Disconnect::ByApplication, "", "en")
            .await;
    }
}
