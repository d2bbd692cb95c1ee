//! Stopping one host of a run while the others go on (the live view's
//! cancel of `tether exec`): a handle the caller keeps and asks by host
//! name. A host asked before its turn never connects; one connecting
//! stops connecting; one running has its command stopped as a cancel stops
//! it (its result says [`StopReason::ThisHost`] and what became of the
//! command). It does not stop the run, nor any other host.

use std::collections::HashSet;
use std::sync::{Arc, Mutex, PoisonError};

use tokio::sync::watch;

use super::StopReason;
use crate::window::Cancel;

/// The hosts of one run asked to stop, one by one.
#[derive(Clone)]
pub struct HostStops {
    inner: Arc<Inner>,
}

struct Inner {
    /// The names asked, as the node set names them.
    asked: Mutex<HashSet<String>>,
    /// Bumped at each ask, to wake the hosts' watchers.
    asks: watch::Sender<u64>,
}

impl Default for HostStops {
    fn default() -> Self {
        Self::new()
    }
}

impl HostStops {
    /// A handle no host was asked on yet.
    pub fn new() -> Self {
        HostStops {
            inner: Arc::new(Inner {
                asked: Mutex::default(),
                asks: watch::Sender::new(0),
            }),
        }
    }

    /// Asks `host` (its name as the node set gives it) to stop; nothing for
    /// a name not in the run, or a host already done.
    pub fn stop(&self, host: &str) {
        self.inner
            .asked
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(host.to_owned());
        self.inner.asks.send_modify(|n| *n += 1);
    }

    /// True once `host` was asked to stop.
    pub fn asked(&self, host: &str) -> bool {
        self.inner
            .asked
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .contains(host)
    }

    /// `host`'s own cancel: the run's `cancel`, or this handle's ask for
    /// `host`, whichever comes first (a watcher task until either, or
    /// until the host's receiver is dropped).
    pub(crate) fn merged(&self, host: &str, mut run: Cancel) -> Cancel {
        let now = *run.borrow_and_update();
        let (tx, rx) = watch::channel(now);
        if now.is_some() {
            return rx;
        }
        if self.asked(host) {
            tx.send_replace(Some(StopReason::ThisHost));
            return rx;
        }
        let me = self.clone();
        let mut asks = self.inner.asks.subscribe();
        let host = host.to_owned();
        tokio::spawn(async move {
            let mut run_open = true;
            loop {
                tokio::select! {
                    changed = run.changed(), if run_open => match changed {
                        Ok(()) => {
                            let why = *run.borrow_and_update();
                            if why.is_some() {
                                tx.send_replace(why);
                                return;
                            }
                        }
                        // The run's cancel can no longer come.
                        Err(_) => run_open = false,
                    },
                    _ = asks.changed() => {
                        if me.asked(&host) {
                            tx.send_replace(Some(StopReason::ThisHost));
                            return;
                        }
                    }
                    () = tx.closed() => return,
                }
            }
        });
        rx
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[tokio::test]
    async fn one_host_stops_alone_and_the_run_stops_all() {
        let (run, _) = watch::channel(None);
        let stops = HostStops::new();
        let mut a = stops.merged("a", run.subscribe());
        let mut b = stops.merged("b", run.subscribe());
        stops.stop("a");
        a.wait_for(Option::is_some).await.unwrap();
        assert_eq!(*a.borrow(), Some(StopReason::ThisHost));
        assert_eq!(*b.borrow(), None);
        // A host asked before its turn starts cancelled.
        assert_eq!(
            *stops.merged("a", run.subscribe()).borrow(),
            Some(StopReason::ThisHost)
        );
        run.send_replace(Some(StopReason::Interrupted));
        b.wait_for(Option::is_some).await.unwrap();
        assert_eq!(*b.borrow(), Some(StopReason::Interrupted));
        assert!(stops.asked("a") && !stops.asked("b"));
    }
}
