//! The sliding window [`exec`](crate::exec) and [`copy`](crate::copy) both
//! run their hosts in: at most `fanout` hosts at once, started in the order
//! given; one cancel for the hosts not yet done (the caller's stop, or the
//! first failure when failing fast); every host's events passed to the
//! caller as they come; the results back in the hosts' order.
//!
//! A host that fails a fail-fast run sets the cancel before its place in
//! the window goes to the next host, so with a fanout of 1 no host starts
//! after a failure, however far behind the caller's printing is.

use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;

use tokio::sync::{Semaphore, mpsc, watch};

use crate::exec::{HostSpec, Outcome, StopReason};

/// Set once the hosts not yet done should stop, with why.
pub(crate) type Cancel = watch::Receiver<Option<StopReason>>;

/// The most events queued for the caller, all hosts together.
const QUEUED_EVENTS: usize = 1024;

/// A host's result, as the window makes one (its host, and whether it
/// stops a fail-fast run, are the [`Outcome`]'s).
pub(crate) trait HostOutcome: Outcome + Send + 'static {
    /// The result of a host that was cancelled before it started.
    fn not_started(host: String, why: StopReason) -> Self;
}

/// [`Outcome`] and [`HostOutcome`] for a result type with the fields `host`
/// and `error` and the methods `succeeded` and `code` (and `Default`).
macro_rules! host_outcome {
    ($result:ident) => {
        impl $crate::exec::Outcome for $result {
            fn host(&self) -> &str {
                &self.host
            }

            fn succeeded(&self) -> bool {
                $result::succeeded(self)
            }

            fn code(&self) -> u32 {
                $result::code(self)
            }

            fn error(&self) -> Option<&$crate::exec::HostError> {
                self.error.as_ref()
            }
        }

        impl $crate::window::HostOutcome for $result {
            fn not_started(host: String, why: $crate::exec::StopReason) -> Self {
                $result {
                    host,
                    error: Some($crate::exec::HostError::Cancelled {
                        why,
                        halt: $crate::exec::Halt::NotStarted,
                    }),
                    ..$result::default()
                }
            }
        }
    };
}
pub(crate) use host_outcome;

/// What a run reports to its caller, as far as the window is concerned.
pub(crate) trait HostEvent: Send + 'static {
    /// A host's result.
    type Outcome: HostOutcome;
    /// A host is starting.
    fn started(host: String) -> Self;
    /// A host is done.
    fn done(outcome: Self::Outcome) -> Self;
    /// The result, when this event is a host's end.
    fn into_outcome(self) -> Option<Self::Outcome>;
}

/// How the window goes.
pub(crate) struct WindowOptions {
    /// Most hosts at once.
    pub fanout: usize,
    /// Stop starting hosts after the first failure, and cancel those
    /// running.
    pub fail_fast: bool,
    /// When this turns true, start no more hosts and cancel those running.
    pub stop: Option<watch::Receiver<bool>>,
}

/// Runs `work` for every host, at most `opts.fanout` at a time, calling
/// `progress` for every event (`work` sends its own on the sender it is
/// given; the window sends each host's start and end); returns the results
/// in the hosts' order.
pub(crate) async fn run<E, F, Fut>(
    hosts: Vec<HostSpec>,
    opts: WindowOptions,
    work: F,
    mut progress: impl FnMut(&E),
) -> Vec<E::Outcome>
where
    E: HostEvent,
    F: Fn(HostSpec, mpsc::Sender<E>, Cancel) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = E::Outcome> + Send + 'static,
{
    let (cancel, _) = watch::channel(None);
    let cancel = Arc::new(cancel);
    if let Some(mut stop) = opts.stop {
        let cancel = Arc::clone(&cancel);
        tokio::spawn(async move {
            if stop.wait_for(|s| *s).await.is_ok() {
                cancel.send_replace(Some(StopReason::Interrupted));
            }
        });
    }
    let position: HashMap<String, usize> = hosts
        .iter()
        .enumerate()
        .map(|(i, h)| (h.name.clone(), i))
        .collect();
    let (events, mut received) = mpsc::channel(QUEUED_EVENTS);
    tokio::spawn(feed(
        hosts,
        Slot {
            window: Arc::new(Semaphore::new(opts.fanout.max(1))),
            fail_fast: opts.fail_fast,
            cancel,
            work: Arc::new(work),
            events,
        },
    ));
    let mut done = Vec::with_capacity(position.len());
    while let Some(event) = received.recv().await {
        progress(&event);
        if let Some(outcome) = event.into_outcome() {
            done.push(outcome);
        }
    }
    done.sort_by_key(|r| position.get(r.host()).copied().unwrap_or(usize::MAX));
    done
}

/// What every host's task shares.
struct Slot<E, F> {
    window: Arc<Semaphore>,
    fail_fast: bool,
    cancel: Arc<watch::Sender<Option<StopReason>>>,
    work: Arc<F>,
    events: mpsc::Sender<E>,
}

impl<E, F> Clone for Slot<E, F> {
    fn clone(&self) -> Self {
        Slot {
            window: Arc::clone(&self.window),
            fail_fast: self.fail_fast,
            cancel: Arc::clone(&self.cancel),
            work: Arc::clone(&self.work),
            events: self.events.clone(),
        }
    }
}

/// Starts the hosts in the order given: one feeder takes the window's
/// permits in turn (tasks spawned all at once would race for them).
async fn feed<E, F, Fut>(hosts: Vec<HostSpec>, slot: Slot<E, F>)
where
    E: HostEvent,
    F: Fn(HostSpec, mpsc::Sender<E>, Cancel) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = E::Outcome> + Send + 'static,
{
    for spec in hosts {
        let Ok(permit) = Arc::clone(&slot.window).acquire_owned().await else {
            return;
        };
        let slot = slot.clone();
        tokio::spawn(async move {
            let outcome = one(spec, &slot).await;
            let _ = slot.events.send(E::done(outcome)).await;
            drop(permit);
        });
    }
}

/// One host in its place in the window.
async fn one<E, F, Fut>(spec: HostSpec, slot: &Slot<E, F>) -> E::Outcome
where
    E: HostEvent,
    F: Fn(HostSpec, mpsc::Sender<E>, Cancel) -> Fut,
    Fut: Future<Output = E::Outcome>,
{
    let cancelled = *slot.cancel.borrow();
    if let Some(why) = cancelled {
        return E::Outcome::not_started(spec.name, why);
    }
    let _ = slot.events.send(E::started(spec.name.clone())).await;
    let outcome = (slot.work)(spec, slot.events.clone(), slot.cancel.subscribe()).await;
    // Before the permit goes: the next host must see it.
    if slot.fail_fast && !outcome.succeeded() {
        slot.cancel.send_if_modified(|c| {
            let first = c.is_none();
            if first {
                *c = Some(StopReason::FailFast);
            }
            first
        });
    }
    outcome
}

#[cfg(test)]
#[path = "window_tests.rs"]
mod tests;
