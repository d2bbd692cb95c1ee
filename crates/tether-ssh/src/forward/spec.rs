//! Forwarding specifications as OpenSSH writes them (`-L`, `-R`, `-D`,
//! `LocalForward`, `RemoteForward`, `DynamicForward`): colon-separated
//! fields, a field in `[brackets]` taken literally (IPv6 addresses), a
//! field with a `/` a Unix socket path, `\` escaping the next character.
//! The field count decides the shape, as in OpenSSH's `parse_forward`.

use std::fmt;

/// Which way a forward goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ForwardKind {
    /// `-L`: listen here, connect from the server.
    Local,
    /// `-R`: listen on the server, connect from here.
    Remote,
    /// `-D`: listen here as a SOCKS server, connect from the server.
    Dynamic,
}

impl ForwardKind {
    /// The flag's letter (`L`, `R`, `D`).
    pub fn letter(self) -> char {
        match self {
            ForwardKind::Local => 'L',
            ForwardKind::Remote => 'R',
            ForwardKind::Dynamic => 'D',
        }
    }
}

/// One end of a forward: a TCP address or a Unix socket path.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Place {
    /// A TCP port; `host` `None` where the spec named none (a listener:
    /// loopback unless GatewayPorts; `Some("")` or `Some("*")`: every
    /// interface).
    Tcp {
        /// The address or name.
        host: Option<String>,
        /// The port (0 on a listener: one the system picks).
        port: u16,
    },
    /// A Unix socket path.
    Unix(String),
}

impl fmt::Display for Place {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Place::Tcp { host: None, port } => write!(f, "port {port}"),
            Place::Tcp {
                host: Some(h),
                port,
            } if h.contains(':') => write!(f, "[{h}]:{port}"),
            Place::Tcp {
                host: Some(h),
                port,
            } => write!(f, "{h}:{port}"),
            Place::Unix(p) => f.write_str(p),
        }
    }
}

/// One forward: where it listens and, but for dynamic ones (SOCKS), where
/// it connects.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ForwardSpec {
    /// Local, remote or dynamic.
    pub kind: ForwardKind,
    /// Where connections come in.
    pub listen: Place,
    /// Where they go; `None`: the SOCKS request says (`-D`, `-R port`).
    pub target: Option<Place>,
}

/// A place as a spec writes it: `port`, `host:port`, `[v6]:port`, a path.
fn field(p: &Place) -> String {
    match p {
        Place::Tcp { host: None, port } => port.to_string(),
        other => other.to_string(),
    }
}

impl fmt::Display for ForwardSpec {
    /// As typed: `-L 8080:localhost:80`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "-{} {}", self.kind.letter(), field(&self.listen))?;
        if let Some(t) = &self.target {
            write!(f, ":{}", field(t))?;
        }
        Ok(())
    }
}

/// One field and whether it names a path.
struct Field {
    text: String,
    path: bool,
}

/// Splits `spec` into at most 4 fields; `None` on a malformed one. A
/// colon ends a field (a trailing one ends the last), as in OpenSSH.
fn fields(spec: &str) -> Option<Vec<Field>> {
    let mut out = Vec::new();
    let mut rest = spec.trim_start();
    if rest.is_empty() {
        return None;
    }
    while !rest.is_empty() {
        if out.len() == 4 {
            return None; // trailing garbage
        }
        if let Some(inner) = rest.strip_prefix('[') {
            let (text, after) = inner.split_once(']')?;
            rest = match after.strip_prefix(':') {
                Some(a) => a,
                None if after.is_empty() => after,
                None => return None,
            };
            out.push(Field {
                text: text.to_owned(),
                path: text.contains('/'),
            });
            continue;
        }
        let mut text = String::new();
        let mut path = false;
        let mut chars = rest.char_indices();
        let mut next = rest.len();
        while let Some((i, c)) = chars.next() {
            match c {
                '\\' => text.push(chars.next()?.1),
                ':' => {
                    next = i + 1;
                    break;
                }
                c => {
                    path |= c == '/';
                    text.push(c);
                }
            }
        }
        rest = rest.get(next..).unwrap_or_default();
        out.push(Field { text, path });
    }
    Some(out)
}

fn port(text: &str) -> Result<u16, String> {
    text.trim()
        .parse::<u16>()
        .map_err(|_| format!("{text:?} is not a port number (0 to 65535)"))
}

fn nonzero(text: &str) -> Result<u16, String> {
    match port(text)? {
        0 => Err(format!("{text:?}: the port to connect to cannot be 0")),
        p => Ok(p),
    }
}

fn tcp(host: Option<&str>, p: u16) -> Place {
    Place::Tcp {
        host: host.map(str::to_owned),
        port: p,
    }
}

impl ForwardSpec {
    /// Parses the argument of `-L`, `-R` or `-D` (or the value of the
    /// directive), as OpenSSH does. `-D` takes `[bind:]port` only; `-R`
    /// with one or two fields (`[bind:]port`) is a dynamic remote forward.
    pub fn parse(kind: ForwardKind, spec: &str) -> Result<ForwardSpec, String> {
        let bad = |why: &str| {
            format!(
                "-{} {spec:?}: {why}; write {}",
                kind.letter(),
                match kind {
                    ForwardKind::Dynamic => "[bind_address:]port",
                    _ => "[bind_address:]port:host:hostport, or a Unix socket path on either side",
                }
            )
        };
        let f = fields(spec).ok_or_else(|| bad("malformed"))?;
        let plain = |i: usize| Some(f[i].text.as_str());
        let (listen, target) = match f.len() {
            1 if f[0].path => (Place::Unix(f[0].text.clone()), None),
            1 => (tcp(None, port(&f[0].text).map_err(|e| bad(&e))?), None),
            2 if f[0].path && f[1].path => (
                Place::Unix(f[0].text.clone()),
                Some(Place::Unix(f[1].text.clone())),
            ),
            2 if f[1].path => (
                tcp(None, port(&f[0].text).map_err(|e| bad(&e))?),
                Some(Place::Unix(f[1].text.clone())),
            ),
            2 => (tcp(plain(0), port(&f[1].text).map_err(|e| bad(&e))?), None),
            3 if f[0].path => (
                Place::Unix(f[0].text.clone()),
                Some(tcp(plain(1), nonzero(&f[2].text).map_err(|e| bad(&e))?)),
            ),
            3 if f[2].path => (
                tcp(plain(0), port(&f[1].text).map_err(|e| bad(&e))?),
                Some(Place::Unix(f[2].text.clone())),
            ),
            3 => (
                tcp(None, port(&f[0].text).map_err(|e| bad(&e))?),
                Some(tcp(plain(1), nonzero(&f[2].text).map_err(|e| bad(&e))?)),
            ),
            4 => (
                tcp(plain(0), port(&f[1].text).map_err(|e| bad(&e))?),
                Some(tcp(plain(2), nonzero(&f[3].text).map_err(|e| bad(&e))?)),
            ),
            _ => return Err(bad("malformed")),
        };
        if let Some(Place::Tcp { host, .. }) = &target
            && host.as_deref().is_none_or(str::is_empty)
        {
            return Err(bad("no host to connect to"));
        }
        match (kind, &target) {
            (ForwardKind::Dynamic, Some(_)) => {
                return Err(bad("a dynamic forward names no target"));
            }
            (ForwardKind::Dynamic, None) if matches!(listen, Place::Unix(_)) => {
                return Err(bad("a dynamic forward listens on a TCP port"));
            }
            (ForwardKind::Local, None) => return Err(bad("no target")),
            (ForwardKind::Remote, None) if matches!(listen, Place::Unix(_)) => {
                return Err(bad("no target"));
            }
            _ => {}
        }
        if kind == ForwardKind::Local
            && let Place::Tcp { port: 0, .. } = listen
        {
            return Err(bad("the port to listen on cannot be 0"));
        }
        Ok(ForwardSpec {
            kind,
            listen,
            target,
        })
    }
}

/// The `[bind_address:]port` (or socket path) of a cancel (`-KL`, `-KR`,
/// `-KD` on the `~C` command line).
pub fn parse_listen(spec: &str) -> Result<Place, String> {
    let bad = || format!("{spec:?}: write [bind_address:]port, or a socket path");
    let f = fields(spec).ok_or_else(bad)?;
    match f.as_slice() {
        [one] if one.path => Ok(Place::Unix(one.text.clone())),
        [one] => Ok(tcp(None, port(&one.text).map_err(|_| bad())?)),
        [host, p] if !p.path => Ok(tcp(Some(&host.text), port(&p.text).map_err(|_| bad())?)),
        _ => Err(bad()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(kind: ForwardKind, s: &str) -> ForwardSpec {
        ForwardSpec::parse(kind, s).unwrap_or_else(|e| panic!("{e}"))
    }

    fn t(h: Option<&str>, port: u16) -> Place {
        tcp(h, port)
    }

    #[test]
    fn openssh_shapes() {
        use ForwardKind::*;
        let s = p(Local, "8080:example.org:80");
        assert_eq!(
            (s.listen, s.target),
            (t(None, 8080), Some(t(Some("example.org"), 80)))
        );
        let s = p(Local, "127.0.0.1:8080:[::1]:80");
        assert_eq!(
            (s.listen, s.target),
            (t(Some("127.0.0.1"), 8080), Some(t(Some("::1"), 80)))
        );
        let s = p(Local, "[::1]:8080:h:80");
        assert_eq!(s.listen, t(Some("::1"), 8080));
        let s = p(Local, "*:8080:h:80");
        assert_eq!(s.listen, t(Some("*"), 8080));
        let s = p(Local, ":8080:h:80");
        assert_eq!(s.listen, t(Some(""), 8080));
        let s = p(Local, "8080:/run/x.sock");
        assert_eq!(
            (s.listen, s.target),
            (t(None, 8080), Some(Place::Unix("/run/x.sock".into())))
        );
        let s = p(Local, "/tmp/l.sock:h:22");
        assert_eq!(
            (s.listen, s.target),
            (Place::Unix("/tmp/l.sock".into()), Some(t(Some("h"), 22)))
        );
        let s = p(Local, "/tmp/l.sock:/tmp/r.sock");
        assert_eq!(s.target, Some(Place::Unix("/tmp/r.sock".into())));
        let s = p(Local, "lo:8080:/r.sock");
        assert_eq!(s.listen, t(Some("lo"), 8080));
        let s = p(Dynamic, "1080");
        assert_eq!((s.listen, s.target), (t(None, 1080), None));
        let s = p(Dynamic, "localhost:1080");
        assert_eq!(s.listen, t(Some("localhost"), 1080));
        let s = p(Remote, "0:localhost:80");
        assert_eq!(s.listen, t(None, 0));
        let s = p(Remote, "9000");
        assert_eq!(s.target, None);
        assert_eq!(parse_listen("8080"), Ok(t(None, 8080)));
        assert_eq!(parse_listen("lo:8080"), Ok(t(Some("lo"), 8080)));
        assert_eq!(parse_listen("/s.sock"), Ok(Place::Unix("/s.sock".into())));
        assert!(parse_listen("a:b:c").is_err());
        let s = p(Remote, "*:9000");
        assert_eq!((s.listen, s.target), (t(Some("*"), 9000), None));
        for (k, bad) in [
            (Local, "8080"),
            (Local, "8080:h"),
            (Local, "x:h:80"),
            (Local, "8080:h:0"),
            (Local, "8080:h:80:9:1"),
            (Local, "[::1:8080:h:80"),
            (Local, "[::1]x:8080:h:80"),
            (Local, "0:h:80"),
            (Local, ""),
            (Dynamic, "1080:h:80"),
            (Dynamic, "/x.sock"),
            (Remote, "/x.sock"),
            (Local, "8080::80"),
        ] {
            assert!(ForwardSpec::parse(k, bad).is_err(), "{bad}");
        }
    }

    proptest::proptest! {
        #[test]
        fn any_text_parses_or_is_refused_without_panic(s in ".{0,40}") {
            for k in [ForwardKind::Local, ForwardKind::Remote, ForwardKind::Dynamic] {
                let _ = ForwardSpec::parse(k, &s);
            }
        }
    }
}
