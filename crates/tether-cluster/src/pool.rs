//! One SSH connection per host and route, shared by everything that runs
//! there (that host's persistent shells): connected on first use, again
//! after it drops, and closed when the last user of it is gone. Each user
//! holds a [`RemoteHost`] whose commands and terminals are channels of the
//! shared connection. The pool resolves nothing: each host comes with the
//! [`Route`] its caller resolved, and two routes that differ (another
//! user's settings, another ssh_config) never share a connection. Each
//! slot also finds (or brings) the host's own tether daemon for
//! [`RemoteHost::far_side`] (`far/`), as the caller's [`FarSettings`]
//! allow, and remembers how it reached it; and keeps the steps of its
//! connections until they are taken ([`RemoteHost::take_link_steps`]).

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use tether_ssh::{Connection, Event, PtyRequest, Route};
use tether_transport::{
    BoxFuture, FarSettings, FarSide, HostFailure, HostOutput, LinkStep, RemoteHost, Terminal,
    TerminalRequest, TransportError,
};

/// Longest a file command (write, check, remove) may take.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(60);

/// Longest opening a terminal may take.
const TERMINAL_TIMEOUT: Duration = Duration::from_secs(30);

/// The connections, by host name as written, route and far settings.
pub struct HostPool {
    slots: Mutex<HashMap<(String, String, FarSettings), Weak<Slot>>>,
    /// The tether binary copied to hosts (`None`: this process's own).
    binary: Option<PathBuf>,
}

impl std::fmt::Debug for HostPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostPool").finish_non_exhaustive()
    }
}

/// One host's connection, while someone uses it.
struct Slot {
    /// The host as its caller named it.
    name: String,
    /// How it is reached (as given: the pool resolves nothing).
    route: Route,
    /// Held while connecting, so concurrent users share one connection.
    conn: tokio::sync::Mutex<Weak<Connection>>,
    /// Whether and where tether may run there.
    far: FarSettings,
    /// The tether binary to copy there (`None`: this process's own).
    binary: Option<PathBuf>,
    /// What is known of its far side (held while finding it out).
    known: tokio::sync::Mutex<crate::far::Known>,
    /// The steps of its connections not yet taken (the last
    /// [`MAX_STEPS`]).
    steps: Arc<Mutex<Vec<LinkStep>>>,
}

/// Most connection steps a host keeps until they are taken.
const MAX_STEPS: usize = 64;

impl HostPool {
    /// An empty pool; a host's far side runs this process's own binary.
    pub fn new() -> Arc<HostPool> {
        Arc::new(HostPool {
            slots: Mutex::new(HashMap::new()),
            binary: None,
        })
    }

    /// An empty pool that copies `binary` (a tether) to hosts instead of
    /// this process's own: for a program that is not tether itself (a
    /// test of the far side).
    pub fn deploying(binary: PathBuf) -> Arc<HostPool> {
        Arc::new(HostPool {
            slots: Mutex::new(HashMap::new()),
            binary: Some(binary),
        })
    }

    /// A handle on host `name` reached by `route`, its far side as `far`
    /// allows; it connects when first used. Users of the same name, route
    /// and far settings share one connection.
    pub fn host(
        &self,
        name: &str,
        route: Route,
        far: FarSettings,
    ) -> Result<Arc<dyn RemoteHost>, crate::ClusterError> {
        let key = route.key().ok_or_else(|| crate::ClusterError::BadHost {
            name: name.to_owned(),
            problem: "its settings name a path that is not UTF-8",
        })?;
        let mut slots = self.slots.lock().unwrap_or_else(|p| p.into_inner());
        // Slots nobody holds any more go (a pool that lives as long as the
        // daemon would otherwise keep every route it ever saw).
        slots.retain(|_, s| s.strong_count() > 0);
        let key = (name.to_owned(), key, far.clone());
        let slot = match slots.get(&key).and_then(Weak::upgrade) {
            Some(s) => s,
            None => {
                let s = Arc::new(Slot {
                    name: name.to_owned(),
                    route,
                    conn: tokio::sync::Mutex::new(Weak::new()),
                    far,
                    binary: self.binary.clone(),
                    known: tokio::sync::Mutex::default(),
                    steps: Arc::default(),
                });
                slots.insert(key, Arc::downgrade(&s));
                s
            }
        };
        Ok(Arc::new(PooledHost {
            slot,
            held: Mutex::new(None),
        }))
    }
}

/// One user's handle on a host: it keeps the shared connection open.
struct PooledHost {
    slot: Arc<Slot>,
    held: Mutex<Option<Arc<Connection>>>,
}

impl std::fmt::Debug for PooledHost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PooledHost")
            .field("host", &self.slot.name)
            .finish_non_exhaustive()
    }
}

impl PooledHost {
    /// A failure of this host; the messages name no host (tether-ssh's
    /// name none), `TransportError::Host` says it once.
    fn error(&self, kind: HostFailure, message: String) -> TransportError {
        TransportError::Host {
            host: self.slot.name.clone(),
            kind,
            message,
        }
    }

    /// The shared connection, made (or remade, after it dropped) now.
    async fn connection(&self) -> Result<Arc<Connection>, TransportError> {
        let held = self.held.lock().unwrap_or_else(|p| p.into_inner()).clone();
        if let Some(c) = held.filter(|c| !c.is_closed()) {
            return Ok(c);
        }
        let mut shared = self.slot.conn.lock().await;
        let conn = match shared.upgrade().filter(|c| !c.is_closed()) {
            Some(c) => c,
            None => {
                let target = &self.slot.route.target;
                let mut opts = self.slot.route.options.clone();
                // These connections live long: a peer that vanished must be
                // noticed rather than hang its sessions, even where the
                // route turned keepalive off.
                opts.keepalive.get_or_insert(crate::exec::DEFAULT_KEEPALIVE);
                let steps = Arc::clone(&self.slot.steps);
                opts.steps = Some(tether_ssh::Steps(Arc::new(move |line: &str| {
                    let mut kept = steps.lock().unwrap_or_else(|p| p.into_inner());
                    if kept.len() >= MAX_STEPS {
                        kept.remove(0);
                    }
                    kept.push(LinkStep {
                        at: std::time::SystemTime::now(),
                        text: line.to_owned(),
                    });
                })));
                let c = Arc::new(
                    tether_ssh::connect(target, &opts)
                        .await
                        .map_err(|e| self.error(e.kind(), e.to_string()))?,
                );
                *shared = Arc::downgrade(&c);
                c
            }
        };
        *self.held.lock().unwrap_or_else(|p| p.into_inner()) = Some(Arc::clone(&conn));
        Ok(conn)
    }
}

impl RemoteHost for PooledHost {
    fn name(&self) -> &str {
        &self.slot.name
    }

    fn take_link_steps(&self) -> Vec<LinkStep> {
        std::mem::take(&mut *self.slot.steps.lock().unwrap_or_else(|p| p.into_inner()))
    }

    fn link_ended_hung(&self) -> bool {
        let held = self.held.lock().unwrap_or_else(|p| p.into_inner()).clone();
        held.is_some_and(|c| c.is_closed() && c.hung())
    }

    fn link_hung(&self, within: Duration) -> BoxFuture<'_, bool> {
        Box::pin(async move {
            let held = self.held.lock().unwrap_or_else(|p| p.into_inner()).clone();
            let Some(conn) = held.filter(|c| !c.is_closed()) else {
                return false;
            };
            let trip = conn.exec_with_input("true", None, None, std::future::pending(), |_| {});
            if tokio::time::timeout(within, trip).await.is_ok() {
                return false;
            }
            // Nobody gets this connection again; its channels end. (A
            // user connecting meanwhile holds the slot; the disconnect
            // below closes it for that user too.)
            if let Ok(mut shared) = self.slot.conn.try_lock()
                && shared.upgrade().is_some_and(|c| Arc::ptr_eq(&c, &conn))
            {
                *shared = Weak::new();
            }
            *self.held.lock().unwrap_or_else(|p| p.into_inner()) = None;
            let _ = tokio::time::timeout(Duration::from_secs(1), conn.disconnect()).await;
            true
        })
    }

    fn run(
        &self,
        command: String,
        input: Vec<u8>,
    ) -> BoxFuture<'_, Result<HostOutput, TransportError>> {
        Box::pin(async move {
            let conn = self.connection().await?;
            let mut out = HostOutput::default();
            // The deadline covers opening the channel too (a dead peer).
            let ran = tokio::time::timeout(
                COMMAND_TIMEOUT,
                conn.exec_with_input(&command, Some(&input), None, std::future::pending(), |e| {
                    match e {
                        Event::Stdout(b) => out.stdout.extend_from_slice(&b),
                        Event::Stderr(b) => out.stderr.extend_from_slice(&b),
                    }
                }),
            )
            .await;
            let Ok(ended) = ran else {
                return Err(self.error(
                    HostFailure::TimedOut,
                    format!(
                        "a session file command did not finish within {} s; is the host up?",
                        COMMAND_TIMEOUT.as_secs()
                    ),
                ));
            };
            out.status = ended
                .map_err(|e| self.error(e.kind(), e.to_string()))?
                .exit_code;
            Ok(out)
        })
    }

    fn far_side(&self) -> BoxFuture<'_, Result<FarSide, TransportError>> {
        Box::pin(async move {
            // Turned off: the host is not even reached.
            if let Some(why) = &self.slot.far.agentless {
                return Ok(FarSide::Agentless(why.clone()));
            }
            // This tether's own hash (once per process) is taken while the
            // connection is made: a first contact waits for the longer one.
            let (conn, _) = tokio::join!(
                self.connection(),
                crate::far::identity(self.slot.binary.as_deref())
            );
            let conn = conn?;
            crate::far::far_side(
                &self.slot.name,
                &conn,
                &self.slot.far,
                self.slot.binary.as_deref(),
                &self.slot.known,
            )
            .await
        })
    }

    fn open_terminal(
        &self,
        request: TerminalRequest,
    ) -> BoxFuture<'_, Result<Arc<dyn Terminal>, TransportError>> {
        Box::pin(async move {
            let conn = self.connection().await?;
            let env = vec![("TERM".to_owned(), request.term.clone())];
            let req = PtyRequest {
                term: request.term,
                size: request.size,
                echo: request.echo,
                output_processing: request.output_processing,
                env,
                command: Some(request.command),
            };
            let pty = tokio::time::timeout(TERMINAL_TIMEOUT, conn.open_pty(&req))
                .await
                .map_err(|_| {
                    self.error(
                        HostFailure::TimedOut,
                        format!(
                            "no terminal within {} s; is the host up?",
                            TERMINAL_TIMEOUT.as_secs()
                        ),
                    )
                })?
                .map_err(|e| self.error(e.kind(), e.to_string()))?;
            let terminal: Arc<dyn Terminal> = Arc::new(pty);
            Ok(terminal)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn route(port: u16) -> Route {
        Route {
            target: tether_ssh::Target {
                host: "n1".into(),
                hostname: "127.0.0.1".into(),
                port,
                user: "ops".into(),
            },
            options: tether_ssh::ConnectOptions::default(),
        }
    }

    /// The slots the pool holds: (all, those still used).
    fn slots(pool: &HostPool) -> (usize, usize) {
        let slots = pool.slots.lock().unwrap_or_else(|p| p.into_inner());
        let used = slots.values().filter(|s| s.strong_count() > 0).count();
        (slots.len(), used)
    }

    #[test]
    fn one_slot_per_name_and_route_while_used() {
        let pool = HostPool::new();
        let a = pool
            .host("n1", route(22), FarSettings::default())
            .unwrap_or_else(|e| panic!("{e}"));
        let b = pool
            .host("n1", route(22), FarSettings::default())
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(slots(&pool), (1, 1));
        // Another route (another caller's settings) is another connection.
        let c = pool
            .host("n1", route(2222), FarSettings::default())
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(slots(&pool), (2, 2));
        assert_eq!((a.name(), c.name()), ("n1", "n1"));
        // Other far settings (deployment off for this caller) too.
        let off = FarSettings {
            agentless: Some("deploy = false".into()),
            ..FarSettings::default()
        };
        let e = pool
            .host("n1", route(22), off)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(slots(&pool), (3, 3));
        drop((a, b, c, e));
        assert_eq!(slots(&pool).1, 0);
        // Slots nobody holds are dropped when the next host is asked for.
        let _d = pool
            .host("n2", route(22), FarSettings::default())
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(slots(&pool), (1, 1));
    }
}
