//! Sessions that outlive a crash of their daemon: each session directory
//! holds a small record (owner, name, dialect, host, cwd) rewritten after
//! every call, beside the shell's own exports snapshot. A daemon that takes
//! the lock after one that was killed ends the processes those sessions
//! left (by their marker) and remembers each as lost, so the next call on
//! its name continues it: a new shell with its cwd and exports, and a
//! result that says so. Nothing is run again. A remote session's directory
//! also holds the route it was started with (`route.json`, written once),
//! so that it continues on its host as its caller resolved it, never by
//! the daemon's own files.

use std::os::unix::ffi::OsStringExt;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use tether_shell::{LostSession, Registry, Resume, Session};

use crate::paths::Paths;
use crate::protocol::HostRoute;

/// The record's file name in a session directory.
const RECORD: &str = "session.json";

/// The remote session's route's file name in its directory.
const ROUTE: &str = "route.json";

/// What a session directory says of its session.
#[derive(Debug, Serialize, Deserialize)]
struct Record {
    owner: String,
    name: String,
    dialect: String,
    run_rc_files: bool,
    host: Option<String>,
    /// The last cwd's bytes, hex (any name, UTF-8 or not).
    cwd_hex: Option<String>,
    /// The daemon that wrote it.
    daemon_pid: u32,
    /// The shell's directory on its host (remote sessions).
    #[serde(default)]
    remote_dir: Option<PathBuf>,
    /// Its confinement, kept by its continuation (the record is outside
    /// the fence: the shell cannot rewrite it).
    #[serde(default)]
    confine: tether_confine::Confine,
}

/// Writes `s`'s record when it has none yet (a session's first call may be
/// the one in flight when the daemon dies).
pub fn record_new(s: &Session, owner: &str, name: &str) {
    let path = s.dir().join(RECORD);
    if !written().contains_key(&path) && std::fs::symlink_metadata(&path).is_err() {
        record(s, owner, name);
    }
}

/// Writes (or rewrites) `s`'s record, private to the user. A failure is
/// ignored: the session works on, it only cannot be continued after a
/// crash.
pub fn record(s: &Session, owner: &str, name: &str) {
    let r = Record {
        owner: owner.to_owned(),
        name: name.to_owned(),
        dialect: s.dialect().to_owned(),
        run_rc_files: s.runs_rc_files(),
        host: s.host().map(str::to_owned),
        cwd_hex: s
            .cwd()
            .map(|c| data_encoding::HEXLOWER.encode(&c.as_os_str().to_owned().into_vec())),
        daemon_pid: std::process::id(),
        remote_dir: s.remote_dir().map(Path::to_path_buf),
        confine: s.confine().clone(),
    };
    let Ok(bytes) = serde_json::to_vec(&r) else {
        return;
    };
    // Most calls change nothing in it (the cwd stays): then nothing is
    // read or written (and no inode is made and freed: on a disk mounted
    // with `discard` each freed one costs a synchronous discard).
    let path = s.dir().join(RECORD);
    if written().get(&path).is_some_and(|w| *w == bytes) {
        return;
    }
    let tmp = s.dir().join(format!("{RECORD}.tmp"));
    let _ = std::fs::remove_file(&tmp);
    let saved = tether_shell::private::create_file(&tmp)
        .and_then(|mut f| std::io::Write::write_all(&mut f, &bytes));
    if saved.is_ok() && std::fs::rename(&tmp, &path).is_ok() {
        let mut cache = written();
        // A cache only: a daemon with very many sessions forgets and
        // writes again.
        if cache.len() >= 4096 {
            cache.clear();
        }
        cache.insert(path, bytes);
    }
}

/// Writes the route a remote session was started with, once (a session
/// keeps its route: a later call's is not written). Private to the user
/// like the record; a failure is ignored as the record's is.
pub fn record_route(s: &Session, host: &HostRoute) {
    let path = s.dir().join(ROUTE);
    if std::fs::symlink_metadata(&path).is_ok() {
        return;
    }
    let Ok(bytes) = serde_json::to_vec(host) else {
        return;
    };
    let tmp = s.dir().join(format!("{ROUTE}.tmp"));
    let _ = std::fs::remove_file(&tmp);
    let saved = tether_shell::private::create_file(&tmp)
        .and_then(|mut f| std::io::Write::write_all(&mut f, &bytes));
    if saved.is_ok() {
        let _ = std::fs::rename(&tmp, &path);
    }
}

/// The route a session lost with a killed daemon was started with, by
/// owner and name, as [`gather`] read it.
pub fn lost_route(owner: &str, name: &str) -> Option<HostRoute> {
    lost_routes()
        .get(&(owner.to_owned(), name.to_owned()))
        .cloned()
}

/// The lost sessions' routes. One daemon holds one registry, so they are
/// kept beside it for the daemon's life (a few records, read once).
fn lost_routes()
-> std::sync::MutexGuard<'static, std::collections::HashMap<(String, String), HostRoute>> {
    static ROUTES: std::sync::OnceLock<
        std::sync::Mutex<std::collections::HashMap<(String, String), HostRoute>>,
    > = std::sync::OnceLock::new();
    ROUTES
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|p| p.into_inner())
}

/// The records this daemon wrote last, by path.
fn written() -> std::sync::MutexGuard<'static, std::collections::HashMap<PathBuf, Vec<u8>>> {
    static WRITTEN: std::sync::OnceLock<
        std::sync::Mutex<std::collections::HashMap<PathBuf, Vec<u8>>>,
    > = std::sync::OnceLock::new();
    WRITTEN
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|p| p.into_inner())
}

/// For the daemon that just took the lock: ends what the dead daemon's
/// sessions left running and registers each as lost in `registry` (those
/// of an MCP server that is gone too are dropped). Returns how many were
/// found. The directories themselves are removed afterwards by
/// [`Paths::remove_dead_sessions`].
pub fn gather(paths: &Paths, registry: &Registry) -> usize {
    let dead = paths.dead_sessions();
    for (id, dir) in &dead {
        tether_shell::end_leftovers(id);
        if let Some((r, lost)) = read(dir).filter(|(r, _)| owner_alive(&r.owner)) {
            if let Some(route) = read_private(&dir.join(ROUTE))
                .and_then(|b| serde_json::from_slice::<HostRoute>(&b).ok())
                .filter(|h| r.host.as_deref() == Some(h.name.as_str()))
            {
                lost_routes().insert((r.owner.clone(), r.name.clone()), route);
            }
            registry.add_lost(&r.owner, &r.name, lost);
        }
    }
    dead.len()
}

/// A namespace's owner is alive: the CLI's shared one always; an MCP
/// server's (`mcp-PID`) while that process runs.
pub(crate) fn owner_alive(owner: &str) -> bool {
    match owner.strip_prefix("mcp-").map(str::parse::<u32>) {
        Some(Ok(pid)) => Path::new(&format!("/proc/{pid}")).exists(),
        _ => true,
    }
}

/// The record and exports of the session directory `dir`, read without
/// following symlinks.
fn read(dir: &Path) -> Option<(Record, LostSession)> {
    let r: Record = serde_json::from_slice(&read_private(&dir.join(RECORD))?).ok()?;
    let cwd = r
        .cwd_hex
        .as_ref()
        .and_then(|h| data_encoding::HEXLOWER.decode(h.as_bytes()).ok())
        .map(|b| PathBuf::from(std::ffi::OsString::from_vec(b)));
    let env = r
        .host
        .is_none()
        .then(|| read_private(&dir.join("env")))
        .flatten();
    let notice = format!(
        "tether: the daemon that held this session (pid {}) stopped without closing it (killed or crashed): its shell and everything it ran were ended, and a command in flight then may have run partly; this is a new shell in the last directory{}",
        r.daemon_pid,
        if env.is_some() {
            " with the exported variables of the last command"
        } else if r.host.is_some() {
            " (the host's exports snapshot is not read back: exported variables start afresh)"
        } else {
            ""
        }
    );
    let lost = LostSession {
        dialect: r.dialect.clone(),
        run_rc_files: r.run_rc_files,
        host: r.host.clone(),
        resume: Resume {
            env,
            cwd,
            notice,
            remote_dir: r.remote_dir.clone(),
        },
        confine: r.confine.clone(),
    };
    Some((r, lost))
}

/// A regular file of ours, not a symlink, at most 16 MiB.
pub(crate) fn read_private(path: &Path) -> Option<Vec<u8>> {
    use std::io::Read;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::fcntl::OFlag::O_NOFOLLOW.bits())
        .open(path)
        .ok()?;
    let meta = f.metadata().ok()?;
    if !meta.is_file() || meta.uid() != nix::unistd::getuid().as_raw() {
        return None;
    }
    let mut bytes = Vec::new();
    f.take(16 << 20).read_to_end(&mut bytes).ok()?;
    Some(bytes)
}
