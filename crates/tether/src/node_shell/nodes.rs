//! What `tether shell` knows of each node between lines: selected or not,
//! down (and when to try again), its cwd, and how its last command ended.

use std::time::{Duration, Instant};

use tether_cluster::multi::{NodeState, Outcome};

/// The first wait before a node that could not be reached is tried
/// again; it doubles each time, up to [`MAX_BACKOFF`].
const FIRST_BACKOFF: Duration = Duration::from_secs(2);
/// The longest wait between tries.
const MAX_BACKOFF: Duration = Duration::from_secs(60);

/// A node that could not be reached.
#[derive(Clone, Debug)]
pub struct Down {
    /// Why (the connection's error).
    pub why: String,
    /// Tries so far.
    pub tries: u32,
    /// Not tried again before this.
    pub retry_at: Instant,
}

/// One node of the multi-node session.
#[derive(Clone, Debug)]
pub struct Node {
    /// Its name (the host, and its session's name in the daemon).
    pub name: String,
    /// Lines go to it.
    pub selected: bool,
    /// It could not be reached.
    pub down: Option<Down>,
    /// Its shell's working directory.
    pub cwd: Option<String>,
    /// How its last command ended.
    pub last: Option<Outcome>,
    /// How long its last command took.
    pub last_ms: Option<u64>,
    /// The line it runs whose end has not been shown yet.
    pub line: Option<String>,
}

impl Node {
    /// A node, selected, not yet reached.
    pub fn new(name: String) -> Node {
        Node {
            name,
            selected: true,
            down: None,
            cwd: None,
            last: None,
            last_ms: None,
            line: None,
        }
    }

    /// The prompt's indicator.
    pub fn state(&self) -> NodeState {
        match (&self.down, self.selected) {
            (Some(_), _) => NodeState::Down,
            (None, _) if matches!(self.last, Some(Outcome::Away(_))) => NodeState::Away,
            (None, true) => NodeState::Active,
            (None, false) => NodeState::Inactive,
        }
    }

    /// Its last command still runs there (kept, waiting for input, or
    /// out of reach while it runs on in tether there).
    pub fn pending(&self) -> bool {
        matches!(
            self.last,
            Some(Outcome::Running | Outcome::Waiting(_) | Outcome::Away(_))
        )
    }

    /// Whether a line may be sent to it now: up, or down but due for
    /// another try.
    pub fn reachable_now(&self, now: Instant) -> bool {
        self.down.as_ref().is_none_or(|d| now >= d.retry_at)
    }

    /// It could not be reached: the wait before the next try doubles.
    /// Returns true the first time (so the reason is shown once).
    pub fn failed(&mut self, why: String, now: Instant) -> bool {
        let tries = self.down.as_ref().map_or(0, |d| d.tries) + 1;
        let wait = FIRST_BACKOFF
            .saturating_mul(1 << (tries - 1).min(6))
            .min(MAX_BACKOFF);
        let first = self.down.is_none();
        self.down = Some(Down {
            why,
            tries,
            retry_at: now + wait,
        });
        first
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_node_that_fails_waits_longer_each_time() {
        let now = Instant::now();
        let mut n = Node::new("web01".into());
        assert!(n.reachable_now(now));
        assert!(n.failed("refused".into(), now));
        assert_eq!(n.state(), NodeState::Down);
        assert!(!n.reachable_now(now));
        assert!(n.reachable_now(now + FIRST_BACKOFF));
        assert!(!n.failed("refused".into(), now));
        assert!(!n.reachable_now(now + FIRST_BACKOFF));
        assert!(n.reachable_now(now + FIRST_BACKOFF * 2));
        for _ in 0..20 {
            n.failed("refused".into(), now);
        }
        assert!(n.reachable_now(now + MAX_BACKOFF));
    }
}
