//! The daemon: one per user, holding sessions for every client. It serves
//! a 0600 socket in a 0700 directory, refuses peers of another uid, keeps
//! itself single with a lock, and exits after an idle period with no
//! sessions and no clients (or on SIGTERM/SIGINT/SIGHUP, or `stop`),
//! ending every session's process tree.

use std::os::unix::fs::PermissionsExt;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use nix::fcntl::{Flock, FlockArg};
use tether_shell::private::Kind;
use tether_shell::{Registry, SessionOptions};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::UnixListener;
use tokio::sync::Notify;

use crate::attach::{self, Attachments};
use crate::error::DaemonError;
use crate::lines::{self, LineRead};
use crate::ops::{self, failure};
use crate::paths::Paths;
use crate::protocol::{
    FailureKind, Hello, PROTOCOL_VERSION, Reply, Request, Response, StopReply, Welcome,
};
use crate::quiet::{self, QuietReader, QuietWriter};

/// How the daemon runs.
#[derive(Clone)]
pub struct ServerOptions {
    /// Its directory.
    pub paths: Paths,
    /// Exit after this long with no sessions and no clients.
    pub idle_exit: Duration,
    /// Options for new sessions (requests may change the dialect, rc
    /// files, cwd and environment).
    pub sessions: SessionOptions,
    /// This program and version, for the welcome line.
    pub server: String,
    /// How to reach remote hosts (`None`: local sessions only).
    pub hosts: Option<ops::HostProvider>,
}

/// The connection steps kept for the host `route` names since they were
/// last taken (its connection is shared: the handle asked for here is
/// that connection's).
pub(crate) fn link_steps(
    state: &State,
    route: &crate::protocol::HostRoute,
) -> Vec<crate::protocol::LinkStep> {
    match state.hosts.as_ref().map(|hosts| hosts(route)) {
        Some(Ok(host)) => crate::protocol::LinkStep::taken(host.as_ref()),
        _ => Vec::new(),
    }
}

/// What every connection shares.
pub(crate) struct State {
    pub(crate) registry: Registry,
    pub(crate) base: SessionOptions,
    pub(crate) hosts: Option<ops::HostProvider>,
    pub(crate) attachments: Attachments,
    server: String,
    /// `TETHER_DAEMON_TRACE` was set: each request's kind and session
    /// (never its content) goes to the log, so tests can count requests.
    pub(crate) trace: bool,
    /// The sessions that live in hosts' own daemons.
    pub(crate) hosted: crate::hosted::HostedBook,
    /// On a host: the last result of each session's named call.
    pub(crate) recalls: crate::hosted::Recalls,
    /// The owners gone, and the closes of their sessions on hosts.
    pub(crate) ending: crate::ending::Ending,
    uid: u32,
    clients: AtomicUsize,
    last_active: std::sync::Mutex<Instant>,
    stop: Notify,
}

impl State {
    fn touch(&self) {
        if let Ok(mut t) = self.last_active.lock() {
            *t = Instant::now();
        }
    }

    fn idle_for(&self) -> Duration {
        self.last_active
            .lock()
            .map(|t| t.elapsed())
            .unwrap_or_default()
    }
}

/// Serves until idle, signalled or stopped. Returns at once, successfully,
/// when another daemon already holds the lock.
pub async fn serve(opts: ServerOptions) -> Result<(), DaemonError> {
    let dir = opts.paths.ensure_private()?;
    let socket = opts.paths.socket();
    let serve_err = |source| DaemonError::Serve {
        socket: socket.clone(),
        source,
    };
    // Ours and private (created so, or proven), never through a symlink.
    let lock_file = dir.file("daemon.lock").map_err(|e| opts.paths.refused(e))?;
    let _lock = match Flock::lock(lock_file, FlockArg::LockExclusiveNonblock) {
        Ok(l) => l,
        Err(_) => {
            eprintln!(
                "tether daemon: another daemon already serves {}",
                socket.display()
            );
            return Ok(());
        }
    };
    // The lock is ours: a socket of ours left here is stale. One that is
    // not ours (or not a socket) is refused, not removed.
    if dir
        .check("daemon.sock", Kind::Socket)
        .map_err(|e| opts.paths.refused(e))?
    {
        let _ = std::fs::remove_file(&socket);
    }
    let listener = UnixListener::bind(&socket).map_err(serve_err)?;
    std::fs::set_permissions(&socket, std::fs::Permissions::from_mode(0o600)).map_err(serve_err)?;
    let mut base = opts.sessions.clone();
    let registry = Registry::new(base.clone());
    if base.runtime_dir.is_none() {
        // The lock is ours: a session directory here is a dead daemon's.
        // What its sessions left running is ended; each is remembered as
        // lost, for the next call on its name to continue.
        crate::recover::gather(&opts.paths, &registry);
        let removed = opts.paths.remove_dead_sessions();
        if removed > 0 {
            let noun = if removed == 1 {
                "directory"
            } else {
                "directories"
            };
            eprintln!(
                "tether daemon: removed {removed} session {noun} left by a daemon that did not stop cleanly"
            );
        }
        base.runtime_dir = Some(opts.paths.session_root());
    }
    // The daemon's socket is a door out of any fence.
    base.hide.push(opts.paths.dir.clone());
    let state = Arc::new(State {
        registry: registry.with_session_options(base.clone()),
        base,
        hosts: opts.hosts.clone(),
        attachments: Attachments::default(),
        server: opts.server.clone(),
        trace: std::env::var_os("TETHER_DAEMON_TRACE").is_some(),
        hosted: crate::hosted::HostedBook::open(&dir),
        recalls: crate::hosted::Recalls::default(),
        ending: crate::ending::Ending::default(),
        uid: nix::unistd::getuid().as_raw(),
        clients: AtomicUsize::new(0),
        last_active: std::sync::Mutex::new(Instant::now()),
        stop: Notify::new(),
    });
    eprintln!(
        "tether daemon {} (pid {}) serving {}",
        opts.server,
        std::process::id(),
        socket.display()
    );
    let check_every = (opts.idle_exit / 4).clamp(Duration::from_millis(20), Duration::from_secs(1));
    let mut tick = tokio::time::interval(check_every);
    let signals = shutdown_signals();
    tokio::pin!(signals);
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    state.touch();
                    tokio::spawn(connection(Arc::clone(&state), stream));
                }
                Err(e) => eprintln!("tether daemon: accept failed: {e}"),
            },
            _ = tick.tick() => {
                // Lost sessions of an MCP server that has exited since are
                // forgotten (nobody will continue them).
                state.registry.retain_lost(crate::recover::owner_alive);
                // Sessions on hosts whose owner is gone are closed there.
                crate::ending::sweep(&state);
                let idle = state.clients.load(Ordering::Acquire) == 0
                    && state.registry.is_empty()
                    && !crate::ending::pending(&state);
                if !idle {
                    state.touch();
                } else if state.idle_for() >= opts.idle_exit {
                    eprintln!("tether daemon: idle for {:?} with no sessions; exiting", opts.idle_exit);
                    break;
                }
            }
            _ = state.stop.notified() => {
                eprintln!("tether daemon: stop requested");
                break;
            }
            _ = &mut signals => {
                eprintln!("tether daemon: signalled; ending every session");
                break;
            }
        }
    }
    // Stop accepting before the sessions go, then remove the socket while
    // the lock is still held.
    drop(listener);
    let _ = std::fs::remove_file(&socket);
    state.attachments.end_all("the tether daemon stopped");
    state.registry.close_all().await;
    Ok(())
}

async fn shutdown_signals() {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut term), Ok(mut int), Ok(mut hup)) = (
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
        signal(SignalKind::hangup()),
    ) else {
        eprintln!("tether daemon: cannot watch signals; stop it with `tether daemon stop`");
        return std::future::pending().await;
    };
    tokio::select! {
        _ = term.recv() => {}
        _ = int.recv() => {}
        _ = hup.recv() => {}
    }
}

/// The message for a line over its bound (the connection then closes).
fn too_long(what: &str, max: usize) -> String {
    format!(
        "a {what} line may be at most {} and this one grew past that without a newline; \
         the connection is closed (send one JSON object per line)",
        lines::human_size(max as u64)
    )
}

pub(crate) async fn write_line(w: &mut QuietWriter, value: &impl serde::Serialize) -> bool {
    let mut line = serde_json::to_vec(value).unwrap_or_default();
    line.push(b'\n');
    w.write_all(&line).await.is_ok()
}

struct ClientCount(Arc<State>);

impl Drop for ClientCount {
    fn drop(&mut self) {
        self.0.clients.fetch_sub(1, Ordering::AcqRel);
        self.0.touch();
    }
}

async fn connection(state: Arc<State>, stream: tokio::net::UnixStream) {
    state.clients.fetch_add(1, Ordering::AcqRel);
    let _count = ClientCount(Arc::clone(&state));
    let peer = stream.peer_cred().map(|c| c.uid());
    let halves = stream.into_std().and_then(quiet::split);
    let (read, mut write) = match halves {
        Ok(h) => h,
        Err(e) => {
            eprintln!("tether daemon: cannot set up a connection: {e}");
            return;
        }
    };
    match peer {
        Ok(uid) if uid == state.uid => {}
        other => {
            let who = other.map_or_else(|_| "an unknown user".to_owned(), |u| format!("uid {u}"));
            eprintln!("tether daemon: refused a connection from {who}");
            let msg = format!(
                "this tether daemon belongs to uid {}; {who} may not use it (each user runs their own daemon)",
                state.uid
            );
            write_line(
                &mut write,
                &Reply::Error(failure(FailureKind::Refused, msg)),
            )
            .await;
            return;
        }
    }
    let mut read = BufReader::new(read);
    let Some(hello) = hello(&state, &mut read, &mut write).await else {
        return;
    };
    let ns = hello.namespace.clone().unwrap_or_default();
    if hello.lease {
        state.ending.leased(&ns);
    }
    serve_requests(&state, &ns, read, write).await;
    if hello.lease {
        // The owner is gone: its sessions here and on hosts end.
        tokio::join!(
            state.registry.close_owner(&ns),
            crate::ending::owner_gone(&state, &ns)
        );
    }
}

async fn hello(
    state: &State,
    read: &mut BufReader<QuietReader>,
    write: &mut QuietWriter,
) -> Option<Hello> {
    let mut line = Vec::new();
    let read_hello = lines::read_line(read, &mut line, lines::MAX_HELLO_LINE);
    let got = tokio::time::timeout(Duration::from_secs(10), read_hello).await;
    let refuse = |kind: FailureKind, message: String| Reply::Error(failure(kind, message));
    match got {
        Ok(Ok(LineRead::Line)) => {}
        Ok(Ok(LineRead::TooLong)) => {
            write_line(
                write,
                &refuse(
                    FailureKind::BadRequest,
                    too_long("hello", lines::MAX_HELLO_LINE),
                ),
            )
            .await;
            return None;
        }
        _ => return None,
    }
    let hello: Hello = match serde_json::from_slice(&line) {
        Ok(h) => h,
        Err(e) => {
            let r = refuse(
                FailureKind::BadRequest,
                format!("the first line must be a hello: {e}"),
            );
            write_line(write, &r).await;
            return None;
        }
    };
    if hello.protocol != PROTOCOL_VERSION {
        let r = refuse(
            FailureKind::Version,
            format!(
                "the running tether daemon ({}, pid {}) speaks protocol {PROTOCOL_VERSION}, but {} speaks protocol {}: stop the daemon (kill {}) and run the command again",
                state.server,
                std::process::id(),
                hello.client,
                hello.protocol,
                std::process::id()
            ),
        );
        write_line(write, &r).await;
        return None;
    }
    if let Some(ns) = &hello.namespace
        && (ns.is_empty() || ns.contains('/'))
    {
        let r = refuse(
            FailureKind::BadRequest,
            format!("namespace {ns:?} must be non-empty, without '/'"),
        );
        write_line(write, &r).await;
        return None;
    }
    let welcome = Welcome {
        protocol: PROTOCOL_VERSION,
        server: state.server.clone(),
        pid: std::process::id(),
    };
    write_line(write, &Reply::Ok(Response::Welcome(welcome)))
        .await
        .then_some(hello)
}

/// Resolves when the client closes its end; never when it sends more
/// (that waits, unread, for the next request).
pub(crate) async fn client_gone(read: &mut BufReader<QuietReader>) {
    match read.fill_buf().await {
        Ok([]) | Err(_) => {}
        Ok(_) => std::future::pending().await,
    }
}

async fn serve_requests(
    state: &Arc<State>,
    ns: &str,
    mut read: BufReader<QuietReader>,
    mut write: QuietWriter,
) {
    let mut line = Vec::new();
    loop {
        // A large request's buffer is not kept for the connection's life.
        line.clear();
        line.shrink_to(64 << 10);
        match lines::read_line(&mut read, &mut line, lines::MAX_REQUEST_LINE).await {
            Ok(LineRead::Eof) | Err(_) => return,
            Ok(LineRead::Line) => {}
            Ok(LineRead::TooLong) => {
                let f = failure(
                    FailureKind::BadRequest,
                    too_long("request", lines::MAX_REQUEST_LINE),
                );
                write_line(&mut write, &Reply::Error(f)).await;
                return;
            }
        }
        let request: Request = match serde_json::from_slice(&line) {
            Ok(r) => r,
            Err(e) => {
                let f = failure(
                    FailureKind::BadRequest,
                    format!("cannot read the request: {e}"),
                );
                if !write_line(&mut write, &Reply::Error(f)).await {
                    return;
                }
                continue;
            }
        };
        if state.trace {
            eprintln!(
                "tether daemon: trace: {} {:?} in {ns:?}",
                request.op(),
                request.session().unwrap_or("")
            );
        }
        let request = match crate::relay::target(state, ns, &request) {
            None => request,
            Some(Err(f)) => {
                if !write_line(&mut write, &Reply::Error(f)).await {
                    return;
                }
                continue;
            }
            Some(Ok(target)) => {
                match crate::relay::serve(state, target, request, &mut read, &mut write).await {
                    crate::relay::Relayed::Done(open) => {
                        state.touch();
                        if !open {
                            return;
                        }
                        continue;
                    }
                    crate::relay::Relayed::Agentless(request, why) => {
                        if let Some(a) = request.session().and_then(|s| ops::resolve(ns, s).ok()) {
                            state.hosted.set_agentless(a, why);
                        }
                        *request
                    }
                }
            }
        };
        let reply = match request {
            Request::Recall {
                session,
                call,
                wait_s,
            } => {
                let recalled = crate::hosted::recall(state, ns, session, call, wait_s);
                let result = tokio::select! {
                    r = recalled => r,
                    () = client_gone(&mut read) => return,
                };
                state.touch();
                match result {
                    Ok(response) => Reply::Ok(response),
                    Err(f) => Reply::Error(f),
                }
            }
            Request::Attach {
                session,
                rows,
                cols,
                resume,
                ..
            } => {
                let size = (rows, cols);
                attach::serve(Arc::clone(state), ns, &session, size, resume, read, write).await;
                return;
            }
            Request::Follow {
                session,
                from,
                wait_s,
            } => {
                let open =
                    crate::follow::follow(state, ns, session, from, wait_s, &mut read, &mut write)
                        .await;
                state.touch();
                if !open {
                    return;
                }
                continue;
            }
            request @ (Request::Run { follow: true, .. } | Request::Run { pieces: true, .. }) => {
                let open = crate::follow::run(state, ns, request, &mut read, &mut write).await;
                state.touch();
                if !open {
                    return;
                }
                continue;
            }
            Request::Stop => {
                write_line(
                    &mut write,
                    &Reply::Ok(Response::Stopping(StopReply { stopping: true })),
                )
                .await;
                state.stop.notify_one();
                return;
            }
            request => {
                // A named call's result is kept, for its relay to ask again
                // if the reply is lost on the way.
                let listed = match &request {
                    Request::List { all } => Some(*all),
                    _ => None,
                };
                let named = match &request {
                    Request::Run {
                        session,
                        call: Some(call),
                        ..
                    } => ops::resolve(ns, session).ok().map(|a| (a, call.clone())),
                    _ => None,
                };
                let route = match &request {
                    Request::Run { host, .. } => host.clone(),
                    _ => None,
                };
                let handled = ops::handle(
                    &state.registry,
                    &state.base,
                    state.hosts.as_ref(),
                    ns,
                    request,
                );
                // A client that goes away mid-call (a second Ctrl-C) leaves
                // its command running, as a kept command `read` picks up:
                // the call's future is dropped where it waits.
                let result = tokio::select! {
                    r = handled => r,
                    () = client_gone(&mut read) => return,
                };
                state.touch();
                if let (Some((address, call)), Ok(Response::Shell(r))) = (named, &result) {
                    state.recalls.keep(address, call, r.clone());
                }
                let mut result = result;
                if let Ok(Response::Shell(r)) = &mut result
                    && r.host.is_some()
                    && let Ok(a) = ops::resolve(ns, &r.session)
                {
                    r.agentless = state.hosted.agentless(&a);
                }
                if let Ok(Response::Shell(r)) = &mut result
                    && let Some(route) = &route
                {
                    r.link_steps = link_steps(state, route);
                }
                match result {
                    Ok(mut response) => {
                        if let Response::List(list) = &mut response {
                            for s in &mut list.sessions {
                                s.attached = state.attachments.count(&s.address);
                            }
                            if let Some(all) = listed {
                                list.sessions.extend(state.hosted.entries(ns, all));
                            }
                        }
                        Reply::Ok(response)
                    }
                    Err(f) => Reply::Error(f),
                }
            }
        };
        if !write_line(&mut write, &reply).await {
            return;
        }
    }
}
