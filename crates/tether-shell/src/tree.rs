//! The marker every process of a session's tree carries, so the whole
//! tree can be ended: those that left the session (`setsid`, double
//! forks) too, and those a killed daemon's sessions left.

use std::time::Duration;

/// The variable every local session's processes inherit, set to the
/// session directory's name: ending the session's tree also ends every
/// process of ours that carries it (those that left the session with
/// `setsid`, or double-forked), and a daemon that starts after a crash ends
/// those a dead daemon's sessions left ([`end_leftovers`]).
pub const TREE_MARKER: &str = "TETHER_SESSION_ID";

/// Ends every process of ours that a session with directory name `id`
/// started (found by [`TREE_MARKER`]), for a daemon cleaning up after one
/// that was killed.
pub fn end_leftovers(id: &str) {
    tether_pty::kill_marked(&format!("{TREE_MARKER}={id}"), Duration::from_millis(300));
}
