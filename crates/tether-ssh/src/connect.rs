//! One SSH connection: TCP with a connect timeout and TCP_NODELAY, or a
//! `ProxyCommand` (`proxy`), through jump hosts (a failing one named as the
//! jump host), the handshake, the host-key check under a policy (under
//! `HostKeyAlias`, with a `KnownHostsCommand`'s lines), then authentication
//! (`auth`). The server's banner is kept for the caller; agent channels
//! the server opens are served (`agent_forward`) when asked for.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use russh::client;
use russh::keys::{PublicKey, PublicKeyOrCertificate};
use serde::{Deserialize, Serialize};
use tokio::net::TcpStream;

use crate::error::SshError;

/// Bytes read from the host's stream per system call at most (several
/// 32 KiB packets).
const READ_BUFFER: usize = 256 * 1024;
use crate::known_hosts;

/// `StrictHostKeyChecking`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum HostKeyPolicy {
    /// Unknown and changed keys are refused (the default).
    #[default]
    Yes,
    /// Unknown keys are learned (written to the first known_hosts file);
    /// changed keys are refused.
    AcceptNew,
    /// Any key is accepted (only when asked for explicitly).
    No,
}

/// Where and as whom to connect.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Target {
    /// The name the user gave (for known_hosts and messages).
    pub host: String,
    /// The address to connect to (`HostName`).
    pub hostname: String,
    /// The port.
    pub port: u16,
    /// The user.
    pub user: String,
}

/// How to connect. Its data crosses a process boundary as a [`crate::Route`]
/// (serde); who asks for secrets and who hears the steps belong to the
/// process that connects, so they are not carried (`None` on the other side:
/// batch mode, nobody told).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ConnectOptions {
    /// known_hosts files to read; new keys go to the first.
    pub known_hosts: Vec<PathBuf>,
    /// The host-key policy.
    pub policy: HostKeyPolicy,
    /// Key files to try, in order.
    pub identities: Vec<PathBuf>,
    /// Use only `identities`, not the agent's other keys.
    pub identities_only: bool,
    /// The agent's socket (`SSH_AUTH_SOCK`, `IdentityAgent`); `None`: no agent.
    pub agent: Option<PathBuf>,
    /// Deadline for TCP connect plus handshake plus authentication.
    pub connect_timeout: Duration,
    /// `ServerAliveInterval` and `ServerAliveCountMax`.
    pub keepalive: Option<(Duration, usize)>,
    /// `Ciphers`: the ciphers to offer, in order (`None`: russh's list).
    pub ciphers: Option<Vec<String>>,
    /// `KexAlgorithms`: the key exchanges to offer, in order.
    pub kex: Option<Vec<String>>,
    /// `PubkeyAcceptedAlgorithms`: the algorithms to log in with (`None`:
    /// the default list, see `pubkey_algorithms`).
    pub pubkey_algorithms: Option<Vec<String>>,
    /// `MACs`: the MACs to offer, in order (`None`: russh's list).
    pub macs: Option<Vec<String>>,
    /// `HostKeyAlgorithms`: the host key algorithms to accept, in order.
    pub host_key_algorithms: Option<Vec<String>>,
    /// Variables for each command's environment (`SetEnv`, and `SendEnv`'s
    /// matches); a server that does not accept one (`AcceptEnv`) ignores it.
    pub env: Vec<(String, String)>,
    /// Asks for passphrases and passwords (`None`: no one to ask; keys
    /// with a passphrase then work only through the agent).
    #[serde(skip)]
    pub secrets: Option<Arc<crate::secrets::Secrets>>,
    /// Try password and keyboard-interactive authentication
    /// (`PasswordAuthentication`, `KbdInteractiveAuthentication`).
    pub passwords: bool,
    /// `ProxyJump`: hosts to go through, first to last; each is reached
    /// through the one before it, with its own options (their own `jumps`
    /// are not used).
    pub jumps: Vec<Jump>,
    /// `ProxyCommand` (tokens not expanded yet): its stdin and stdout carry
    /// the connection instead of TCP to `HostName:Port`. Only the first
    /// hop's is used (the first jump host's, or the target's without
    /// jumps), as OpenSSH's `-W` chain does.
    pub proxy_command: Option<String>,
    /// `HostKeyAlias`: the name host keys are looked up and learned under
    /// (as written, no `[host]:port`).
    pub host_key_alias: Option<String>,
    /// `KnownHostsCommand` (tokens not expanded yet): more known_hosts
    /// lines, after the files.
    pub known_hosts_command: Option<String>,
    /// `HashKnownHosts`: a learned key's host name is written hashed.
    pub hash_known_hosts: bool,
    /// `AddressFamily` (`-4`, `-6`): the addresses tried.
    #[serde(default)]
    pub address_family: AddressFamily,
    /// Ask first for the key types known_hosts (and `KnownHostsCommand`'s
    /// `ORDER` run) holds for the host, as OpenSSH does unless
    /// `HostKeyAlgorithms` is a whole list (not `+…`/`-…`).
    pub known_host_key_types_first: bool,
    /// `CertificateFile`: certificates to log in with (each with the
    /// private key of an identity, or of the agent).
    pub certificates: Vec<PathBuf>,
    /// `ForwardAgent`: the agent socket forwarded to the host (`None`: no
    /// forwarding, the default).
    pub forward_agent: Option<PathBuf>,
    /// Who hears the connection's steps (`-v`); `None`: nobody.
    #[serde(skip)]
    pub steps: Option<crate::Steps>,
}

/// One jump host and how to connect to it.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Jump {
    /// The host.
    pub target: Target,
    /// Its options.
    pub options: ConnectOptions,
}

impl Default for ConnectOptions {
    fn default() -> Self {
        let home = std::env::var_os("HOME")
            .map(PathBuf::from)
            .unwrap_or_default();
        let ssh = home.join(".ssh");
        ConnectOptions {
            known_hosts: vec![
                ssh.join("known_hosts"),
                PathBuf::from("/etc/ssh/ssh_known_hosts"),
            ],
            policy: HostKeyPolicy::Yes,
            identities: ["id_ed25519", "id_ecdsa", "id_rsa"]
                .iter()
                .map(|k| ssh.join(k))
                .collect(),
            identities_only: false,
            agent: std::env::var_os("SSH_AUTH_SOCK").map(PathBuf::from),
            connect_timeout: Duration::from_secs(10),
            keepalive: None,
            ciphers: None,
            kex: None,
            pubkey_algorithms: None,
            macs: None,
            host_key_algorithms: None,
            env: Vec::new(),
            secrets: None,
            passwords: true,
            jumps: Vec::new(),
            proxy_command: None,
            host_key_alias: None,
            known_hosts_command: None,
            hash_known_hosts: false,
            address_family: AddressFamily::Any,
            known_host_key_types_first: true,
            certificates: Vec::new(),
            forward_agent: None,
            steps: None,
        }
    }
}

/// The handshake's view of the host key, and the server's other requests.
pub(crate) struct Checker {
    pub(crate) target: Target,
    pub(crate) known_hosts: Vec<PathBuf>,
    pub(crate) policy: HostKeyPolicy,
    /// The name known_hosts knows the host by.
    pub(crate) lookup: String,
    /// `KnownHostsCommand`.
    pub(crate) command: Option<String>,
    /// `HostKeyAlias`, else the host as named (`%k`).
    pub(crate) alias: String,
    pub(crate) hash: bool,
    pub(crate) refusal: Arc<Mutex<Option<SshError>>>,
    /// A changed key accepted because the policy is `no`: the refusal it
    /// would have been, for the warning.
    pub(crate) accepted_changed: Arc<Mutex<Option<SshError>>>,
    /// The server's banner (`SSH_MSG_USERAUTH_BANNER`).
    pub(crate) banner: Arc<Mutex<Option<String>>>,
    /// The agent to serve the host's agent channels from (`ForwardAgent`).
    pub(crate) forward_agent: Option<PathBuf>,
    pub(crate) steps: Option<crate::Steps>,
    /// Where the server's forwarded channels go (`forward`).
    pub(crate) inbound: Arc<crate::forward::Registry>,
    /// Set when the connection ended because the server stopped answering
    /// keepalives (the link hung).
    pub(crate) hung: Arc<AtomicBool>,
}

impl client::Handler for Checker {
    type Error = russh::Error;

    async fn disconnected(
        &mut self,
        reason: client::DisconnectReason<Self::Error>,
    ) -> Result<(), Self::Error> {
        match reason {
            client::DisconnectReason::ReceivedDisconnect(_) => Ok(()),
            client::DisconnectReason::Error(e) => {
                if matches!(e, russh::Error::KeepaliveTimeout) {
                    self.hung.store(true, Ordering::SeqCst);
                }
                Err(e)
            }
        }
    }

    async fn check_server_key(
        &mut self,
        presented: &PublicKeyOrCertificate,
    ) -> Result<bool, Self::Error> {
        let verdict = match presented {
            PublicKeyOrCertificate::PublicKey { key, .. } => self.verdict(key).await,
            PublicKeyOrCertificate::Certificate(c) => {
                self.verdict(&PublicKey::from(c.public_key().clone())).await
            }
        };
        match verdict {
            Ok(()) => Ok(true),
            Err(e) => {
                if let Ok(mut r) = self.refusal.lock() {
                    *r = Some(e);
                }
                Ok(false)
            }
        }
    }

    async fn auth_banner(
        &mut self,
        banner: &str,
        _session: &mut client::Session,
    ) -> Result<(), Self::Error> {
        if let Ok(mut b) = self.banner.lock() {
            b.get_or_insert_with(String::new).push_str(banner);
        }
        Ok(())
    }

    async fn server_channel_open_agent_forward(
        &mut self,
        channel: russh::Channel<client::Msg>,
        reply: client::ChannelOpenHandle,
        _session: &mut client::Session,
    ) -> Result<(), Self::Error> {
        crate::agent_forward::serve(self.forward_agent.clone(), channel, reply).await;
        Ok(())
    }

    async fn server_channel_open_forwarded_tcpip(
        &mut self,
        channel: russh::Channel<client::Msg>,
        connected_address: &str,
        connected_port: u32,
        originator_address: &str,
        originator_port: u32,
        reply: client::ChannelOpenHandle,
        _session: &mut client::Session,
    ) -> Result<(), Self::Error> {
        let at = crate::forward::Place::Tcp {
            host: Some(connected_address.to_owned()),
            port: u16::try_from(connected_port).unwrap_or(0),
        };
        let from = format!("{originator_address} port {originator_port}");
        self.inbound.forwarded(channel, at, from, reply);
        Ok(())
    }

    async fn server_channel_open_forwarded_streamlocal(
        &mut self,
        channel: russh::Channel<client::Msg>,
        socket_path: &str,
        reply: client::ChannelOpenHandle,
        _session: &mut client::Session,
    ) -> Result<(), Self::Error> {
        let at = crate::forward::Place::Unix(socket_path.to_owned());
        self.inbound
            .forwarded(channel, at, socket_path.to_owned(), reply);
        Ok(())
    }
}

/// An authenticated connection; commands run on channels of it.
pub struct Connection {
    pub(crate) handle: client::Handle<Checker>,
    pub(crate) host: String,
    pub(crate) env: Vec<(String, String)>,
    /// Agent forwarding is asked for on each session channel.
    pub(crate) forward_agent: bool,
    banner: Arc<Mutex<Option<String>>>,
    /// Shared with the handler: the forwards' channels (`forward`).
    pub(crate) inbound: Arc<crate::forward::Registry>,
    /// The jump hosts' connections, kept open while this one lives.
    _through: Vec<Connection>,
    /// The `ProxyCommand` carrying it, ended with it.
    _proxy: Option<crate::proxy::ProxyProcess>,
    /// Set by the handler when keepalives went unanswered (see [`Connection::hung`]).
    hung: Arc<AtomicBool>,
}

impl Connection {
    /// True when the connection ended because the host stopped answering
    /// its keepalives (`ServerAliveInterval` × `ServerAliveCountMax`): the
    /// link hung, rather than closed.
    pub fn hung(&self) -> bool {
        self.hung.load(Ordering::SeqCst)
    }

    /// The error of a call that a hung link ended ([`SshError::Hung`]).
    pub fn hung_error(&self) -> SshError {
        SshError::Hung {
            host: self.host.clone(),
        }
    }

    /// The banner the server sent before authentication (sshd's
    /// `Banner`), as sent: text from elsewhere, to be escaped before it
    /// reaches a terminal.
    pub fn banner(&self) -> Option<String> {
        self.banner.lock().ok().and_then(|b| b.clone())
    }
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection")
            .field("host", &self.host)
            .finish_non_exhaustive()
    }
}

/// Connects to `target`, checks its key and authenticates, all within
/// `opts.connect_timeout`.
pub async fn connect(target: &Target, opts: &ConnectOptions) -> Result<Connection, SshError> {
    let seconds = opts.connect_timeout.as_secs_f64();
    // The jump host being reached, for a timeout to name it.
    let at_jump: Arc<Mutex<Option<String>>> = Arc::default();
    match tokio::time::timeout(
        opts.connect_timeout,
        connect_inner(target, opts, Arc::clone(&at_jump)),
    )
    .await
    {
        Ok(r) => r,
        Err(_) => {
            let jump = at_jump.lock().ok().and_then(|j| j.clone());
            let timeout = |host: &str| SshError::Timeout {
                host: host.to_owned(),
                seconds,
            };
            Err(match jump {
                Some(jump) => SshError::Jump {
                    host: target.host.clone(),
                    source: Box::new(timeout(&jump)),
                    jump,
                },
                None => timeout(&target.host),
            })
        }
    }
}

async fn connect_inner(
    target: &Target,
    opts: &ConnectOptions,
    at_jump: Arc<Mutex<Option<String>>>,
) -> Result<Connection, SshError> {
    let mut through: Vec<Connection> = Vec::new();
    let jumps = opts.jumps.len();
    // The jump hosts' steps go where the target's go.
    let jump_opts: Vec<ConnectOptions> = opts
        .jumps
        .iter()
        .map(|j| ConnectOptions {
            steps: j.options.steps.clone().or_else(|| opts.steps.clone()),
            ..j.options.clone()
        })
        .collect();
    let hops = opts
        .jumps
        .iter()
        .zip(&jump_opts)
        .map(|(j, o)| (&j.target, o))
        .chain(std::iter::once((target, opts)));
    for (i, (hop, opts)) in hops.enumerate() {
        let is_jump = i < jumps;
        if let Ok(mut j) = at_jump.lock() {
            *j = is_jump.then(|| hop.host.clone());
        }
        let conn = hop_connect(through.last(), hop, opts).await;
        let conn = match conn {
            Ok(c) => c,
            Err(source) if is_jump => {
                return Err(SshError::Jump {
                    host: target.host.clone(),
                    jump: hop.host.clone(),
                    source: Box::new(source),
                });
            }
            Err(e) => return Err(e),
        };
        through.push(conn);
    }
    let mut conn = through.pop().ok_or_else(|| SshError::Protocol {
        host: target.host.clone(),
        what: "no connection".into(),
    })?;
    conn._through = through;
    Ok(conn)
}

/// One hop: directly, or through the connection before it.
async fn hop_connect(
    prev: Option<&Connection>,
    hop: &Target,
    opts: &ConnectOptions,
) -> Result<Connection, SshError> {
    let conn = match prev {
        None => match &opts.proxy_command {
            Some(command) => {
                let t = crate::proxy::Tokens {
                    hostname: &hop.hostname,
                    port: hop.port,
                    user: &hop.user,
                    original: &hop.host,
                    alias: opts.host_key_alias.as_deref().unwrap_or(&hop.host),
                };
                let command =
                    crate::proxy::expand(command, &t).map_err(|problem| SshError::Config {
                        place: "ProxyCommand".into(),
                        problem,
                    })?;
                crate::steps::tell(opts.steps.as_ref(), || {
                    format!("{}: running the ProxyCommand `{command}`", hop.host)
                });
                let (stream, proxy) = crate::proxy::spawn(&command, hop)?;
                match handshake(stream, hop, opts).await {
                    Ok(mut conn) => {
                        conn._proxy = Some(proxy);
                        conn
                    }
                    Err(e) => return Err(proxy.explain(&hop.host, e).await),
                }
            }
            None => {
                let stream = tcp(hop, opts.address_family).await?;
                crate::steps::tell(opts.steps.as_ref(), || {
                    let at = stream
                        .peer_addr()
                        .map(|a| a.to_string())
                        .unwrap_or_default();
                    format!("{}: connected to {at}", hop.host)
                });
                handshake(stream, hop, opts).await?
            }
        },
        Some(prev) => {
            crate::steps::tell(opts.steps.as_ref(), || {
                format!(
                    "{}: reaching {}:{} through the jump host {}",
                    hop.host, hop.hostname, hop.port, prev.host
                )
            });
            let channel = prev
                .handle
                .channel_open_direct_tcpip(
                    hop.hostname.clone(),
                    u32::from(hop.port),
                    "127.0.0.1",
                    0,
                )
                .await
                .map_err(|e| SshError::Protocol {
                    host: hop.host.clone(),
                    what: format!("the jump host {} would not forward to it: {e}", prev.host),
                })?;
            handshake(channel.into_stream(), hop, opts).await?
        }
    };
    Ok(conn)
}

/// Which addresses of a host are tried (`AddressFamily`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum AddressFamily {
    /// Any (IPv4 and IPv6, in the resolver's order).
    #[default]
    Any,
    /// IPv4 only (`inet`, `-4`).
    Inet,
    /// IPv6 only (`inet6`, `-6`).
    Inet6,
}

impl AddressFamily {
    /// As ssh_config writes it (`any`, `inet`, `inet6`).
    pub fn parse(value: &str) -> Option<AddressFamily> {
        match value.to_ascii_lowercase().as_str() {
            "any" => Some(AddressFamily::Any),
            "inet" => Some(AddressFamily::Inet),
            "inet6" => Some(AddressFamily::Inet6),
            _ => None,
        }
    }

    /// As ssh_config writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            AddressFamily::Any => "any",
            AddressFamily::Inet => "inet",
            AddressFamily::Inet6 => "inet6",
        }
    }

    fn admits(self, a: &std::net::SocketAddr) -> bool {
        match self {
            AddressFamily::Any => true,
            AddressFamily::Inet => a.is_ipv4(),
            AddressFamily::Inet6 => a.is_ipv6(),
        }
    }
}

async fn tcp(target: &Target, family: AddressFamily) -> Result<TcpStream, SshError> {
    let host = target.host.clone();
    let addr = if target.hostname.contains(':') {
        // An IPv6 literal: the port goes after brackets.
        format!("[{}]:{}", target.hostname, target.port)
    } else {
        format!("{}:{}", target.hostname, target.port)
    };
    let addrs: Vec<std::net::SocketAddr> = tokio::net::lookup_host(&addr)
        .await
        .map_err(|e| SshError::Resolve {
            host: host.clone(),
            reason: e.to_string(),
        })?
        .filter(|a| family.admits(a))
        .collect();
    if addrs.is_empty() && family != AddressFamily::Any {
        return Err(SshError::Resolve {
            host,
            reason: format!(
                "{} has no {} address (AddressFamily {})",
                target.hostname,
                if family == AddressFamily::Inet {
                    "IPv4"
                } else {
                    "IPv6"
                },
                family.as_str()
            ),
        });
    }
    let mut last = None;
    for a in &addrs {
        match TcpStream::connect(a).await {
            Ok(s) => {
                // The handshake's small packets must not wait for delayed ACKs.
                let _ = s.set_nodelay(true);
                return Ok(s);
            }
            Err(e) => last = Some(e),
        }
    }
    Err(SshError::Connect {
        host,
        addr,
        source: last.unwrap_or_else(|| std::io::Error::other("no address")),
    })
}

/// Applies `Ciphers` and `KexAlgorithms` (names as OpenSSH writes them).
fn algorithms(config: &mut client::Config, opts: &ConnectOptions) -> Result<(), String> {
    if let Some(names) = &opts.ciphers {
        let list = names
            .iter()
            .map(|n| {
                russh::cipher::Name::try_from(n.as_str()).map_err(|_| {
                    format!(
                        "cipher {n:?} is not supported; use one of {}",
                        supported(russh::cipher::ALL_CIPHERS.iter().map(|c| c.as_ref()))
                    )
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        config.preferred.cipher = list.into();
    }
    if let Some(names) = &opts.kex {
        let mut list = names
            .iter()
            .map(|n| {
                russh::kex::Name::try_from(n.as_str()).map_err(|_| {
                    format!(
                        "key exchange {n:?} is not supported; use one of {}",
                        supported(russh::kex::ALL_KEX_ALGORITHMS.iter().map(|k| k.as_ref()))
                    )
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        // The protocol extensions russh always announces stay.
        list.extend(
            config
                .preferred
                .kex
                .iter()
                .filter(|k| {
                    k.as_ref().starts_with("ext-info") || k.as_ref().starts_with("kex-strict")
                })
                .cloned(),
        );
        config.preferred.kex = list.into();
    }
    if let Some(names) = &opts.macs {
        config.preferred.mac = crate::algorithms::macs(names)?.into();
    }
    if let Some(names) = &opts.host_key_algorithms {
        config.preferred.key = crate::algorithms::host_key_algorithms(names)?.into();
    }
    Ok(())
}

fn supported<'a>(names: impl Iterator<Item = &'a str>) -> String {
    names.collect::<Vec<_>>().join(", ")
}

async fn handshake<S>(
    stream: S,
    target: &Target,
    opts: &ConnectOptions,
) -> Result<Connection, SshError>
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let host = target.host.clone();
    let mut config = client::Config {
        nodelay: true,
        ..Default::default()
    };
    if let Some((interval, max)) = opts.keepalive {
        config.keepalive_interval = Some(interval);
        config.keepalive_max = max;
    }
    algorithms(&mut config, opts).map_err(|what| SshError::Protocol {
        host: host.clone(),
        what,
    })?;
    let refusal = Arc::new(Mutex::new(None));
    let accepted_changed = Arc::new(Mutex::new(None));
    let banner = Arc::new(Mutex::new(None));
    let inbound = Arc::new(crate::forward::Registry::default());
    let hung = Arc::new(AtomicBool::new(false));
    let checker = Checker {
        hung: Arc::clone(&hung),
        inbound: Arc::clone(&inbound),
        target: target.clone(),
        known_hosts: opts.known_hosts.clone(),
        policy: opts.policy,
        lookup: crate::host_key::lookup_name(target, opts),
        command: opts.known_hosts_command.clone(),
        alias: opts
            .host_key_alias
            .clone()
            .unwrap_or_else(|| target.host.clone()),
        hash: opts.hash_known_hosts,
        refusal: Arc::clone(&refusal),
        accepted_changed: Arc::clone(&accepted_changed),
        banner: Arc::clone(&banner),
        forward_agent: opts.forward_agent.clone(),
        steps: opts.steps.clone(),
    };
    // OpenSSH runs `KnownHostsCommand` for `ORDER` only when it may
    // reorder the key types (a whole `HostKeyAlgorithms` list is used as is).
    let known = match opts.known_host_key_types_first {
        true => {
            known_hosts::known_algorithms(&checker.sources("ORDER", None).await?, &checker.lookup)
        }
        false => Vec::new(),
    };
    let known: Vec<_> = known
        .into_iter()
        .filter(|k| config.preferred.key.contains(k))
        .collect();
    if !known.is_empty() {
        // Ask for the key type we know first, as OpenSSH does.
        let rest: Vec<_> = config
            .preferred
            .key
            .iter()
            .filter(|k| !known.contains(k))
            .cloned()
            .collect();
        let mut keys = known;
        keys.extend(rest);
        config.preferred.key = keys.into();
    }
    // russh reads each packet with two exact reads (its length, then the
    // rest), one system call each on a bare socket; a buffer in between
    // takes several packets per call, as OpenSSH's own read buffer does.
    let stream = tokio::io::BufReader::with_capacity(READ_BUFFER, stream);
    let mut handle = match client::connect_stream(Arc::new(config), stream, checker).await {
        Ok(h) => h,
        Err(russh::Error::KeepaliveTimeout) => return Err(SshError::Hung { host }),
        Err(e) => {
            let refused = refusal.lock().ok().and_then(|mut r| r.take());
            return Err(refused.unwrap_or_else(|| SshError::Protocol {
                host: host.clone(),
                what: format!("the SSH handshake failed: {e}"),
            }));
        }
    };
    let changed = accepted_changed.lock().ok().and_then(|mut c| c.take());
    let passwords = match changed {
        Some(e) => {
            crate::auth::warn_changed_key(&e);
            false
        }
        None => opts.passwords,
    };
    match crate::auth::authenticate(&mut handle, target, opts, passwords).await {
        // The link hung while authenticating: that, not what it cut short.
        Err(_) if hung.load(Ordering::SeqCst) => return Err(SshError::Hung { host }),
        r => r?,
    }
    Ok(Connection {
        handle,
        host,
        env: opts.env.clone(),
        forward_agent: opts.forward_agent.is_some(),
        banner,
        inbound,
        _through: Vec::new(),
        _proxy: None,
        hung,
    })
}
