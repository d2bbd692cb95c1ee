//! The server side of SOCKS 4, 4a and 5 (CONNECT only, no authentication),
//! for `-D` (on a local socket) and dynamic `-R` (on a forwarded channel).
//! Written here: the request is a few bytes, and the crates that parse it
//! bring their own servers and resolvers. Every length is bounded; a
//! malformed request is an error, never a panic (see the property test).

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// What a SOCKS client asked for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Request {
    /// 4 (4 and 4a) or 5.
    pub version: u8,
    /// The host (an address, or a name for 4a and 5).
    pub host: String,
    /// The port.
    pub port: u16,
}

/// Why a SOCKS request was not served.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// The bytes are not a request tether serves (the reason).
    Malformed(&'static str),
    /// The client went away or the socket failed.
    Io,
}

/// The longest user id or host name read (SOCKS 4 leaves them unbounded).
const MAX_FIELD: usize = 255;

async fn byte<S: AsyncRead + Unpin>(s: &mut S) -> Result<u8, Refusal> {
    s.read_u8().await.map_err(|_| Refusal::Io)
}

async fn exact<S: AsyncRead + Unpin>(s: &mut S, n: usize) -> Result<Vec<u8>, Refusal> {
    let mut buf = vec![0; n];
    s.read_exact(&mut buf).await.map_err(|_| Refusal::Io)?;
    Ok(buf)
}

/// A NUL-terminated field of at most [`MAX_FIELD`] bytes.
async fn nul_terminated<S: AsyncRead + Unpin>(s: &mut S) -> Result<Vec<u8>, Refusal> {
    let mut out = Vec::new();
    loop {
        match byte(s).await? {
            0 => return Ok(out),
            _ if out.len() == MAX_FIELD => return Err(Refusal::Malformed("a field is too long")),
            b => out.push(b),
        }
    }
}

fn text(bytes: Vec<u8>) -> Result<String, Refusal> {
    let s = String::from_utf8(bytes).map_err(|_| Refusal::Malformed("a host name is not UTF-8"))?;
    if s.is_empty() {
        return Err(Refusal::Malformed("an empty host name"));
    }
    Ok(s)
}

/// Reads one request (and, for SOCKS 5, answers the method negotiation).
/// On a malformed request the client is sent a failure where the
/// protocol has one.
pub(crate) async fn request<S>(s: &mut S) -> Result<Request, Refusal>
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    match byte(s).await? {
        4 => v4(s).await,
        5 => v5(s).await,
        _ => Err(Refusal::Malformed("not SOCKS 4 or 5")),
    }
}

async fn v4<S: AsyncRead + AsyncWrite + Unpin>(s: &mut S) -> Result<Request, Refusal> {
    let head = exact(s, 7).await?;
    let (cmd, port, ip) = (head[0], u16::from_be_bytes([head[1], head[2]]), &head[3..7]);
    let _user = nul_terminated(s).await?;
    if cmd != 1 {
        let _ = reply(s, 4, false).await;
        return Err(Refusal::Malformed("only CONNECT is served"));
    }
    // 0.0.0.x (x not 0): SOCKS 4a, a host name follows.
    let host = if ip[..3] == [0, 0, 0] && ip[3] != 0 {
        text(nul_terminated(s).await?)?
    } else {
        std::net::Ipv4Addr::new(ip[0], ip[1], ip[2], ip[3]).to_string()
    };
    Ok(Request {
        version: 4,
        host,
        port,
    })
}

async fn v5<S: AsyncRead + AsyncWrite + Unpin>(s: &mut S) -> Result<Request, Refusal> {
    let n = usize::from(byte(s).await?);
    let methods = exact(s, n).await?;
    // No authentication (0) is the one method served.
    if !methods.contains(&0) {
        let _ = s.write_all(&[5, 0xff]).await;
        return Err(Refusal::Malformed(
            "the client offers no method tether serves",
        ));
    }
    s.write_all(&[5, 0]).await.map_err(|_| Refusal::Io)?;
    let head = exact(s, 4).await?;
    if head[0] != 5 {
        return Err(Refusal::Malformed("not SOCKS 5"));
    }
    let host = match head[3] {
        1 => {
            let a = exact(s, 4).await?;
            std::net::Ipv4Addr::new(a[0], a[1], a[2], a[3]).to_string()
        }
        3 => {
            let len = usize::from(byte(s).await?);
            text(exact(s, len).await?)?
        }
        4 => {
            let a = exact(s, 16).await?;
            let mut b = [0u8; 16];
            b.copy_from_slice(&a);
            std::net::Ipv6Addr::from(b).to_string()
        }
        _ => {
            let _ = s.write_all(&[5, 8, 0, 1, 0, 0, 0, 0, 0, 0]).await;
            return Err(Refusal::Malformed("an address type SOCKS 5 does not have"));
        }
    };
    let p = exact(s, 2).await?;
    if head[1] != 1 {
        let _ = s.write_all(&[5, 7, 0, 1, 0, 0, 0, 0, 0, 0]).await;
        return Err(Refusal::Malformed("only CONNECT is served"));
    }
    Ok(Request {
        version: 5,
        host,
        port: u16::from_be_bytes([p[0], p[1]]),
    })
}

/// Answers a request: granted, or failed (the target could not be
/// reached).
pub(crate) async fn reply<S: AsyncWrite + Unpin>(
    s: &mut S,
    version: u8,
    granted: bool,
) -> std::io::Result<()> {
    let bytes: &[u8] = match (version, granted) {
        (4, true) => &[0, 0x5a, 0, 0, 0, 0, 0, 0],
        (4, false) => &[0, 0x5b, 0, 0, 0, 0, 0, 0],
        (_, true) => &[5, 0, 0, 1, 0, 0, 0, 0, 0, 0],
        (_, false) => &[5, 5, 0, 1, 0, 0, 0, 0, 0, 0],
    };
    s.write_all(bytes).await?;
    s.flush().await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(bytes: &[u8]) -> (Result<Request, Refusal>, Vec<u8>) {
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap_or_else(|e| panic!("{e}"));
        rt.block_on(async {
            let (mut client, mut server) = tokio::io::duplex(4096);
            client
                .write_all(bytes)
                .await
                .unwrap_or_else(|e| panic!("{e}"));
            drop(client.shutdown().await);
            let r = request(&mut server).await;
            drop(server);
            let mut answer = Vec::new();
            let _ = client.read_to_end(&mut answer).await;
            (r, answer)
        })
    }

    #[test]
    fn socks4_4a_and_5_requests() {
        let (r, _) = parse(&[4, 1, 0, 80, 127, 0, 0, 1, b'u', 0]);
        assert_eq!(
            r,
            Ok(Request {
                version: 4,
                host: "127.0.0.1".into(),
                port: 80
            })
        );
        let (r, _) = parse(b"\x04\x01\x00\x50\x00\x00\x00\x01\x00example.org\x00");
        assert_eq!(r.map(|r| r.host), Ok("example.org".into()));
        let (r, answer) = parse(b"\x05\x01\x00\x05\x01\x00\x03\x09localhost\x1f\x90");
        assert_eq!(
            r,
            Ok(Request {
                version: 5,
                host: "localhost".into(),
                port: 8080
            })
        );
        assert_eq!(answer, [5, 0]);
        let mut v6 = vec![5, 1, 0, 5, 1, 0, 4];
        v6.extend_from_slice(&std::net::Ipv6Addr::LOCALHOST.octets());
        v6.extend_from_slice(&[0, 22]);
        assert_eq!(parse(&v6).0.map(|r| r.host), Ok("::1".into()));
        // Only "no authentication" is served; BIND is refused.
        let (r, answer) = parse(&[5, 1, 2]);
        assert!(matches!(r, Err(Refusal::Malformed(_))));
        assert_eq!(answer, [5, 0xff]);
        let (r, answer) = parse(&[5, 1, 0, 5, 2, 0, 1, 1, 2, 3, 4, 0, 1]);
        assert!(matches!(r, Err(Refusal::Malformed(_))));
        assert_eq!(answer[2..4], [5, 7]);
        // A user id without an end is bounded.
        let mut long = vec![4, 1, 0, 80, 1, 2, 3, 4];
        long.extend(std::iter::repeat_n(b'a', 1000));
        assert!(matches!(parse(&long).0, Err(Refusal::Malformed(_))));
        // Cut short: the client went away.
        assert_eq!(parse(&[5, 1]).0, Err(Refusal::Io));
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(512))]
        #[test]
        fn any_bytes_give_a_request_or_a_refusal(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..300)) {
            let _ = parse(&bytes);
        }

        #[test]
        fn socks_like_bytes_give_a_request_or_a_refusal(
            v in 4u8..=5, rest in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..64)
        ) {
            let mut bytes = vec![v];
            bytes.extend(rest);
            if let (Ok(r), _) = parse(&bytes) {
                proptest::prop_assert!(!r.host.is_empty());
            }
        }
    }
}
