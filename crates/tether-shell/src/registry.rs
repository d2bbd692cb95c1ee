//! Named sessions with owners: calls on one session run one at a time, in
//! order; different sessions run concurrently; an owner never sees or
//! drives another owner's sessions.

use std::collections::HashMap;
use std::sync::{Arc, Mutex as StdMutex};
use std::time::SystemTime;

use tokio::sync::Mutex;

use crate::control::{Control, Pending};
use crate::error::ShellError;
use crate::live::LiveWatch;
use crate::options::SessionOptions;
use crate::result::ForegroundProgram;
use crate::session::Session;

/// One session as [`Registry::list`] shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionInfo {
    /// Its owner.
    pub owner: String,
    /// The session's name.
    pub name: String,
    /// The host its shell runs on (`None`: this machine).
    pub host: Option<String>,
    /// The dialect.
    pub dialect: &'static str,
    /// The working directory after its last command.
    pub cwd: Option<std::path::PathBuf>,
    /// True while a call holds it.
    pub busy: bool,
    /// When it was created.
    pub created: SystemTime,
    /// When a call last finished on it.
    pub last_used: SystemTime,
    /// The program in the foreground, when it is not the shell.
    pub foreground: Option<ForegroundProgram>,
    /// Its shell was lost with a killed daemon (nothing runs; the next
    /// call continues it).
    pub lost: bool,
    /// Its confinement (`None`: no fence).
    pub confinement: Option<tether_confine::Confinement>,
}

struct Entry {
    session: Arc<Mutex<Session>>,
    control: Control,
    live: LiveWatch,
    created: SystemTime,
    last_used: SystemTime,
    dialect: &'static str,
    host: Option<String>,
    cwd: Option<std::path::PathBuf>,
    confinement: Option<tether_confine::Confinement>,
}

type Key = (String, String);

/// A session whose shell was lost with the daemon that held it (killed,
/// crashed), kept so the next call on its name continues it.
#[derive(Clone, Debug)]
pub struct LostSession {
    /// Its dialect's name.
    pub dialect: String,
    /// Whether it ran the user's start-up files.
    pub run_rc_files: bool,
    /// The host its shell ran on.
    pub host: Option<String>,
    /// What it left: exports, cwd, and the notice for the first result.
    pub resume: crate::options::Resume,
    /// Its confinement, which its continuation keeps.
    pub confine: tether_confine::Confine,
}

/// The sessions of every owner.
pub struct Registry {
    entries: StdMutex<HashMap<Key, Entry>>,
    lost: StdMutex<HashMap<Key, LostSession>>,
    options: SessionOptions,
}

impl std::fmt::Debug for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registry").finish_non_exhaustive()
    }
}

impl Registry {
    /// A registry whose new sessions start with `options`.
    pub fn new(options: SessionOptions) -> Self {
        Registry {
            entries: StdMutex::new(HashMap::new()),
            lost: StdMutex::new(HashMap::new()),
            options,
        }
    }

    /// The registry with `options` for the sessions it starts from now on.
    pub fn with_session_options(mut self, options: SessionOptions) -> Self {
        self.options = options;
        self
    }

    fn entries(&self) -> std::sync::MutexGuard<'_, HashMap<Key, Entry>> {
        self.entries.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn lost_map(&self) -> std::sync::MutexGuard<'_, HashMap<Key, LostSession>> {
        self.lost.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Remembers `owner`'s session `name` as lost: the next call that
    /// starts it continues it (same dialect, exports and cwd restored,
    /// `shell_restarted` and a notice on its first result).
    pub fn add_lost(&self, owner: &str, name: &str, lost: LostSession) {
        self.lost_map()
            .insert((owner.to_owned(), name.to_owned()), lost);
    }

    /// Forgets the lost sessions of owners `keep` refuses (an MCP server
    /// that is gone will not continue its sessions).
    pub fn retain_lost(&self, keep: impl Fn(&str) -> bool) {
        self.lost_map().retain(|(o, _), _| keep(o));
    }

    /// The lost session `owner`'s `name` would continue, if any.
    pub fn lost(&self, owner: &str, name: &str) -> Option<LostSession> {
        self.lost_map()
            .get(&(owner.to_owned(), name.to_owned()))
            .cloned()
    }

    /// `owner`'s session `name`, started on first use.
    pub async fn session(
        &self,
        owner: &str,
        name: &str,
    ) -> Result<Arc<Mutex<Session>>, ShellError> {
        self.session_with(owner, name, None).await
    }

    /// `owner`'s session `name`, started with `options` (or the registry's)
    /// on first use.
    pub async fn session_with(
        &self,
        owner: &str,
        name: &str,
        options: Option<SessionOptions>,
    ) -> Result<Arc<Mutex<Session>>, ShellError> {
        self.session_with_lazy(owner, name, move || options).await
    }

    /// [`Registry::session_with`] with the options made only when the
    /// session is started (a caller's environment is cloned for nothing
    /// on every call otherwise).
    pub async fn session_with_lazy(
        &self,
        owner: &str,
        name: &str,
        options: impl FnOnce() -> Option<SessionOptions>,
    ) -> Result<Arc<Mutex<Session>>, ShellError> {
        let key = (owner.to_owned(), name.to_owned());
        if let Some(e) = self.entries().get(&key) {
            return Ok(Arc::clone(&e.session));
        }
        let mut options = options().unwrap_or_else(|| self.options.clone());
        let lost = self.lost_map().remove(&key);
        if let Some(lost) = lost {
            if let Some(d) = crate::dialect::by_name(&lost.dialect) {
                options.dialect = d;
            }
            options.run_rc_files = lost.run_rc_files;
            options.resume = Some(lost.resume);
            options.confine = lost.confine;
        }
        let session = Session::start(options).await?;
        let dialect = session.dialect();
        let host = session.host().map(str::to_owned);
        let confinement = session.confinement();
        let live = session.live_watch();
        let control = session.control();
        let mut entries = self.entries();
        // Another call may have started it meanwhile: keep the first.
        let entry = entries.entry(key).or_insert_with(|| Entry {
            live,
            control,
            session: Arc::new(Mutex::new(session)),
            created: SystemTime::now(),
            last_used: SystemTime::now(),
            dialect,
            host,
            cwd: None,
            confinement,
        });
        Ok(Arc::clone(&entry.session))
    }

    /// The host of `owner`'s session `name` (`Some(None)`: it is local;
    /// `None`: there is no such session).
    pub fn host_of(&self, owner: &str, name: &str) -> Option<Option<String>> {
        self.entries()
            .get(&(owner.to_owned(), name.to_owned()))
            .map(|e| e.host.clone())
    }

    /// `owner`'s existing session `name`.
    pub fn existing(&self, owner: &str, name: &str) -> Result<Arc<Mutex<Session>>, ShellError> {
        self.entries()
            .get(&(owner.to_owned(), name.to_owned()))
            .map(|e| Arc::clone(&e.session))
            .ok_or_else(|| self.missing(owner, name))
    }

    /// The error for a name with no running session: lost with its
    /// daemon, or unknown.
    fn missing(&self, owner: &str, name: &str) -> ShellError {
        if self.lost(owner, name).is_some() {
            ShellError::Lost(name.to_owned())
        } else {
            ShellError::UnknownSession(name.to_owned())
        }
    }

    /// The control handle of `owner`'s session `name` (signal, reset,
    /// close and a look at the command in flight, without the call lock).
    pub fn control(&self, owner: &str, name: &str) -> Result<Control, ShellError> {
        self.entries()
            .get(&(owner.to_owned(), name.to_owned()))
            .map(|e| e.control.clone())
            .ok_or_else(|| self.missing(owner, name))
    }

    /// The live terminal of `owner`'s session `name`, usable while a call
    /// holds the session.
    pub fn live(&self, owner: &str, name: &str) -> Result<LiveWatch, ShellError> {
        self.entries()
            .get(&(owner.to_owned(), name.to_owned()))
            .map(|e| e.live.clone())
            .ok_or_else(|| self.missing(owner, name))
    }

    /// Runs `f` on `owner`'s session `name` (started on first use), after
    /// every earlier call on it.
    pub async fn with<T>(
        &self,
        owner: &str,
        name: &str,
        f: impl AsyncFnOnce(&mut Session) -> Result<T, ShellError>,
    ) -> Result<T, ShellError> {
        self.with_options(owner, name, None, f).await
    }

    /// [`Registry::with`], starting a missing session with `options`.
    pub async fn with_options<T>(
        &self,
        owner: &str,
        name: &str,
        options: Option<SessionOptions>,
        f: impl AsyncFnOnce(&mut Session) -> Result<T, ShellError>,
    ) -> Result<T, ShellError> {
        self.with_lazy_options(owner, name, move || options, f)
            .await
    }

    /// [`Registry::with_options`] with the options made only when the
    /// session is started.
    pub async fn with_lazy_options<T>(
        &self,
        owner: &str,
        name: &str,
        options: impl FnOnce() -> Option<SessionOptions>,
        f: impl AsyncFnOnce(&mut Session) -> Result<T, ShellError>,
    ) -> Result<T, ShellError> {
        let session = self.session_with_lazy(owner, name, options).await?;
        let mut guard = session.lock().await;
        let out = f(&mut guard).await;
        let cwd = guard.cwd().map(std::path::Path::to_path_buf);
        drop(guard);
        if let Some(e) = self.entries().get_mut(&(owner.to_owned(), name.to_owned())) {
            e.last_used = SystemTime::now();
            e.cwd = cwd;
        }
        out
    }

    /// `owner`'s sessions, by name.
    pub fn list(&self, owner: &str) -> Vec<SessionInfo> {
        self.list_where(|o| o == owner)
    }

    /// Every owner's sessions, by owner and name.
    pub fn list_all(&self) -> Vec<SessionInfo> {
        self.list_where(|_| true)
    }

    fn list_where(&self, keep: impl Fn(&str) -> bool) -> Vec<SessionInfo> {
        let mut list: Vec<SessionInfo> = self
            .entries()
            .iter()
            .filter(|((o, _), _)| keep(o))
            .map(|((owner, name), e)| SessionInfo {
                owner: owner.clone(),
                name: name.clone(),
                host: e.host.clone(),
                dialect: e.dialect,
                cwd: e.cwd.clone(),
                busy: e.session.try_lock().is_err(),
                created: e.created,
                last_used: e.last_used,
                foreground: e.live.borrow().foreground(),
                lost: false,
                confinement: e.confinement.clone(),
            })
            .collect();
        let now = SystemTime::now();
        list.extend(self.lost_map().iter().filter(|((o, _), _)| keep(o)).map(
            |((owner, name), l)| SessionInfo {
                owner: owner.clone(),
                name: name.clone(),
                host: l.host.clone(),
                dialect: crate::dialect::by_name(&l.dialect).map_or("sh", |d| d.name()),
                cwd: l.resume.cwd.clone(),
                busy: false,
                created: now,
                last_used: now,
                foreground: None,
                lost: true,
                confinement: l.confine.report(Vec::new(), None),
            },
        ));
        list.sort_by(|a, b| (&a.owner, &a.name).cmp(&(&b.owner, &b.name)));
        list
    }

    /// True when no owner has a session (running or lost).
    pub fn is_empty(&self) -> bool {
        self.entries().is_empty() && self.lost_map().is_empty()
    }

    /// Ends every session of `owner`, all at once (and forgets its lost
    /// ones).
    pub async fn close_owner(&self, owner: &str) {
        self.lost_map().retain(|(o, _), _| o != owner);
        let closing = self
            .list(owner)
            .into_iter()
            .map(|info| async move { self.close(owner, &info.name).await });
        futures_join_all(closing).await;
    }

    /// Ends every session, all at once.
    pub async fn close_all(&self) {
        let closing = self
            .list_all()
            .into_iter()
            .map(|info| async move { self.close(&info.owner, &info.name).await });
        futures_join_all(closing).await;
    }

    /// Ends `owner`'s session `name`: kills its process tree and removes
    /// its files. A call in flight returns at once (`closed`), and calls
    /// queued behind it are refused.
    pub async fn close(&self, owner: &str, name: &str) -> Result<(), ShellError> {
        let key = (owner.to_owned(), name.to_owned());
        if self.lost_map().remove(&key).is_some() && !self.entries().contains_key(&key) {
            return Ok(());
        }
        let entry = self
            .entries()
            .remove(&key)
            .ok_or_else(|| ShellError::UnknownSession(name.to_owned()))?;
        entry.control.request(Pending::Close);
        entry.session.lock().await.shut_down().await;
        drop(entry);
        Ok(())
    }
}

/// Runs every future to its end, concurrently on this task. (Ours rather
/// than the `futures` crate's `join_all`: one small function, no new
/// dependency.)
async fn futures_join_all<F: std::future::Future>(futures: impl IntoIterator<Item = F>) {
    let mut set: Vec<std::pin::Pin<Box<F>>> = futures.into_iter().map(Box::pin).collect();
    std::future::poll_fn(|cx| {
        set.retain_mut(|f| f.as_mut().poll(cx).is_pending());
        if set.is_empty() {
            std::task::Poll::Ready(())
        } else {
            std::task::Poll::Pending
        }
    })
    .await;
}
