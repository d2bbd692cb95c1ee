//! Remote forwards (`-R`): the server is asked to listen
//! (`tcpip-forward`, `streamlocal-forward@openssh.com`); each connection
//! it accepts comes as a channel the connection's handler passes here.
//! tether connects to the target first and only then accepts the
//! channel, so a target that refuses is a refused channel (the remote
//! client sees its connection closed). `-R [bind:]port` without a target
//! answers SOCKS on the channel and connects where the request says.
//! Channels for a forward tether did not ask for are refused.

use std::sync::Arc;

use russh::ChannelOpenFailure;
use russh::client::{ChannelOpenHandle, Msg};
use tokio::net::{TcpStream, UnixStream};
use tokio::sync::Semaphore;

use super::pipe::{pipe, pipe_channel};
use super::registry::{Registry, RemoteEntry};
use super::{ForwardProblem, ForwardSpec, Place, problem};
use crate::connect::Connection;
use crate::error::SshError;

/// The address sent for a listen host: none is `localhost`, `*` every
/// interface (`""`), as OpenSSH sends them.
fn bind_address(host: Option<&str>) -> String {
    match host {
        None => "localhost".to_owned(),
        Some("*") => String::new(),
        Some(h) => h.to_owned(),
    }
}

/// Asks the server to listen for `spec`; the allocated port for port 0.
pub(super) async fn request(
    spec: &ForwardSpec,
    conn: &Connection,
    reg: &Arc<Registry>,
    max_connections: usize,
) -> Result<Option<u16>, SshError> {
    let refused = |e: russh::Error| {
        problem(
            format!("the server refused the remote forward {spec}: {e}"),
            ForwardProblem::Refused,
        )
    };
    // Registered before the request: the server may open a channel for
    // it before its reply to the request is read here.
    let listen = match &spec.listen {
        Place::Unix(_) => spec.listen.clone(),
        Place::Tcp { host, port } => Place::Tcp {
            host: Some(bind_address(host.as_deref())),
            port: *port,
        },
    };
    let id = reg.next_remote();
    if let Ok(mut r) = reg.remotes.lock() {
        r.push(RemoteEntry {
            id,
            listen: listen.clone(),
            target: spec.target.clone(),
            permits: Arc::new(Semaphore::new(max_connections)),
            name: spec.to_string(),
        });
    }
    let forget = || {
        if let Ok(mut r) = reg.remotes.lock() {
            r.retain(|e| e.id != id);
        }
    };
    let allocated = match &listen {
        Place::Unix(path) => {
            if let Err(e) = conn.handle.streamlocal_forward(path.clone()).await {
                forget();
                return Err(refused(e));
            }
            None
        }
        Place::Tcp { host, port } => {
            let got = match conn
                .handle
                .tcpip_forward(host.clone().unwrap_or_default(), u32::from(*port))
                .await
            {
                Ok(got) => got,
                Err(e) => {
                    forget();
                    return Err(refused(e));
                }
            };
            match (*port, u16::try_from(got)) {
                (0, Ok(p)) if p != 0 => {
                    if let Ok(mut r) = reg.remotes.lock()
                        && let Some(e) = r.iter_mut().find(|e| e.id == id)
                    {
                        e.listen = Place::Tcp {
                            host: host.clone(),
                            port: p,
                        };
                    }
                    Some(p)
                }
                _ => None,
            }
        }
    };
    Ok(allocated)
}

/// `-KR [bind:]port`, `-KR path`.
pub(super) async fn cancel(
    listen: &Place,
    conn: &Connection,
    reg: &Arc<Registry>,
) -> Result<(), SshError> {
    let found = reg.remotes.lock().ok().and_then(|mut r| {
        let i = r.iter().position(|e| match (&e.listen, listen) {
            (Place::Unix(a), Place::Unix(b)) => a == b,
            (Place::Tcp { host: h1, port: p1 }, Place::Tcp { host: h2, port: p2 }) => {
                p1 == p2
                    && h2
                        .as_deref()
                        .is_none_or(|h| Some(bind_address(Some(h))) == *h1)
            }
            _ => false,
        })?;
        Some(r.remove(i))
    });
    let Some(entry) = found else {
        return Err(problem(
            format!("no -R forward listens on {listen}"),
            ForwardProblem::NotFound,
        ));
    };
    let r = match &entry.listen {
        Place::Unix(p) => conn.handle.cancel_streamlocal_forward(p.clone()).await,
        Place::Tcp { host, port } => {
            conn.handle
                .cancel_tcpip_forward(host.clone().unwrap_or_default(), u32::from(*port))
                .await
        }
    };
    r.map_err(|e| {
        problem(
            format!("the server would not cancel {}: {e}", entry.name),
            ForwardProblem::Refused,
        )
    })
}

/// The target and permits of the forward a server channel is for.
fn lookup(reg: &Registry, at: &Place) -> Option<(Option<Place>, Arc<Semaphore>, String)> {
    let r = reg.remotes.lock().ok()?;
    let hit = |exact: bool| {
        r.iter().find(|e| match (&e.listen, at) {
            (Place::Unix(a), Place::Unix(b)) => a == b,
            (Place::Tcp { host: h1, port: p1 }, Place::Tcp { host: h2, port: p2 }) => {
                p1 == p2 && (!exact || h1 == h2)
            }
            _ => false,
        })
    };
    let e = hit(true).or_else(|| hit(false))?;
    Some((e.target.clone(), Arc::clone(&e.permits), e.name.clone()))
}

impl Registry {
    /// A `forwarded-tcpip` or `forwarded-streamlocal` channel the server
    /// opened for the forward listening at `at`; `from` names its origin.
    pub(crate) fn forwarded(
        self: &Arc<Self>,
        channel: russh::Channel<Msg>,
        at: Place,
        from: String,
        reply: ChannelOpenHandle,
    ) {
        let Some((target, permits, name)) = lookup(self, &at) else {
            self.say(&format!(
                "the server opened a channel for {at}, which tether did not ask to forward; refused"
            ));
            tokio::spawn(reply.reject(ChannelOpenFailure::AdministrativelyProhibited));
            return;
        };
        let Ok(permit) = permits.try_acquire_owned() else {
            tokio::spawn(reply.reject(ChannelOpenFailure::ResourceShortage));
            return;
        };
        let reg = Arc::clone(self);
        self.spawn(
            format!("{name}: connection from {from}"),
            move |guard| async move {
                let _guard = guard;
                let _permit = permit;
                match target {
                    Some(t) => match connect(&t).await {
                        Ok(sock) => {
                            reply.accept().await;
                            match sock {
                                Local::Tcp(s) => pipe_channel(s, channel).await,
                                Local::Unix(s) => pipe_channel(s, channel).await,
                            }
                        }
                        Err(e) => {
                            reg.say(&format!("{name}: cannot connect to {t}: {e}"));
                            reply.reject(ChannelOpenFailure::ConnectFailed).await;
                        }
                    },
                    None => {
                        reply.accept().await;
                        socks(channel.into_stream(), &reg, &name).await;
                    }
                }
            },
        );
    }
}

enum Local {
    Tcp(TcpStream),
    Unix(UnixStream),
}

async fn connect(t: &Place) -> std::io::Result<Local> {
    Ok(match t {
        Place::Tcp { host, port } => {
            let s = TcpStream::connect((host.as_deref().unwrap_or("localhost"), *port)).await?;
            let _ = s.set_nodelay(true);
            Local::Tcp(s)
        }
        Place::Unix(p) => Local::Unix(UnixStream::connect(p).await?),
    })
}

/// Dynamic `-R`: the channel speaks SOCKS; tether connects from here.
/// Only where `PermitRemoteOpen` allows.
async fn socks(mut channel: russh::ChannelStream<Msg>, reg: &Registry, name: &str) {
    let Ok(req) = super::socks::request(&mut channel).await else {
        return;
    };
    if !reg.may_open(&req.host, req.port) {
        reg.say(&format!(
            "{name}: {}:{} is not allowed by PermitRemoteOpen; refused",
            req.host, req.port
        ));
        let _ = super::socks::reply(&mut channel, req.version, false).await;
        return;
    }
    match TcpStream::connect((req.host.as_str(), req.port)).await {
        Ok(sock) => {
            let _ = sock.set_nodelay(true);
            if super::socks::reply(&mut channel, req.version, true)
                .await
                .is_ok()
            {
                pipe(sock, channel).await;
            }
        }
        Err(_) => {
            let _ = super::socks::reply(&mut channel, req.version, false).await;
        }
    }
}
