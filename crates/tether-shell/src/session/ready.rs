//! Readiness: a wait on the command in flight ends at its end mark, a
//! program blocked reading the terminal (the kernel's word locally, the
//! host's `/proc` remotely), the shell exiting, a reset or close asked
//! meanwhile, or the deadline.

use std::time::{Duration, Instant};

use tether_transport::ExitInfo;

use super::Session;
use crate::control::Pending;
use crate::place::probe::ProbeWatch;
use crate::pump::{EndMark, Progress, QUIET};
use crate::result::ForegroundProgram;

/// The longest a wait sleeps between looks at the session; looks at a
/// quiet foreground grow apart up to this as the quiet lasts, so a long
/// silent command costs few inspections.
const LOOK_EVERY_MAX: Duration = Duration::from_millis(20);

/// The time between looks at a foreground quiet for `idle`: a quarter
/// of it, from [`QUIET`] to [`LOOK_EVERY_MAX`].
fn look_every(idle: Duration) -> Duration {
    (idle / 4).clamp(QUIET, LOOK_EVERY_MAX)
}

/// The longest a result waits after its end mark for the shell's prompt
/// hooks to run (the ready mark its last hook prints): a slow hook (a
/// `git status` prompt in a big repository) delays no result longer.
const PROMPT_HOOKS_MAX: Duration = Duration::from_secs(5);

/// What ended a wait.
pub(super) enum Woke {
    Ended(EndMark),
    /// A reset or close was requested while the call waited.
    Aborted(Pending),
    ShellExited(ExitInfo),
    Waiting(Option<ForegroundProgram>),
    Deadline,
}

impl Session {
    pub(super) async fn wait(&self, deadline: Instant) -> Woke {
        let mut exit = self.terminal.exit();
        // When the kernel was last asked, and the output count then: asked
        // again once output came, or after `look_every`. One look is
        // exact: the transport's counts are taken after the foreground was
        // seen, with the kernel's pending output flushed, so a program
        // seen blocked reading has had all it wrote processed (its last
        // bytes, even the end mark, never pass unseen).
        let mut last_look: Option<(Instant, u64)> = None;
        // A remote foreground is judged by the host's evidence, gathered
        // across the calls that wait for this command.
        let mut remote = self
            .place
            .prober()
            .map(|p| ProbeWatch::take(p, &self.probes));
        let mut pending = self.pending.subscribe();
        let mut ended_at: Option<Instant> = None;
        // Only where the terminal is inspected here (a local one): a
        // host's holders are named from the end mark, before the hooks run,
        // and are never stopped while a line is typed, so a remote result
        // does not wait for the hooks (over a link their ready mark may
        // come only with the next line: seen, not understood).
        let hooks = self.opts.dialect.ready_at_prompt() && self.place.prober().is_none();
        loop {
            let changed = self.shared.changed();
            if let Some(p) = *pending.borrow_and_update() {
                return Woke::Aborted(p);
            }
            let Progress {
                ended,
                started,
                idle,
                processed,
                at_prompt,
            } = self.shared.lock().progress();
            if let Some(end) = ended {
                // The user's prompt hooks run after the end mark: their
                // output is not the command's, and what they start is
                // gone (or named a holder) before the next line is typed.
                let since = *ended_at.get_or_insert_with(Instant::now);
                if !hooks
                    || at_prompt
                    || since.elapsed() >= PROMPT_HOOKS_MAX
                    || Instant::now() >= deadline
                {
                    return Woke::Ended(end);
                }
            }
            if let Some(info) = *exit.borrow() {
                return Woke::ShellExited(info);
            }
            let now = Instant::now();
            if let Some(r) = remote.as_mut()
                && started
            {
                r.maybe_start(idle, processed);
            }
            // Remotely silence decides only for a program the host saw
            // where it may be reading; locally, as the terminal's
            // inspection says.
            let may_read = remote
                .as_ref()
                .map(|r| r.silence_decides(processed).cloned());
            let silence_denied = matches!(may_read, Some(None));
            let every = look_every(idle);
            let due = match last_look {
                Some((at, seen)) if seen == processed => now.duration_since(at) >= every,
                _ => true,
            };
            if started && idle >= QUIET && !silence_denied && due {
                last_look = Some((now, processed));
                if let Some(fg) = self.reading_foreground(idle) {
                    // Everything the program wrote is processed: an end
                    // mark among it wins.
                    if let Some(end) = self.shared.lock().end_mark() {
                        return Woke::Ended(end.clone());
                    }
                    return Woke::Waiting(fg.or(may_read.flatten()));
                }
            }
            if now >= deadline {
                return Woke::Deadline;
            }
            let next_look = match last_look {
                // The start mark wakes nobody: a command typed is looked
                // at again within the quiet its first look needs anyway.
                _ if !started => QUIET,
                _ if silence_denied => LOOK_EVERY_MAX,
                _ if idle < QUIET => QUIET - idle,
                Some((at, _)) => every.saturating_sub(now.duration_since(at)),
                None => LOOK_EVERY_MAX,
            };
            let tick = (deadline - now).min(next_look).min(LOOK_EVERY_MAX);
            let probed = async {
                match remote.as_mut().and_then(|r| r.pending()) {
                    Some(f) => f.await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                _ = changed => {}
                _ = pending.changed() => {}
                _ = exit.changed() => {}
                _ = tokio::time::sleep(tick) => {}
                evidence = probed => {
                    let processed = self.shared.lock().processed();
                    if let Some(fg) = remote.as_mut().and_then(|r| r.finish(evidence, processed)) {
                        return Woke::Waiting(Some(fg));
                    }
                }
            }
        }
    }

    /// `Some` when the foreground program is blocked reading the terminal
    /// with nothing left to read, and everything it wrote has been seen; or,
    /// without kernel evidence, when output has been silent for the
    /// silence fallback (`idle` is how long it has been silent).
    pub(super) fn reading_foreground(&self, idle: Duration) -> Option<Option<ForegroundProgram>> {
        // Processed before the look: the transport's output count, taken
        // last, must not have grown past it (and the pump writes a query's
        // reply before it counts the query processed, so a reply is in the
        // input queue the look checks).
        let processed = self.shared.lock().processed();
        let i = self.terminal.inspect().ok()?;
        let settled = i.input_queued.unwrap_or(0) == 0
            && i.output_unread.unwrap_or(0) == 0
            && processed >= i.output_delivered;
        // A relay to an armed shell's own terminal (`sudo` with `use_pty`)
        // reads this one all the time: it says nothing of the program
        // inside, which silence judges.
        let evidence = i.foreground.filter(|f| {
            self.opts.kernel_evidence && !f.process.as_ref().is_some_and(|p| self.relays(p.pid))
        });
        let Some(fg) = evidence else {
            return (settled && idle >= self.opts.silence_fallback).then_some(None);
        };
        (settled && fg.reading_terminal).then(|| {
            fg.process.map(|p| ForegroundProgram {
                pid: p.pid,
                command: p.command,
            })
        })
    }

    /// Drops what the host's probes said (and a probe in flight).
    pub(super) fn forget_probes(&self) {
        *self.probes.lock().unwrap_or_else(|p| p.into_inner()) = Default::default();
    }

    pub(super) fn ended(&self) -> bool {
        self.shared.lock().end_mark().is_some()
    }
}
