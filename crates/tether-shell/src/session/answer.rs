//! Input typed only into a program that waits for it, checked when it is
//! typed: [`Session::send_if_waiting`]. A reply meant for a program that
//! has since ended (or that no longer reads the terminal, or never did: a
//! silent `sleep` taken for a waiting one) must not reach the shell, which
//! would run it as a command line. So, under the session's lock (no other
//! call types meanwhile): a command is in flight, its foreground is blocked
//! reading the terminal (the kernel's word locally, the host's `/proc`
//! remotely), every byte the terminal delivered up to that look has been
//! processed, and the command's end mark is not among them. Only then is
//! the input written.
//!
//! Locally the check and the write are separated by nothing a program can
//! use: a program blocked reading does not end by itself (unless its read
//! has a timeout that falls in those microseconds). Remotely the host's
//! answer takes a round trip: a shell that printed its end mark before the
//! probe saw it reading has that mark delivered before the probe's answer
//! (one connection, in order), so it is seen; a program that stops reading
//! within the round trip can still get the line.

use std::time::{Duration, Instant};

use super::Session;
use crate::error::{NotWaiting, ShellError};
use crate::place::probe::Evidence;
use crate::pump::Phase;
use crate::result::RunResult;

/// The longest the check waits for the host's answer (a hung link must not
/// hold the session).
const PROBE_WITHIN: Duration = Duration::from_secs(5);

/// The longest the check waits for output the terminal delivered to be
/// processed (its end mark among it, perhaps).
const SETTLE: Duration = Duration::from_secs(2);

impl Session {
    /// Types `input` and `keys` as [`Session::send`] does, only when the
    /// command in flight is blocked reading the terminal now; else nothing
    /// is typed and [`ShellError::NotWaiting`] says why.
    pub async fn send_if_waiting(
        &mut self,
        input: Option<&str>,
        keys: &[String],
        wait: Duration,
    ) -> Result<RunResult, ShellError> {
        self.settle_pending().await?;
        self.check_waiting().await?;
        self.send(input, keys, wait).await
    }

    /// `Ok` when the command in flight reads the terminal now.
    pub(super) async fn check_waiting(&mut self) -> Result<(), ShellError> {
        self.phase_is_running()?;
        let delivered = match self.terminal.inspect()? {
            i if self.opts.kernel_evidence && i.foreground.is_some() => {
                self.local_reader(i).await?
            }
            _ => {
                let Some(prober) = self.place.prober() else {
                    return Err(ShellError::NotWaiting(NotWaiting::CannotTell));
                };
                match tokio::time::timeout(PROBE_WITHIN, prober.probe())
                    .await
                    .unwrap_or(Evidence::Unknown)
                {
                    Evidence::Reading(_) => {}
                    Evidence::NotReading => {
                        return Err(ShellError::NotWaiting(
                            NotWaiting::NotReading(String::new()),
                        ));
                    }
                    _ => return Err(ShellError::NotWaiting(NotWaiting::CannotTell)),
                }
                self.terminal.inspect()?.output_delivered
            }
        };
        // Everything the terminal delivered up to the look is processed: an
        // end mark among it is seen.
        let deadline = Instant::now() + SETTLE;
        loop {
            let changed = self.shared.changed();
            if self.shared.lock().processed() >= delivered {
                break;
            }
            let now = Instant::now();
            if now >= deadline {
                return Err(ShellError::NotWaiting(NotWaiting::CannotTell));
            }
            let _ = tokio::time::timeout(deadline - now, changed).await;
        }
        self.phase_is_running()
    }

    /// Locally: the output count to process when the kernel says the
    /// foreground reads the terminal with all it wrote read (what it
    /// wrote last, an end mark perhaps, is still being read: looked at
    /// again as it is).
    pub(super) async fn local_reader(
        &self,
        mut i: tether_transport::Inspection,
    ) -> Result<u64, ShellError> {
        let deadline = Instant::now() + SETTLE;
        loop {
            let changed = self.shared.changed();
            let reads = i.foreground.as_ref().is_some_and(|f| f.reading_terminal);
            if reads && i.output_unread.unwrap_or(0) == 0 {
                return Ok(i.output_delivered);
            }
            if !reads {
                let program = i
                    .foreground
                    .and_then(|f| f.process)
                    .map(|p| p.command)
                    .unwrap_or_default();
                return Err(ShellError::NotWaiting(NotWaiting::NotReading(program)));
            }
            let now = Instant::now();
            if now >= deadline {
                return Err(ShellError::NotWaiting(NotWaiting::CannotTell));
            }
            let wait = (deadline - now).min(Duration::from_millis(5));
            let _ = tokio::time::timeout(wait, changed).await;
            i = self.terminal.inspect()?;
        }
    }

    /// `Ok` while a command's code runs (its start mark seen, its end not).
    pub(super) fn phase_is_running(&self) -> Result<(), ShellError> {
        match self.shared.lock().phase() {
            Phase::Started => Ok(()),
            Phase::Ended(_) => Err(ShellError::NotWaiting(NotWaiting::Ended)),
            Phase::Idle => Err(ShellError::NotWaiting(NotWaiting::NoCommand)),
            Phase::Sent => Err(ShellError::NotWaiting(
                NotWaiting::NotReading(String::new()),
            )),
        }
    }
}
