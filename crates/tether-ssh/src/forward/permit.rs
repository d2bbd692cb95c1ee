//! `PermitRemoteOpen`: where a dynamic remote forward (`-R port`, SOCKS on
//! the server's side) may connect from here, as OpenSSH's client checks
//! it: `any`, `none`, or `host:port` entries with `*` for either part;
//! the host compared as the request names it (no resolution).

/// One `PermitRemoteOpen` entry: a host (`*`: any) and a port (`None`:
/// any, written `*`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Permit {
    /// The host as the SOCKS request names it (compared without case).
    pub host: String,
    /// The port; `None`: any.
    pub port: Option<u16>,
}

impl Permit {
    /// `PermitRemoteOpen`'s words: `Ok(None)` for `any`, an empty list for
    /// `none`, else `host:port` entries (`[v6]:port`, `*` for either).
    pub fn parse_list(words: &[String]) -> Result<Option<Vec<Permit>>, String> {
        match words {
            [w] if w.eq_ignore_ascii_case("any") => return Ok(None),
            [w] if w.eq_ignore_ascii_case("none") => return Ok(Some(Vec::new())),
            _ => {}
        }
        words
            .iter()
            .map(|w| {
                let (host, port) = w.rsplit_once(':').ok_or_else(|| {
                    format!("PermitRemoteOpen {w:?}: write host:port, any or none")
                })?;
                let host = host.trim_start_matches('[').trim_end_matches(']');
                let port = match port {
                    "*" => None,
                    p => Some(p.parse::<u16>().map_err(|_| {
                        format!("PermitRemoteOpen {w:?}: {p:?} is not a port (or *)")
                    })?),
                };
                Ok(Permit {
                    host: host.to_owned(),
                    port,
                })
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Some)
    }

    /// Whether this entry allows `host:port`.
    pub fn allows(&self, host: &str, port: u16) -> bool {
        (self.host == "*" || self.host.eq_ignore_ascii_case(host))
            && self.port.is_none_or(|p| p == port)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(words: &[&str]) -> Result<Option<Vec<Permit>>, String> {
        Permit::parse_list(&words.iter().map(|w| (*w).to_owned()).collect::<Vec<_>>())
    }

    #[test]
    fn any_none_and_entries() {
        assert_eq!(list(&["any"]), Ok(None));
        assert_eq!(list(&["none"]), Ok(Some(Vec::new())));
        let l = list(&["localhost:80", "*:443", "[::1]:*"])
            .unwrap_or_else(|e| panic!("{e}"))
            .unwrap_or_default();
        let ok = |h: &str, p: u16| l.iter().any(|e| e.allows(h, p));
        assert!(ok("LOCALHOST", 80) && ok("example.org", 443) && ok("::1", 9));
        assert!(!ok("localhost", 81) && !ok("127.0.0.1", 80));
        assert!(list(&["nohost"]).is_err());
        assert!(list(&["h:port"]).is_err());
    }
}
