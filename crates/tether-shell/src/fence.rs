//! A confined session's shell in its fence (issue 27, `tether-confine`):
//! the shell's command line wrapped in bubblewrap's, for a local shell.
//! The session's own directory stays visible but read-only inside, except
//! for the files the shell writes there (its exports and traps) and its
//! temp directory; the rest of tether's runtime directory (other sessions,
//! the daemon's socket) is hidden. A remote shell asked to be confined is
//! refused, never run unconfined.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use tether_confine::{Confine, Doors, Fence, Mode, ModeName, PROXY_ADDR};

use crate::error::ShellError;
use crate::options::SessionOptions;

/// The files the shell writes in its directory (the dialects' snapshot
/// and traps), each bound writable into the fence.
const SHELL_WRITES: &[&str] = &["env", "traps"];

/// The session's temp directory's name in its directory.
pub(crate) const TEMP: &str = "tmp";

/// What the terminal is told to start.
pub(crate) struct Wrapped {
    pub(crate) program: String,
    pub(crate) args: Vec<String>,
    /// `TMPDIR` for the shell, when confined.
    pub(crate) env: Vec<(String, String)>,
    /// The program is bubblewrap, a launcher (see `tether_pty::SpawnSpec`).
    pub(crate) launcher: bool,
}

/// `program` with `args` as the terminal starts it for `opts`'s
/// confinement, the shell's files in `dir`.
pub(crate) fn wrap(
    opts: &SessionOptions,
    remote: bool,
    dir: &Path,
    program: String,
    args: Vec<String>,
) -> Result<Wrapped, ShellError> {
    let confine = &opts.confine;
    if confine.is_none() {
        return Ok(Wrapped {
            program,
            args,
            env: Vec::new(),
            launcher: false,
        });
    }
    if remote {
        return Err(ShellError::ConfinedRemote(confine.mode.name()));
    }
    let temp = dir.join(TEMP);
    crate::private::ensure_dir(&temp)?;
    for name in SHELL_WRITES {
        let path = dir.join(name);
        if std::fs::symlink_metadata(&path).is_err() {
            crate::private::write_file(&path, b"")?;
        }
    }
    let fence = fence(confine, opts, dir, &temp)?;
    let helper = opts
        .confine_helper
        .as_ref()
        .ok_or(tether_confine::ConfineError::NoHelper)?;
    let mut inner: Vec<OsString> = vec!["confine-exec".into()];
    let writable = writable_roots(confine)
        .into_iter()
        .chain(std::iter::once(temp.clone()));
    for p in writable.chain(SHELL_WRITES.iter().map(|n| dir.join(n))) {
        inner.push("--write".into());
        inner.push(p.into_os_string());
    }
    inner.push("--abi".into());
    inner.push(confine.landlock_abi.unwrap_or(6).to_string().into());
    if confine.best_effort {
        inner.push("--best-effort".into());
    }
    for socket in &confine.unix_sockets {
        inner.push("--unix".into());
        inner.push(socket.clone().into_os_string());
    }
    inner.push("--report".into());
    inner.push(dir.join(REPORT_SOCKET).into_os_string());
    let mut env = vec![("TMPDIR".to_owned(), temp.display().to_string())];
    if !confine.allow_net.is_empty() {
        inner.push("--forward".into());
        inner.push(dir.join(PROXY_SOCKET).into_os_string());
        let http = format!("http://{PROXY_ADDR}");
        let socks = format!("socks5h://{PROXY_ADDR}");
        for (k, v) in [
            ("HTTP_PROXY", &http),
            ("HTTPS_PROXY", &http),
            ("http_proxy", &http),
            ("https_proxy", &http),
            ("ALL_PROXY", &socks),
            ("all_proxy", &socks),
        ] {
            env.push((k.to_owned(), v.clone()));
        }
    }
    inner.push("--".into());
    inner.push(program.into());
    inner.extend(args.into_iter().map(OsString::from));
    let (bwrap, args) = fence.command(helper, &inner)?;
    let text = |s: OsString| s.into_string().map_err(|s| confine_err(PathBuf::from(s)));
    Ok(Wrapped {
        program: text(bwrap.into_os_string())?,
        args: args.into_iter().map(text).collect::<Result<_, _>>()?,
        env,
        launcher: true,
    })
}

fn confine_err(p: PathBuf) -> ShellError {
    ShellError::Confine(tether_confine::ConfineError::Unusable(p))
}

/// The fence of a local session: the mode's roots (by default the
/// session's starting directory), the deny list and the doors (from the
/// session's own environment), tether's runtime directory hidden but the
/// session's own directory.
fn fence(
    confine: &Confine,
    opts: &SessionOptions,
    dir: &Path,
    temp: &Path,
) -> Result<Fence, ShellError> {
    let var = |k: &str| {
        opts.base_env
            .iter()
            .find(|(n, _)| n == k)
            .map(|(_, v)| PathBuf::from(v))
            .filter(|p| p.is_absolute())
    };
    let doors = Doors {
        home: var("HOME"),
        runtime_dir: var("XDG_RUNTIME_DIR"),
        agent: var("SSH_AUTH_SOCK"),
    };
    let writable = match confine.mode {
        ModeName::None | ModeName::ReadOnly => Vec::new(),
        ModeName::Workspace => roots(confine, opts),
    };
    if let Some(home) = &doors.home
        && writable
            .iter()
            .any(|r| home.starts_with(r) && r.parent().is_some())
    {
        return Err(tether_confine::ConfineError::WholeHome(home.clone()).into());
    }
    let mode = match confine.mode {
        ModeName::None | ModeName::ReadOnly => Mode::ReadOnly,
        ModeName::Workspace => Mode::Workspace {
            roots: writable.clone(),
        },
    };
    let mut fence = Fence::new(mode, temp)?;
    for p in confine.read_only.iter().chain(&doors.kept(&writable)) {
        fence = fence.read_only(p)?;
    }
    // The base of every session's directory (`BASE/sessions/ID`).
    let base = dir.parent().and_then(Path::parent).map(Path::to_path_buf);
    let hidden = doors
        .hidden()
        .into_iter()
        .chain(confine.deny.iter().cloned());
    for p in hidden.chain(opts.hide.iter().cloned()).chain(base) {
        fence = fence.hide(&p)?;
    }
    fence = fence.show(dir)?;
    // The sockets allowed by path, shown again where they were hidden
    // (Landlock, in confine-exec, refuses every other one).
    for socket in &confine.unix_sockets {
        if !is_socket(socket) {
            return Err(tether_confine::ConfineError::NotASocket(socket.clone()).into());
        }
        fence = fence.show(socket)?;
    }
    for name in SHELL_WRITES {
        fence = fence.writable(&dir.join(name))?;
    }
    Ok(fence)
}

/// True when `path` is absolute and a Unix socket.
fn is_socket(path: &Path) -> bool {
    use std::os::unix::fs::FileTypeExt;
    path.is_absolute() && std::fs::metadata(path).is_ok_and(|m| m.file_type().is_socket())
}

/// The proxy's socket in the session's directory.
pub(crate) const PROXY_SOCKET: &str = "proxy.sock";

/// The socket in the session's directory where `confine-exec` reports
/// what the kernel enforced (`tether_confine::Enforced`).
pub(crate) const REPORT_SOCKET: &str = "fence.sock";

/// The writable roots of a mode (none for `read-only`).
fn writable_roots(confine: &Confine) -> Vec<PathBuf> {
    match confine.mode {
        ModeName::Workspace => confine.roots.clone(),
        _ => Vec::new(),
    }
}

/// What listens outside the fence for a confined session while it lives:
/// the socket its shells report on, and its allowlist's proxy.
#[derive(Debug)]
pub(crate) struct Listening {
    _report: tether_confine::ReportListener,
    _proxy: Option<tether_confine::Proxy>,
}

/// Starts, for a confined session (`fenced`), the report's listener and
/// the proxy of `confine`'s network allowlist if it has one, on sockets
/// in the session's directory.
pub(crate) fn listen(
    confine: &Confine,
    dir: &Path,
    fenced: Option<&Fenced>,
) -> Result<Option<Listening>, ShellError> {
    let Some(fenced) = fenced else {
        return Ok(None);
    };
    let path = dir.join(REPORT_SOCKET);
    let report = tether_confine::ReportListener::start(&path, Arc::clone(&fenced.enforced))
        .map_err(|source| tether_confine::ConfineError::Report { path, source })?;
    let proxy = if confine.allow_net.is_empty() {
        None
    } else {
        let allow = tether_confine::Allowlist::new(&confine.allow_net)
            .map_err(tether_confine::ConfineError::BadAllow)?;
        let path = dir.join(PROXY_SOCKET);
        let denied = Arc::clone(&fenced.denied);
        let proxy = tether_confine::Proxy::start(&path, allow, denied)
            .map_err(|source| tether_confine::ConfineError::Proxy { path, source })?;
        Some(proxy)
    };
    Ok(Some(Listening {
        _report: report,
        _proxy: proxy,
    }))
}

/// The writable roots: those asked, else the starting directory.
pub(crate) fn roots(confine: &Confine, opts: &SessionOptions) -> Vec<PathBuf> {
    if !confine.roots.is_empty() {
        return confine.roots.clone();
    }
    opts.cwd
        .clone()
        .or_else(|| std::env::current_dir().ok())
        .into_iter()
        .collect()
}

/// A confined session's report, shared by its session and its live
/// handle: what it was asked, and what the fence refused since the last
/// result (the proxy adds to it).
#[derive(Debug)]
pub(crate) struct Fenced {
    confine: Confine,
    denied: Arc<std::sync::Mutex<Vec<String>>>,
    /// What the kernel enforced, as the last shell's fence reported it.
    enforced: tether_confine::Reported,
}

impl Fenced {
    /// The report of `confine` (roots resolved), `None` for no fence.
    pub(crate) fn new(confine: &Confine) -> Option<Arc<Fenced>> {
        (!confine.is_none()).then(|| {
            Arc::new(Fenced {
                confine: confine.clone(),
                denied: Default::default(),
                enforced: Default::default(),
            })
        })
    }

    fn enforced(&self) -> Option<tether_confine::Enforced> {
        match self.enforced.lock() {
            Ok(e) => e.clone(),
            Err(p) => p.into_inner().clone(),
        }
    }

    /// The confinement for a result, taking what was refused meanwhile.
    pub(crate) fn report(&self) -> Option<tether_confine::Confinement> {
        let denied = match self.denied.lock() {
            Ok(mut d) => std::mem::take(&mut *d),
            Err(p) => std::mem::take(&mut *p.into_inner()),
        };
        self.confine.report(denied, self.enforced())
    }

    /// The confinement as a listing shows it (nothing taken).
    pub(crate) fn listed(&self) -> Option<tether_confine::Confinement> {
        self.confine.report(Vec::new(), self.enforced())
    }
}
