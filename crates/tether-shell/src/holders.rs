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
//!
//! A process the shell's prompt hooks start after a command (a
//! `PROMPT_COMMAND` that runs `(git fetch &)`) is not the command's, and
//! one that ends on its own is no holder. The ready mark the last hook
//! prints gives the pids the host made while the hooks ran: the last pid
//! (`/proc/loadavg`) when the command's code, or the setup, was over, and
//! the last one after the hooks. A holder in such a range was started by a
//! hook, and is named only once it has outlived [`HOOK_GRACE`] (it did not
//! end on its own). A command's holder is named at once. (A process a
//! command left to start later, in the hooks' moment, is named after the
//! grace, never hidden.)

use std::collections::HashMap;
use std::time::{Duration, Instant};

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

/// How long a holder a prompt hook started may live before it is named.
pub(crate) const HOOK_GRACE: Duration = Duration::from_secs(5);

/// The pids a prompt hook may have started: those the host made while
/// the hooks ran (`pids=FIRST-LAST` in the ready mark, from the last pid
/// before them to the last after; a wrap between them covers both ends).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct HookPids {
    after: i32,
    last: i32,
}

impl HookPids {
    /// From the ready mark's `pids=` field; `None` when the shell could not
    /// read the host's last pid.
    pub(crate) fn parse(v: &str) -> Option<HookPids> {
        let (a, b) = v.split_once('-')?;
        Some(HookPids {
            after: a.parse().ok()?,
            last: b.parse().ok()?,
        })
    }

    fn holds(&self, pid: i32) -> bool {
        if self.after <= self.last {
            pid > self.after && pid <= self.last
        } else {
            pid > self.after || pid <= self.last
        }
    }
}

/// Holders the shell's prompt hooks started, held back for [`HOOK_GRACE`]
/// (see the module's note).
#[derive(Debug, Default)]
pub(crate) struct HookHolders {
    /// Each held back, by pid, with when it was first seen.
    held_back: HashMap<i32, Instant>,
}

impl HookHolders {
    /// The holders a result names, of `all`, given the pids the prompt
    /// hooks may have started since the last result.
    pub(crate) fn named(
        &mut self,
        all: Vec<TerminalHolder>,
        hooks: &[HookPids],
    ) -> Vec<TerminalHolder> {
        self.named_at(all, hooks, Instant::now())
    }

    fn named_at(
        &mut self,
        all: Vec<TerminalHolder>,
        hooks: &[HookPids],
        now: Instant,
    ) -> Vec<TerminalHolder> {
        self.held_back
            .retain(|pid, _| all.iter().any(|h| h.pid == *pid));
        for h in &all {
            if hooks.iter().any(|w| w.holds(h.pid)) {
                self.held_back.entry(h.pid).or_insert(now);
            }
        }
        all.into_iter()
            .filter(|h| {
                self.held_back
                    .get(&h.pid)
                    .is_none_or(|seen| now.duration_since(*seen) >= HOOK_GRACE)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(pid: i32) -> TerminalHolder {
        TerminalHolder {
            pid,
            program: "p".into(),
            can_type: false,
        }
    }

    fn pids(v: &[TerminalHolder]) -> Vec<i32> {
        v.iter().map(|h| h.pid).collect()
    }

    fn w(v: &str) -> Vec<HookPids> {
        vec![HookPids::parse(v).unwrap()]
    }

    #[test]
    fn a_hooks_holder_is_named_only_once_it_outlives_the_grace() {
        let mut hooks = HookHolders::default();
        let t0 = Instant::now();
        // 50 and 150 are commands'; 120 a hook's, made while the hooks ran.
        let r = hooks.named_at(vec![h(50), h(120), h(150)], &w("100-130"), t0);
        assert_eq!(pids(&r), vec![50, 150]);
        // Still held back at the next result, with no range of its own.
        let t1 = t0 + Duration::from_millis(300);
        let r = hooks.named_at(vec![h(50), h(120)], &w("200-210"), t1);
        assert_eq!(pids(&r), vec![50]);
        // It outlived the grace: named.
        let r = hooks.named_at(vec![h(50), h(120)], &[], t0 + HOOK_GRACE);
        assert_eq!(pids(&r), vec![50, 120]);
    }

    #[test]
    fn a_holder_that_ends_is_forgotten_and_a_wrap_covers_both_ends() {
        let mut hooks = HookHolders::default();
        let t0 = Instant::now();
        assert!(hooks.named_at(vec![h(120)], &w("100-130"), t0).is_empty());
        assert!(hooks.named_at(vec![], &[], t0).is_empty());
        assert!(hooks.held_back.is_empty());
        let r = hooks.named_at(vec![h(5), h(9000), h(500)], &w("8000-10"), t0);
        assert_eq!(pids(&r), vec![500]);
        assert_eq!(HookPids::parse("-"), None);
        assert_eq!(HookPids::parse("12-"), None);
    }
}
