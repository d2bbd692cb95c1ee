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
    /// ssh takes it (RFC 4248; `%XX` in the user decoded, no path). The
    /// host and user are checked as OpenSSH checks its command line's
    /// (`tether_ssh::destination`): no shell character, blank, control
    /// character or leading `-`; a jump host on the command line (`-J`,
    /// `-o ProxyJump`) too.
    pub fn parse(name: &str) -> Result<HostSpec, crate::ClusterError> {
        let s = HostSpec::parse_hop(name)?;
        // Data, never shell: checked here, before any use, as OpenSSH
        // checks what its command line names.
        let refused = |problem| crate::ClusterError::BadName {
            name: name.to_owned(),
            problem,
        };
        tether_ssh::destination::check_host(&s.host).map_err(refused)?;
        if let Some(u) = &s.user {
            tether_ssh::destination::check_user(u).map_err(refused)?;
        }
        Ok(s)
    }

    /// [`HostSpec::parse`] without the name check: for a jump host that
    /// a config file names (`ProxyJump`), which OpenSSH does not check
    /// either (`ssh -G` prints it as written).
    pub fn parse_hop(name: &str) -> Result<HostSpec, crate::ClusterError> {
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

impl HostSpec {
    /// `[user@]host[:port]` as `ssh -G` prints a jump host: the user and
    /// port only when given, a numeric host (an IP address) in brackets.
    pub fn jump_text(&self) -> String {
        let numeric =
            self.host.contains(':') || self.host.chars().all(|c| c.is_ascii_digit() || c == '.');
        let mut out = String::new();
        if let Some(u) = &self.user {
            out.push_str(u);
            out.push('@');
        }
        if numeric {
            out.push('[');
        }
        out.push_str(&self.host);
        if numeric {
            out.push(']');
        }
        if let Some(p) = self.port {
            out.push(':');
            out.push_str(&p.to_string());
        }
        out
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

    #[test]
    fn names_refuse_shell_characters_and_jumps_print_as_ssh() {
        for bad in [
            "host;x",
            "host'x",
            "host`x",
            "host$x",
            "host(x)",
            "-host",
            "u;x@h",
            "u'x@h",
            "u`x@h",
            "u(x)@h",
            "-u@h",
            "pcx$(touch X)",
            "a\nb",
            "ssh://u%3Bx@h",
            "h x",
        ] {
            let e = HostSpec::parse(bad).map(|_| ()).unwrap_err();
            assert!(
                matches!(e, crate::ClusterError::BadName { .. }),
                "{bad}: {e}"
            );
        }
        for (good, shown) in [
            ("jump1", "jump1"),
            ("user@jump1:2222", "user@jump1:2222"),
            ("ssh://user@host:2223", "user@host:2223"),
            ("u$x@h", "u$x@h"),
            ("10.0.0.1:22", "[10.0.0.1]:22"),
            ("[::1]", "[::1]"),
        ] {
            let s = HostSpec::parse(good).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(s.jump_text(), shown);
        }
    }
}
