//! Local listeners: `-L` (each connection a `direct-tcpip` or
//! `direct-streamlocal` channel to the fixed target) and `-D` (the target
//! read from the connection's SOCKS request). A listener without an
//! address listens on loopback (every interface under GatewayPorts);
//! `*` or an empty address: every interface; `localhost`: loopback.

use std::net::SocketAddr;
use std::sync::Arc;

use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpListener, UnixListener};
use tokio::sync::Semaphore;

use super::pipe::pipe_channel;
use super::registry::Registry;
use super::{ForwardKind, ForwardProblem, ForwardSpec, Listening, Place, problem};
use crate::connect::Connection;
use crate::error::SshError;

/// The addresses a TCP listener of `spec` binds.
async fn addresses(
    host: Option<&str>,
    port: u16,
    gateway: bool,
) -> Result<Vec<SocketAddr>, String> {
    let loopback = || {
        vec![
            SocketAddr::from(([127, 0, 0, 1], port)),
            SocketAddr::from((std::net::Ipv6Addr::LOCALHOST, port)),
        ]
    };
    let every = || {
        vec![
            SocketAddr::from(([0, 0, 0, 0], port)),
            SocketAddr::from((std::net::Ipv6Addr::UNSPECIFIED, port)),
        ]
    };
    Ok(match host {
        None if gateway => every(),
        None => loopback(),
        Some("" | "*") => every(),
        Some("localhost") => loopback(),
        Some(h) => tokio::net::lookup_host((h, port))
            .await
            .map_err(|e| format!("cannot resolve {h}: {e}"))?
            .collect(),
    })
}

/// Binds the listener(s) of a `-L` or `-D` and starts accepting. The
/// allocated port is returned for a listen port 0.
pub(super) async fn listen(
    spec: &ForwardSpec,
    conn: &Arc<Connection>,
    reg: &Arc<Registry>,
    settings: &super::Settings,
) -> Result<(Listening, Option<u16>), SshError> {
    let gateway = settings.gateway_ports;
    let permits = Arc::new(Semaphore::new(settings.max_connections));
    let serve = Serve {
        spec: spec.clone(),
        conn: Arc::clone(conn),
        reg: Arc::clone(reg),
        permits,
    };
    let bind_failed = |at: &str, e: &dyn std::fmt::Display| {
        problem(
            format!("cannot listen on {at} for {spec}: {e}"),
            ForwardProblem::Bind,
        )
    };
    match &spec.listen {
        Place::Unix(path) => {
            if settings.bind_unlink {
                // Only a socket is removed, never another kind of file.
                use std::os::unix::fs::FileTypeExt;
                if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_socket()) {
                    let _ = std::fs::remove_file(path);
                }
            }
            let l = UnixListener::bind(path).map_err(|e| bind_failed(path, &e))?;
            {
                use std::os::unix::fs::PermissionsExt;
                let mode = 0o777 & !settings.bind_mask;
                if let Err(e) =
                    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
                {
                    let _ = std::fs::remove_file(path);
                    return Err(bind_failed(path, &e));
                }
            }
            let serve = serve.clone();
            let task = tokio::spawn(async move {
                loop {
                    let Ok((sock, _)) = l.accept().await else {
                        pause().await;
                        continue;
                    };
                    let Ok(permit) = Arc::clone(&serve.permits).acquire_owned().await else {
                        return;
                    };
                    serve.connection(
                        sock,
                        "unix socket".to_owned(),
                        ("127.0.0.1".to_owned(), 0),
                        permit,
                    );
                }
            });
            Ok((
                Listening {
                    spec: spec.clone(),
                    loops: vec![task],
                    socket: Some(path.into()),
                },
                None,
            ))
        }
        Place::Tcp { host, port } => {
            let addrs = addresses(host.as_deref(), *port, gateway)
                .await
                .map_err(|e| bind_failed(&spec.listen.to_string(), &e))?;
            let mut loops = Vec::new();
            let mut bound_port = *port;
            let mut first_error = None;
            for (i, a) in addrs.iter().enumerate() {
                let mut a = *a;
                a.set_port(bound_port);
                match TcpListener::bind(a).await {
                    Ok(l) => {
                        if let Ok(local) = l.local_addr() {
                            bound_port = local.port();
                        }
                        let serve = serve.clone();
                        loops.push(tokio::spawn(serve.accept_tcp(l)));
                    }
                    // The first address (IPv4, where most clients come)
                    // must bind; its IPv6 twin may be missing or already
                    // covered.
                    Err(e) if i == 0 => return Err(bind_failed(&a.to_string(), &e)),
                    Err(e) => first_error = first_error.or(Some((a, e))),
                }
            }
            if loops.is_empty() {
                let Some((a, e)) = first_error else {
                    return Err(bind_failed(&spec.listen.to_string(), &"no address"));
                };
                return Err(bind_failed(&a.to_string(), &e));
            }
            Ok((
                Listening {
                    spec: spec.clone(),
                    loops,
                    socket: None,
                },
                (*port == 0).then_some(bound_port),
            ))
        }
    }
}

/// After a failed accept (out of descriptors): a moment before the next,
/// rather than a busy loop.
async fn pause() {
    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
}

/// What each accepted connection needs.
#[derive(Clone)]
struct Serve {
    spec: ForwardSpec,
    conn: Arc<Connection>,
    reg: Arc<Registry>,
    permits: Arc<Semaphore>,
}

impl Serve {
    async fn accept_tcp(self, l: TcpListener) {
        // Accepted, then held until a permit frees: the loops of one
        // forward (IPv4 and IPv6) share its permits, and none holds one
        // while it waits for a connection.
        loop {
            let Ok((sock, peer)) = l.accept().await else {
                pause().await;
                continue;
            };
            let Ok(permit) = Arc::clone(&self.permits).acquire_owned().await else {
                return;
            };
            let _ = sock.set_nodelay(true);
            self.connection(
                sock,
                peer.to_string(),
                (peer.ip().to_string(), peer.port()),
                permit,
            );
        }
    }

    /// One accepted connection, served in its own task.
    fn connection<S>(
        &self,
        sock: S,
        from: String,
        origin: (String, u16),
        permit: tokio::sync::OwnedSemaphorePermit,
    ) where
        S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    {
        let this = self.clone();
        let line = format!("{}: connection from {from}", self.spec);
        self.reg.spawn(line, move |guard| async move {
            let _guard = guard;
            let _permit = permit;
            match this.spec.kind {
                ForwardKind::Dynamic => this.socks(sock, origin).await,
                _ => {
                    let Some(target) = this.spec.target.clone() else {
                        return;
                    };
                    if let Some(channel) = this.open(&target, &origin).await {
                        pipe_channel(sock, channel).await;
                    }
                }
            }
        });
    }

    /// A channel to `target`; `None` (and one line) when the server
    /// refuses: the connection is then closed.
    async fn open(
        &self,
        target: &Place,
        origin: &(String, u16),
    ) -> Option<russh::Channel<russh::client::Msg>> {
        let h = &self.conn.handle;
        let r = match target {
            Place::Tcp { host, port } => {
                h.channel_open_direct_tcpip(
                    host.clone().unwrap_or_default(),
                    u32::from(*port),
                    origin.0.clone(),
                    u32::from(origin.1),
                )
                .await
            }
            Place::Unix(path) => h.channel_open_direct_streamlocal(path.clone()).await,
        };
        match r {
            Ok(c) => Some(c),
            Err(e) => {
                self.reg.say(&format!(
                    "{}: the server could not connect to {target}: {e}",
                    self.spec
                ));
                None
            }
        }
    }

    async fn socks<S>(&self, mut sock: S, origin: (String, u16))
    where
        S: AsyncRead + AsyncWrite + Unpin,
    {
        let Ok(req) = super::socks::request(&mut sock).await else {
            return;
        };
        let target = Place::Tcp {
            host: Some(req.host),
            port: req.port,
        };
        match self.open(&target, &origin).await {
            Some(channel) => {
                if super::socks::reply(&mut sock, req.version, true)
                    .await
                    .is_ok()
                {
                    pipe_channel(sock, channel).await;
                }
            }
            None => {
                let _ = super::socks::reply(&mut sock, req.version, false).await;
            }
        }
    }
}
