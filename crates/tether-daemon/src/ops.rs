//! The requests on sessions, checked and carried out on the engine's
//! registry; every front-end gets the same checks and messages from here.

use std::path::PathBuf;
use std::time::Duration;

use tether_shell::{
    OnTimeout as EngineOnTimeout, Registry, RunOptions, RunResult, SessionOptions, ShellError,
};
use tether_transport::{RemoteHost, Signal};

use crate::protocol::{
    CloseReply, Create, Failure, FailureKind, HostRoute, ListReply, OnTimeout, Request, ResetReply,
    Response, ScreenReply,
};
use crate::wire::entry;
pub use crate::wire::shell_result;

/// A remote host as its caller named and resolved it (the provider
/// connects with the route as given, reading no config of its own); the
/// error is the message.
pub type HostProvider = std::sync::Arc<
    dyn Fn(&HostRoute) -> Result<std::sync::Arc<dyn RemoteHost>, String> + Send + Sync,
>;

/// Longest timeout or wait accepted, in seconds (the engine's rule).
pub use tether_shell::timeout::MAX_SECONDS;

/// A session address resolved to its owner (namespace) and name.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Address {
    /// The namespace ("" is the CLI's shared one).
    pub owner: String,
    /// The name.
    pub name: String,
}

impl Address {
    /// How clients write it: `name`, or `namespace/name`.
    pub fn display(&self) -> String {
        if self.owner.is_empty() {
            self.name.clone()
        } else {
            format!("{}/{}", self.owner, self.name)
        }
    }
}

pub(crate) fn failure(kind: FailureKind, message: impl Into<String>) -> Failure {
    Failure {
        kind,
        message: message.into(),
        host: None,
    }
}

fn bad_request(message: impl Into<String>) -> Failure {
    failure(FailureKind::BadRequest, message)
}

pub(crate) fn engine(e: ShellError) -> Failure {
    let kind = match e {
        ShellError::UnknownSession(_) => FailureKind::UnknownSession,
        ShellError::Busy => FailureKind::Busy,
        ShellError::UnknownKey(_) | ShellError::BadTimeout { .. } => FailureKind::BadRequest,
        ShellError::NotWaiting(_) => FailureKind::NotWaiting,
        _ => FailureKind::Engine,
    };
    let host = match &e {
        ShellError::Transport(tether_transport::TransportError::Host { kind, .. }) => Some(*kind),
        _ => None,
    };
    Failure {
        host,
        ..failure(kind, e.to_string())
    }
}

/// Resolves `session` as written by a client of namespace `ns`. The shared
/// namespace may write `namespace/name` to reach another one. A name (and
/// a namespace written so) is 1 to 128 bytes, without `/`, control
/// characters (ESC, C1 …) or invisible ones (bidi controls, zero widths),
/// and neither `.` nor `..`; anything else is refused, saying so.
pub fn resolve(ns: &str, session: &str) -> Result<Address, Failure> {
    /// The longest name, and namespace, in bytes.
    const MAX_NAME: usize = 128;
    if session.is_empty() {
        return Err(bad_request("the session name is empty"));
    }
    let (owner, name) = match session.split_once('/') {
        Some((owner, name)) if ns.is_empty() => (Some(owner), name),
        Some(_) => {
            return Err(bad_request(format!(
                "session names cannot contain '/' (got {session:?}); pick another name"
            )));
        }
        None => (None, session),
    };
    for part in owner.into_iter().chain([name]) {
        let why = if part.is_empty() {
            "has an empty part around its '/'"
        } else if part.contains('/') {
            "has more than one '/'"
        } else if part == "." || part == ".." {
            "is '.' or '..'"
        } else if part.len() > MAX_NAME {
            "is too long"
        } else if part.chars().any(tether_term::printable::is_unsafe) {
            "contains a control or invisible character"
        } else {
            continue;
        };
        // The name as Rust's Debug shows it (controls escaped), clipped.
        let shown: String = session.chars().take(40).collect();
        let more = if shown.len() < session.len() {
            "…"
        } else {
            ""
        };
        return Err(bad_request(format!(
            "the session name {shown:?}{more} {why}: a name is 1 to {MAX_NAME} bytes without '/', control or invisible characters, and not '.' or '..' (NAMESPACE/NAME reaches another namespace's session); pick another name"
        )));
    }
    Ok(Address {
        owner: owner.unwrap_or(ns).to_owned(),
        name: name.to_owned(),
    })
}

/// Like [`resolve`], but a bare name missing from the namespace may name
/// the only session of that name in another namespace (for attaching).
pub fn resolve_loose(registry: &Registry, ns: &str, session: &str) -> Result<Address, Failure> {
    let exact = resolve(ns, session)?;
    if session.contains('/') || registry.live(&exact.owner, &exact.name).is_ok() {
        return Ok(exact);
    }
    let matches: Vec<Address> = registry
        .list_all()
        .into_iter()
        .filter(|i| i.name == session)
        .map(|i| Address {
            owner: i.owner,
            name: i.name,
        })
        .collect();
    match matches.as_slice() {
        [one] => Ok(one.clone()),
        [] => Err(engine(ShellError::UnknownSession(session.to_owned()))),
        many => Err(failure(
            FailureKind::Ambiguous,
            format!(
                "several sessions are named {session:?}: {}; use the full address",
                many.iter()
                    .map(Address::display)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        )),
    }
}

pub(crate) fn seconds(name: &str, value: f64) -> Result<Duration, Failure> {
    if value.is_finite() && (0.0..=MAX_SECONDS).contains(&value) {
        Ok(Duration::from_secs_f64(value))
    } else {
        Err(bad_request(format!(
            "{name} must be between 0 and {MAX_SECONDS} seconds, got {value}"
        )))
    }
}

/// [`seconds`] of a value that may be absent.
pub(crate) fn seconds_opt(name: &str, value: Option<f64>) -> Result<Option<Duration>, Failure> {
    value.map(|v| seconds(name, v)).transpose()
}

/// The dialect `name` names, or why not.
fn dialect(name: &str) -> Result<std::sync::Arc<dyn tether_shell::dialect::Dialect>, Failure> {
    tether_shell::dialect::by_name(name).ok_or_else(|| {
        bad_request(format!(
            "unknown shell {name:?}: use one of {}",
            tether_shell::dialect::NAMES.join(", ")
        ))
    })
}

/// Refuses a shell that differs from the one an existing session runs: it
/// would otherwise be ignored, and the command run in the other shell.
fn same_shell(registry: &Registry, address: &Address, create: &Create) -> Result<(), Failure> {
    let Some(shell) = &create.shell else {
        return Ok(());
    };
    let wanted = dialect(shell)?;
    let existing = registry
        .list(&address.owner)
        .into_iter()
        .find(|i| i.name == address.name);
    match existing {
        Some(info) if info.dialect != wanted.name() => Err(bad_request(format!(
            "session {:?} runs {}; --shell {shell} applies only when a session is created; close it first or use another -s",
            address.display(),
            info.dialect
        ))),
        _ => Ok(()),
    }
}

/// Refuses a confinement that differs from the one an existing session
/// has: a session's fence is set when it is created, and only its owner
/// changes it, by closing it.
fn same_confinement(
    registry: &Registry,
    address: &Address,
    create: &Create,
) -> Result<(), Failure> {
    let Some(asked) = &create.confine else {
        return Ok(());
    };
    let existing = registry
        .list(&address.owner)
        .into_iter()
        .find(|i| i.name == address.name);
    let Some(info) = existing else {
        return Ok(());
    };
    let has = info
        .confinement
        .as_ref()
        .map(|c| c.mode)
        .unwrap_or_default();
    let same_net = info
        .confinement
        .as_ref()
        .is_none_or(|c| c.allow_net == asked.allow_net && c.unix_sockets == asked.unix_sockets);
    if has == asked.mode && same_net {
        return Ok(());
    }
    Err(bad_request(format!(
        "session {:?} is confined as {} and was asked for {}: a session's confinement is set when it is created; close it first (its owner, by the CLI) or use another -s",
        address.display(),
        has.name(),
        asked.mode.name()
    )))
}

/// The engine options for a session a request creates.
pub fn session_options(base: &SessionOptions, create: &Create) -> Result<SessionOptions, Failure> {
    let mut opts = base.clone();
    if let Some(shell) = &create.shell {
        opts.dialect = dialect(shell)?;
    }
    if create.norc {
        opts.run_rc_files = false;
    }
    if create.no_nested {
        opts.arm_nested = false;
    }
    // The caller's directory and environment are this machine's: a remote
    // shell starts in the login directory with the login environment.
    if let Some(cwd) = create.cwd.as_ref().filter(|_| opts.host.is_none()) {
        opts.cwd = Some(PathBuf::from(cwd));
    }
    if let Some(env) = &create.env {
        opts.base_env = env.clone();
    }
    if let Some(confine) = &create.confine {
        opts.confine = confine.clone();
    }
    Ok(opts)
}

/// Quotes a directory for `cd` in the POSIX-family shells.
fn shell_word(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// Carries out every request but `attach`, `stop` and `follow` for
/// namespace `ns`.
pub async fn handle(
    registry: &Registry,
    base: &SessionOptions,
    hosts: Option<&HostProvider>,
    ns: &str,
    request: Request,
) -> Result<Response, Failure> {
    handle_following(registry, base, hosts, ns, request, None).await
}

/// [`handle`], and for a `run`, a follower of its command sent to
/// `follow` (taken under the session's call lock just before the command
/// is typed: no other command's output can reach it).
pub async fn handle_following(
    registry: &Registry,
    base: &SessionOptions,
    hosts: Option<&HostProvider>,
    ns: &str,
    request: Request,
    follow: Option<tokio::sync::oneshot::Sender<tether_shell::Follower>>,
) -> Result<Response, Failure> {
    match request {
        Request::Run {
            session,
            command,
            host,
            timeout_s,
            on_timeout,
            output_limit,
            workdir,
            create,
            stdin,
            follow: _,
            pieces: _,
            call: _,
        } => {
            let address = resolve(ns, &session)?;
            same_shell(registry, &address, &create)?;
            same_confinement(registry, &address, &create)?;
            // The options of a session this request starts, made only when
            // it does not exist (they hold the caller's environment).
            let mut prepared = None;
            // The route a session this request starts is started with,
            // recorded with it so that it continues on it after a crash.
            let mut started_with = None;
            let named = host.as_ref().map(|h| h.name.clone());
            match registry.host_of(&address.owner, &address.name) {
                Some(existing) if named.is_some() && existing != named => {
                    return Err(bad_request(format!(
                        "session {session:?} runs on {}, not {}; name another session (or close this one)",
                        existing.as_deref().unwrap_or("this machine"),
                        named.as_deref().unwrap_or("this machine"),
                    )));
                }
                Some(_) => {}
                None => {
                    // A session lost with a killed daemon continues on its
                    // own host, by the route it was started with unless
                    // this call gives the host's again.
                    let lost_host = registry
                        .lost(&address.owner, &address.name)
                        .and_then(|l| l.host);
                    if let (Some(lost), Some(asked)) = (&lost_host, &named)
                        && lost != asked
                    {
                        return Err(bad_request(format!(
                            "session {session:?} ran on {lost} before its daemon stopped, not {asked}; name another session (or close this one)"
                        )));
                    }
                    let route = match (&host, &lost_host) {
                        (Some(h), _) => Some(h.clone()),
                        (None, Some(lost)) => Some(
                            crate::recover::lost_route(&address.owner, &address.name).ok_or_else(
                                || {
                                    bad_request(format!(
                                        "session {session:?} ran on {lost} before its daemon stopped, and how to reach it was not kept; name the host again (--host {lost}) to continue it"
                                    ))
                                },
                            )?,
                        ),
                        (None, None) => None,
                    };
                    let mut base = base.clone();
                    base.host = remote_host(hosts, route.as_ref())?;
                    prepared = Some(session_options(&base, &create)?);
                    started_with = route;
                }
            }
            if let Some(input) = &stdin
                && input.len() > crate::protocol::MAX_STDIN
            {
                return Err(failure(
                    FailureKind::BadRequest,
                    format!(
                        "stdin has {} bytes, more than the {} MiB a command may be given; nothing was run",
                        input.len(),
                        crate::protocol::MAX_STDIN >> 20
                    ),
                ));
            }
            let timeout = tether_shell::Timeout::from_secs("timeout_s", timeout_s)
                .map_err(|e| bad_request(e.to_string()))?
                .duration();
            let opts = RunOptions {
                timeout,
                on_timeout: match on_timeout {
                    OnTimeout::Interrupt => EngineOnTimeout::Interrupt,
                    OnTimeout::Keep => EngineOnTimeout::Keep,
                },
                output_limit: output_limit.max(1),
                stdin,
            };
            // An existing session closed meanwhile starts here, as a local
            // one (the shell was checked by `same_shell`: this cannot fail).
            let options = move || prepared.or_else(|| session_options(base, &create).ok());
            let (owner, name) = (address.owner.clone(), address.name.clone());
            let result = registry
                .with_lazy_options(&address.owner, &address.name, options, async move |s| {
                    crate::recover::record_new(s, &owner, &name);
                    if let Some(route) = &started_with {
                        crate::recover::record_route(s, route);
                    }
                    if let Some(dir) = workdir {
                        let cd = s
                            .run(
                                &format!("cd -- {}", shell_word(&dir)),
                                &RunOptions::default(),
                            )
                            .await?;
                        if cd.exit_code != Some(0) {
                            return Ok(cd);
                        }
                    }
                    if let Some(tx) = follow {
                        let _ = tx.send(s.follow_next());
                    }
                    let r = s.run(&command, &opts).await;
                    crate::recover::record(s, &owner, &name);
                    r
                })
                .await;
            // The session's host, named by this call or not.
            let host = named.or_else(|| registry.host_of(&address.owner, &address.name).flatten());
            match result {
                Ok(r) => Ok(Response::Shell(shell_result(&session, host.as_deref(), r))),
                Err(ShellError::Busy) => Err(failure(
                    FailureKind::Busy,
                    format!(
                        "session {session:?} is still running a command kept past its deadline (or waiting for input): read it, send it input, signal it, or reset the session"
                    ),
                )),
                Err(e) => Err(engine(e)),
            }
        }
        Request::Send {
            session,
            input,
            keys,
            wait_s,
            only_if_waiting,
            now,
        } => {
            let wait = seconds("wait_s", wait_s)?;
            for k in &keys {
                tether_shell::keys::key_bytes(k).map_err(engine)?;
            }
            if now {
                let mut bytes = input.map(String::into_bytes).unwrap_or_default();
                for k in &keys {
                    bytes.extend_from_slice(tether_shell::keys::key_bytes(k).map_err(engine)?);
                }
                let found = existing(registry, ns, &session)?;
                found.2.type_now(bytes).map_err(engine)?;
                return read_now(registry, &session, found, Duration::ZERO).await;
            }
            on_existing(registry, ns, &session, async move |s| {
                if only_if_waiting {
                    s.send_if_waiting(input.as_deref(), &keys, wait).await
                } else {
                    s.send(input.as_deref(), &keys, wait).await
                }
            })
            .await
        }
        // The server answers a recall it keeps; one it does not keep (its
        // client went away and left the command running) is a read.
        Request::Read { session, wait_s }
        | Request::Recall {
            session, wait_s, ..
        } => {
            let wait = seconds("wait_s", wait_s)?;
            // While a call holds the session, a read looks at the command
            // in flight without taking its output from that call.
            let found = existing(registry, ns, &session)?;
            read_now(registry, &session, found, wait).await
        }
        Request::Signal { session, signal } => {
            let Some(signal) = Signal::from_name(&signal) else {
                return Err(bad_request(format!(
                    "unknown signal {signal:?}: use one of {}",
                    Signal::names_list()
                )));
            };
            // The signal goes at once, whether or not a call holds the
            // session; that call then returns the command's true status.
            let found = existing(registry, ns, &session)?;
            found.2.signal(signal).map_err(engine)?;
            read_now(registry, &session, found, SIGNAL_SETTLE).await
        }
        Request::Screen { session } => {
            let address = resolve(ns, &session)?;
            let live = registry
                .live(&address.owner, &address.name)
                .map_err(engine)?;
            let screen = live.borrow().screen();
            Ok(Response::Screen(ScreenReply { session, screen }))
        }
        Request::Reset { session } => {
            // The call in flight (if any) returns `reset` at once; the
            // first holder of the call lock after it restarts the shell.
            let (_, s, control) = existing(registry, ns, &session)?;
            control.request(tether_shell::Pending::Reset);
            let mut s = s.lock().await;
            s.take_reset().await.map_err(engine)?;
            let cwd = s.cwd().map(|c| c.display().to_string());
            Ok(Response::Reset(ResetReply {
                session,
                reset: true,
                cwd,
            }))
        }
        Request::Close { session } => {
            let address = resolve(ns, &session)?;
            // A session lost with a killed daemon left its directory (and
            // perhaps processes) on its host: swept before it is forgotten.
            if let Some(lost) = registry.lost(&address.owner, &address.name)
                && let Some(dir) = &lost.resume.remote_dir
                && let Some(route) = crate::recover::lost_route(&address.owner, &address.name)
                && let Ok(Some(host)) = remote_host(hosts, Some(&route))
            {
                tether_shell::sweep_remote(host.as_ref(), dir).await;
            }
            registry
                .close(&address.owner, &address.name)
                .await
                .map_err(engine)?;
            Ok(Response::Closed(CloseReply {
                session,
                closed: true,
            }))
        }
        Request::List { all } => {
            let infos = if all {
                registry.list_all()
            } else {
                registry.list(ns)
            };
            Ok(Response::List(ListReply {
                sessions: infos.into_iter().map(entry).collect(),
            }))
        }
        // The relay serves it when this daemon reaches hosts.
        Request::ListOn { host, .. } => Err(bad_request(format!(
            "this daemon reaches no remote hosts, so none of {}'s sessions",
            host.name
        ))),
        Request::Attach { .. } | Request::Stop | Request::Follow { .. } => Err(bad_request(
            "attach, stop and follow are handled by the connection",
        )),
    }
}

/// How long `signal` waits for the command to react before it answers.
const SIGNAL_SETTLE: Duration = Duration::from_millis(500);

pub(crate) type Existing = (
    Address,
    std::sync::Arc<tokio::sync::Mutex<tether_shell::Session>>,
    tether_shell::Control,
);

/// An existing session of `ns`, its call lock and its control handle.
pub(crate) fn existing(registry: &Registry, ns: &str, session: &str) -> Result<Existing, Failure> {
    let address = resolve(ns, session)?;
    let s = registry
        .existing(&address.owner, &address.name)
        .map_err(engine)?;
    let control = registry
        .control(&address.owner, &address.name)
        .map_err(engine)?;
    Ok((address, s, control))
}

/// A read that never queues: the session's output and status when no call
/// holds it, else a look at the command in flight (its output stays with
/// the call that waits for it).
pub(crate) async fn read_now(
    registry: &Registry,
    session: &str,
    (address, s, control): Existing,
    wait: Duration,
) -> Result<Response, Failure> {
    match s.try_lock() {
        Ok(mut s) => {
            let r = s.read(wait).await.map_err(engine)?;
            Ok(Response::Shell(shell_result(session, s.host(), r)))
        }
        Err(_) => {
            let r = control.peek(wait).await;
            let host = registry.host_of(&address.owner, &address.name).flatten();
            Ok(Response::Shell(shell_result(session, host.as_deref(), r)))
        }
    }
}

async fn on_existing(
    registry: &Registry,
    ns: &str,
    session: &str,
    f: impl AsyncFnOnce(&mut tether_shell::Session) -> Result<RunResult, ShellError>,
) -> Result<Response, Failure> {
    let address = resolve(ns, session)?;
    let s = registry
        .existing(&address.owner, &address.name)
        .map_err(engine)?;
    let mut s = s.lock().await;
    let r = f(&mut s).await.map_err(engine)?;
    Ok(Response::Shell(shell_result(session, s.host(), r)))
}

/// The remote host `host` names, through `hosts`.
fn remote_host(
    hosts: Option<&HostProvider>,
    host: Option<&HostRoute>,
) -> Result<Option<std::sync::Arc<dyn RemoteHost>>, Failure> {
    let Some(host) = host else { return Ok(None) };
    let name = &host.name;
    let Some(hosts) = hosts else {
        return Err(bad_request(format!(
            "this server has no SSH layer to reach {name:?}; omit the host to run locally"
        )));
    };
    hosts(host)
        .map(Some)
        .map_err(|e| bad_request(format!("host {name:?}: {e}")))
}

#[cfg(test)]
#[path = "ops_tests.rs"]
mod tests;
