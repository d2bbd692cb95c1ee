//! The far end of a bridge, as the bridge sees it: something that says
//! [`FarEvent`]s and takes [`ToFar`] messages. Each door implements it
//! over what it has (a remote PTY's channel for `tether ssh`, the
//! daemon's attach connection for `tether attach`), so a keystroke or an
//! output chunk crosses no task or channel the door does not need.

use std::future::Future;

/// Why the bridge ended when the far end went away without a word.
pub const LOST: &str = "the connection was lost";

/// A far end's answer to an escape it does not serve (`~C`, `~#`, `~&`).
pub const NOT_HERE: &str = "not available here";

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

    /// `~C`: runs the command line the person typed (without the prompt:
    /// `-L 8080:web:80`, `-KR 9000`, `-h`, …); returns what to show them
    /// (lines end in `\n`; empty for nothing). Default: [`NOT_HERE`].
    fn command_line(&mut self, line: &str) -> impl Future<Output = String> {
        let _ = line;
        async { NOT_HERE.to_owned() }
    }

    /// `~#`: the forwarded connections, as lines to show. Default:
    /// [`NOT_HERE`].
    fn forwards(&self) -> String {
        NOT_HERE.to_owned()
    }

    /// `~&`: goes on in the background (the bridge then ends, exit 0, and
    /// gives the person's terminal back); false when it cannot, and the
    /// bridge says [`NOT_HERE`]. Default: false.
    fn background(&mut self) -> bool {
        false
    }
}
