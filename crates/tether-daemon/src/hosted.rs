//! The sessions that live in a host's own tether daemon, as this daemon
//! knows them: each one's address here, the route to its host, and the
//! call a lost link cut (whose result is asked for again, never the
//! command run again). The book is kept on disk in the private directory
//! (`hosted/`, one 0600 file per session), so a daemon started after a
//! crash finds the sessions on their hosts at the next request.
//!
//! It keeps, too, on the host's side, the last result of each named call
//! (`run` with `call`) per session, so a relay whose link dropped between
//! the command's end and its reply gets that reply again (`recall`).

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Mutex;

use serde::{Deserialize, Serialize};
use tether_shell::private::PrivateDir;

use crate::ops::Address;
use crate::protocol::{HostRoute, SessionEntry, SessionState, ShellResult};

/// One session living on a host.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct Hosted {
    /// Its namespace here ("" is the CLI's shared one) and on the host.
    pub owner: String,
    /// Its name here and on the host.
    pub name: String,
    /// How to reach its host.
    pub host: HostRoute,
    /// A call whose reply a lost link cut: the next look at the session
    /// asks the host for that call's result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cut: Option<String>,
    /// What the cut call's lost result already gave (its length and
    /// digest), taken off the front of that call's result when it comes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub given: Option<crate::relay_lost::Given>,
    /// Unix time this daemon first sent it a command.
    #[serde(default)]
    pub created: u64,
    /// The host as the provider gave it, held while the session is known
    /// here: its pooled connection (and what was learned on it: tether
    /// found and checked there) stays for the next request.
    #[serde(skip)]
    pub link: Option<std::sync::Arc<dyn tether_transport::RemoteHost>>,
}

impl Hosted {
    pub(crate) fn address(&self) -> Address {
        Address {
            owner: self.owner.clone(),
            name: self.name.clone(),
        }
    }
}

/// The sessions on hosts, by address, with their files.
#[derive(Debug, Default)]
pub(crate) struct HostedBook {
    /// `hosted/` in the private directory (`None`: kept in memory only,
    /// for tests).
    dir: Option<PathBuf>,
    map: Mutex<HashMap<Address, Hosted>>,
    /// Sessions served here because their host is agentless, and why.
    agentless: Mutex<HashMap<Address, String>>,
}

/// The file of an address: its parts hex-encoded (any name is a safe
/// file name so).
fn file_name(a: &Address) -> String {
    let hex = |s: &str| s.bytes().map(|b| format!("{b:02x}")).collect::<String>();
    format!("{}-{}.json", hex(&a.owner), hex(&a.name))
}

impl HostedBook {
    /// The book kept in `dir/hosted`, read back (files that are not ours
    /// and private, or not a record, are skipped).
    pub(crate) fn open(dir: &PrivateDir) -> HostedBook {
        let Ok(hosted) = dir.dir("hosted") else {
            eprintln!(
                "tether daemon: cannot keep the book of host sessions; they end with this daemon's knowledge of them"
            );
            return HostedBook::default();
        };
        let path = hosted.path().to_path_buf();
        let mut map = HashMap::new();
        for entry in std::fs::read_dir(&path).into_iter().flatten().flatten() {
            let p = entry.path();
            if p.extension().is_none_or(|e| e != "json") {
                continue;
            }
            let Some(bytes) = crate::recover::read_private(&p) else {
                continue;
            };
            if let Ok(h) = serde_json::from_slice::<Hosted>(&bytes) {
                map.insert(h.address(), h);
            }
        }
        HostedBook {
            dir: Some(path),
            map: Mutex::new(map),
            agentless: Mutex::default(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<Address, Hosted>> {
        self.map.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The session at `a`, if it lives on a host.
    pub(crate) fn get(&self, a: &Address) -> Option<Hosted> {
        self.lock().get(a).cloned()
    }

    /// Every session on a host, of every namespace.
    pub(crate) fn all(&self) -> Vec<Hosted> {
        self.lock().values().cloned().collect()
    }

    /// The listing's entries of the sessions on hosts, of namespace `ns`
    /// (of all with `all`).
    pub(crate) fn entries(&self, ns: &str, all: bool) -> Vec<SessionEntry> {
        let mut list: Vec<SessionEntry> = self
            .lock()
            .values()
            .filter(|h| all || h.owner == ns)
            .map(|h| SessionEntry {
                name: h.name.clone(),
                namespace: (!h.owner.is_empty()).then(|| h.owner.clone()),
                address: h.address().display(),
                host: Some(h.host.name.clone()),
                dialect: String::new(),
                cwd: None,
                state: SessionState::OnHost,
                foreground: None,
                attached: 0,
                created: h.created,
                last_used: h.created,
                confinement: None,
            })
            .collect();
        list.sort_by(|a, b| a.address.cmp(&b.address));
        list
    }

    /// Records (or rewrites) `h`.
    pub(crate) fn put(&self, h: Hosted) {
        self.save(&h);
        self.lock().insert(h.address(), h);
    }

    /// Holds `host` for `a` (see [`Hosted::link`]).
    pub(crate) fn hold(
        &self,
        a: &Address,
        host: &std::sync::Arc<dyn tether_transport::RemoteHost>,
    ) {
        if let Some(h) = self.lock().get_mut(a)
            && h.link.is_none()
        {
            h.link = Some(std::sync::Arc::clone(host));
        }
    }

    /// Marks the call `cut` of `a` (or clears it), nothing given.
    pub(crate) fn set_cut(&self, a: &Address, cut: Option<String>) {
        self.set_cut_given(a, cut, None);
    }

    /// Marks the call `cut` of `a` (or clears it), and what its lost
    /// result gave (`given`).
    pub(crate) fn set_cut_given(
        &self,
        a: &Address,
        cut: Option<String>,
        given: Option<crate::relay_lost::Given>,
    ) {
        let changed = {
            let mut map = self.lock();
            match map.get_mut(a) {
                Some(h) if h.cut != cut || h.given != given => {
                    h.cut = cut;
                    h.given = given;
                    Some(h.clone())
                }
                _ => None,
            }
        };
        if let Some(h) = changed {
            self.save(&h);
        }
    }

    /// Notes that `a` is served here because its host is agentless.
    pub(crate) fn set_agentless(&self, a: Address, why: String) {
        if let Ok(mut m) = self.agentless.lock() {
            m.insert(a, why);
        }
    }

    /// Why `a`'s host is agentless, if it is.
    pub(crate) fn agentless(&self, a: &Address) -> Option<String> {
        self.agentless.lock().ok()?.get(a).cloned()
    }

    /// Forgets `a` (closed on its host).
    pub(crate) fn remove(&self, a: &Address) {
        self.lock().remove(a);
        if let Some(dir) = &self.dir {
            let _ = std::fs::remove_file(dir.join(file_name(a)));
        }
    }

    /// Writes `h`'s file: a private temporary, renamed over the old one.
    /// A failure is said in the log; the book in memory still serves.
    fn save(&self, h: &Hosted) {
        let Some(dir) = &self.dir else {
            return;
        };
        let Ok(bytes) = serde_json::to_vec(h) else {
            return;
        };
        let name = file_name(&h.address());
        let tmp = dir.join(format!("{name}.tmp"));
        let _ = std::fs::remove_file(&tmp);
        let saved = tether_shell::private::create_file(&tmp)
            .and_then(|mut f| std::io::Write::write_all(&mut f, &bytes))
            .and_then(|()| std::fs::rename(&tmp, dir.join(&name)));
        if let Err(e) = saved {
            eprintln!(
                "tether daemon: cannot keep the record of host session {}: {e}",
                h.address().display()
            );
        }
    }
}

/// On a host: the last result of each session's named call.
#[derive(Debug, Default)]
pub(crate) struct Recalls {
    map: Mutex<HashMap<Address, (String, ShellResult)>>,
}

impl Recalls {
    /// Keeps `result` as call `call`'s of `a` (replacing the one before).
    pub(crate) fn keep(&self, a: Address, call: String, result: ShellResult) {
        if let Ok(mut m) = self.map.lock() {
            m.insert(a, (call, result));
        }
    }

    /// Call `call`'s result of `a`, if kept.
    pub(crate) fn get(&self, a: &Address, call: &str) -> Option<ShellResult> {
        let m = self.map.lock().ok()?;
        m.get(a).filter(|(c, _)| c == call).map(|(_, r)| r.clone())
    }
}

/// Serves a `recall` on the host: the call's kept result; while the call
/// is still in flight (its relay's link dropped unseen here), its result
/// once it ends, within `wait_s`; else (its client went away and left the
/// command running, or nothing was kept) a `read`.
pub(crate) async fn recall(
    state: &crate::server::State,
    ns: &str,
    session: String,
    call: String,
    wait_s: f64,
) -> Result<crate::protocol::Response, crate::protocol::Failure> {
    let address = crate::ops::resolve(ns, &session)?;
    let wait = crate::ops::seconds("wait_s", wait_s)?;
    let deadline = std::time::Instant::now() + wait;
    loop {
        if let Some(mut r) = state.recalls.get(&address, &call) {
            r.session = session;
            return Ok(crate::protocol::Response::Shell(r));
        }
        let held = state
            .registry
            .existing(&address.owner, &address.name)
            .is_ok_and(|s| s.try_lock().is_err());
        if !held || std::time::Instant::now() >= deadline {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let left = deadline.saturating_duration_since(std::time::Instant::now());
    crate::ops::handle(
        &state.registry,
        &state.base,
        state.hosts.as_ref(),
        ns,
        crate::protocol::Request::Read {
            session,
            wait_s: left.as_secs_f64(),
        },
    )
    .await
}
