//! The far end of a bridge, as the bridge sees it: something that says
//! [`FarEvent`]s and takes [`ToFar`] messages. Each door implements it
//! over what it has (a remote PTY's output stream for `tether ssh`, the
//! daemon's attach connection for `tether attach`), so a keystroke or an
//! output chunk crosses no task or channel the door does not need.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use tether_transport::{ExitInfo, OutputStream, TermSize, Terminal};
use tokio::sync::watch;

/// Why the bridge ended when the far end went away without a word.
pub const LOST: &str = "the connection was lost";

/// What the far end says.
#[derive(Debug)]
pub enum FarEvent {
    /// Bytes for the person's terminal.
    Output(Vec<u8>),
    /// It ended: the bridge's exit code, and why (shown to the person).
    Ended {
        /// tether's exit code.
        code: i32,
        /// What happened.
        why: String,
    },
}

/// What the person sends the far end.
#[derive(Debug)]
pub enum ToFar {
    /// Bytes typed.
    Input(Vec<u8>),
    /// The terminal's new size.
    Resize {
        /// Rows.
        rows: u16,
        /// Columns.
        cols: u16,
    },
    /// The person leaves (`~.`, input closed, a signal).
    Detach,
}

/// The far end is gone: nothing more can be sent.
#[derive(Debug)]
pub struct Gone;

/// A bridge's far end.
pub trait FarEnd {
    /// What it says next. Cancel-safe (it is one branch of the bridge's
    /// `select!`): nothing is lost when another branch wins.
    fn recv(&mut self) -> impl Future<Output = FarEvent>;
    /// Sends `msg` on, waiting while the far end cannot take more (a paste
    /// is held back, never dropped).
    fn send(&mut self, msg: ToFar) -> impl Future<Output = Result<(), Gone>>;
}

/// A remote program's terminal ([`Terminal`]): its output read straight
/// from its stream, keys and sizes handed straight to it.
pub struct TerminalFar {
    remote: Arc<dyn Terminal>,
    output: OutputStream,
    exit: watch::Receiver<Option<ExitInfo>>,
    /// The output stream ended: only the exit status is left to wait for.
    drained: bool,
    /// tether's exit code when the program's status never comes.
    lost_code: i32,
}

impl TerminalFar {
    /// The far end over `remote`, whose output stream is `output` (taken
    /// from it); `lost_code` when it ends without an exit status.
    pub fn new(remote: Arc<dyn Terminal>, output: OutputStream, lost_code: i32) -> TerminalFar {
        let exit = remote.exit();
        TerminalFar {
            remote,
            output,
            exit,
            drained: false,
            lost_code,
        }
    }
}

impl FarEnd for TerminalFar {
    async fn recv(&mut self) -> FarEvent {
        if !self.drained {
            // Cancel-safe: an mpsc receive.
            match self.output.recv().await {
                Some(bytes) => return FarEvent::Output(bytes),
                None => self.drained = true,
            }
        }
        // Cancel-safe: waiting on a watch consumes nothing.
        let info = self
            .exit
            .wait_for(Option::is_some)
            .await
            .ok()
            .and_then(|i| *i);
        let (code, why) = match info {
            Some(ExitInfo::Code(c)) => (c, String::new()),
            Some(ExitInfo::Signal(s)) => {
                (128 + s, format!("the remote program ended by signal {s}"))
            }
            None => (self.lost_code, LOST.to_owned()),
        };
        FarEvent::Ended { code, why }
    }

    async fn send(&mut self, msg: ToFar) -> Result<(), Gone> {
        let sent = match msg {
            ToFar::Input(bytes) => self.remote.write(bytes),
            ToFar::Resize { rows, cols } => self.remote.resize(TermSize { rows, cols }),
            ToFar::Detach => self.remote.kill(Duration::ZERO),
        };
        sent.map_err(|_| Gone)
    }
}
