//! The proxy of a confined session's network allowlist. It runs outside
//! the fence (in the daemon) on a Unix socket that the fence shows to the
//! session; a forwarder inside the session's network namespace passes it
//! each connection made to the proxy address in `HTTP_PROXY` and
//! `ALL_PROXY`. It speaks HTTP (`CONNECT`, and plain requests in absolute
//! form) and SOCKS5 (`CONNECT`), told apart by the first byte. Names are
//! resolved here, never by the confined program. A destination off the
//! list is refused at once (`403`, SOCKS reply 2) and recorded for the
//! session's next result; so is an allowed name that resolves to this
//! machine or next to it (`local.rs`) when the list does not name that
//! address itself. The proxy connects to the addresses it checked, never
//! resolving the name again.

use std::net::{IpAddr, SocketAddr};
use std::path::Path;
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpStream, UnixListener, UnixStream};

use crate::allow::Allowlist;
use crate::local::Near;

/// The proxy's address inside a fence's network namespace, where the
/// forwarder listens (`HTTP_PROXY` and `ALL_PROXY` name it).
pub const PROXY_ADDR: &str = "127.0.0.1:3128";

/// The most bytes of an HTTP request's head.
const MAX_HEAD: usize = 64 << 10;

/// The proxy's refusals, shared with whoever reports them.
pub type Denied = Arc<Mutex<Vec<String>>>;

/// A running proxy: it stops (and its socket is removed) when dropped.
#[derive(Debug)]
pub struct Proxy {
    task: tokio::task::JoinHandle<()>,
    socket: std::path::PathBuf,
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.task.abort();
        let _ = std::fs::remove_file(&self.socket);
    }
}

impl Proxy {
    /// Listens on `socket` (made private to the user) on the current
    /// runtime, letting through what `allow` lets and recording the rest
    /// in `denied`.
    pub fn start(socket: &Path, allow: Allowlist, denied: Denied) -> std::io::Result<Proxy> {
        let listener = UnixListener::bind(socket)?;
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(socket, std::fs::Permissions::from_mode(0o600))?;
        let allow = Arc::new(allow);
        let task = tokio::spawn(async move {
            while let Ok((conn, _)) = listener.accept().await {
                let (allow, denied) = (Arc::clone(&allow), Arc::clone(&denied));
                tokio::spawn(async move {
                    let _ = serve(conn, &allow, &denied).await;
                });
            }
        });
        Ok(Proxy {
            task,
            socket: socket.to_owned(),
        })
    }
}

async fn serve(conn: UnixStream, allow: &Allowlist, denied: &Denied) -> std::io::Result<()> {
    let mut conn = BufReader::new(conn);
    let first = conn.fill_buf().await?.first().copied();
    match first {
        Some(5) => socks5(conn, allow, denied).await,
        Some(_) => http(conn, allow, denied).await,
        None => Ok(()),
    }
}

/// Why the proxy did not connect a program to `host:port`.
#[derive(Debug)]
enum Blocked {
    /// Refused (recorded in `denied`), and why.
    Refused(Refusal),
    /// Allowed, but not reached.
    Failed(std::io::Error),
}

/// Why a destination is refused.
#[derive(Clone, Copy, Debug)]
enum Refusal {
    /// It is not on the allowlist.
    NotAllowed,
    /// Allowed by name (or by `*`), but it resolves to `ip`, this
    /// machine's or next to it, which no entry names as an address.
    Near { ip: IpAddr, near: Near },
}

impl Refusal {
    /// The record of the refusal: `connect HOST:PORT`, with the reason
    /// when it is not only the list.
    fn record(self, host: &str, port: u16) -> String {
        match self {
            Refusal::NotAllowed => format!("connect {host}:{port}"),
            Refusal::Near { ip, near } => {
                let named = SocketAddr::new(ip, port);
                format!(
                    "connect {host}:{port}: it resolves to {ip}, {}; name {named} in the allowlist to allow it",
                    near.name()
                )
            }
        }
    }
}

/// Connects to `host:port` when `allow` lets it, resolving the name once
/// and leaving out the addresses that are near but not named; refused
/// (recorded in `denied`) when that leaves none.
async fn connect(
    allow: &Allowlist,
    denied: &Denied,
    host: &str,
    port: u16,
) -> Result<TcpStream, Blocked> {
    let refuse = |why: Refusal| {
        if let Ok(mut d) = denied.lock() {
            d.push(why.record(host, port));
        }
        Blocked::Refused(why)
    };
    if !allow.allows(host, port) {
        return Err(refuse(Refusal::NotAllowed));
    }
    let addrs: Vec<SocketAddr> = tokio::net::lookup_host((host, port))
        .await
        .map_err(Blocked::Failed)?
        .collect();
    // Only the addresses that are elsewhere, or named themselves (the
    // `::1` of `localhost` stays out when only `127.0.0.1` is named);
    // none: refused, for the first near one.
    let mut first_near = None;
    let addrs: Vec<SocketAddr> = addrs
        .into_iter()
        .filter(|a| match crate::local::near(a.ip()) {
            Some(near) if !allow.names_address(a.ip(), port) => {
                first_near.get_or_insert(Refusal::Near { ip: a.ip(), near });
                false
            }
            _ => true,
        })
        .collect();
    if let (true, Some(why)) = (addrs.is_empty(), first_near) {
        return Err(refuse(why));
    }
    let mut last = std::io::Error::new(
        std::io::ErrorKind::NotFound,
        format!("{host} has no address"),
    );
    for a in addrs {
        match TcpStream::connect(a).await {
            Ok(s) => return Ok(s),
            Err(e) => last = e,
        }
    }
    Err(Blocked::Failed(last))
}

async fn socks5(
    mut conn: BufReader<UnixStream>,
    allow: &Allowlist,
    denied: &Denied,
) -> std::io::Result<()> {
    let mut head = [0u8; 2];
    conn.read_exact(&mut head).await?;
    let mut methods = vec![0u8; usize::from(head[1])];
    conn.read_exact(&mut methods).await?;
    // No authentication (the socket is the session's own).
    conn.write_all(&[5, 0]).await?;
    let mut req = [0u8; 4];
    conn.read_exact(&mut req).await?;
    let host = match req[3] {
        1 => {
            let mut a = [0u8; 4];
            conn.read_exact(&mut a).await?;
            std::net::Ipv4Addr::from(a).to_string()
        }
        3 => {
            let n = conn.read_u8().await?;
            let mut name = vec![0u8; usize::from(n)];
            conn.read_exact(&mut name).await?;
            String::from_utf8_lossy(&name).into_owned()
        }
        4 => {
            let mut a = [0u8; 16];
            conn.read_exact(&mut a).await?;
            std::net::Ipv6Addr::from(a).to_string()
        }
        _ => return reply5(&mut conn, 8).await,
    };
    let port = conn.read_u16().await?;
    if req[1] != 1 {
        // Only CONNECT: no BIND, no UDP.
        return reply5(&mut conn, 7).await;
    }
    let mut up = match connect(allow, denied, &host, port).await {
        Ok(s) => s,
        Err(Blocked::Refused(_)) => return reply5(&mut conn, 2).await,
        Err(Blocked::Failed(e)) if e.kind() == std::io::ErrorKind::ConnectionRefused => {
            return reply5(&mut conn, 5).await;
        }
        Err(Blocked::Failed(_)) => return reply5(&mut conn, 4).await,
    };
    reply5(&mut conn, 0).await?;
    let buffered = conn.buffer().to_vec();
    up.write_all(&buffered).await?;
    let mut conn = conn.into_inner();
    tokio::io::copy_bidirectional(&mut conn, &mut up).await?;
    Ok(())
}

async fn reply5(conn: &mut BufReader<UnixStream>, code: u8) -> std::io::Result<()> {
    conn.write_all(&[5, code, 0, 1, 0, 0, 0, 0, 0, 0]).await
}

async fn http(
    mut conn: BufReader<UnixStream>,
    allow: &Allowlist,
    denied: &Denied,
) -> std::io::Result<()> {
    let mut head = Vec::new();
    while !head.ends_with(b"\r\n\r\n") && !head.ends_with(b"\n\n") {
        if head.len() > MAX_HEAD || conn.read_until(b'\n', &mut head).await? == 0 {
            return respond(
                &mut conn,
                "400 Bad Request",
                "a request head was not complete",
            )
            .await;
        }
    }
    let text = String::from_utf8_lossy(&head).into_owned();
    let line_end = text.find('\n').unwrap_or(text.len());
    let line = text[..line_end].trim_end();
    let mut parts = line.split(' ');
    let (method, target, version) = (
        parts.next().unwrap_or(""),
        parts.next().unwrap_or(""),
        parts.next().unwrap_or("HTTP/1.1"),
    );
    let (host, port, rest) = if method.eq_ignore_ascii_case("CONNECT") {
        match split_host_port(target, 443) {
            Some((h, p)) => (h, p, None),
            None => return respond(&mut conn, "400 Bad Request", "CONNECT needs host:port").await,
        }
    } else {
        let Some(after) = target.strip_prefix("http://") else {
            return respond(
                &mut conn,
                "400 Bad Request",
                "this proxy takes CONNECT, or a plain http:// URL",
            )
            .await;
        };
        let (authority, path) = match after.find('/') {
            Some(i) => (&after[..i], &after[i..]),
            None => (after, "/"),
        };
        match split_host_port(authority, 80) {
            Some((h, p)) => {
                let origin = format!("{method} {path} {version}{}", &text[line_end..]);
                (h, p, Some(origin))
            }
            None => return respond(&mut conn, "400 Bad Request", "no host in the URL").await,
        }
    };
    let mut up = match connect(allow, denied, &host, port).await {
        Ok(s) => s,
        Err(Blocked::Refused(why)) => {
            let why = match why {
                Refusal::NotAllowed => {
                    format!("tether: connect {host}:{port} is not on this session's allowlist")
                }
                near => format!("tether: {}", near.record(&host, port)),
            };
            return respond(&mut conn, "403 Forbidden", &why).await;
        }
        Err(Blocked::Failed(e)) => {
            let why = format!("tether: cannot connect to {host}:{port}: {e}");
            return respond(&mut conn, "502 Bad Gateway", &why).await;
        }
    };
    match rest {
        None => {
            conn.write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
                .await?
        }
        Some(origin) => up.write_all(origin.as_bytes()).await?,
    }
    let buffered = conn.buffer().to_vec();
    up.write_all(&buffered).await?;
    let mut conn = conn.into_inner();
    tokio::io::copy_bidirectional(&mut conn, &mut up).await?;
    Ok(())
}

/// `host:port` (or `[v6]:port`, or `host` with `default`).
fn split_host_port(s: &str, default: u16) -> Option<(String, u16)> {
    let (host, port) = match s.rsplit_once(':') {
        Some((h, p)) if !h.is_empty() && !p.contains(']') => (h, p.parse().ok()?),
        _ => (s, default),
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    (!host.is_empty()).then(|| (host.to_owned(), port))
}

async fn respond(conn: &mut BufReader<UnixStream>, status: &str, why: &str) -> std::io::Result<()> {
    let body = format!("{why}\n");
    let text = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    conn.write_all(text.as_bytes()).await?;
    conn.shutdown().await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_and_ports_split_as_written() {
        assert_eq!(split_host_port("a.b:8080", 1), Some(("a.b".into(), 8080)));
        assert_eq!(split_host_port("a.b", 80), Some(("a.b".into(), 80)));
        assert_eq!(split_host_port("[::1]:99", 80), Some(("::1".into(), 99)));
        assert_eq!(split_host_port("a:x", 80), None);
    }
}
