//! Control that never waits behind a call: a [`Control`] handle works
//! without the session's call lock, so signal, reset, close and a look at
//! a command in flight act at once while a call waits on the session.
//!
//! A reset or close is *requested* here: the call in flight sees the
//! request within one wake-up of its wait and returns (`reset`, `closed`);
//! whoever holds the call lock next carries the request out (a reset
//! restarts the shell, a close refuses every later call). Signals go
//! straight to the verified foreground process group.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tether_transport::Signal;
use tokio::sync::watch;

use crate::error::ShellError;
use crate::live::{Live, LiveWatch};
use crate::result::{ForegroundProgram, RunResult, Status};

/// A request that ends the call in flight.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pending {
    /// End the process tree and start a fresh shell (cwd and exports
    /// restored).
    Reset,
    /// End the session: every later call is refused.
    Close,
}

/// The session's control handle (cheap to clone, outlives restarts).
#[derive(Clone, Debug)]
pub struct Control {
    pub(crate) pending: Arc<watch::Sender<Option<Pending>>>,
    pub(crate) live: LiveWatch,
    pub(crate) follow: Arc<crate::follow::FollowBook>,
}

/// Most raw output a look at a command in flight projects.
const PEEK_BYTES: u64 = 256 * 1024;
/// Most characters a look at a command in flight returns.
const PEEK_CHARS: usize = 16_000;

impl Control {
    /// Asks the call in flight (if any) to return, and the next holder of
    /// the call lock to carry out `p`. A close is never replaced by a
    /// reset.
    pub fn request(&self, p: Pending) {
        self.pending.send_modify(|now| {
            if *now != Some(Pending::Close) {
                *now = Some(p);
            }
        });
    }

    /// Sends `signal` to the verified foreground process group of the
    /// current shell, now, whatever call is in flight.
    pub fn signal(&self, signal: Signal) -> Result<i32, ShellError> {
        let live = self.live.borrow().clone();
        live.signal(signal)
    }

    /// Types `bytes` into the session's terminal now, whatever call is in
    /// flight: an answer to a prompt its caller saw in the command's
    /// followed output (that call goes on, and sees what follows).
    pub fn type_now(&self, bytes: Vec<u8>) -> Result<(), ShellError> {
        let live = self.live.borrow().clone();
        Ok(live.terminal.write_past_holders(bytes)?)
    }

    /// Follows the command typed last (or the next one, when none was),
    /// from offset `from` of its text, or (`None`) after what a follower
    /// last handed on (see [`crate::follow`]).
    pub fn follow(&self, from: Option<u64>) -> crate::follow::Follower {
        self.follow.follow(from)
    }

    /// A look at the command in flight, without taking its output from the
    /// call that waits for it: waits up to `wait` for the command to end,
    /// then says `running` (with the output so far, redacted) or `exited`
    /// (with its exit code; the call in flight returns its output).
    pub async fn peek(&self, wait: Duration) -> RunResult {
        let t0 = Instant::now();
        let live = self.live.borrow().clone();
        live.peek(t0, t0 + wait).await
    }
}

impl Live {
    /// Sends `signal` to the verified foreground process group.
    pub fn signal(&self, signal: Signal) -> Result<i32, ShellError> {
        let fg = self.terminal.inspect()?.foreground;
        Ok(self.terminal.signal_foreground(signal, fg.as_ref())?)
    }

    async fn peek(&self, t0: Instant, deadline: Instant) -> RunResult {
        loop {
            let changed = self.shared.changed();
            if !self.shared.lock().busy() {
                break;
            }
            let now = Instant::now();
            if now >= deadline {
                break;
            }
            let _ = tokio::time::timeout(deadline - now, changed).await;
        }
        let look = self.shared.lock().look(PEEK_BYTES);
        let running = look.running;
        let (status, exit_code, output) = if running {
            (
                Status::Running,
                None,
                self.secrets
                    .redact(&crate::text::project_all(&look.raw, PEEK_CHARS)),
            )
        } else {
            (Status::Exited, look.exit, String::new())
        };
        let foreground: Option<ForegroundProgram> = self.foreground();
        RunResult {
            status,
            exit_code,
            pipe_status: None,
            signal: exit_code.and_then(crate::result::signal_of_status),
            output,
            truncated: None,
            cwd: None,
            foreground: if running { foreground } else { None },
            duration_ms: t0.elapsed().as_millis() as u64,
            shell_restarted: false,
            link: None,
            terminal_holders: Vec::new(),
            nested: Vec::new(),
            nest_change: None,
            secret: false,
            confinement: self.fenced.as_ref().and_then(|f| f.report()),
        }
    }
}
