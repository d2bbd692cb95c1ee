//! Interrupts: a command past its deadline is stopped and the prompt
//! recovered (INT, TERM, KILL to the verified foreground; remotely the
//! terminal's C-c, then C-\, then a look at the link), else the shell is
//! restarted; and a signal asked for by the caller.

use std::time::{Duration, Instant};

use tether_transport::{ExitInfo, Signal, TransportError};

use super::Session;
use super::ready::Woke;
use crate::error::ShellError;
use crate::result::{RunResult, Status};

/// Grace after each signal of the interrupt escalation.
const SIGNAL_GRACE: Duration = Duration::from_millis(300);

/// Grace after each control character of a remote interrupt (it crosses
/// the network twice before the end mark comes back).
const REMOTE_SIGNAL_GRACE: Duration = Duration::from_secs(1);

impl Session {
    /// Sends `signal` to the verified foreground process group.
    pub fn signal(&self, signal: Signal) -> Result<i32, ShellError> {
        let fg = self.terminal.inspect()?.foreground;
        Ok(self.terminal.signal_foreground(signal, fg.as_ref())?)
    }

    /// Interrupts the foreground (INT, TERM, KILL; the shell itself only
    /// ever gets INT, and gets it before a TERM or KILL so that it abandons
    /// the rest of the line), recovers the prompt, and returns `timed_out`
    /// with the partial output and the signal that ended the command
    /// (`signal`: SIGINT, SIGTERM, SIGKILL; SIGQUIT remotely). A shell that
    /// cannot be recovered is restarted.
    pub(super) async fn interrupt(&mut self, t0: Instant) -> Result<RunResult, ShellError> {
        let mut recovered = false;
        // The signal after which the command's end came.
        let mut ended_by = None;
        let evidence = self.terminal.inspect()?.foreground.is_some();
        if self.behind_relay() {
            // A shell behind a relay (`sudo` with `use_pty`): a signal to
            // this terminal's foreground would end the relay instead.
            let mut step = 0;
            while let Some(signal) = self.relay_step(step)? {
                step += 1;
                if let Woke::Ended(_) = self.wait(Instant::now() + SIGNAL_GRACE).await {
                    recovered = true;
                    ended_by = Some(signal);
                    break;
                }
            }
        } else if evidence {
            ended_by = self.interrupt_verified().await?;
            recovered = ended_by.is_some();
        } else {
            // No view of the foreground (a remote terminal): the terminal's
            // own C-c, then C-\, reach whatever is in the foreground; a
            // program that ignores both is ended with the shell.
            for signal in [Signal::Int, Signal::Quit] {
                self.terminal.signal_foreground(signal, None)?;
                match self.wait(Instant::now() + REMOTE_SIGNAL_GRACE).await {
                    Woke::Ended(_) => {
                        recovered = true;
                        ended_by = Some(signal);
                        break;
                    }
                    Woke::ShellExited(ExitInfo::LinkLost) => {
                        self.drain_after_exit().await;
                        return Ok(self.link_ended(t0));
                    }
                    _ => {}
                }
            }
            // Nothing came back: a hung link (or host) is said so, by the
            // deadline plus a bounded grace, and dropped; a restart over it
            // would wait on it.
            if !recovered && let Some(r) = self.if_hung(t0).await {
                return Ok(r);
            }
        }
        let pending = *self.pending.borrow();
        if let Some(p) = pending {
            return Ok(self.aborted(p, t0));
        }
        if recovered {
            self.learn_exports().await;
        }
        let (output, truncated) = self.take_output();
        self.shared.lock().command_over();
        self.last_status = 130;
        if !recovered {
            self.restart().await?;
        }
        let mut r = self.result(Status::TimedOut, t0, output, truncated, None);
        r.shell_restarted = !recovered || r.shell_restarted;
        r.signal = ended_by.map(|s| format!("SIG{}", s.name()));
        Ok(r)
    }

    /// Sends `signal` to the shell commands run in: an armed shell inside
    /// the session's (on its terminal), else the session's own.
    fn signal_shell(&self, signal: Signal) -> Result<bool, ShellError> {
        Ok(match self.current_shell_pid() {
            Some(pid) => self.terminal.signal_member(pid, signal)?,
            None => self.terminal.signal_top(signal)?,
        })
    }

    /// INT, TERM, KILL to the verified foreground (the shell itself only
    /// ever gets INT); the signal after which the shell came back to its
    /// prompt, if it did.
    pub(super) async fn interrupt_verified(&mut self) -> Result<Option<Signal>, ShellError> {
        for signal in [Signal::Int, Signal::Term, Signal::Kill] {
            let fg = self.terminal.inspect()?.foreground;
            let Some(fg) = fg else { break };
            if fg.is_top && signal != Signal::Int {
                break;
            }
            if signal != Signal::Int && !fg.is_top {
                // The program outlived its interrupt: the shell gets one
                // of its own first, so that it abandons the rest of the
                // line once the program ends (as at a prompt), instead of
                // running the next command of the list.
                self.signal_shell(Signal::Int)?;
            }
            match self.terminal.signal_foreground(signal, Some(&fg)) {
                Ok(_) | Err(TransportError::ForegroundChanged) => {}
                Err(e) => return Err(e.into()),
            }
            if let Woke::Ended(_) = self.wait(Instant::now() + SIGNAL_GRACE).await {
                return Ok(Some(signal));
            }
        }
        Ok(None)
    }
}
