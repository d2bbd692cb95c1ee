//! Watching and typing into a session while commands run on it: what a
//! person attached to an agent's shell uses. A [`Live`] handle works without
//! the session's call lock, so it keeps flowing while a command is in
//! flight; it belongs to one shell, and tells its watchers when that shell's
//! terminal ends (a restart starts a new one: take a new handle).

use std::sync::Arc;

use tether_transport::{TermSize, Terminal};

use crate::error::ShellError;
use crate::place::Echo;
use crate::pump::Shared;

pub use crate::pump::{Watcher, Watching};

/// A handle on the session's current terminal.
#[derive(Clone)]
pub struct Live {
    pub(crate) terminal: Arc<dyn Terminal>,
    pub(crate) shared: Arc<Shared>,
    /// How its echo is changed for a person at the prompt.
    echo: Arc<dyn Echo>,
    /// The session's secrets, redacted from the screen view.
    pub(crate) secrets: crate::secrets::Secrets,
    /// The session's confinement, for results.
    pub(crate) fenced: Option<Arc<crate::fence::Fenced>>,
}

impl std::fmt::Debug for Live {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Live").finish_non_exhaustive()
    }
}

/// The session's current [`Live`] handle, updated when the shell is
/// restarted; `changed()` fails once the session has ended.
pub type LiveWatch = tokio::sync::watch::Receiver<Live>;

impl Live {
    pub(crate) fn new(
        terminal: &Arc<dyn Terminal>,
        shared: &Arc<Shared>,
        echo: Arc<dyn Echo>,
        secrets: crate::secrets::Secrets,
        fenced: Option<Arc<crate::fence::Fenced>>,
    ) -> Live {
        Live {
            terminal: Arc::clone(terminal),
            shared: Arc::clone(shared),
            echo,
            secrets,
            fenced,
        }
    }

    /// The program in the foreground when it is not the shell itself.
    pub fn foreground(&self) -> Option<crate::ForegroundProgram> {
        let fg = self.terminal.inspect().ok()?.foreground?;
        let p = fg.process.filter(|_| !fg.is_top)?;
        Some(crate::ForegroundProgram {
            pid: p.pid,
            command: p.command,
        })
    }

    /// The bytes that draw the current screen, and a subscription to all
    /// output after it (nothing lost or repeated between the two); with
    /// `resume`, what was shown from that byte on first (a person coming
    /// back, up to a bound). `None` when this terminal has ended.
    pub fn watch(&self, resume: Option<u64>) -> Option<Watching> {
        self.shared.lock().watch(resume)
    }

    /// The current screen as text, secrets redacted (like every result).
    pub fn screen(&self) -> String {
        let contents = self.shared.lock().screen_text();
        self.secrets.redact(&contents)
    }

    /// The bytes that draw the current screen.
    pub fn redraw(&self) -> Vec<u8> {
        self.shared.lock().redraw()
    }

    /// Types `bytes` into the terminal, as a person at its keyboard.
    pub fn write(&self, bytes: Vec<u8>) -> Result<(), ShellError> {
        Ok(self.terminal.write(bytes)?)
    }

    /// Changes the terminal size (the program gets SIGWINCH); later restarts
    /// keep it. A size out of range is brought into it
    /// ([`TermSize::clamped`]).
    pub fn resize(&self, size: TermSize) -> Result<(), ShellError> {
        let size = size.clamped();
        self.terminal.resize(size)?;
        self.shared.lock().resize(size.rows, size.cols);
        Ok(())
    }

    /// The terminal size now.
    pub fn size(&self) -> TermSize {
        let (rows, cols) = self.shared.lock().size();
        TermSize { rows, cols }
    }

    /// Echo for a person typing at the shell's prompt: turned on or off
    /// only while the shell itself is in the foreground in line mode, so a
    /// program's own settings (a password prompt, an editor) are never
    /// touched. Returns whether it was changed. For a remote shell the
    /// change is made on the host in the background: this returns true
    /// once it has been made, so a caller asks again until then.
    /// A change not made at once (the shell was busy) is made by the next
    /// command's line.
    pub fn set_echo(&self, on: bool) -> bool {
        self.shared.lock().want_echo(on);
        self.echo.set(on, self.terminal.as_ref(), &self.shared)
    }

    /// How this terminal's program ended, once it has.
    pub fn exited(&self) -> Option<tether_transport::ExitInfo> {
        *self.terminal.exit().borrow()
    }

    /// How this terminal's program ended, waiting up to `wait` for it (its
    /// output can end a moment before its exit status is known).
    pub async fn exit_within(
        &self,
        wait: std::time::Duration,
    ) -> Option<tether_transport::ExitInfo> {
        let mut exit = self.terminal.exit();
        let known = tokio::time::timeout(wait, exit.wait_for(Option::is_some)).await;
        match known {
            Ok(Ok(info)) => *info,
            _ => self.exited(),
        }
    }

    /// True once this terminal's output has ended.
    pub fn ended(&self) -> bool {
        self.shared.lock().eof()
    }
}
