//! Reaching a host's own tether daemon for the relay (`relay.rs`): its far
//! side asked for (tether found or brought there, its daemon started),
//! then the hello and its welcome; within the call's deadline (issue 37).
//!
//! Every step there is a channel of the host's connection (a probe, a
//! copy, the channel to its socket), and a host that stopped answering
//! leaves each waiting until the keepalives give the connection up (15 ×
//! 3 s by default). A call with a deadline does not wait that long: once
//! its deadline (and then every [`QUIET_CHECK`]) passes with the host's
//! daemon not yet greeted, one round trip within [`ANSWER_WITHIN`] asks
//! whether the link hung; if so the host is given up and the call says
//! the link hung (`HostFailure::Hung`), else the wait goes on (a first
//! contact may copy tether there, which takes longer than a deadline).
//! Without a deadline, the keepalives bound it.

use std::sync::Arc;
use std::time::Duration;

use tether_transport::{FarSide, HostFailure, RemoteHost, TransportError};
use tokio::io::BufReader;

use crate::ops::failure;
use crate::protocol::{
    Failure, FailureKind, Hello, HostRoute, PROTOCOL_VERSION, Reply, Request, Response,
};
use crate::relay::{ANSWER_WITHIN, HostLines, HostWrite, QUIET_CHECK, receive, send};
use crate::server::State;

/// A failure of a host, of `kind`.
pub(crate) fn host_failure(kind: HostFailure, message: String) -> Failure {
    Failure {
        host: Some(kind),
        ..failure(FailureKind::Engine, message)
    }
}

/// `e` said by `host`: the host named once (a `TransportError::Host`
/// names its host already).
fn said(host: &str, e: &TransportError) -> String {
    match e {
        TransportError::Host { message, .. } => format!("{host}: {message}"),
        other => format!("{host}: {other}"),
    }
}

/// The deadline of `request`, for reaching the host's daemon: a `run`'s
/// timeout, a wait's length; `None` for the rest (the keepalives bound
/// them).
pub(crate) fn deadline(request: &Request) -> Option<Duration> {
    let secs = match request {
        Request::Run { timeout_s, .. } => Some(*timeout_s),
        Request::Read { wait_s, .. }
        | Request::Recall { wait_s, .. }
        | Request::Send { wait_s, .. } => Some(*wait_s),
        Request::Follow { wait_s, .. } => *wait_s,
        _ => None,
    }?;
    Duration::try_from_secs_f64(secs).ok()
}

/// The host's far side, with a try after each of `waits` when it could
/// not be reached.
async fn reach(
    host: &dyn RemoteHost,
    route: &HostRoute,
    waits: &[Duration],
) -> Result<FarSide, Failure> {
    let mut waits = waits.iter();
    loop {
        match host.far_side().await {
            Ok(far) => return Ok(far),
            Err(e) => {
                let kind = match &e {
                    TransportError::Host { kind, .. } => *kind,
                    _ => HostFailure::Setup,
                };
                let again = matches!(
                    kind,
                    HostFailure::Lost
                        | HostFailure::Refused
                        | HostFailure::Unreachable
                        | HostFailure::TimedOut
                );
                match waits.next() {
                    Some(wait) if again => {
                        eprintln!(
                            "tether daemon: {}; trying again in {} ms",
                            said(&route.name, &e),
                            wait.as_millis()
                        );
                        tokio::time::sleep(*wait).await;
                    }
                    _ => return Err(host_failure(kind, said(&route.name, &e))),
                }
            }
        }
    }
}

/// The hello and its welcome.
async fn greet(
    stream: Box<dyn tether_transport::DaemonStream>,
    owner: &str,
) -> Result<(HostLines, HostWrite), String> {
    let (r, mut w) = tokio::io::split(stream);
    let mut r = BufReader::new(r);
    let hello = Hello {
        protocol: PROTOCOL_VERSION,
        client: format!("tether {} (relay)", env!("CARGO_PKG_VERSION")),
        namespace: (!owner.is_empty()).then(|| owner.to_owned()),
        lease: false,
    };
    send(&mut w, &hello)
        .await
        .map_err(|e| format!("cannot greet the host's tether daemon: {e}"))?;
    match receive(&mut r).await {
        Some(Reply::Ok(Response::Welcome(_))) => Ok((r, w)),
        Some(Reply::Error(f)) => Err(format!("the host's tether daemon refused: {}", f.message)),
        _ => Err("the host's tether daemon did not answer its hello".to_owned()),
    }
}

/// A host's daemon greeted, or why the host is agentless.
pub(crate) enum Opened {
    Daemon(Arc<dyn RemoteHost>, HostLines, HostWrite),
    Agentless(String),
}

/// The host's daemon, reached (a try after each of `waits`) and greeted
/// in namespace `owner`, within `deadline` unless the link answers (see
/// the module's doc): a second try when the first stream ends before the
/// welcome (a daemon exiting, idle, just as it was reached: the next
/// `ensure` starts another).
pub(crate) async fn open(
    state: &State,
    route: &HostRoute,
    owner: &str,
    waits: &[Duration],
    deadline: Option<Duration>,
) -> Result<Opened, Failure> {
    let Some(hosts) = state.hosts.as_ref() else {
        return Err(failure(
            FailureKind::BadRequest,
            "this daemon reaches no remote hosts",
        ));
    };
    let host = hosts(route).map_err(|m| host_failure(HostFailure::Setup, m))?;
    let opening = async {
        let mut tries = 0;
        loop {
            let stream = match reach(host.as_ref(), route, waits).await? {
                FarSide::Daemon(s) => s,
                FarSide::Agentless(why) => return Ok(Opened::Agentless(why)),
            };
            match greet(stream, owner).await {
                Ok((hr, hw)) => return Ok(Opened::Daemon(Arc::clone(&host), hr, hw)),
                Err(m) if tries == 0 => {
                    tries += 1;
                    eprintln!("tether daemon: {}: {m}; trying again", route.name);
                }
                Err(m) => {
                    return Err(host_failure(
                        HostFailure::Setup,
                        format!("{}: {m}", route.name),
                    ));
                }
            }
        }
    };
    let Some(deadline) = deadline else {
        return opening.await;
    };
    tokio::pin!(opening);
    let mut wait = deadline.max(QUIET_CHECK);
    loop {
        tokio::select! {
            opened = &mut opening => return opened,
            () = tokio::time::sleep(wait) => {
                if host.link_hung(ANSWER_WITHIN).await {
                    return Err(hung(&route.name, deadline));
                }
                wait = QUIET_CHECK;
            }
        }
    }
}

/// The host stopped answering before its daemon was greeted.
fn hung(host: &str, deadline: Duration) -> Failure {
    host_failure(
        HostFailure::Hung,
        format!(
            "{host}: the link hung: the host stopped answering (no reply within {} s after the call's {} s deadline) before its tether daemon was reached, so the connection was given up and nothing was sent; check the host or the network to it, then try again",
            ANSWER_WITHIN.as_secs(),
            deadline.as_secs_f64()
        ),
    )
}
