//! A host as a node set names it: `[user@]host[:port]`, the host possibly
//! an IPv6 literal in brackets (`[::1]:22`).

/// One host to connect to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostSpec {
    /// The whole name, as the node set has it (for output).
    pub name: String,
    /// The user, when given.
    pub user: Option<String>,
    /// The host (without brackets).
    pub host: String,
    /// The port, when given.
    pub port: Option<u16>,
}

impl HostSpec {
    /// Parses `[user@]host[:port]`, or `ssh://[user@]host[:port][/]` as
    /// ssh takes it (RFC 4248; `%XX` in the user decoded, no path).
    pub fn parse(name: &str) -> Result<HostSpec, crate::ClusterError> {
        let bad = |problem: &'static str| crate::ClusterError::BadHost {
            name: name.to_owned(),
            problem,
        };
        let url = name
            .get(..6)
            .filter(|s| s.eq_ignore_ascii_case("ssh://"))
            .map(|_| &name[6..]);
        let rest = match url {
            Some(u) => {
                let u = u.strip_suffix('/').unwrap_or(u);
                if u.contains('/') {
                    return Err(bad("an ssh:// destination takes no path"));
                }
                u
            }
            None => name,
        };
        let (user, rest) = match rest.rsplit_once('@') {
            Some((u, r)) if url.is_some() && !u.is_empty() => {
                // `;fingerprint=...` parameters are not used (as in ssh).
                let u = u.split(';').next().unwrap_or_default();
                (
                    Some(percent_decoded(u).ok_or_else(|| bad("the user has a bad %XX"))?),
                    r,
                )
            }
            Some((u, r)) if !u.is_empty() => (Some(u.to_owned()), r),
            Some(_) => return Err(bad("the user before '@' is empty")),
            None => (None, rest),
        };
        let (host, port) = if let Some(inner) = rest.strip_prefix('[') {
            let (h, after) = inner
                .split_once(']')
                .ok_or_else(|| bad("an IPv6 address needs its closing ']'"))?;
            let port = match after.strip_prefix(':') {
                Some(p) => Some(p),
                None if after.is_empty() => None,
                None => return Err(bad("only ':PORT' may follow ']'")),
            };
            (h.to_owned(), port)
        } else if rest.matches(':').count() > 1 {
            // An IPv6 literal without brackets (`::1`, `fe80::1`): all host,
            // as OpenSSH reads it; a port needs the brackets.
            (rest.to_owned(), None)
        } else {
            match rest.rsplit_once(':') {
                Some((h, p)) => (h.to_owned(), Some(p)),
                None => (rest.to_owned(), None),
            }
        };
        let port = port
            .map(|p| {
                p.parse::<u16>()
                    .ok()
                    .filter(|p| *p != 0)
                    .ok_or_else(|| bad("the port must be a number from 1 to 65535"))
            })
            .transpose()?;
        if host.is_empty() {
            return Err(bad("the host name is empty"));
        }
        Ok(HostSpec {
            // An ssh:// destination is named by its host, as ssh names it.
            name: if url.is_some() {
                host.clone()
            } else {
                name.to_owned()
            },
            user,
            host,
            port,
        })
    }
}

/// `%XX` escapes decoded (an ssh:// URL's user).
fn percent_decoded(s: &str) -> Option<String> {
    let mut out = Vec::new();
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = s.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn users_ports_and_ipv6() {
        let s = HostSpec::parse("admin@web1:2222").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            (s.user.as_deref(), s.host.as_str(), s.port),
            (Some("admin"), "web1", Some(2222))
        );
        let s = HostSpec::parse("[::1]:22").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((s.host.as_str(), s.port), ("::1", Some(22)));
        let s = HostSpec::parse("web1").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((s.user, s.port), (None, None));
        assert!(HostSpec::parse("web1:http").is_err());
        assert!(HostSpec::parse("web1:0").is_err());
        let s = HostSpec::parse("::1").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((s.host.as_str(), s.port), ("::1", None));
        let s = HostSpec::parse("me@fe80::1").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            (s.user.as_deref(), s.host.as_str()),
            (Some("me"), "fe80::1")
        );
        assert!(HostSpec::parse("@web1").is_err());
        let s = HostSpec::parse("ssh://ro%6ft@web1:2222/").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            (s.user.as_deref(), s.host.as_str(), s.port),
            (Some("root"), "web1", Some(2222))
        );
        let s = HostSpec::parse("ssh://[::1]").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((s.user, s.host.as_str(), s.port), (None, "::1", None));
        assert!(HostSpec::parse("ssh://root@web1:22/etc").is_err());
    }
}
