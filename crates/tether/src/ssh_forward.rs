//! The forwarding side of `tether ssh`: `-L`, `-R`, `-D`, `-W`, `-N`,
//! `-f`, `-g` and the `-o`/ssh_config keys `LocalForward`,
//! `RemoteForward`, `DynamicForward`, `GatewayPorts`,
//! `ExitOnForwardFailure` and `ClearAllForwardings` gathered into one
//! [`Plan`]; the forwards set up on the connection ([`setup`]); and `-f`:
//! tether runs itself again, detached, and returns once that copy has
//! connected and set up its forwards ([`background`], [`ready`]).

use std::io::{IsTerminal, Read, Write};
use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use tether_ssh::config::HostConfig;
use tether_ssh::forward::{ForwardKind, ForwardSpec, Forwards, Place};

use crate::cli::SshCmdArgs;

/// The environment variable naming the socket a background copy (`-f`)
/// reports "ready" on.
const READY_ENV: &str = "TETHER_SSH_FORK_READY";

/// The `-o` keys read here (lower case); the others go to `ssh_opts`.
const KEYS: &[&str] = &[
    "localforward",
    "remoteforward",
    "dynamicforward",
    "gatewayports",
    "exitonforwardfailure",
    "clearallforwardings",
    "sessiontype",
    "forkafterauthentication",
    "permitremoteopen",
    "streamlocalbindmask",
    "streamlocalbindunlink",
];

/// What to forward and how.
#[derive(Debug, Default)]
pub struct Plan {
    /// The forwards, command line first, then ssh_config.
    pub specs: Vec<ForwardSpec>,
    /// `GatewayPorts`.
    pub gateway_ports: bool,
    /// `ExitOnForwardFailure`.
    pub exit_on_failure: bool,
    /// `-W`: stdin and stdout to this place, no session.
    pub stdio: Option<Place>,
    /// `-N`, `SessionType none`: no command, no shell.
    pub no_command: bool,
    /// `-f`, `ForkAfterAuthentication`.
    pub background: bool,
    /// `PermitRemoteOpen` (`None`: any).
    pub permit_remote_open: Option<Vec<tether_ssh::forward::Permit>>,
    /// `StreamLocalBindMask`.
    pub bind_mask: u32,
    /// `StreamLocalBindUnlink`.
    pub bind_unlink: bool,
    /// `ClearAllForwardings` (and `-W`, which implies it).
    pub clear_all: bool,
}

/// What `-G` prints for the forwarding keys this plan decided (the flags
/// and `-o` included, which ssh_config's values do not show).
pub fn shown(plan: &Plan) -> Vec<(&'static str, String)> {
    let yes = |b: bool| if b { "yes" } else { "no" }.to_owned();
    vec![
        ("clearallforwardings", yes(plan.clear_all)),
        ("exitonforwardfailure", yes(plan.exit_on_failure)),
        ("gatewayports", yes(plan.gateway_ports)),
        (
            "sessiontype",
            if plan.no_command || plan.stdio.is_some() {
                "none"
            } else {
                "default"
            }
            .to_owned(),
        ),
        ("forkafterauthentication", yes(plan.background)),
    ]
}

/// The `-o` forwarding keys of the command line, taken out of `options`
/// (the first value of each setting wins, as in ssh).
#[derive(Debug, Default)]
pub struct FromOptions {
    specs: Vec<ForwardSpec>,
    gateway_ports: Option<bool>,
    exit_on_failure: Option<bool>,
    clear_all: Option<bool>,
    session_none: Option<bool>,
    fork: Option<bool>,
    permit_remote_open: Option<Vec<String>>,
    bind_mask: Option<u32>,
    bind_unlink: Option<bool>,
}

fn yes_no(key: &str, v: &str) -> Result<bool> {
    match v.to_ascii_lowercase().as_str() {
        "yes" | "true" => Ok(true),
        "no" | "false" => Ok(false),
        _ => bail!("{key} must be yes or no, got {v:?}"),
    }
}

fn spec(kind: ForwardKind, s: &str) -> Result<ForwardSpec> {
    ForwardSpec::parse(kind, s).map_err(|e| anyhow::anyhow!("{e}"))
}

/// Takes the forwarding `-o` keys out of `options`.
pub fn take_options(options: &mut Vec<String>) -> Result<FromOptions> {
    let mut out = FromOptions::default();
    let mut rest = Vec::new();
    for o in options.drain(..) {
        let Some((key, value)) = crate::ssh_opts::split_option(&o) else {
            rest.push(o);
            continue;
        };
        let k = key.to_ascii_lowercase();
        if !KEYS.contains(&k.as_str()) {
            rest.push(o);
            continue;
        }
        let joined = value.split_whitespace().collect::<Vec<_>>().join(":");
        match k.as_str() {
            "localforward" => out.specs.push(spec(ForwardKind::Local, &joined)?),
            "remoteforward" => out.specs.push(spec(ForwardKind::Remote, &joined)?),
            "dynamicforward" => out.specs.push(spec(ForwardKind::Dynamic, &joined)?),
            "gatewayports" => {
                let v = yes_no(key, value)?;
                out.gateway_ports.get_or_insert(v);
            }
            "exitonforwardfailure" => {
                let v = yes_no(key, value)?;
                out.exit_on_failure.get_or_insert(v);
            }
            "sessiontype" => {
                let v = match value.to_ascii_lowercase().as_str() {
                    "none" => true,
                    "default" => false,
                    _ => bail!(
                        "-o {key}={value}: tether does not start subsystems; use none or default"
                    ),
                };
                out.session_none.get_or_insert(v);
            }
            "forkafterauthentication" => {
                let v = yes_no(key, value)?;
                out.fork.get_or_insert(v);
            }
            "streamlocalbindmask" => {
                let m = u32::from_str_radix(value, 8)
                    .ok()
                    .filter(|m| *m <= 0o777)
                    .with_context(|| {
                        format!("-o {key}={value}: give an octal mask such as 0177")
                    })?;
                out.bind_mask.get_or_insert(m);
            }
            "streamlocalbindunlink" => {
                let v = yes_no(key, value)?;
                out.bind_unlink.get_or_insert(v);
            }
            "permitremoteopen" => {
                out.permit_remote_open
                    .get_or_insert_with(|| value.split_whitespace().map(str::to_owned).collect());
            }
            _ => {
                let v = yes_no(key, value)?;
                out.clear_all.get_or_insert(v);
            }
        }
    }
    *options = rest;
    Ok(out)
}

/// The plan: the flags, then `-o`, then ssh_config (`cfg`).
pub fn plan(args: &SshCmdArgs, o: FromOptions, cfg: &HostConfig) -> Result<Plan> {
    let mut specs = Vec::new();
    for (kind, list) in [
        (ForwardKind::Local, &args.local_forward),
        (ForwardKind::Remote, &args.remote_forward),
        (ForwardKind::Dynamic, &args.dynamic_forward),
    ] {
        for s in list {
            specs.push(spec(kind, s)?);
        }
    }
    specs.extend(o.specs);
    for (kind, list) in [
        (ForwardKind::Local, &cfg.local_forward),
        (ForwardKind::Remote, &cfg.remote_forward),
        (ForwardKind::Dynamic, &cfg.dynamic_forward),
    ] {
        for s in list {
            specs.push(spec(kind, s).context("in ssh_config")?);
        }
    }
    let stdio = args
        .stdio_forward
        .as_deref()
        .map(|w| match tether_ssh::forward::parse_listen(w) {
            Ok(p @ Place::Unix(_)) => Ok(p),
            Ok(p @ Place::Tcp { host: Some(_), .. }) => Ok(p),
            _ => {
                bail!("-W {w:?}: write host:port (an IPv6 address in [brackets]) or a socket path")
            }
        })
        .transpose()?;
    // -W: both default to yes, as in ssh; `-o` and ssh_config still say.
    let clear = o
        .clear_all
        .or(cfg.clear_all_forwardings)
        .unwrap_or(stdio.is_some());
    if clear {
        specs.clear();
    }
    Ok(Plan {
        clear_all: clear,
        specs,
        gateway_ports: args.gateway_ports || o.gateway_ports.or(cfg.gateway_ports).unwrap_or(false),
        exit_on_failure: o
            .exit_on_failure
            .or(cfg.exit_on_forward_failure)
            .unwrap_or(stdio.is_some()),
        permit_remote_open: match o.permit_remote_open.or(cfg.permit_remote_open.clone()) {
            Some(words) => tether_ssh::forward::Permit::parse_list(&words)
                .map_err(|e| anyhow::anyhow!("{e}"))?,
            None => None,
        },
        bind_mask: o
            .bind_mask
            .or(cfg.stream_local_bind_mask)
            .unwrap_or(tether_ssh::forward::DEFAULT_BIND_MASK),
        bind_unlink: o
            .bind_unlink
            .or(cfg.stream_local_bind_unlink)
            .unwrap_or(false),
        stdio,
        no_command: args.no_command || o.session_none.or(cfg.session_none).unwrap_or(false),
        background: args.background || o.fork.or(cfg.fork_after_authentication).unwrap_or(false),
    })
}

/// A line for the person on stderr: `\r\n` where stderr is a terminal
/// (it may be in raw mode during a session).
pub fn say(line: &str) {
    let end = if std::io::stderr().is_terminal() {
        "\r\n"
    } else {
        "\n"
    };
    let _ = write!(std::io::stderr().lock(), "{line}{end}");
}

/// Sets up every forward of `plan`. A forward that fails is one line; with
/// ExitOnForwardFailure the first failure is an error (the caller exits
/// 255 before any session starts).
pub async fn setup(forwards: &Forwards, plan: &Plan) -> Result<()> {
    for s in &plan.specs {
        match forwards.add(s).await {
            Ok(added) => {
                if let (Some(port), ForwardKind::Remote) = (added.allocated, s.kind) {
                    let to = s
                        .target
                        .as_ref()
                        .map_or_else(|| "socks".to_owned(), ToString::to_string);
                    say(&format!("Allocated port {port} for remote forward to {to}"));
                } else if let Some(port) = added.allocated {
                    say(&format!("Allocated port {port} for {s}"));
                }
            }
            Err(e) if plan.exit_on_failure => {
                bail!("{e} (ExitOnForwardFailure: not going on)")
            }
            Err(e) => say(&format!("tether: warning: {e}")),
        }
    }
    Ok(())
}

/// Whether this process is the background copy of a `-f`.
pub fn is_background_copy() -> bool {
    std::env::var_os(READY_ENV).is_some()
}

/// The background copy reports that it is connected and forwarding, then
/// leaves the terminal's session (the foreground copy exits 0 on this).
/// With no session (`-N`), it lets go of stdout and stderr too (both
/// /dev/null from here, as OpenSSH's `-f` does), so that `$(tether ssh -f
/// -N …)` and a pipe's reader are not kept waiting; a command's output
/// keeps going where tether's went.
pub fn ready(no_session: bool) {
    if let Some(path) = std::env::var_os(READY_ENV)
        && let Ok(mut s) = std::os::unix::net::UnixStream::connect(PathBuf::from(path))
    {
        let _ = writeln!(s, "ready {}", std::process::id());
    }
    let _ = nix::unistd::setsid();
    if no_session && let Ok(null) = std::fs::OpenOptions::new().write(true).open("/dev/null") {
        let _ = nix::unistd::dup2_stdout(&null);
        let _ = nix::unistd::dup2_stderr(&null);
    }
}

/// `-f`: runs tether again with the same arguments, stdin from /dev/null,
/// and returns 0 once it reports ready (connected, authenticated,
/// forwards set up), or its exit code if it ends before (its errors went
/// to the same stderr).
pub fn background() -> Result<i32> {
    let dir = std::env::temp_dir().join(format!(
        "tether-ssh-f-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0)
    ));
    std::fs::DirBuilder::new()
        .mode(0o700)
        .create(&dir)
        .with_context(|| format!("cannot create {}", dir.display()))?;
    let _cleanup = RemoveDir(dir.clone());
    let path = dir.join("ready");
    let listener = std::os::unix::net::UnixListener::bind(&path)
        .with_context(|| format!("cannot listen on {}", path.display()))?;
    let exe = std::env::current_exe().context("cannot find tether's own executable")?;
    let mut child = std::process::Command::new(exe)
        .args(std::env::args_os().skip(1))
        .env(READY_ENV, &path)
        .stdin(std::process::Stdio::null())
        .spawn()
        .context("cannot start tether in the background")?;
    let (tx, rx) = std::sync::mpsc::channel::<Option<i32>>();
    let ready_tx = tx.clone();
    std::thread::spawn(move || {
        if let Ok((mut s, _)) = listener.accept() {
            let mut line = String::new();
            let _ = s.read_to_string(&mut line);
            if line.starts_with("ready") {
                let _ = ready_tx.send(None);
            }
        }
    });
    std::thread::spawn(move || {
        let code = child.wait().ok().and_then(|s| s.code()).unwrap_or(255);
        let _ = tx.send(Some(code));
    });
    Ok(match rx.recv() {
        Ok(None) => 0,
        Ok(Some(code)) => code,
        Err(_) => 255,
    })
}

use std::os::unix::fs::DirBuilderExt;

struct RemoveDir(PathBuf);

impl Drop for RemoveDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
