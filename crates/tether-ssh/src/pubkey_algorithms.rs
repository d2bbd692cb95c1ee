//! `PubkeyAcceptedAlgorithms` (formerly `PubkeyAcceptedKeyTypes`): the
//! signature algorithms tether may log in with, as `ssh_config(5)` reads
//! the list (a whole list, or the default changed by `+`, `-` (wildcards)
//! or `^`). tether applies it by not offering a key (or certificate)
//! whose algorithm the list leaves out; an RSA key signs with the hash
//! russh picked from the server's `server-sig-algs` (`rsa-sha2-512`,
//! `rsa-sha2-256`, else `ssh-rsa`). Security-key (`sk-`) and DSA
//! algorithms are not among them: russh does not sign with those, and a
//! list naming one is an error that says so.

use russh::keys::{Algorithm, HashAlg};

/// The certificate algorithms' suffix.
const CERT: &str = "-cert-v01@openssh.com";

/// The plain algorithms tether signs with, in OpenSSH's default order.
const PLAIN: &[&str] = &[
    "ssh-ed25519",
    "ecdsa-sha2-nistp256",
    "ecdsa-sha2-nistp384",
    "ecdsa-sha2-nistp521",
    "rsa-sha2-512",
    "rsa-sha2-256",
];

/// The default list (OpenSSH's, without what russh cannot sign with):
/// the certificates first, then the plain keys.
pub fn defaults() -> Vec<String> {
    PLAIN
        .iter()
        .map(|p| format!("{p}{CERT}"))
        .chain(PLAIN.iter().map(|p| (*p).to_owned()))
        .collect()
}

/// Every name tether can be told to use: the defaults, and SHA-1 RSA
/// (`ssh-rsa`, off by default as in OpenSSH).
pub fn supported() -> Vec<String> {
    let mut all = defaults();
    all.push(format!("ssh-rsa{CERT}"));
    all.push("ssh-rsa".to_owned());
    all
}

/// The list `value` asks for, checked against what tether can sign with.
pub fn assemble(value: &str) -> Result<Vec<String>, String> {
    let value = value.trim();
    let have = supported();
    let (op, list) = match value.chars().next() {
        Some(c @ ('+' | '-' | '^')) => (Some(c), &value[1..]),
        _ => (None, value),
    };
    let mut named: Vec<String> = Vec::new();
    for n in list.split(',').map(str::trim).filter(|n| !n.is_empty()) {
        let hits: Vec<&String> = have
            .iter()
            .filter(|h| crate::known_hosts::patterns_match(n, h))
            .collect();
        if hits.is_empty() && !n.contains(['*', '?']) && op != Some('-') {
            return Err(format!(
                "PubkeyAcceptedAlgorithms {value}: tether does not log in with {n} (russh {} does not sign with it); it can use {}",
                crate::algorithms::RUSSH_VERSION,
                have.join(",")
            ));
        }
        for h in hits {
            if !named.contains(h) {
                named.push(h.clone());
            }
        }
    }
    let base = defaults();
    let out: Vec<String> = match op {
        Some('+') => dedup(base.into_iter().chain(named).collect()),
        Some('-') => base.into_iter().filter(|b| !named.contains(b)).collect(),
        Some('^') => dedup(named.into_iter().chain(base).collect()),
        _ => named,
    };
    if out.is_empty() {
        return Err(format!(
            "PubkeyAcceptedAlgorithms {value}: leaves no algorithm to log in with; tether can use {}",
            have.join(",")
        ));
    }
    Ok(out)
}

fn dedup(list: Vec<String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for n in list {
        if !out.contains(&n) {
            out.push(n);
        }
    }
    out
}

/// The hash an RSA key signs with: the server's best (`server_best`,
/// russh's pick from `server-sig-algs`), unless `accepted` leaves out
/// `rsa-sha2-512` (plain and certificate) but keeps `rsa-sha2-256`.
pub fn rsa_hash(accepted: Option<&[String]>, server_best: Option<HashAlg>) -> Option<HashAlg> {
    let Some(list) = accepted else {
        return server_best;
    };
    let has = |n: &str| list.iter().any(|a| a == n || *a == format!("{n}{CERT}"));
    match server_best {
        Some(HashAlg::Sha512) if !has("rsa-sha2-512") && has("rsa-sha2-256") => {
            Some(HashAlg::Sha256)
        }
        other => other,
    }
}

/// The name of the signature a key of `algorithm` makes (RSA with
/// `rsa_hash`, russh's pick), as a certificate when `cert`.
pub fn signature_name(algorithm: &Algorithm, rsa_hash: Option<HashAlg>, cert: bool) -> String {
    let plain = match algorithm {
        Algorithm::Rsa { .. } => Algorithm::Rsa { hash: rsa_hash }.as_str().to_owned(),
        a => a.as_str().to_owned(),
    };
    if cert {
        format!("{plain}{CERT}")
    } else {
        plain
    }
}

/// Whether `accepted` (`None`: the default list) lets tether log in with
/// a key of `algorithm` (a certificate when `cert`).
pub fn allows(
    accepted: Option<&[String]>,
    algorithm: &Algorithm,
    rsa_hash: Option<HashAlg>,
    cert: bool,
) -> bool {
    let name = signature_name(algorithm, rsa_hash, cert);
    match accepted {
        Some(list) => list.contains(&name),
        None => supported().contains(&name),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_as_ssh_config_reads_them() {
        let d = defaults();
        assert!(d.contains(&"ssh-ed25519".to_owned()));
        assert!(d.contains(&format!("ssh-ed25519{CERT}")));
        assert_eq!(assemble("ssh-ed25519"), Ok(vec!["ssh-ed25519".to_owned()]));
        let minus = assemble("-ssh-ed25519-cert*").unwrap_or_default();
        assert!(minus.contains(&"ssh-ed25519".to_owned()));
        assert!(!minus.iter().any(|n| n.starts_with("ssh-ed25519-cert")));
        let plus = assemble("+ssh-rsa").unwrap_or_default();
        assert_eq!(plus.last().map(String::as_str), Some("ssh-rsa"));
        assert_eq!(
            assemble("^ssh-rsa")
                .unwrap_or_default()
                .first()
                .map(String::as_str),
            Some("ssh-rsa")
        );
        assert!(assemble("ssh-dss").unwrap_err().contains("ssh-dss"));
        assert!(assemble("-*").is_err());
        let ed = Algorithm::Ed25519;
        let only = vec!["ssh-ed25519".to_owned()];
        assert!(allows(Some(&only), &ed, None, false));
        assert!(!allows(Some(&only), &ed, None, true));
        let rsa = Algorithm::Rsa { hash: None };
        assert!(!allows(Some(&only), &rsa, Some(HashAlg::Sha512), false));
        assert!(allows(None, &rsa, Some(HashAlg::Sha512), false));
        let only_256 = vec!["rsa-sha2-256".to_owned()];
        assert_eq!(
            rsa_hash(Some(&only_256), Some(HashAlg::Sha512)),
            Some(HashAlg::Sha256)
        );
        assert_eq!(rsa_hash(None, Some(HashAlg::Sha512)), Some(HashAlg::Sha512));
        assert_eq!(
            signature_name(&rsa, Some(HashAlg::Sha256), true),
            format!("rsa-sha2-256{CERT}")
        );
    }
}
