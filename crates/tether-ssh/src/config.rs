//! OpenSSH client configuration (`~/.ssh/config`, or `-F FILE`), read the
//! way `ssh` reads it: for a host, every `Host` block whose patterns match
//! contributes, the first value obtained for a key wins (`IdentityFile`
//! accumulates), `Include` reads more files in place (globs, relative to
//! `~/.ssh`), keywords are case-insensitive and `key=value` works.
//! `Match` lines are evaluated for the criteria tether can know
//! (`match_block`). A directive tether does not apply is refused with its
//! file and line when it would change where, how or as whom it connects,
//! or what it trusts, in a block that applies to the host (`directives`
//! has the one list); an unknown keyword there is refused too (as `ssh`
//! does), unless `IgnoreUnknown` names it.
//!
//! Written here: the `ssh2-config` crate does not keep `IdentityFile`'s
//! order-with-accumulation nor `Include` inside `Host` blocks as OpenSSH
//! does.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::directives::{Treatment, treatment};
use crate::error::SshError;
use crate::known_hosts::patterns_match;
use crate::match_block::{Against, applies};

/// The settings for one host, as far as tether uses them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HostConfig {
    /// `HostName`.
    pub hostname: Option<String>,
    /// `User`.
    pub user: Option<String>,
    /// `Port`.
    pub port: Option<u16>,
    /// `IdentityFile`, in order.
    pub identity_files: Vec<PathBuf>,
    /// `IdentitiesOnly`.
    pub identities_only: Option<bool>,
    /// `IdentityAgent` (`None` inside: `none`).
    pub identity_agent: Option<Option<PathBuf>>,
    /// `ProxyJump`, hop by hop.
    pub proxy_jump: Option<Vec<String>>,
    /// `UserKnownHostsFile`.
    pub user_known_hosts: Option<Vec<PathBuf>>,
    /// `StrictHostKeyChecking`.
    pub strict_host_key_checking: Option<String>,
    /// `ConnectTimeout`, seconds.
    pub connect_timeout: Option<u64>,
    /// `ServerAliveInterval`, seconds.
    pub server_alive_interval: Option<u64>,
    /// `ServerAliveCountMax`.
    pub server_alive_count_max: Option<usize>,
    /// `Ciphers`.
    pub ciphers: Option<Vec<String>>,
    /// `KexAlgorithms`.
    pub kex: Option<Vec<String>>,
    /// `SetEnv` pairs.
    pub set_env: Vec<(String, String)>,
    /// `SendEnv` patterns.
    pub send_env: Vec<String>,
    /// `PasswordAuthentication`, `KbdInteractiveAuthentication` and
    /// `PreferredAuthentications` together: `Some(false)` when any turns
    /// passwords off (tether offers the one password to both methods).
    pub passwords: Option<bool>,
    /// `BatchMode`: never ask for a passphrase or a password.
    pub batch_mode: Option<bool>,
    /// `LocalForward`s, each as one `-L` spec (its two words joined by
    /// `:`), from every block that applies.
    pub local_forward: Vec<String>,
    /// `RemoteForward`s, as `-R` specs.
    pub remote_forward: Vec<String>,
    /// `DynamicForward`s, as `-D` specs.
    pub dynamic_forward: Vec<String>,
    /// `GatewayPorts`.
    pub gateway_ports: Option<bool>,
    /// `ExitOnForwardFailure`.
    pub exit_on_forward_failure: Option<bool>,
    /// `ClearAllForwardings`.
    pub clear_all_forwardings: Option<bool>,
    /// `SessionType none` (`-N`): `Some(true)`; `default`: `Some(false)`.
    pub session_none: Option<bool>,
    /// `ForkAfterAuthentication` (`-f`).
    pub fork_after_authentication: Option<bool>,
    /// `PermitRemoteOpen`, its words (`any`, `none`, `host:port`, `*`).
    pub permit_remote_open: Option<Vec<String>>,
    /// `StreamLocalBindMask` (octal).
    pub stream_local_bind_mask: Option<u32>,
    /// `StreamLocalBindUnlink`.
    pub stream_local_bind_unlink: Option<bool>,
}

/// One `key value` line with where it is.
struct Line {
    key: String,
    /// The keyword as written (for messages).
    name: String,
    value: String,
    file: PathBuf,
    number: usize,
}

fn home() -> PathBuf {
    std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_default()
}

/// `~/` expanded.
pub fn expand_tilde(p: &str) -> PathBuf {
    match p.strip_prefix("~/") {
        Some(rest) => home().join(rest),
        None if p == "~" => home(),
        None => PathBuf::from(p),
    }
}

fn split_line(raw: &str) -> Option<(String, String, String)> {
    let line = raw.trim();
    if line.is_empty() || line.starts_with('#') {
        return None;
    }
    let at = line.find(|c: char| c.is_whitespace() || c == '=')?;
    let name = line[..at].to_owned();
    let rest = line[at..].trim_start_matches(|c: char| c.is_whitespace() || c == '=');
    let value = rest.trim().trim_matches('"').to_owned();
    Some((name.to_ascii_lowercase(), name, value))
}

/// Reads `file` (and its Includes) into lines, `Host` lines included.
fn read_lines(file: &Path, out: &mut Vec<Line>, depth: usize) -> Result<(), SshError> {
    if depth > 16 {
        return Err(SshError::Config {
            place: file.display().to_string(),
            problem: "Include nests more than 16 deep (a loop?)".into(),
        });
    }
    let text = match std::fs::read_to_string(file) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && depth > 0 => return Ok(()),
        Err(e) => {
            return Err(SshError::Config {
                place: file.display().to_string(),
                problem: format!("cannot be read: {e}"),
            });
        }
    };
    for (i, raw) in text.lines().enumerate() {
        let Some((key, name, value)) = split_line(raw) else {
            continue;
        };
        if key == "include" {
            for pattern in value.split_whitespace() {
                let path = expand_tilde(pattern);
                let path = if path.is_relative() {
                    home().join(".ssh").join(path)
                } else {
                    path
                };
                for f in glob(&path) {
                    read_lines(&f, out, depth + 1)?;
                }
            }
            continue;
        }
        out.push(Line {
            key,
            name,
            value,
            file: file.to_path_buf(),
            number: i + 1,
        });
    }
    Ok(())
}

/// The files matching `path`, whose last component may hold `*` or `?`.
fn glob(path: &Path) -> Vec<PathBuf> {
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    if !name.contains(['*', '?']) {
        return vec![path.to_path_buf()];
    }
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_str()
                .is_some_and(|n| patterns_match(name, n))
        })
        .map(|e| e.path())
        .collect();
    found.sort();
    found
}

/// `%h`, `%p`, `%r`, `%u`, `%d`, `%%` in a path.
fn tokens(value: &str, host: &str, port: u16, user: &str) -> String {
    let mut out = String::new();
    let mut chars = value.chars();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('h') => out.push_str(host),
            Some('p') => out.push_str(&port.to_string()),
            Some('r') => out.push_str(user),
            Some('u') => out.push_str(&std::env::var("USER").unwrap_or_default()),
            Some('d') => out.push_str(&home().display().to_string()),
            Some('%') => out.push('%'),
            Some(other) => {
                out.push('%');
                out.push(other);
            }
            None => out.push('%'),
        }
    }
    out
}

/// The configuration `file` gives `host` (the name as typed).
pub fn resolve(file: &Path, host: &str) -> Result<HostConfig, SshError> {
    resolve_for(file, host, None)
}

/// [`resolve`] for `user` when the command line names one (`Match user`
/// is evaluated against it; else against `User` so far, else the local
/// user).
pub fn resolve_for(file: &Path, host: &str, user: Option<&str>) -> Result<HostConfig, SshError> {
    let mut lines = Vec::new();
    read_lines(file, &mut lines, 0)?;
    let mut cfg = HostConfig::default();
    let mut active = true;
    let mut seen: HashMap<String, ()> = HashMap::new();
    let mut raw_identities = Vec::new();
    let mut raw_known = None;
    let mut raw_agent = None;
    let mut ignore_unknown: Option<String> = None;
    let mut passwords: Option<bool> = None;
    let mut kbd: Option<bool> = None;
    let mut preferred: Option<bool> = None;
    let local_user = std::env::var("USER").unwrap_or_default();
    for l in &lines {
        let bad = |problem: String| SshError::Config {
            place: format!("{}:{}", l.file.display(), l.number),
            problem,
        };
        match l.key.as_str() {
            "host" => {
                let pats: Vec<&str> = l.value.split_whitespace().collect();
                active = patterns_match(&pats.join(","), host);
                continue;
            }
            "match" => {
                let so_far = cfg.hostname.clone().unwrap_or_else(|| host.to_owned());
                let remote_user = user
                    .map(str::to_owned)
                    .or_else(|| cfg.user.clone())
                    .unwrap_or_else(|| local_user.clone());
                let at = Against {
                    host: &so_far,
                    original: host,
                    user: &remote_user,
                    local_user: &local_user,
                };
                active = applies(&l.value, &at).map_err(bad)?;
                continue;
            }
            _ if !active => continue,
            _ => {}
        }
        // One slot for ProxyJump and ProxyCommand: the first of them wins,
        // as in OpenSSH.
        let slot = if l.key == "proxycommand" {
            "proxyjump"
        } else {
            l.key.as_str()
        };
        let first = !seen.contains_key(slot);
        match treatment(&l.key, &l.value) {
            Some(Treatment::Applied) => {}
            Some(Treatment::Harmless) => {
                seen.insert(slot.to_owned(), ());
                continue;
            }
            Some(Treatment::Refused(why)) if first => {
                return Err(bad(format!(
                    "{} {} applies to {host}, but {why}. Until tether supports it, remove it for this host (or give -F another file)",
                    l.name, l.value
                )));
            }
            Some(Treatment::Refused(_)) => continue,
            None if ignore_unknown
                .as_deref()
                .is_some_and(|p| patterns_match(p, &l.key)) =>
            {
                continue;
            }
            None => {
                return Err(bad(format!(
                    "{} is not an ssh_config keyword tether knows; fix its spelling, or name it in IgnoreUnknown before this line",
                    l.name
                )));
            }
        }
        match l.key.as_str() {
            "identityfile" => {
                raw_identities.push(l.value.clone());
                continue;
            }
            "setenv" => {
                for kv in l.value.split_whitespace() {
                    if let Some((k, v)) = kv.split_once('=') {
                        cfg.set_env.push((k.to_owned(), v.to_owned()));
                    }
                }
                continue;
            }
            "sendenv" => {
                cfg.send_env
                    .extend(l.value.split_whitespace().map(str::to_owned));
                continue;
            }
            "localforward" | "remoteforward" | "dynamicforward" => {
                let spec = l.value.split_whitespace().collect::<Vec<_>>().join(":");
                match l.key.as_str() {
                    "localforward" => cfg.local_forward.push(spec),
                    "remoteforward" => cfg.remote_forward.push(spec),
                    _ => cfg.dynamic_forward.push(spec),
                }
                continue;
            }
            _ => {}
        }
        if seen.insert(slot.to_owned(), ()).is_some() {
            continue; // the first value obtained wins
        }
        let number = |what: &str| -> Result<u64, SshError> {
            l.value
                .parse()
                .map_err(|_| bad(format!("{what} must be a number, got {:?}", l.value)))
        };
        let yes_no = |what: &str| -> Result<bool, SshError> {
            match l.value.to_ascii_lowercase().as_str() {
                "yes" | "true" => Ok(true),
                "no" | "false" => Ok(false),
                _ => Err(bad(format!("{what} must be yes or no, got {:?}", l.value))),
            }
        };
        match l.key.as_str() {
            "hostname" => cfg.hostname = Some(l.value.clone()),
            "user" => cfg.user = Some(l.value.clone()),
            "port" => {
                cfg.port = Some(
                    u16::try_from(number("Port")?)
                        .map_err(|_| bad("Port must be at most 65535".into()))?,
                )
            }
            "identitiesonly" => cfg.identities_only = Some(yes_no("IdentitiesOnly")?),
            "identityagent" => raw_agent = Some(l.value.clone()),
            "proxyjump" => {
                cfg.proxy_jump = Some(if l.value.eq_ignore_ascii_case("none") {
                    Vec::new()
                } else {
                    l.value.split(',').map(|h| h.trim().to_owned()).collect()
                })
            }
            "userknownhostsfile" => raw_known = Some(l.value.clone()),
            "ciphers" | "kexalgorithms" => {
                if l.value.starts_with(['+', '-', '^']) {
                    return Err(bad(format!(
                        "{} with +, - or ^ is not supported; give the whole list",
                        l.key
                    )));
                }
                let list = Some(l.value.split(',').map(|c| c.trim().to_owned()).collect());
                if l.key == "ciphers" {
                    cfg.ciphers = list;
                } else {
                    cfg.kex = list;
                }
            }
            "ignoreunknown" => ignore_unknown = Some(l.value.to_ascii_lowercase()),
            "passwordauthentication" => passwords = Some(yes_no("PasswordAuthentication")?),
            "kbdinteractiveauthentication" | "challengeresponseauthentication" => {
                kbd = Some(yes_no("KbdInteractiveAuthentication")?)
            }
            "batchmode" => cfg.batch_mode = Some(yes_no("BatchMode")?),
            "gatewayports" => cfg.gateway_ports = Some(yes_no("GatewayPorts")?),
            "exitonforwardfailure" => {
                cfg.exit_on_forward_failure = Some(yes_no("ExitOnForwardFailure")?)
            }
            "clearallforwardings" => {
                cfg.clear_all_forwardings = Some(yes_no("ClearAllForwardings")?)
            }
            "streamlocalbindmask" => {
                cfg.stream_local_bind_mask = Some(
                    u32::from_str_radix(&l.value, 8)
                        .ok()
                        .filter(|m| *m <= 0o777)
                        .ok_or_else(|| {
                            bad(format!(
                                "StreamLocalBindMask must be an octal mask such as 0177, got {:?}",
                                l.value
                            ))
                        })?,
                )
            }
            "streamlocalbindunlink" => {
                cfg.stream_local_bind_unlink = Some(yes_no("StreamLocalBindUnlink")?)
            }
            "permitremoteopen" => {
                cfg.permit_remote_open =
                    Some(l.value.split_whitespace().map(str::to_owned).collect())
            }
            "sessiontype" => cfg.session_none = Some(l.value.eq_ignore_ascii_case("none")),
            "forkafterauthentication" => {
                cfg.fork_after_authentication = Some(yes_no("ForkAfterAuthentication")?)
            }
            "preferredauthentications" => {
                preferred =
                    Some(crate::directives::preferred_authentications(&l.value).map_err(bad)?)
            }
            "stricthostkeychecking" => {
                cfg.strict_host_key_checking = Some(l.value.to_ascii_lowercase())
            }
            "connecttimeout" => cfg.connect_timeout = Some(number("ConnectTimeout")?),
            "serveraliveinterval" => {
                cfg.server_alive_interval = Some(number("ServerAliveInterval")?)
            }
            "serveralivecountmax" => {
                cfg.server_alive_count_max =
                    Some(usize::try_from(number("ServerAliveCountMax")?).unwrap_or(3))
            }
            _ => {}
        }
    }
    if passwords.is_some() || kbd.is_some() || preferred.is_some() {
        cfg.passwords =
            Some(passwords.unwrap_or(true) && kbd.unwrap_or(true) && preferred.unwrap_or(true));
    }
    // Tokens name the resolved host, port and user.
    let h = cfg
        .hostname
        .clone()
        .map(|n| tokens(&n, host, 22, ""))
        .unwrap_or_else(|| host.to_owned());
    cfg.hostname = Some(h.clone());
    let (port, user) = (cfg.port.unwrap_or(22), cfg.user.clone().unwrap_or_default());
    cfg.identity_files = raw_identities
        .iter()
        .map(|v| expand_tilde(&tokens(v, &h, port, &user)))
        .collect();
    cfg.user_known_hosts = raw_known.map(|v| {
        v.split_whitespace()
            .map(|p| expand_tilde(&tokens(p, &h, port, &user)))
            .collect()
    });
    cfg.identity_agent = raw_agent.map(|v| match v.as_str() {
        "none" => None,
        "SSH_AUTH_SOCK" => std::env::var_os("SSH_AUTH_SOCK").map(PathBuf::from),
        v => Some(expand_tilde(&tokens(
            v.trim_start_matches('$'),
            &h,
            port,
            &user,
        ))),
    });
    Ok(cfg)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_value_wins_identities_accumulate_and_includes_read_in_place() {
        let dir = std::env::temp_dir().join(format!("tether-sshcfg-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap_or_default();
        let inc = dir.join("extra.conf");
        std::fs::write(&inc, "Host web*\n  Port 2200\n  IdentityFile /k/inc\n").unwrap_or_default();
        let main = dir.join("config");
        let text = format!(
            "Host web01\n  HostName 10.0.0.1\n  User=alice\n  IdentityFile /k/%h\nInclude {}\nHost *\n  User bob\n  Port 22\n  IdentityFile /k/all\n  ProxyJump j1,j2\n  StrictHostKeyChecking accept-new\nMatch host x\n  User nobody\n",
            inc.display()
        );
        std::fs::write(&main, text).unwrap_or_default();
        let c = resolve(&main, "web01").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(c.hostname.as_deref(), Some("10.0.0.1"));
        assert_eq!(c.user.as_deref(), Some("alice"));
        assert_eq!(c.port, Some(2200));
        let ids: Vec<String> = c
            .identity_files
            .iter()
            .map(|p| p.display().to_string())
            .collect();
        assert_eq!(ids, ["/k/10.0.0.1", "/k/inc", "/k/all"]);
        assert_eq!(c.proxy_jump, Some(vec!["j1".to_owned(), "j2".to_owned()]));
        assert_eq!(c.strict_host_key_checking.as_deref(), Some("accept-new"));
        let other = resolve(&main, "db1").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((other.user.as_deref(), other.port), (Some("bob"), Some(22)));
        std::fs::write(&main, "Host *\n  Port many\n").unwrap_or_default();
        let e = resolve(&main, "x").unwrap_err().to_string();
        assert!(
            e.contains(":2") && e.contains("Port must be a number"),
            "{e}"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
