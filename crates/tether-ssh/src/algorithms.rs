//! The algorithm lists OpenSSH's `Ciphers`, `MACs`, `KexAlgorithms` and
//! `HostKeyAlgorithms` (and `-c`, `-m`) name, mapped onto what russh
//! (pinned) implements: a whole list, or the default list changed by
//! `+LIST` (appended), `-LIST` (removed, wildcards allowed) or `^LIST`
//! (put first), as `ssh_config(5)` describes. A name russh lacks is an
//! error that names it and lists what tether has. Also what `-Q` prints.

use russh::keys::Algorithm;

/// One of the algorithm lists.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `Ciphers`, `-c`.
    Cipher,
    /// `MACs`, `-m`.
    Mac,
    /// `KexAlgorithms`.
    Kex,
    /// `HostKeyAlgorithms`.
    HostKey,
}

impl Kind {
    /// The directive's name, as ssh_config spells it.
    pub fn directive(self) -> &'static str {
        match self {
            Kind::Cipher => "Ciphers",
            Kind::Mac => "MACs",
            Kind::Kex => "KexAlgorithms",
            Kind::HostKey => "HostKeyAlgorithms",
        }
    }

    fn what(self) -> &'static str {
        match self {
            Kind::Cipher => "cipher",
            Kind::Mac => "MAC",
            Kind::Kex => "key exchange",
            Kind::HostKey => "host key algorithm",
        }
    }
}

/// The protocol extensions russh announces among the key exchanges; never
/// listed, never chosen by a user.
fn is_extension(name: &str) -> bool {
    name.starts_with("ext-info") || name.starts_with("kex-strict")
}

/// Every name tether can use for `kind`, in russh's order.
pub fn supported(kind: Kind) -> Vec<String> {
    match kind {
        Kind::Cipher => russh::cipher::ALL_CIPHERS
            .iter()
            .map(|c| c.as_ref().to_owned())
            .filter(|c| c != "clear" && c != "none")
            .collect(),
        Kind::Mac => russh::mac::ALL_MAC_ALGORITHMS
            .iter()
            .map(|m| m.as_ref().to_owned())
            .filter(|m| m != "none")
            .collect(),
        Kind::Kex => russh::kex::ALL_KEX_ALGORITHMS
            .iter()
            .map(|k| k.as_ref().to_owned())
            .filter(|k| k != "none" && !is_extension(k))
            .collect(),
        Kind::HostKey => russh::Preferred::DEFAULT
            .key
            .iter()
            .map(|a| a.as_str().to_owned())
            .collect(),
    }
}

/// What tether offers for `kind` when nothing says otherwise (russh's
/// defaults).
pub fn defaults(kind: Kind) -> Vec<String> {
    let p = russh::Preferred::DEFAULT;
    match kind {
        Kind::Cipher => p.cipher.iter().map(|c| c.as_ref().to_owned()).collect(),
        Kind::Mac => p.mac.iter().map(|m| m.as_ref().to_owned()).collect(),
        Kind::Kex => p
            .kex
            .iter()
            .map(|k| k.as_ref().to_owned())
            .filter(|k| !is_extension(k))
            .collect(),
        Kind::HostKey => supported(Kind::HostKey),
    }
}

fn wildcard(pattern: &str, name: &str) -> bool {
    crate::known_hosts::patterns_match(pattern, name)
}

/// The list `value` asks for (`+`, `-`, `^` or a whole list; names may
/// hold `*` and `?`), checked against what tether has.
pub fn assemble(kind: Kind, value: &str) -> Result<Vec<String>, String> {
    let value = value.trim();
    let have = supported(kind);
    let (op, list) = match value.chars().next() {
        Some(c @ ('+' | '-' | '^')) => (Some(c), &value[1..]),
        _ => (None, value),
    };
    let mut named = Vec::new();
    for n in list.split(',').map(str::trim).filter(|n| !n.is_empty()) {
        let wild = n.contains(['*', '?']);
        let hits: Vec<String> = have.iter().filter(|h| wildcard(n, h)).cloned().collect();
        if hits.is_empty() && !wild && op != Some('-') {
            return Err(format!(
                "{} {value}: tether does not support the {} {n} (russh {}); it supports {}",
                kind.directive(),
                kind.what(),
                RUSSH_VERSION,
                have.join(",")
            ));
        }
        for h in hits {
            if !named.contains(&h) {
                named.push(h);
            }
        }
    }
    let base = defaults(kind);
    let out: Vec<String> = match op {
        Some('+') => {
            let mut out = base;
            for n in named {
                if !out.contains(&n) {
                    out.push(n);
                }
            }
            out
        }
        Some('-') => base.into_iter().filter(|b| !named.contains(b)).collect(),
        Some('^') => {
            let mut out = named.clone();
            out.extend(base.into_iter().filter(|b| !named.contains(b)));
            out
        }
        _ => named,
    };
    if out.is_empty() {
        return Err(format!(
            "{} {value}: leaves no {} to offer; tether supports {}",
            kind.directive(),
            kind.what(),
            have.join(",")
        ));
    }
    Ok(out)
}

/// The russh release tether is built with (pinned).
pub const RUSSH_VERSION: &str = "0.65.1";

/// The host key algorithms `names` name, as russh takes them.
pub fn host_key_algorithms(names: &[String]) -> Result<Vec<Algorithm>, String> {
    names
        .iter()
        .map(|n| {
            Algorithm::new(n).map_err(|_| {
                format!(
                    "tether does not support the host key algorithm {n}; it supports {}",
                    supported(Kind::HostKey).join(",")
                )
            })
        })
        .collect()
}

/// The MACs `names` name, as russh takes them.
pub fn macs(names: &[String]) -> Result<Vec<russh::mac::Name>, String> {
    names
        .iter()
        .map(|n| {
            russh::mac::Name::try_from(n.as_str()).map_err(|()| {
                format!(
                    "tether does not support the MAC {n}; it supports {}",
                    supported(Kind::Mac).join(",")
                )
            })
        })
        .collect()
}

/// What `ssh -Q QUERY` prints, one name a line; `None`: not a query
/// tether answers (the caller lists [`QUERIES`]).
pub fn query(what: &str) -> Option<Vec<String>> {
    let keys = || supported(Kind::HostKey);
    Some(match what {
        "cipher" | "ciphers" => supported(Kind::Cipher),
        "cipher-auth" => supported(Kind::Cipher)
            .into_iter()
            .filter(|c| c.contains("gcm") || c.contains("poly1305"))
            .collect(),
        "mac" | "macs" => supported(Kind::Mac),
        "kex" | "kexalgorithms" => supported(Kind::Kex),
        "kex-gss" | "key-cert" => Vec::new(),
        // Key types (an RSA key is `ssh-rsa` whatever it signs with).
        "key" | "key-plain" | "hostkeyalgorithms" | "pubkeyacceptedalgorithms" => {
            let mut out: Vec<String> = Vec::new();
            for k in keys() {
                let k = if k.starts_with("rsa-sha2") {
                    "ssh-rsa".to_owned()
                } else {
                    k
                };
                if !out.contains(&k) {
                    out.push(k);
                }
            }
            out
        }
        "key-sig" | "sig" => keys(),
        "compression" => vec!["none".to_owned()],
        "protocol-version" => vec!["2".to_owned()],
        "help" => QUERIES.iter().map(|q| (*q).to_owned()).collect(),
        _ => return None,
    })
}

/// The queries `-Q` answers.
pub const QUERIES: &[&str] = &[
    "cipher",
    "cipher-auth",
    "compression",
    "kex",
    "kex-gss",
    "key",
    "key-cert",
    "key-plain",
    "key-sig",
    "mac",
    "protocol-version",
    "sig",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_with_modifiers() {
        let d = defaults(Kind::Cipher);
        let minus = assemble(Kind::Cipher, "-aes*").unwrap_or_default();
        assert!(minus.iter().all(|c| !c.starts_with("aes")), "{minus:?}");
        assert!(!minus.is_empty());
        let first = assemble(Kind::Cipher, "^aes128-ctr").unwrap_or_default();
        assert_eq!(first.first().map(String::as_str), Some("aes128-ctr"));
        assert_eq!(
            first.len(),
            d.len() + usize::from(!d.contains(&"aes128-ctr".into()))
        );
        let plus = assemble(Kind::Mac, "+hmac-sha1").unwrap_or_default();
        assert_eq!(plus.last().map(String::as_str), Some("hmac-sha1"));
        let e = assemble(Kind::Cipher, "aes128-ctr,3des-cbc").unwrap_err();
        assert!(e.contains("3des-cbc") && e.contains("aes256-ctr"), "{e}");
        assert_eq!(
            assemble(Kind::Kex, "curve25519-sha256").unwrap_or_default(),
            ["curve25519-sha256"]
        );
        assert!(assemble(Kind::HostKey, "ssh-ed25519").is_ok());
        assert!(assemble(Kind::HostKey, "ssh-dss").is_err());
        assert!(query("cipher").is_some_and(|c| c.contains(&"aes256-ctr".to_owned())));
        assert!(query("bogus").is_none());
    }
}
