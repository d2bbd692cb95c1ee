//! OpenSSH `known_hosts` files: lookup and trust on first use.
//!
//! Written here rather than taken from `russh::keys::known_hosts`, which
//! matches hosts exactly (no `*`/`?` wildcards, no `!` negation), ignores
//! the `@revoked` and `@cert-authority` markers, and reports wrong line
//! numbers after comments.
//!
//! A line is `[@marker] patterns keytype base64 [comment]`; patterns are
//! comma-separated names, `[host]:port` for ports other than 22, wildcards,
//! `!negations` and hashed `|1|salt|hmac` entries. The verdict for a
//! presented key: revoked (any `@revoked` line with that key), known (a
//! matching line with that key), changed (matching lines, none with that
//! key), or unknown.

use std::io::Write;
use std::path::{Path, PathBuf};

use data_encoding::BASE64;
use hmac::{KeyInit, Mac};
use russh::keys::PublicKey;

use crate::error::SshError;

/// Where a known_hosts line came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Place {
    /// The file.
    pub file: PathBuf,
    /// Its line number, from 1.
    pub line: usize,
}

impl std::fmt::Display for Place {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.file.display(), self.line)
    }
}

/// What the files say of a host's key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// A matching line holds this key.
    Known(Place),
    /// The host is known with other keys; the first such line.
    Changed(Place),
    /// An `@revoked` line holds this key.
    Revoked(Place),
    /// Nothing about this host.
    Unknown,
}

/// The name a host has in known_hosts: `host`, or `[host]:port`.
pub fn host_key_name(host: &str, port: u16) -> String {
    if port == 22 {
        host.to_owned()
    } else {
        format!("[{host}]:{port}")
    }
}

/// `?` and `*` wildcards, as OpenSSH matches host patterns.
fn wildcard(pattern: &[u8], name: &[u8]) -> bool {
    match (pattern.split_first(), name.split_first()) {
        (None, None) => true,
        (Some((b'*', rest)), _) => {
            wildcard(rest, name)
                || name
                    .split_first()
                    .is_some_and(|(_, n)| wildcard(pattern, n))
        }
        (Some((b'?', rest)), Some((_, n))) => wildcard(rest, n),
        (Some((p, rest)), Some((c, n))) => p.eq_ignore_ascii_case(c) && wildcard(rest, n),
        _ => false,
    }
}

fn hashed_match(entry: &str, name: &str) -> bool {
    let mut parts = entry.split('|').skip(2);
    let (Some(salt), Some(hash)) = (parts.next(), parts.next()) else {
        return false;
    };
    let (Ok(salt), Ok(hash)) = (
        BASE64.decode(salt.as_bytes()),
        BASE64.decode(hash.as_bytes()),
    ) else {
        return false;
    };
    let Ok(mac) = <hmac::Hmac<sha1::Sha1> as KeyInit>::new_from_slice(&salt) else {
        return false;
    };
    mac.chain_update(name.as_bytes())
        .verify_slice(&hash)
        .is_ok()
}

/// True when the comma-separated `patterns` match `name`: some positive
/// pattern matches and no negated one does.
pub fn patterns_match(patterns: &str, name: &str) -> bool {
    let mut matched = false;
    for p in patterns.split(',') {
        let (negated, p) = match p.strip_prefix('!') {
            Some(p) => (true, p),
            None => (false, p),
        };
        let hit = if p.starts_with("|1|") {
            hashed_match(p, name)
        } else {
            wildcard(p.as_bytes(), name.as_bytes())
        };
        if hit && negated {
            return false;
        }
        matched |= hit;
    }
    matched
}

/// One parsed line.
struct Entry<'a> {
    marker: Option<&'a str>,
    patterns: &'a str,
    key: Option<PublicKey>,
}

fn parse_line(line: &str) -> Option<Entry<'_>> {
    let line = line.trim();
    if line.is_empty() || line.starts_with('#') {
        return None;
    }
    let mut fields = line.split_whitespace();
    let mut first = fields.next()?;
    let marker = if first.starts_with('@') {
        let m = first;
        first = fields.next()?;
        Some(m)
    } else {
        None
    };
    let _keytype = fields.next()?;
    let key = fields
        .next()
        .and_then(|b64| russh::keys::parse_public_key_base64(b64).ok());
    Some(Entry {
        marker,
        patterns: first,
        key,
    })
}

/// The files' text, in order (a missing or unreadable file is empty), each
/// with its name for [`Place`]s.
pub fn read_files(files: &[PathBuf]) -> Vec<(PathBuf, String)> {
    files
        .iter()
        .filter_map(|f| Some((f.clone(), std::fs::read_to_string(f).ok()?)))
        .collect()
}

/// The verdict of `files` (in order; missing files are empty) on `key`
/// presented by the host known as `name` ([`host_key_name`], or a
/// `HostKeyAlias`).
pub fn check(files: &[PathBuf], name: &str, key: &PublicKey) -> Verdict {
    check_in(&read_files(files), name, key)
}

/// [`check`] on texts already read (files, a `KnownHostsCommand`'s
/// output), each named for its [`Place`]s.
pub fn check_in(sources: &[(PathBuf, String)], name: &str, key: &PublicKey) -> Verdict {
    let mut known = None;
    let mut changed = None;
    for (file, text) in sources {
        for (i, line) in text.lines().enumerate() {
            let Some(e) = parse_line(line) else { continue };
            let place = || Place {
                file: file.clone(),
                line: i + 1,
            };
            let same = e
                .key
                .as_ref()
                .is_some_and(|k| k.key_data() == key.key_data());
            match e.marker {
                Some("@revoked") if same => return Verdict::Revoked(place()),
                // Host certificates are not used: a CA line is recognised
                // and skipped.
                Some(_) => continue,
                None if !patterns_match(e.patterns, name) => continue,
                None if same => known = known.or_else(|| Some(place())),
                None => changed = changed.or_else(|| Some(place())),
            }
        }
    }
    match (known, changed) {
        (Some(p), _) => Verdict::Known(p),
        (None, Some(p)) => Verdict::Changed(p),
        (None, None) => Verdict::Unknown,
    }
}

/// The key algorithms known for the host known as `name`, to ask the
/// server for first.
pub fn known_algorithms(sources: &[(PathBuf, String)], name: &str) -> Vec<russh::keys::Algorithm> {
    let mut out = Vec::new();
    for (_, text) in sources {
        for e in text.lines().filter_map(parse_line) {
            if e.marker.is_none()
                && patterns_match(e.patterns, name)
                && let Some(k) = e.key
                && !out.contains(&k.algorithm())
            {
                out.push(k.algorithm());
            }
        }
    }
    out
}

/// `name` hashed as `HashKnownHosts` writes it: `|1|salt|HMAC-SHA1`, with
/// a fresh random salt.
pub fn hashed_name(name: &str) -> std::io::Result<String> {
    let mut salt = [0u8; 20];
    std::io::Read::read_exact(&mut std::fs::File::open("/dev/urandom")?, &mut salt)?;
    let mac = <hmac::Hmac<sha1::Sha1> as KeyInit>::new_from_slice(&salt)
        .map_err(|e| std::io::Error::other(e.to_string()))?
        .chain_update(name.as_bytes())
        .finalize()
        .into_bytes();
    Ok(format!(
        "|1|{}|{}",
        BASE64.encode(&salt),
        BASE64.encode(&mac)
    ))
}

/// Adds the key of the host known as `name` to `file` (trust on first
/// use), under an exclusive lock, unless a line for it appeared meanwhile;
/// one append, so a reader never sees half a line. `hashed`
/// (`HashKnownHosts`): the name is written hashed.
pub fn learn(file: &Path, name: &str, key: &PublicKey, hashed: bool) -> Result<(), SshError> {
    let io = |source| SshError::KnownHosts {
        file: file.to_path_buf(),
        source,
    };
    if let Some(dir) = file.parent() {
        std::fs::create_dir_all(dir).map_err(io)?;
    }
    let f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .read(true)
        .open(file)
        .map_err(io)?;
    let mut locked = nix::fcntl::Flock::lock(f, nix::fcntl::FlockArg::LockExclusive)
        .map_err(|(_, e)| io(std::io::Error::from(e)))?;
    if check(&[file.to_path_buf()], name, key) != Verdict::Unknown {
        return Ok(());
    }
    let openssh = key
        .to_openssh()
        .map_err(|e| io(std::io::Error::other(e.to_string())))?;
    // `to_openssh` is `type base64 [comment]`; keep type and key.
    let mut parts = openssh.split_whitespace();
    let (Some(kind), Some(b64)) = (parts.next(), parts.next()) else {
        return Err(io(std::io::Error::other("the key has no OpenSSH form")));
    };
    let written = if hashed {
        hashed_name(name).map_err(io)?
    } else {
        name.to_owned()
    };
    let line = format!("{written} {kind} {b64}\n");
    locked.write_all(line.as_bytes()).map_err(io)?;
    locked.flush().map_err(io)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_wildcards_negation_and_ports() {
        assert!(patterns_match("web1,web2", "web2"));
        assert!(patterns_match("*.example.com", "a.example.com"));
        assert!(!patterns_match(
            "*.example.com,!bad.example.com",
            "bad.example.com"
        ));
        assert!(patterns_match("web?", "web7"));
        assert!(!patterns_match("web?", "web10"));
        assert!(patterns_match(
            "[127.0.0.2]:2222",
            &host_key_name("127.0.0.2", 2222)
        ));
        assert!(!patterns_match(
            "127.0.0.2",
            &host_key_name("127.0.0.2", 2222)
        ));
    }

    #[test]
    fn hashed_entries_match() {
        // `ssh-keygen -H` of "web01": salt and HMAC-SHA1 of the name.
        let salt = b"0123456789abcdefghij";
        let mac = <hmac::Hmac<sha1::Sha1> as KeyInit>::new_from_slice(salt)
            .unwrap_or_else(|_| unreachable!())
            .chain_update(b"web01")
            .finalize()
            .into_bytes();
        let entry = format!("|1|{}|{}", BASE64.encode(salt), BASE64.encode(&mac));
        assert!(patterns_match(&entry, "web01"));
        assert!(!patterns_match(&entry, "web02"));
        // What HashKnownHosts writes is matched when read.
        let written = hashed_name("[10.0.0.1]:2222").unwrap_or_default();
        assert!(written.starts_with("|1|"), "{written}");
        assert!(patterns_match(&written, "[10.0.0.1]:2222"));
        assert!(!patterns_match(&written, "10.0.0.1"));
    }
}
