//! The network allowlist of a confined session: `HOST:PORT` entries, a
//! host exact or `*.domain` (the domain's names below it) or `*`, a port
//! a number or `*`. Names are matched as the program asked for them,
//! case-insensitively; the proxy resolves them itself. An address of
//! this machine or next to it (`local.rs`) is reached only when an entry
//! names it as an address (`127.0.0.1:8080`, `[::1]:8080`): a name, or
//! `*`, that resolves to it does not.

/// One entry of the allowlist.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostPort {
    host: Host,
    /// `None`: any port.
    port: Option<u16>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Host {
    Any,
    Exact(String),
    /// `*.example.com`: names below `example.com` (not itself).
    Below(String),
}

impl HostPort {
    /// Parses `HOST:PORT`; `None` when it is not one.
    pub fn parse(text: &str) -> Option<HostPort> {
        let (host, port) = text.rsplit_once(':')?;
        let host = host.trim_start_matches('[').trim_end_matches(']');
        let port = match port {
            "*" => None,
            p => Some(p.parse::<u16>().ok().filter(|p| *p > 0)?),
        };
        let valid = |h: &str| {
            !h.is_empty()
                && h.chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_' | ':'))
        };
        let host = match host {
            "*" => Host::Any,
            h if h.starts_with("*.") && valid(&h[2..]) => Host::Below(h[2..].to_ascii_lowercase()),
            h if valid(h) => Host::Exact(h.to_ascii_lowercase()),
            _ => return None,
        };
        Some(HostPort { host, port })
    }

    /// True when this entry lets a program reach `host` on `port`.
    pub fn allows(&self, host: &str, port: u16) -> bool {
        if self.port.is_some_and(|p| p != port) {
            return false;
        }
        let host = host.trim_end_matches('.').to_ascii_lowercase();
        match &self.host {
            Host::Any => true,
            Host::Exact(h) => *h == host,
            Host::Below(d) => host.len() > d.len() + 1 && host.ends_with(&format!(".{d}")),
        }
    }

    /// True when this entry names `ip` itself, as an address, for `port`.
    pub fn names_address(&self, ip: std::net::IpAddr, port: u16) -> bool {
        let canonical = crate::local::canonical;
        match &self.host {
            Host::Exact(h) if self.port.is_none_or(|p| p == port) => h
                .parse::<std::net::IpAddr>()
                .is_ok_and(|mine| canonical(mine) == canonical(ip)),
            _ => false,
        }
    }
}

/// The allowlist: a destination passes when any entry allows it.
#[derive(Clone, Debug, Default)]
pub struct Allowlist(Vec<HostPort>);

impl Allowlist {
    /// The entries of `list`; `None` names the first that is not
    /// `HOST:PORT`.
    pub fn new(list: &[String]) -> Result<Allowlist, String> {
        list.iter()
            .map(|e| HostPort::parse(e).ok_or_else(|| e.clone()))
            .collect::<Result<Vec<_>, _>>()
            .map(Allowlist)
    }

    /// True when some entry lets a program reach `host` on `port`.
    pub fn allows(&self, host: &str, port: u16) -> bool {
        self.0.iter().any(|e| e.allows(host, port))
    }

    /// True when some entry names `ip` as an address for `port` (so the
    /// proxy may reach it even when it is this machine's).
    pub fn names_address(&self, ip: std::net::IpAddr, port: u16) -> bool {
        self.0.iter().any(|e| e.names_address(ip, port))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn entries_match_hosts_and_ports_as_written() {
        let l = Allowlist::new(&[
            "pypi.org:443".into(),
            "*.github.com:*".into(),
            "localhost:8080".into(),
        ])
        .unwrap();
        assert!(l.allows("pypi.org", 443));
        assert!(l.allows("PyPI.org.", 443));
        assert!(!l.allows("pypi.org", 80));
        assert!(!l.allows("evil-pypi.org", 443));
        assert!(l.allows("api.github.com", 22));
        assert!(!l.allows("github.com", 443));
        assert!(!l.allows("xgithub.com", 443));
        assert!(l.allows("localhost", 8080));
        assert!(!l.allows("127.0.0.1", 8080));
        for bad in [
            "pypi.org",
            "pypi.org:0",
            "pypi.org:http",
            ":443",
            "a b:1",
            "x:70000",
        ] {
            assert!(HostPort::parse(bad).is_none(), "{bad}");
        }
        assert_eq!(Allowlist::new(&["nope".into()]).unwrap_err(), "nope");
    }

    #[test]
    fn only_an_address_entry_names_an_address() {
        let l = Allowlist::new(&[
            "localhost:8080".into(),
            "127.0.0.1:9000".into(),
            "[::1]:*".into(),
            "*:*".into(),
        ])
        .unwrap();
        let ip = |s: &str| s.parse::<std::net::IpAddr>().unwrap();
        assert!(l.names_address(ip("127.0.0.1"), 9000));
        assert!(l.names_address(ip("::ffff:127.0.0.1"), 9000));
        assert!(!l.names_address(ip("127.0.0.1"), 8080));
        assert!(!l.names_address(ip("127.0.0.2"), 9000));
        assert!(l.names_address(ip("::1"), 22));
        assert!(!l.names_address(ip("169.254.169.254"), 80));
    }
}
