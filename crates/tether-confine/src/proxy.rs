//! The proxy of a confined session's network allowlist. It runs outside
//! the fence (in the daemon) on a Unix socket that the fence shows to the
//! session; a forwarder inside the session's network namespace passes it
//! each connection made to the proxy address in `HTTP_PROXY` and
//! `ALL_PROXY`. It speaks HTTP (`CONNECT`, and plain requests in absolute
//! form) and SOCKS5 (`CONNECT`), told apart by the first byte. Names are
//! resolved here, never by the confined program. A destination off the
//! list is refused at once (`403`, SOCKS reply 2) and recorded for the
//! session's next result.

use std::path::Path;
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpStream, UnixListener, UnixStream};

use crate::allow::Allowlist;

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

/// Checks `host:port`, recording a refusal.
fn check(allow: &Allowlist, denied: &Denied, host: &str, port: u16) -> bool {
    if allow.allows(host, port) {
        return true;
    }
    if let Ok(mut d) = denied.lock() {
        d.push(format!("connect {host}:{port}"));
    }
    false
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
    if !check(allow, denied, &host, port) {
        return reply5(&mut conn, 2).await;
    }
    let mut up = match TcpStream::connect((host.as_str(), port)).await {
        Ok(s) => s,
        Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => {
            return reply5(&mut conn, 5).await;
        }
        Err(_) => return reply5(&mut conn, 4).await,
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
    if !check(allow, denied, &host, port) {
        let why = format!("tether: connect {host}:{port} is not on this session's allowlist");
        return respond(&mut conn, "403 Forbidden", &why).await;
    }
    let mut up = match TcpStream::connect((host.as_str(), port)).await {
        Ok(s) => s,
        Err(e) => {
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
