//! A remote session's link failing under a call: a connection that died
//! (the terminal's channel ended without an exit status) or a host that
//! stopped answering (no reply to one round trip within [`LINK_GRACE`],
//! asked only when something is missing: an interrupt got nothing back, or
//! a kept command's start mark or probe answer has not come). Either is
//! `connection_lost` with what is known, never an exit code or signal the
//! host did not send; the session remembers it until a fresh shell runs.

use std::time::{Duration, Instant};

use super::Session;
use crate::place::LINK_GRACE;
use crate::result::{LinkFailure, LinkLoss, RunResult, Status};

impl Session {
    /// The result of a call whose host link failed (its capture finished):
    /// the output so far and whether the command was seen to start; no
    /// exit code or signal (the host sent none). Remembered in the session:
    /// the next `run` starts a fresh shell (over a fresh connection), which
    /// ends what this one left.
    pub(super) fn link_failed(&mut self, failure: LinkFailure, t0: Instant) -> RunResult {
        let command_started = self.shared.lock().command_over();
        let (output, truncated) = self.take_output();
        let mut r = self.result(Status::ConnectionLost, t0, output, truncated, None);
        let link = LinkLoss {
            failure,
            command_started,
        };
        self.link_lost = Some(link.clone());
        r.link = Some(link);
        r
    }

    /// The result of a call whose terminal's channel ended without an exit
    /// status: the link was lost, or (its keepalives unanswered) hung.
    pub(super) fn link_ended(&mut self, t0: Instant) -> RunResult {
        let failure = if self.place.link_ended_hung() {
            LinkFailure::Unanswered
        } else {
            LinkFailure::Lost
        };
        self.link_failed(failure, t0)
    }

    /// The result of a wait whose deadline passed with the command kept:
    /// `running`; but on a remote session whose host shows signs of not
    /// answering (the typed line's start mark, or a probe's answer,
    /// missing for [`LINK_GRACE`]), one round trip decides first, and a
    /// hung link is said so.
    pub(super) async fn deadline_result(&mut self, t0: Instant) -> RunResult {
        // (A local place's link never hangs: `link_hung` says so at once.)
        let suspect = {
            let unanswered = self
                .probes
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .unanswered_for();
            let unmarked = self.shared.lock().typed_unanswered(LINK_GRACE);
            unmarked || unanswered.is_some_and(|d| d >= LINK_GRACE)
        };
        if suspect && let Some(r) = self.if_hung(t0).await {
            return r;
        }
        self.running_result(Status::Running, t0)
    }

    /// One round trip within [`LINK_GRACE`] decides whether the link hung:
    /// if so (the link is dropped), the terminal goes with it and the
    /// result says so; `None` when the host answered.
    pub(super) async fn if_hung(&mut self, t0: Instant) -> Option<RunResult> {
        if !self.place.link_hung(LINK_GRACE).await {
            return None;
        }
        self.shared.lock().finish_capture();
        let _ = self.terminal.kill(Duration::from_millis(300));
        Some(self.link_failed(LinkFailure::Unanswered, t0))
    }

    /// The result of a call whose host hung before its command was typed:
    /// `connection_lost`, the command not started (nothing was typed).
    pub(super) fn hung_before_typing(&mut self, t0: Instant) -> RunResult {
        let _ = self.terminal.kill(Duration::from_millis(300));
        self.link_failed(LinkFailure::Unanswered, t0)
    }
}
