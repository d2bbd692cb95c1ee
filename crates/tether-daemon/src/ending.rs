//! The sessions on hosts of an owner that is gone, closed there.
//!
//! A namespace held by a lease (an MCP server's `mcp-PID`) ends when its
//! lease connection closes: its sessions here are closed by the registry,
//! and those that live in a host's own daemon (the [`HostedBook`]'s) get a
//! `close` carried there, which ends each session's process tree on the
//! host. A host that cannot be reached then keeps its record, and the
//! close is tried again on the daemon's tick, with a growing wait (1 s to
//! 60 s), until the host answers: the record is on disk, so a daemon
//! started after this one (killed, or idle) goes on trying, and a daemon
//! with such closes to make does not exit when idle. An owner is gone when
//! its lease ended in this daemon's life, or when its process is gone
//! ([`crate::recover::owner_alive`]: the book outlives a killed daemon,
//! whose leases nobody saw end).
//!
//! [`HostedBook`]: crate::hosted::HostedBook

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::hosted::Hosted;
use crate::ops::Address;
use crate::protocol::{FailureKind, Reply, Request};
use crate::relay::{self, Opened};
use crate::server::State;

/// The first wait after a close that did not reach its host.
const FIRST_WAIT: Duration = Duration::from_secs(1);

/// The longest wait between two tries.
const LONGEST_WAIT: Duration = Duration::from_secs(60);

/// How long one try may take (reaching the host, and its close: the
/// host's TERM, then KILL, of the session's tree).
const TRY_WITHIN: Duration = Duration::from_secs(20);

/// When a session's close is tried next.
struct Next {
    at: Instant,
    wait: Duration,
    /// A try is under way.
    busy: bool,
}

/// The owners gone and the closes still to make.
#[derive(Default)]
pub(crate) struct Ending {
    gone: Mutex<HashSet<String>>,
    next: Mutex<HashMap<Address, Next>>,
}

impl Ending {
    fn gone(&self) -> MutexGuard<'_, HashSet<String>> {
        self.gone.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn next(&self) -> MutexGuard<'_, HashMap<Address, Next>> {
        self.next.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A new lease holds `owner` again (its server reached a new daemon
    /// connection): its sessions are no longer to be closed.
    pub(crate) fn leased(&self, owner: &str) {
        self.gone().remove(owner);
    }

    fn is_gone(&self, owner: &str) -> bool {
        self.gone().contains(owner) || !crate::recover::owner_alive(owner)
    }

    /// Takes `a`'s try if one is due; false while one is under way or
    /// its wait is not over.
    fn take(&self, a: &Address) -> bool {
        let mut next = self.next();
        match next.get_mut(a) {
            Some(n) if n.busy || n.at > Instant::now() => false,
            Some(n) => {
                n.busy = true;
                true
            }
            None => {
                next.insert(
                    a.clone(),
                    Next {
                        at: Instant::now(),
                        wait: FIRST_WAIT,
                        busy: true,
                    },
                );
                true
            }
        }
    }

    /// `a`'s try is over: done (forgotten), or to be made again later.
    fn tried(&self, a: &Address, done: bool) {
        let mut next = self.next();
        if done {
            next.remove(a);
        } else if let Some(n) = next.get_mut(a) {
            n.at = Instant::now() + n.wait;
            n.wait = (n.wait * 2).min(LONGEST_WAIT);
            n.busy = false;
        }
    }
}

/// `owner`'s lease ended: its sessions on hosts are closed there, all at
/// once (those not reached are tried again by [`sweep`]).
pub(crate) async fn owner_gone(state: &Arc<State>, owner: &str) {
    state.ending.gone().insert(owner.to_owned());
    let mut closing = tokio::task::JoinSet::new();
    for h in state.hosted.all().into_iter().filter(|h| h.owner == owner) {
        if state.ending.take(&h.address()) {
            closing.spawn(try_close(Arc::clone(state), h));
        }
    }
    while closing.join_next().await.is_some() {}
}

/// On the daemon's tick: a close is tried for each session on a host
/// whose owner is gone and whose wait is over.
pub(crate) fn sweep(state: &Arc<State>) {
    for h in state.hosted.all() {
        if state.ending.is_gone(&h.owner) && state.ending.take(&h.address()) {
            tokio::spawn(try_close(Arc::clone(state), h));
        }
    }
}

/// Whether a session on a host still waits for its close (the daemon
/// then stays, to make it).
pub(crate) fn pending(state: &State) -> bool {
    state
        .hosted
        .all()
        .iter()
        .any(|h| state.ending.is_gone(&h.owner))
}

async fn try_close(state: Arc<State>, h: Hosted) {
    let address = h.address();
    let done = match tokio::time::timeout(TRY_WITHIN, close_there(&state, &h)).await {
        Ok(Ok(())) => true,
        Ok(Err(why)) => {
            eprintln!(
                "tether daemon: cannot close {} on {} (its owner is gone): {why}; trying again later",
                address.display(),
                h.host.name
            );
            false
        }
        Err(_) => {
            eprintln!(
                "tether daemon: closing {} on {} (its owner is gone) took over {} s; trying again later",
                address.display(),
                h.host.name,
                TRY_WITHIN.as_secs()
            );
            false
        }
    };
    if done {
        state.hosted.remove(&address);
    }
    state.ending.tried(&address, done);
}

/// Sends `h`'s close to its host's daemon: `Ok` once the host has closed
/// it, or has no such session (nothing left there).
async fn close_there(state: &State, h: &Hosted) -> Result<(), String> {
    let (mut hr, mut hw) = match relay::open(state, &h.host, &h.owner, &[], None).await {
        Ok(Opened::Daemon(_, hr, hw)) => (hr, hw),
        // No session lives in tether there.
        Ok(Opened::Agentless(_)) => return Ok(()),
        Err(f) => return Err(f.message),
    };
    let close = Request::Close {
        session: h.name.clone(),
    };
    relay::send(&mut hw, &close)
        .await
        .map_err(|e| format!("the link was lost: {e}"))?;
    match relay::receive(&mut hr).await {
        Some(Reply::Ok(_)) => Ok(()),
        Some(Reply::Error(f)) if f.kind == FailureKind::UnknownSession => Ok(()),
        Some(Reply::Error(f)) => Err(f.message),
        _ => Err("the link was lost before the reply".to_owned()),
    }
}
