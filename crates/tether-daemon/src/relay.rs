//! Requests on sessions that live in a host's own tether daemon, carried
//! there and their replies carried back.
//!
//! Flow at a glance:
//! 1. [`target`] says which requests go to a host: every request naming a
//!    session in the [`HostedBook`], and a `run` that names a host for a
//!    session this daemon does not hold (a new session).
//! 2. [`serve`] asks the host for its far side (`RemoteHost::far_side`:
//!    tether found or copied there, its daemon started); a host that is
//!    agentless gives the request back, to be served here as before.
//! 3. It speaks the daemon protocol to the host's daemon over the link:
//!    the hello (the session's namespace), the request with the session's
//!    name there (a `run` named with a `call`, kept in the book first),
//!    then every line back (pieces, then the reply; after `attach`'s reply,
//!    the frames both ways).
//! 4. A link that ends (or stops answering: a round trip every few seconds
//!    of silence) before the reply is `connection_lost` with
//!    `link.kept`: the command runs on, on the host; the cut call is noted
//!    so the next look at the session asks the host for that call's result
//!    (`recall`), and a followed command is followed again from its
//!    offset. Nothing is ever sent twice. The lost result carries what
//!    came before the cut (`relay_lost`: an unfollowed `run` is sent with
//!    `pieces`), and the recall's result leaves that out.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tether_transport::{DaemonStream, HostFailure};
use tokio::io::{AsyncWriteExt, BufReader, ReadHalf, WriteHalf};

use crate::hosted::Hosted;
use crate::lines::{self, LineRead};
use crate::ops::{self, Address, failure};
use crate::protocol::{
    Failure, FailureKind, HostRoute, LinkFailure, Reply, Request, Response, Status,
};
use crate::quiet::{QuietReader, QuietWriter};
use crate::relay_lost::Came;
pub(crate) use crate::relay_open::{Opened, host_failure, open};
use crate::server::{State, client_gone, write_line};

/// Silence from the host after which the link is checked.
pub(crate) const QUIET_CHECK: Duration = Duration::from_secs(2);

/// How long the link has to answer that check.
pub(crate) const ANSWER_WITHIN: Duration = Duration::from_secs(3);

/// The waits between tries to reach a host's daemon (each try logged).
const BACKOFF: [Duration; 4] = [
    Duration::from_millis(250),
    Duration::from_millis(500),
    Duration::from_secs(1),
    Duration::from_secs(2),
];

/// Where a request goes.
pub(crate) enum Target {
    /// A session living on a host.
    Hosted(Hosted),
    /// A `run` for a new session on this host, if tether runs there (or
    /// an `attach` to a session another machine made there).
    New(Address, HostRoute),
    /// The host's own listing, for namespace `.1`.
    Listing(HostRoute, String),
}

/// What [`serve`] did.
pub(crate) enum Relayed {
    /// Served; false when the client's connection is done.
    Done(bool),
    /// The host is agentless (why): serve the request here.
    Agentless(Box<Request>, String),
}

/// Where `request` of namespace `ns` goes, if to a host.
pub(crate) fn target(
    state: &State,
    ns: &str,
    request: &Request,
) -> Option<Result<Target, Failure>> {
    if let Request::ListOn { host, .. } = request {
        state.hosts.as_ref()?;
        return Some(Ok(Target::Listing(host.clone(), ns.to_owned())));
    }
    if matches!(request, Request::List { .. } | Request::Stop) {
        return None;
    }
    let address = ops::resolve(ns, request.session()?).ok()?;
    let named = match request {
        Request::Run { host, .. } | Request::Attach { host, .. } => host.as_ref(),
        _ => None,
    };
    if let Some(h) = state.hosted.get(&address) {
        if let Some(n) = named
            && n.name != h.host.name
        {
            return Some(Err(failure(
                FailureKind::BadRequest,
                format!(
                    "session {:?} runs on {}, not {}; name another session (or close this one)",
                    address.display(),
                    h.host.name,
                    n.name
                ),
            )));
        }
        return Some(Ok(Target::Hosted(h)));
    }
    let route = named?;
    state.hosts.as_ref()?;
    let here = state
        .registry
        .host_of(&address.owner, &address.name)
        .is_some()
        || state.registry.lost(&address.owner, &address.name).is_some();
    (!here).then(|| Ok(Target::New(address, route.clone())))
}

pub(crate) type HostLines = BufReader<ReadHalf<Box<dyn DaemonStream>>>;
pub(crate) type HostWrite = WriteHalf<Box<dyn DaemonStream>>;

/// Sends one JSON line to the host.
pub(crate) async fn send(w: &mut HostWrite, value: &impl serde::Serialize) -> std::io::Result<()> {
    let mut line = serde_json::to_vec(value).map_err(std::io::Error::other)?;
    line.push(b'\n');
    w.write_all(&line).await?;
    w.flush().await
}

/// One reply line from the host; `None` when the link ended.
pub(crate) async fn receive(r: &mut HostLines) -> Option<Reply> {
    let mut line = Vec::new();
    match lines::read_line(r, &mut line, lines::MAX_REQUEST_LINE).await {
        Ok(LineRead::Line) => serde_json::from_slice(&line).ok(),
        _ => None,
    }
}

/// Serves `request` (of namespace `ns`) on a host's daemon.
pub(crate) async fn serve(
    state: &Arc<State>,
    target: Target,
    request: Request,
    read: &mut BufReader<QuietReader>,
    write: &mut QuietWriter,
) -> Relayed {
    let (address, route, cut, given) = match &target {
        Target::Hosted(h) => (h.address(), h.host.clone(), h.cut.clone(), h.given),
        Target::New(a, r) => (a.clone(), r.clone(), None, None),
        Target::Listing(r, ns) => {
            let all = matches!(request, Request::ListOn { all: true, .. });
            return Relayed::Done(list_on(state, r, ns, all, write).await);
        }
    };
    let started = Instant::now();
    let deadline = crate::relay_open::deadline(&request);
    let hosted_shellish = matches!(target, Target::Hosted(_)) && shellish(&request);
    let opened = open(state, &route, &address.owner, &BACKOFF, deadline).await;
    let (host, mut hr, mut hw) = match opened {
        Ok(Opened::Daemon(host, hr, hw)) => (host, hr, hw),
        Ok(Opened::Agentless(why)) => {
            if let Target::New(..) = target
                && !matches!(request, Request::Attach { .. })
            {
                return Relayed::Agentless(Box::new(request), why);
            }
            let message = if let Target::New(..) = target {
                format!(
                    "{} is agentless ({why}): no session lives in tether there; `tether ls` lists this machine's",
                    route.name
                )
            } else {
                format!(
                    "session {:?} lives in tether on {}, which cannot be used now ({why}); nothing was done",
                    address.display(),
                    route.name
                )
            };
            let f = host_failure(HostFailure::Setup, message);
            return Relayed::Done(write_line(write, &Reply::Error(f)).await);
        }
        // A session there whose host hung before the request was sent:
        // the result says the link hung, as one cut under the call does;
        // nothing ran.
        Err(f) if hosted_shellish && f.host == Some(HostFailure::Hung) => {
            let session = request.session().unwrap_or_default();
            let how = LinkFailure::Unanswered;
            let (result, _) = Came::new(true, 0).lost(session, &route.name, how, started);
            let reply = Reply::Ok(Response::Shell(result));
            return Relayed::Done(write_line(write, &reply).await);
        }
        Err(f) => return Relayed::Done(write_line(write, &Reply::Error(f)).await),
    };
    let session = request.session().unwrap_or_default().to_owned();
    let mut came = match &request {
        Request::Run {
            follow,
            pieces,
            output_limit,
            ..
        } => Came::new(*follow || *pieces, *output_limit),
        _ => Came::new(true, 0),
    };
    let (outgoing, call) = crate::relay_request::there(request, &address.name, cut.as_deref());
    if let Target::New(..) = target {
        state.hosted.put(Hosted {
            owner: address.owner.clone(),
            name: address.name.clone(),
            host: route.clone(),
            cut: None,
            given: None,
            created: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_secs())
                .unwrap_or_default(),
            link: None,
        });
    }
    state.hosted.hold(&address, &host);
    if state.trace {
        eprintln!(
            "tether daemon: trace: relay {} {:?} to {}",
            outgoing.op(),
            address.display(),
            route.name
        );
    }
    let attach_size = match outgoing {
        Request::Attach { rows, cols, .. } => Some((rows, cols)),
        _ => None,
    };
    let is_close = matches!(outgoing, Request::Close { .. });
    let recalled = matches!(outgoing, Request::Recall { .. });
    let shellish = shellish(&outgoing);
    if send(&mut hw, &outgoing).await.is_err() {
        // Not written: nothing ran; the request may be made again.
        let f = host_failure(
            HostFailure::Lost,
            format!(
                "{}: the link was lost before the request was sent; nothing was done",
                route.name
            ),
        );
        return Relayed::Done(write_line(write, &Reply::Error(f)).await);
    }
    loop {
        let got = tokio::select! {
            got = receive(&mut hr) => got.ok_or_else(|| {
                // Its keepalives unanswered, the link hung, not closed.
                if host.link_ended_hung() {
                    LinkFailure::Unanswered
                } else {
                    LinkFailure::Lost
                }
            }),
            () = client_gone(read) => return Relayed::Done(false),
            () = tokio::time::sleep(QUIET_CHECK) => {
                if host.link_hung(ANSWER_WITHIN).await {
                    Err(LinkFailure::Unanswered)
                } else {
                    continue;
                }
            }
        };
        let reply = match got {
            Ok(reply @ (Reply::Piece(_) | Reply::Omitted(_))) => {
                // (The start's empty piece is for this relay only.)
                let empty = matches!(&reply, Reply::Piece(p) if p.text.is_empty());
                if came.piece(&reply) && !empty && !write_line(write, &reply).await {
                    return Relayed::Done(false);
                }
                continue;
            }
            Ok(Reply::Ok(Response::Shell(mut r))) => {
                r.session.clone_from(&session);
                r.host = Some(route.name.clone());
                r.link_steps = crate::protocol::LinkStep::taken(host.as_ref());
                // What the lost result gave is not given again.
                if recalled && let Some(g) = given {
                    g.strip(&mut r.output);
                    state.hosted.set_cut_given(&address, cut.clone(), None);
                }
                if r.status != Status::Running && (recalled || call.is_some()) {
                    state.hosted.set_cut(&address, None);
                }
                Reply::Ok(Response::Shell(r))
            }
            Ok(Reply::Error(f)) if f.kind == FailureKind::UnknownSession => {
                // Gone on the host (its daemon stopped, or closed there).
                state.hosted.remove(&address);
                Reply::Error(f)
            }
            Ok(reply) => {
                if is_close && matches!(reply, Reply::Ok(_)) {
                    state.hosted.remove(&address);
                }
                reply
            }
            Err(how) => {
                let (result, gave) = came.lost(&session, &route.name, how, started);
                if let Some(c) = &call {
                    state.hosted.set_cut_given(&address, Some(c.clone()), gave);
                }
                let reply = if shellish {
                    Reply::Ok(Response::Shell(result))
                } else {
                    Reply::Error(host_failure(
                        HostFailure::Lost,
                        format!(
                            "{}: the link was lost before the reply; the request may have been carried out there",
                            route.name
                        ),
                    ))
                };
                return Relayed::Done(write_line(write, &reply).await);
            }
        };
        let ok = matches!(reply, Reply::Ok(_));
        if !write_line(write, &reply).await {
            return Relayed::Done(false);
        }
        if let Some((rows, cols)) = attach_size
            && ok
        {
            let followed = crate::relay_attach::Followed {
                route: route.clone(),
                owner: address.owner.clone(),
                name: address.name.clone(),
                rows,
                cols,
                at: None,
            };
            crate::relay_attach::carry(state, followed, host, read, write, hr, hw).await;
            return Relayed::Done(false);
        }
        return Relayed::Done(true);
    }
}

/// True for the requests whose reply is a shell's result.
fn shellish(request: &Request) -> bool {
    matches!(
        request,
        Request::Run { .. }
            | Request::Follow { .. }
            | Request::Read { .. }
            | Request::Recall { .. }
            | Request::Send { .. }
    )
}

/// Serves `list_on`: the host daemon's listing, each entry naming the
/// host; false when the client's connection is done.
async fn list_on(
    state: &State,
    route: &HostRoute,
    ns: &str,
    all: bool,
    write: &mut QuietWriter,
) -> bool {
    let listed = async {
        let (mut hr, mut hw) = match open(state, route, ns, &BACKOFF, None).await? {
            Opened::Daemon(_, hr, hw) => (hr, hw),
            Opened::Agentless(why) => {
                return Err(host_failure(
                    HostFailure::Setup,
                    format!(
                        "{} is agentless ({why}): its sessions are this daemon's (`tether ls`)",
                        route.name
                    ),
                ));
            }
        };
        let fail = |m: String| host_failure(HostFailure::Lost, format!("{}: {m}", route.name));
        send(&mut hw, &Request::List { all })
            .await
            .map_err(|e| fail(format!("the link was lost: {e}")))?;
        match receive(&mut hr).await {
            Some(Reply::Ok(Response::List(mut list))) => {
                for s in &mut list.sessions {
                    s.host = Some(route.name.clone());
                }
                Ok(Reply::Ok(Response::List(list)))
            }
            Some(Reply::Error(f)) => Ok(Reply::Error(f)),
            _ => Err(fail("the link was lost before the listing came".to_owned())),
        }
    };
    let reply = listed.await.unwrap_or_else(Reply::Error);
    write_line(write, &reply).await
}
