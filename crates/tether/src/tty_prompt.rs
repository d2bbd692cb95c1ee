//! Asking the person at the terminal for a secret: on `/dev/tty` (so it
//! works with stdin and stdout redirected), echo off while they type, and
//! the terminal's settings put back after. While something holds the
//! terminal (`tether exec`'s live view, which [`lend_from`] registers), it
//! is asked to lend it first: it puts the terminal back exactly, the
//! question is asked, and it takes the terminal again.

use std::io::{BufRead, BufReader, Write};
use std::sync::{Mutex, PoisonError};

use tokio::sync::{mpsc, oneshot};

/// A question's loan of the terminal, sent to its holder: the holder
/// answers `given` once the terminal is back as the person had it, and
/// takes it again when `back` is sent (or dropped).
pub struct Loan {
    /// The holder gave the terminal back.
    pub given: oneshot::Sender<()>,
    /// The question is over.
    pub back: oneshot::Receiver<()>,
}

/// The holder of the terminal, while there is one.
static HOLDER: Mutex<Option<mpsc::UnboundedSender<Loan>>> = Mutex::new(None);

/// Registers the holder of the terminal until the guard is dropped; its
/// receiver gets a [`Loan`] before each question.
pub fn lend_from() -> (HolderGuard, mpsc::UnboundedReceiver<Loan>) {
    let (tx, rx) = mpsc::unbounded_channel();
    *HOLDER.lock().unwrap_or_else(PoisonError::into_inner) = Some(tx);
    (HolderGuard, rx)
}

/// Unregisters the holder when dropped.
pub struct HolderGuard;

impl Drop for HolderGuard {
    fn drop(&mut self) {
        HOLDER.lock().unwrap_or_else(PoisonError::into_inner).take();
    }
}

/// Borrows the terminal from its holder, if there is one, until the
/// returned sender is sent or dropped. Blocks (prompts run on blocking
/// threads).
fn borrow() -> Option<oneshot::Sender<()>> {
    let holder = HOLDER
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clone()?;
    let (given, given_rx) = oneshot::channel();
    let (back_tx, back) = oneshot::channel();
    holder.send(Loan { given, back }).ok()?;
    // An error: the holder is gone, and the terminal with it is back.
    let _ = given_rx.blocking_recv();
    Some(back_tx)
}

use rustix::termios::{LocalModes, OptionalActions, tcgetattr, tcsetattr};

/// Reads secrets from `/dev/tty`.
pub struct TtyPrompter;

impl tether_ssh::Prompter for TtyPrompter {
    fn secret(&self, prompt: &str) -> Option<String> {
        let _loan = borrow();
        let tty = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open("/dev/tty")
            .ok()?;
        let saved = tcgetattr(&tty).ok()?;
        let mut quiet = saved.clone();
        quiet.local_modes.remove(LocalModes::ECHO);
        quiet.local_modes.insert(LocalModes::ECHONL);
        let mut out = &tty;
        let _ = out.write_all(prompt.as_bytes());
        let _ = out.flush();
        let _ = tcsetattr(&tty, OptionalActions::Flush, &quiet);
        let mut line = String::new();
        let read = BufReader::new(&tty).read_line(&mut line);
        let _ = tcsetattr(&tty, OptionalActions::Now, &saved);
        let secret = match read {
            Ok(n) if n > 0 => Some(line.trim_end_matches(['\r', '\n']).to_owned()),
            _ => None,
        };
        // The line read is wiped, not just freed.
        zeroize::Zeroize::zeroize(&mut line);
        secret
    }
}
