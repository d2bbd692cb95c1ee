//! What one connection's forwards share with its handler: the remote
//! forwards the server was asked for (to hand it the channels it opens),
//! the forwarded connections open now (for `~#`, `~&` and the end of the
//! session), and where lines for the person go.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use tokio::sync::{Notify, Semaphore};
use tokio::task::AbortHandle;

use super::{Place, Say};

/// A remote forward the server accepted.
pub(super) struct RemoteEntry {
    /// Its number, while its request is answered.
    pub id: u64,
    /// The address asked for (`localhost`, `""` for every interface, or
    /// the one given), or the socket path.
    pub listen: Place,
    /// Where its connections go; `None`: SOCKS decides.
    pub target: Option<Place>,
    /// Its connections' permits.
    pub permits: Arc<Semaphore>,
    /// How `~#` names it.
    pub name: String,
}

/// One open forwarded connection.
struct Open {
    line: String,
    task: Option<AbortHandle>,
}

/// Shared by a connection's handler and its [`super::Forwards`].
#[derive(Default)]
pub(crate) struct Registry {
    pub(super) remotes: Mutex<Vec<RemoteEntry>>,
    open: Mutex<BTreeMap<u64, Open>>,
    next: AtomicU64,
    idle: Notify,
    say: Mutex<Option<Say>>,
    /// `PermitRemoteOpen` (`None`: any).
    permits: Mutex<Option<Vec<super::Permit>>>,
}

/// Removes its connection from the registry when the connection's task
/// ends (or is aborted).
pub(super) struct Tracked {
    reg: Arc<Registry>,
    id: u64,
}

impl Drop for Tracked {
    fn drop(&mut self) {
        let empty = self.reg.open.lock().map(|mut o| {
            o.remove(&self.id);
            o.is_empty()
        });
        if empty.unwrap_or(true) {
            self.reg.idle.notify_waiters();
        }
    }
}

impl Registry {
    /// A number for a remote forward.
    pub(super) fn next_remote(&self) -> u64 {
        self.next.fetch_add(1, Ordering::Relaxed)
    }

    pub(super) fn set_permits(&self, permits: Option<Vec<super::Permit>>) {
        if let Ok(mut p) = self.permits.lock() {
            *p = permits;
        }
    }

    /// Whether a dynamic remote forward may connect to `host:port`.
    pub(super) fn may_open(&self, host: &str, port: u16) -> bool {
        self.permits.lock().is_ok_and(|p| {
            p.as_ref()
                .is_none_or(|list| list.iter().any(|e| e.allows(host, port)))
        })
    }

    pub(super) fn set_say(&self, say: Say) {
        if let Ok(mut s) = self.say.lock() {
            *s = Some(say);
        }
    }

    /// Writes one line for the person (nothing before the front-end said
    /// where).
    pub(super) fn say(&self, line: &str) {
        let say = self.say.lock().ok().and_then(|s| s.clone());
        if let Some(say) = say {
            say(line);
        }
    }

    /// Registers a connection; `spawn` runs its task (given the guard to
    /// keep), whose abort handle is kept for [`Registry::close_all`].
    pub(super) fn spawn<F>(self: &Arc<Self>, line: String, task: impl FnOnce(Tracked) -> F)
    where
        F: std::future::Future<Output = ()> + Send + 'static,
    {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        if let Ok(mut o) = self.open.lock() {
            o.insert(id, Open { line, task: None });
        }
        let guard = Tracked {
            reg: Arc::clone(self),
            id,
        };
        let handle = tokio::spawn(task(guard));
        if let Ok(mut o) = self.open.lock()
            && let Some(entry) = o.get_mut(&id)
        {
            entry.task = Some(handle.abort_handle());
        }
    }

    pub(super) fn connections(&self) -> Vec<String> {
        self.open
            .lock()
            .map(|o| {
                o.iter()
                    .map(|(id, c)| format!("#{id} {}", c.line))
                    .collect()
            })
            .unwrap_or_default()
    }

    pub(super) fn open(&self) -> usize {
        self.open.lock().map(|o| o.len()).unwrap_or(0)
    }

    pub(super) async fn idle(&self) {
        loop {
            let notified = self.idle.notified();
            if self.open() == 0 {
                return;
            }
            notified.await;
        }
    }

    /// Closes every forwarded connection and forgets the remote forwards.
    pub(super) fn close_all(&self) {
        let tasks: Vec<AbortHandle> = self
            .open
            .lock()
            .map(|mut o| {
                std::mem::take(&mut *o)
                    .into_values()
                    .filter_map(|c| c.task)
                    .collect()
            })
            .unwrap_or_default();
        for t in tasks {
            t.abort();
        }
        if let Ok(mut r) = self.remotes.lock() {
            r.clear();
        }
        self.idle.notify_waiters();
    }
}
