//! A remote session's link failing under a call: a connection that died
//! (the terminal's channel ended without an exit status) or a host that
//! stopped answering (no reply to one round trip within [`LINK_GRACE`],
//! asked only when something is missing: an interrupt got nothing back, or
//! a kept command's start mark or probe answer has not come). Either is
//! `connection_lost` with what is known, never an exit code or signal the
//! host did not send; the session remembers it until a fresh shell runs.

use std::time::{Duration, Instant};

use crate::pump::Phase;
use crate::result::{LinkFailure, LinkLoss, RunResult, Status};
use crate::session::Session;

/// How long a remote host has to answer a round trip, once an interrupt
/// got nothing back, before its link is called hung.
pub(crate) const LINK_GRACE: Duration = Duration::from_secs(5);

impl Session {
    /// The result of a call whose host link failed (its capture finished):
    /// the output so far and whether the command was seen to start; no
    /// exit code or signal (the host sent none). Remembered in the session:
    /// the next `run` starts a fresh shell (over a fresh connection), which
    /// ends what this one left.
    pub(crate) fn link_failed(&mut self, failure: LinkFailure, t0: Instant) -> RunResult {
        let command_started = {
            let mut st = self.shared.lock();
            let started = st.phase == Phase::Started;
            st.phase = Phase::Idle;
            started
        };
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

    /// The result of a wait whose deadline passed with the command kept:
    /// `running`; but on a remote session whose host shows signs of not
    /// answering (the typed line's start mark, or a probe's answer,
    /// missing for [`LINK_GRACE`]), one round trip decides first, and a
    /// hung link is said so.
    pub(crate) async fn deadline_result(&mut self, t0: Instant) -> RunResult {
        let suspect = self.place.host_name().is_some() && {
            let unanswered = self
                .probes
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .unanswered_for();
            let st = self.shared.lock();
            let unmarked = st.phase == Phase::Sent && st.last_output.elapsed() >= LINK_GRACE;
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
    pub(crate) async fn if_hung(&mut self, t0: Instant) -> Option<RunResult> {
        if !self.place.link_hung(LINK_GRACE).await {
            return None;
        }
        self.shared.lock().finish_capture();
        let _ = self.terminal.kill(Duration::from_millis(300));
        Some(self.link_failed(LinkFailure::Unanswered, t0))
    }
}
