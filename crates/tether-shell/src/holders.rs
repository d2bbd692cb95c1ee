//! Processes left by earlier commands that hold the session's terminal, as
//! a result names them.
//!
//! Such a process (`setsid prog $(tty) &`, a background job) reads the
//! same terminal the shell reads its lines from. What it can learn there is
//! harmless: no line tether types holds a mark's nonce (the session secret
//! is in the shell's setup file, never typed), and the transport stops it
//! while the shell reads each line (`Terminal::write_past_holders`), so the
//! line reaches the shell. What it can still do is named in every result
//! until it exits or a reset ends it: it may read a program's input, and,
//! where the kernel allows TIOCSTI, type into the session.

use tether_transport::Terminal;

use crate::result::TerminalHolder;

/// The holders of `terminal` now, as a result names them: those the
/// terminal inspects itself (a local one), and `on_host`, those the last
/// end mark named (a remote one: see `dialect::held`).
pub(crate) fn of(terminal: &dyn Terminal, on_host: &[TerminalHolder]) -> Vec<TerminalHolder> {
    terminal
        .holders()
        .into_iter()
        .map(|h| TerminalHolder {
            pid: h.pid,
            program: h.program,
            can_type: h.can_type,
        })
        .chain(on_host.iter().cloned())
        .collect()
}
