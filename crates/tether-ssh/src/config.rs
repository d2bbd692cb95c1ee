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

use crate::algorithms::Kind as Kind_;
use crate::config_lines::Kind;
use crate::directives::{Treatment, treatment};
use crate::error::SshError;
use crate::known_hosts::patterns_match;
use crate::match_block::{Against, applies};
use crate::percent::Tokens;

/// The settings for one host, as far as tether uses them.
#[derive(Clone, Debug, Default)]
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
    /// `ConnectTimeout`, seconds (`none`: the default).
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
    /// `ProxyCommand`, tokens not expanded (`none` kept: it wins over a
    /// later `ProxyJump` too). `ProxyJump` and `ProxyCommand` share one
    /// slot: at most one of them is set, the first obtained.
    pub proxy_command: Option<String>,
    /// `HostKeyAlias`.
    pub host_key_alias: Option<String>,
    /// `KnownHostsCommand`, tokens not expanded (`none`: none).
    pub known_hosts_command: Option<String>,
    /// `HashKnownHosts`.
    pub hash_known_hosts: Option<bool>,
    /// `AddressFamily`.
    pub address_family: Option<crate::connect::AddressFamily>,
    /// `CertificateFile`, in order.
    pub certificate_files: Vec<PathBuf>,
    /// `ForwardAgent` as written (`yes`, `no`, a socket, `$VAR`).
    pub forward_agent: Option<String>,
    /// `GlobalKnownHostsFile`: read after the user's files.
    pub global_known_hosts: Option<Vec<PathBuf>>,
    /// `PubkeyAcceptedAlgorithms` (`PubkeyAcceptedKeyTypes`), the list
    /// assembled.
    pub pubkey_algorithms: Option<Vec<String>>,
    /// `MACs`, the list assembled (`+`, `-`, `^` applied).
    pub macs: Option<Vec<String>>,
    /// `HostKeyAlgorithms`, the list assembled.
    pub host_key_algorithms: Option<Vec<String>>,
    /// `PermitLocalCommand`.
    pub permit_local_command: Option<bool>,
    /// `LocalCommand`, as written (its tokens are expanded when it runs).
    pub local_command: Option<String>,
    /// `RemoteCommand`, as written (`none`: not set); run by `tether ssh`
    /// when no command is given, refused by the other front-ends.
    pub remote_command: Option<String>,
    /// `LogLevel`.
    pub log_level: Option<crate::directives::LogLevel>,
    /// `RequestTTY`.
    pub request_tty: Option<crate::directives::RequestTty>,
    /// `StdinNull`.
    pub stdin_null: Option<bool>,
    /// `EscapeChar`, as written.
    pub escape_char: Option<String>,
    /// Every directive that took effect, `(key in lower case, value as
    /// written)`, in order (`-G`, and the tokens of other directives).
    pub values: Vec<(String, String)>,
    /// One line for each directive accepted without being applied
    /// (shown under `-v`).
    pub notes: Vec<String>,
    /// What the `%` tokens stand for, resolved.
    pub tokens: Tokens,
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

pub use crate::config_lines::expand_tilde;

/// The configuration `file` gives `host` (the name as typed).
pub fn resolve(file: &Path, host: &str) -> Result<HostConfig, SshError> {
    resolve_for(file, host, None)
}

/// [`resolve`] for `user` when the command line names one (`Match user`
/// is evaluated against it; else against `User` so far, else the local
/// user).
pub fn resolve_for(file: &Path, host: &str, user: Option<&str>) -> Result<HostConfig, SshError> {
    resolve_with(Some(file), &[], host, user, None)
}

/// Directives whose every value counts (the others: the first value
/// obtained wins).
const ACCUMULATE: &[&str] = &[
    "identityfile",
    "certificatefile",
    "localforward",
    "remoteforward",
    "dynamicforward",
    "sendenv",
];

/// The configuration for `host` (the name as typed): the `-o` `options`
/// first (OpenSSH's spellings, read as ssh_config lines), then `file`
/// (`None`: no file). `user` and `port`: what the command line names
/// (`Match user` and the tokens use them).
pub fn resolve_with(
    file: Option<&Path>,
    options: &[String],
    host: &str,
    user: Option<&str>,
    port: Option<u16>,
) -> Result<HostConfig, SshError> {
    // Before any use (a `Match exec`, a `%h` anywhere): as OpenSSH.
    let refused = |name: &str, problem| SshError::BadName {
        name: name.to_owned(),
        problem,
    };
    crate::destination::check_host(host).map_err(|p| refused(host, p))?;
    if let Some(u) = user {
        crate::destination::check_user(u).map_err(|p| refused(u, p))?;
    }
    resolve_hop_with(file, options, host, user, port)
}

/// [`resolve_with`] for a jump host that the user's own ssh_config (or
/// tether's config) names in `ProxyJump`: not checked as a caller's name,
/// as OpenSSH does not check it either (its `ssh -G` prints it; tether
/// reaches a hop over a channel, never through a shell). Its tokens still
/// reach a shell quoted ([`Tokens::expand_for_shell`]).
pub fn resolve_hop_with(
    file: Option<&Path>,
    options: &[String],
    host: &str,
    user: Option<&str>,
    port: Option<u16>,
) -> Result<HostConfig, SshError> {
    let mut lines = crate::config_lines::option_lines(options)?;
    if let Some(file) = file {
        crate::config_lines::read_lines(file, &mut lines, 0)?;
    }
    let mut cfg = HostConfig::default();
    let mut active = true;
    // Per included file: the including block's state, and whether its
    // lines may apply at all.
    let mut stack: Vec<(bool, bool)> = Vec::new();
    let mut never = false;
    let mut seen: HashMap<String, ()> = HashMap::new();
    let mut raw_identities = Vec::new();
    let mut raw_certificates = Vec::new();
    let mut raw_known = None;
    let mut raw_global: Option<String> = None;
    let mut raw_agent = None;
    let mut ignore_unknown: Option<String> = None;
    let mut passwords: Option<bool> = None;
    let mut kbd: Option<bool> = None;
    let mut preferred: Option<bool> = None;
    let mut set_env_done = false;
    let local_user = crate::percent::local_user();
    for l in &lines {
        let bad = |problem: String| SshError::Config {
            place: l.place(),
            problem,
        };
        match l.kind {
            Kind::Enter => {
                stack.push((active, never));
                never |= !active;
                continue;
            }
            Kind::Leave => {
                (active, never) = stack.pop().unwrap_or((true, false));
                continue;
            }
            Kind::Directive => {}
        }
        match l.key.as_str() {
            "host" => {
                // Against the name as typed, case and all (as ssh).
                let pats: Vec<&str> = l.value.split_whitespace().collect();
                active = !never && host_patterns(&pats, host);
                continue;
            }
            "match" => {
                let so_far = cfg.hostname.clone().unwrap_or_else(|| host.to_owned());
                let remote_user = user
                    .map(str::to_owned)
                    .or_else(|| cfg.user.clone())
                    .unwrap_or_else(|| local_user.clone());
                let t = Tokens {
                    host: so_far.clone(),
                    original: host.to_owned(),
                    port: port.or(cfg.port).unwrap_or(22),
                    user: remote_user.clone(),
                    alias: cfg.value("hostkeyalias").map(str::to_owned),
                    jump: String::new(),
                };
                let run = |cmd: &str| -> Result<bool, String> {
                    let cmd = t.expand_for_shell(cmd, &[])?;
                    crate::percent::run_in_shell(&cmd)
                };
                let at = Against {
                    host: &so_far,
                    original: host,
                    user: &remote_user,
                    local_user: &local_user,
                    exec: &run,
                };
                active = !never && applies(&l.value, &at).map_err(bad)?;
                continue;
            }
            _ => {}
        }
        let treated = treatment(&l.key, &l.value);
        if treated.is_none() {
            if ignore_unknown
                .as_deref()
                .is_some_and(|p| patterns_match(p, &l.key))
            {
                continue;
            }
            // Anywhere, as ssh: a typo is never skipped.
            return Err(bad(format!(
                "{} is not an ssh_config keyword tether knows; fix its spelling, or name it in IgnoreUnknown before this line",
                l.name
            )));
        }
        if l.value.is_empty() {
            return Err(bad(format!("{} needs a value", l.name)));
        }
        if !active {
            continue;
        }
        // One slot for ProxyJump and ProxyCommand: the first of them wins,
        // as in OpenSSH.
        let slot = if l.key == "proxycommand" {
            "proxyjump"
        } else {
            l.key.as_str()
        };
        let first = !seen.contains_key(slot);
        let accumulates = ACCUMULATE.contains(&l.key.as_str());
        if first || accumulates {
            cfg.values.push((l.key.clone(), l.value.clone()));
        }
        match treated {
            Some(Treatment::Applied) => {}
            Some(Treatment::Harmless) => {
                if first {
                    cfg.notes.push(format!(
                        "{}: {} {}: accepted, not applied: {}",
                        l.place(),
                        l.name,
                        l.value,
                        crate::directives::note(&l.key)
                    ));
                }
                seen.insert(slot.to_owned(), ());
                continue;
            }
            Some(Treatment::Refused(why)) if first => {
                return Err(bad(match l.file {
                    Some(_) => format!(
                        "{} {} applies to {host}, but {why}. Until tether supports it, remove it for this host (or give -F another file)",
                        l.name, l.value
                    ),
                    None => format!(
                        "{} {}: {why}. Until tether supports it, leave it out",
                        l.name, l.value
                    ),
                }));
            }
            _ => continue,
        }
        match l.key.as_str() {
            "identityfile" | "identityfile2" => {
                raw_identities.push(l.value.clone());
                continue;
            }
            "certificatefile" => {
                raw_certificates.push(l.value.clone());
                continue;
            }
            "setenv" => {
                // The first SetEnv line wins; in it, a name's first value.
                for kv in l.value.split_whitespace() {
                    let Some((k, v)) = kv.split_once('=') else {
                        return Err(bad(format!("SetEnv {kv}: write NAME=VALUE")));
                    };
                    if !set_env_done && !cfg.set_env.iter().any(|(n, _)| n == k) {
                        cfg.set_env.push((k.to_owned(), v.to_owned()));
                    }
                }
                set_env_done = true;
                continue;
            }
            "sendenv" => {
                for p in l.value.split_whitespace() {
                    match p.strip_prefix('-') {
                        Some(gone) => cfg.send_env.retain(|s| !patterns_match(gone, s)),
                        None => cfg.send_env.push(p.to_owned()),
                    }
                }
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
        let list = |kind| crate::algorithms::assemble(kind, &l.value).map_err(bad);
        match l.key.as_str() {
            "hostname" => cfg.hostname = Some(l.value.clone()),
            "user" => cfg.user = Some(l.value.clone()),
            "port" => {
                cfg.port = Some(
                    u16::try_from(number("Port")?)
                        .ok()
                        .filter(|p| *p != 0)
                        .ok_or_else(|| bad("Port must be from 1 to 65535".into()))?,
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
            "proxycommand" => cfg.proxy_command = Some(l.value.clone()),
            "hostkeyalias" => cfg.host_key_alias = Some(l.value.clone()),
            "knownhostscommand" => {
                cfg.known_hosts_command = Some(l.value.clone()).filter(|v| v != "none")
            }
            "hashknownhosts" => cfg.hash_known_hosts = Some(yes_no("HashKnownHosts")?),
            "addressfamily" => {
                cfg.address_family = Some(
                    crate::connect::AddressFamily::parse(&l.value)
                        .ok_or_else(|| bad("AddressFamily takes any, inet or inet6".to_owned()))?,
                )
            }
            "forwardagent" => cfg.forward_agent = Some(l.value.clone()),
            "globalknownhostsfile" => raw_global = Some(l.value.clone()),
            "ciphers" => cfg.ciphers = Some(list(Kind_::Cipher)?),
            "pubkeyacceptedalgorithms" | "pubkeyacceptedkeytypes" => {
                cfg.pubkey_algorithms =
                    Some(crate::pubkey_algorithms::assemble(&l.value).map_err(bad)?)
            }
            "kexalgorithms" => cfg.kex = Some(list(Kind_::Kex)?),
            "macs" => cfg.macs = Some(list(Kind_::Mac)?),
            "hostkeyalgorithms" => cfg.host_key_algorithms = Some(list(Kind_::HostKey)?),
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
            "connecttimeout" => {
                cfg.connect_timeout = match l.value.as_str() {
                    "none" => None,
                    _ => Some(number("ConnectTimeout")?),
                }
            }
            "serveraliveinterval" => {
                cfg.server_alive_interval = Some(number("ServerAliveInterval")?)
            }
            "serveralivecountmax" => {
                cfg.server_alive_count_max =
                    Some(usize::try_from(number("ServerAliveCountMax")?).unwrap_or(3))
            }
            "permitlocalcommand" => cfg.permit_local_command = Some(yes_no("PermitLocalCommand")?),
            "localcommand" => cfg.local_command = Some(l.value.clone()),
            "remotecommand" => {
                cfg.remote_command =
                    Some(l.value.clone()).filter(|v| !v.eq_ignore_ascii_case("none"))
            }
            "loglevel" => {
                cfg.log_level = Some(crate::directives::log_level(&l.value).map_err(bad)?)
            }
            "requesttty" => {
                cfg.request_tty = Some(crate::directives::request_tty(&l.value).map_err(bad)?)
            }
            "stdinnull" => cfg.stdin_null = Some(yes_no("StdinNull")?),
            "escapechar" => cfg.escape_char = Some(l.value.clone()),
            _ => {}
        }
    }
    if passwords.is_some() || kbd.is_some() || preferred.is_some() {
        cfg.passwords =
            Some(passwords.unwrap_or(true) && kbd.unwrap_or(true) && preferred.unwrap_or(true));
    }
    // Tokens name the resolved host, port and user.
    let mut t = Tokens {
        host: host.to_owned(),
        original: host.to_owned(),
        port: port.or(cfg.port).unwrap_or(22),
        user: user
            .map(str::to_owned)
            .or_else(|| cfg.user.clone())
            .unwrap_or_else(|| local_user.clone()),
        alias: cfg.value("hostkeyalias").map(str::to_owned),
        jump: String::new(),
    };
    let expand = |t: &Tokens, v: &str| {
        crate::percent::env_vars(&crate::percent::tilde(v))
            .and_then(|v| t.expand(&v, &[]))
            .map_err(|problem| SshError::Config {
                place: "ssh_config".into(),
                problem,
            })
    };
    let h = match cfg.hostname.clone() {
        Some(n) => t.expand(&n, &[]).map_err(|problem| SshError::Config {
            place: "HostName".into(),
            problem,
        })?,
        None => host.to_owned(),
    };
    // As ssh: a name in lower case, an address in its canonical form.
    let h = match h.parse::<std::net::IpAddr>() {
        Ok(ip) => ip.to_string(),
        Err(_) => h.to_ascii_lowercase(),
    };
    t.host = h.clone();
    cfg.hostname = Some(h);
    cfg.identity_files = raw_identities
        .iter()
        .map(|v| expand(&t, v).map(PathBuf::from))
        .collect::<Result<_, _>>()?;
    cfg.certificate_files = raw_certificates
        .iter()
        .map(|v| expand(&t, v).map(PathBuf::from))
        .collect::<Result<_, _>>()?;
    cfg.user_known_hosts = raw_known
        .map(|v| {
            v.split_whitespace()
                .map(|p| expand(&t, p).map(PathBuf::from))
                .collect::<Result<Vec<_>, _>>()
        })
        .transpose()?;
    cfg.global_known_hosts = raw_global
        .map(|v| {
            v.split_whitespace()
                .map(|p| expand(&t, p).map(PathBuf::from))
                .collect::<Result<Vec<_>, _>>()
        })
        .transpose()?;
    cfg.identity_agent = raw_agent
        .map(|v| match v.as_str() {
            "none" => Ok(None),
            "SSH_AUTH_SOCK" => Ok(std::env::var_os("SSH_AUTH_SOCK").map(PathBuf::from)),
            v if v.starts_with('$') && !v.starts_with("${") => {
                Ok(std::env::var_os(&v[1..]).map(PathBuf::from))
            }
            v => expand(&t, v).map(|p| Some(PathBuf::from(p))),
        })
        .transpose()?;
    cfg.tokens = t;
    Ok(cfg)
}

/// Whether a `Host` line's patterns (`*`, `?`, `!`) take `host`, case
/// and all: ssh's `Host web` does not take `WEB`.
fn host_patterns(patterns: &[&str], host: &str) -> bool {
    fn wild(p: &[u8], n: &[u8]) -> bool {
        match (p.split_first(), n.split_first()) {
            (None, None) => true,
            (Some((b'*', rest)), _) => {
                wild(rest, n) || n.split_first().is_some_and(|(_, m)| wild(p, m))
            }
            (Some((b'?', rest)), Some((_, m))) => wild(rest, m),
            (Some((c, rest)), Some((d, m))) => c == d && wild(rest, m),
            _ => false,
        }
    }
    let mut hit = false;
    for p in patterns {
        match p.strip_prefix('!') {
            Some(p) if wild(p.as_bytes(), host.as_bytes()) => return false,
            Some(_) => {}
            None => hit |= wild(p.as_bytes(), host.as_bytes()),
        }
    }
    hit
}

impl HostConfig {
    /// The first value a directive (lower case) took, as written.
    pub fn value(&self, key: &str) -> Option<&str> {
        self.values
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// Every value a directive (lower case) took, in order.
    pub fn all_values<'a>(&'a self, key: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.values
            .iter()
            .filter(move |(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
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

    #[test]
    fn a_bad_name_is_refused_before_match_exec_runs_and_tokens_are_quoted() {
        let dir = std::env::temp_dir().join(format!("tether-sshcfg-exec-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap_or_default();
        let mark = dir.join("ran");
        let main = dir.join("config");
        std::fs::write(
            &main,
            format!(
                "Match exec \"echo %h %r >> {}\"\n  Port 2200\n",
                mark.display()
            ),
        )
        .unwrap_or_default();
        let e = resolve_with(Some(&main), &[], "a;touch x", None, None).unwrap_err();
        assert!(matches!(e, SshError::BadName { .. }), "{e}");
        assert_eq!(e.kind(), crate::HostFailure::BadName);
        let e = resolve_with(Some(&main), &[], "web01", Some("u`id`"), None).unwrap_err();
        assert!(matches!(e, SshError::BadName { .. }), "{e}");
        assert!(!mark.exists(), "Match exec ran for a refused name");
        // A user with `$` passes (as in OpenSSH) and reaches the shell as
        // one quoted word: the variable is not expanded.
        resolve_with(Some(&main), &[], "web01", Some("a$HOME"), None)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            std::fs::read_to_string(&mark).unwrap_or_default(),
            "web01 a$HOME\n"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
