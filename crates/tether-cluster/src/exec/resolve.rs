//! Where and how to reach a host: the host spec (`user@host:port`), then
//! what the command line set, then the OpenSSH client config, then the
//! defaults, as `ssh` decides.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tether_ssh::{ConnectOptions, HostKeyPolicy, Target};

use super::{HostSpec, Resolver};

/// `ServerAliveInterval` and `ServerAliveCountMax` when neither the
/// command line, tether's config nor ssh_config sets them (the count is
/// OpenSSH's default): a link that hangs is given up within
/// interval × (count + 1) = 60 s, as OpenSSH and russh count. The one
/// source of this default (the pool's long-lived connections use it too).
pub const DEFAULT_KEEPALIVE: (Duration, usize) = (Duration::from_secs(15), 3);

/// What the command line sets, and tether's config where the command line
/// says nothing; it wins over ssh_config, as `ssh`'s command line does.
/// The binary builds it in one place (`ssh_opts::overrides`) for every
/// front-end.
#[derive(Clone, Debug, Default)]
pub struct Overrides {
    /// `Ciphers`.
    pub ciphers: Option<Vec<String>>,
    /// `KexAlgorithms`.
    pub kex: Option<Vec<String>>,
    /// Who to ask for passphrases and passwords (`None`: batch mode).
    pub secrets: Option<std::sync::Arc<tether_ssh::Secrets>>,
    /// Try passwords (`PasswordAuthentication`); default yes.
    pub passwords: Option<bool>,
    /// See `ssh_config(5)`.
    pub policy: Option<HostKeyPolicy>,
    /// See `ssh_config(5)`.
    pub known_hosts: Option<Vec<PathBuf>>,
    /// See `ssh_config(5)`.
    pub identities: Vec<PathBuf>,
    /// See `ssh_config(5)`.
    pub identities_only: Option<bool>,
    /// See `ssh_config(5)`.
    pub agent: Option<Option<PathBuf>>,
    /// See `ssh_config(5)`.
    pub connect_timeout: Option<Duration>,
    /// See `ssh_config(5)`.
    pub alive_interval: Option<Duration>,
    /// See `ssh_config(5)`.
    pub alive_max: Option<usize>,
    /// See `ssh_config(5)`.
    pub user: Option<String>,
    /// See `ssh_config(5)`.
    pub port: Option<u16>,
    /// See `ssh_config(5)`.
    pub jumps: Option<Vec<String>>,
    /// See `ssh_config(5)`.
    pub config: Option<PathBuf>,
    /// `-o ProxyCommand` (`none`: direct); it wins over `jumps` (the
    /// command line sets it only when `-J` did not come first).
    pub proxy_command: Option<String>,
    /// See `ssh_config(5)`.
    pub host_key_alias: Option<String>,
    /// See `ssh_config(5)`.
    pub known_hosts_command: Option<String>,
    /// See `ssh_config(5)`.
    pub hash_known_hosts: Option<bool>,
    /// `AddressFamily` (`-4`, `-6`).
    pub address_family: Option<tether_ssh::AddressFamily>,
    /// `CertificateFile`s, before ssh_config's.
    pub certificates: Vec<PathBuf>,
    /// `ForwardAgent` as written (`yes`, `no`, a socket, `$VAR`).
    pub forward_agent: Option<String>,
    /// Who hears each connection's steps (`-v`).
    pub steps: Option<tether_ssh::Steps>,
    /// `-o` options, as typed: read as ssh_config lines before `config`.
    pub options: Vec<String>,
    /// The front-end runs ssh_config's `RemoteCommand` (`tether ssh`);
    /// the others refuse a host that sets one.
    pub runs_remote_command: bool,
}

/// How to reach a host: jump hosts, or a `ProxyCommand` (never both), as
/// OpenSSH picks: the command line first (`-o ProxyCommand`, else `-J` and
/// tether's `jump`), then ssh_config's, where the first of `ProxyJump` and
/// `ProxyCommand` obtained wins; `none` is a direct connection. A jump
/// host has no jumps of its own, only its own ProxyCommand. The hops as
/// written (`ssh -G` prints them so).
pub fn route(
    ov: &Overrides,
    cfg: &tether_ssh::config::HostConfig,
    hop: bool,
) -> (Vec<String>, Option<String>) {
    let command = |c: &String| (!c.trim().eq_ignore_ascii_case("none")).then(|| c.clone());
    if hop {
        return (Vec::new(), cfg.proxy_command.as_ref().and_then(command));
    }
    if let Some(c) = &ov.proxy_command {
        return (Vec::new(), command(c));
    }
    if let Some(j) = &ov.jumps {
        return (j.clone(), None);
    }
    if let Some(c) = &cfg.proxy_command {
        return (Vec::new(), command(c));
    }
    (cfg.proxy_jump.clone().unwrap_or_default(), None)
}

/// `StrictHostKeyChecking`'s values.
pub fn policy_of(v: &str) -> Option<HostKeyPolicy> {
    Some(match v.to_ascii_lowercase().as_str() {
        "yes" | "ask" | "true" => HostKeyPolicy::Yes,
        "accept-new" => HostKeyPolicy::AcceptNew,
        "no" | "off" | "false" => HostKeyPolicy::No,
        _ => return None,
    })
}

/// The user tether runs as.
pub fn current_user() -> String {
    ["USER", "LOGNAME"]
        .iter()
        .find_map(|v| std::env::var(v).ok().filter(|u| !u.is_empty()))
        .unwrap_or_else(|| "root".to_owned())
}

/// `SetEnv`, then the local variables `SendEnv` names (patterns).
fn environment(cfg: &tether_ssh::config::HostConfig) -> Vec<(String, String)> {
    let mut env = cfg.set_env.clone();
    if !cfg.send_env.is_empty() {
        let pats = cfg.send_env.join(",");
        for (k, v) in std::env::vars() {
            if tether_ssh::known_hosts::patterns_match(&pats, &k)
                && !env.iter().any(|(n, _)| *n == k)
            {
                env.push((k, v));
            }
        }
    }
    env
}

/// A path typed on the command line (`-o`, `~` already expanded) with
/// `${VAR}` and `%` tokens expanded, as ssh_config's.
fn typed_path(
    p: &std::path::Path,
    cfg: &tether_ssh::config::HostConfig,
    what: &str,
) -> Result<PathBuf, String> {
    let p = p.to_string_lossy();
    tether_ssh::percent::env_vars(&p)
        .and_then(|p| cfg.tokens.expand(&p, &[]))
        .map(PathBuf::from)
        .map_err(|e| format!("{what} {p}: {e}"))
}

/// `ForwardAgent`'s socket path as ssh expands it (`~`, `${VAR}`, `%`
/// tokens); `yes`, `no` and a bare `$VAR` stay as written.
fn agent_path(v: &str, cfg: &tether_ssh::config::HostConfig) -> Result<String, String> {
    let t = v.trim();
    if matches!(
        t.to_ascii_lowercase().as_str(),
        "yes" | "no" | "true" | "false"
    ) || (t.starts_with('$') && !t.starts_with("${"))
    {
        return Ok(t.to_owned());
    }
    let t = tether_ssh::percent::env_vars(&tether_ssh::percent::tilde(t))
        .map_err(|e| format!("ForwardAgent {v}: {e}"))?;
    cfg.tokens
        .expand(&t, &[])
        .map_err(|e| format!("ForwardAgent {v}: {e}"))
}

/// A resolver for [`super::run`] from `ov` (and the config file it names).
pub fn resolver(ov: Overrides) -> Resolver {
    Arc::new(move |spec| resolve(spec, &ov, false))
}

/// Where and how to reach `spec`: the host spec, then the command line,
/// then ssh_config, then the defaults (`hop`: a jump host, whose own
/// jumps are not followed). The error names no host: the caller says it.
pub fn resolve(
    spec: &HostSpec,
    ov: &Overrides,
    hop: bool,
) -> Result<(Target, ConnectOptions), String> {
    let resolve_config = if hop {
        tether_ssh::config::resolve_hop_with
    } else {
        tether_ssh::config::resolve_with
    };
    let cfg = resolve_config(
        ov.config.as_deref(),
        &ov.options,
        &spec.host,
        spec.user.as_deref().or(ov.user.as_deref()),
        spec.port.or(ov.port),
    )
    .map_err(|e| e.to_string())?;
    if let Some(command) = cfg
        .remote_command
        .as_ref()
        .filter(|_| !hop && !ov.runs_remote_command)
    {
        return Err(format!(
            "ssh_config sets RemoteCommand {command:?}; tether exec, cp and shell run the command they are given, not RemoteCommand: use tether ssh, or -o RemoteCommand=none"
        ));
    }
    let defaults = ConnectOptions::default();
    let target = Target {
        host: spec.host.clone(),
        hostname: cfg.hostname.clone().unwrap_or_else(|| spec.host.clone()),
        port: spec.port.or(ov.port).or(cfg.port).unwrap_or(22),
        user: spec
            .user
            .clone()
            .or_else(|| ov.user.clone())
            .or(cfg.user.clone())
            .unwrap_or_else(current_user),
    };
    let mut identities: Vec<PathBuf> = ov
        .identities
        .iter()
        .chain(&cfg.identity_files)
        .cloned()
        .collect();
    if identities.is_empty() {
        identities = defaults.identities.clone();
    }
    let policy = match (ov.policy, &cfg.strict_host_key_checking) {
        (Some(p), _) => p,
        (None, Some(v)) => policy_of(v)
            .ok_or_else(|| format!("StrictHostKeyChecking={v}: use yes, accept-new or no"))?,
        (None, None) => HostKeyPolicy::Yes,
    };
    // Keepalive: `ServerAliveInterval` 15 when nothing sets it (a hung
    // link ends a call within 15 × (3 + 1) s instead of never); an
    // explicit 0 turns it off, as OpenSSH's.
    let interval = Some(
        ov.alive_interval
            .or(cfg.server_alive_interval.map(Duration::from_secs))
            .unwrap_or(DEFAULT_KEEPALIVE.0),
    )
    .filter(|d| !d.is_zero());
    let max = ov
        .alive_max
        .or(cfg.server_alive_count_max)
        .unwrap_or(DEFAULT_KEEPALIVE.1);
    // `-o UserKnownHostsFile`: `${VAR}` and `%` tokens, as ssh_config's.
    let known_hosts_typed = ov
        .known_hosts
        .as_ref()
        .map(|files| {
            files
                .iter()
                .map(|p| typed_path(p, &cfg, "UserKnownHostsFile"))
                .collect::<Result<Vec<_>, String>>()
        })
        .transpose()?;
    let (jumps, proxy_command) = route(ov, &cfg, hop);
    let jumps = jumps
        .iter()
        .map(|j| {
            // A hop the command line gave was checked there
            // (`ssh_opts`); one from a config file is the user's own.
            let spec = HostSpec::parse_hop(j.trim()).map_err(|e| e.to_string())?;
            let (target, options) = resolve(&spec, ov, true)?;
            Ok(tether_ssh::Jump { target, options })
        })
        .collect::<Result<Vec<_>, String>>()?;
    let connect = ConnectOptions {
        known_hosts: match &cfg.global_known_hosts {
            // GlobalKnownHostsFile: after the user's files (new keys go to
            // the first of those), instead of /etc/ssh/ssh_known_hosts.
            Some(global) => known_hosts_typed
                .clone()
                .or(cfg.user_known_hosts.clone())
                .unwrap_or_else(|| defaults.known_hosts.iter().take(1).cloned().collect())
                .into_iter()
                .chain(global.iter().cloned())
                .collect(),
            None => known_hosts_typed
                .clone()
                .or(cfg.user_known_hosts.clone())
                .unwrap_or(defaults.known_hosts),
        },
        policy,
        identities,
        identities_only: ov.identities_only.or(cfg.identities_only).unwrap_or(false),
        agent: ov
            .agent
            .clone()
            .map(|a| a.map(|p| typed_path(&p, &cfg, "IdentityAgent")).transpose())
            .transpose()?
            .or(cfg.identity_agent.clone())
            .unwrap_or(defaults.agent),
        connect_timeout: ov
            .connect_timeout
            .or(cfg.connect_timeout.map(Duration::from_secs))
            .unwrap_or(defaults.connect_timeout),
        keepalive: interval.map(|i| (i, max)),
        ciphers: ov.ciphers.clone().or(cfg.ciphers.clone()),
        kex: ov.kex.clone().or(cfg.kex.clone()),
        macs: cfg.macs.clone(),
        host_key_algorithms: cfg.host_key_algorithms.clone(),
        env: environment(&cfg),
        secrets: ov.secrets.clone().filter(|_| cfg.batch_mode != Some(true)),
        passwords: ov.passwords.or(cfg.passwords).unwrap_or(true),
        pubkey_algorithms: cfg.pubkey_algorithms.clone(),
        jumps,
        proxy_command,
        // `-o HostKeyAlias` names the target's key, not a jump host's.
        host_key_alias: match hop {
            true => cfg.host_key_alias.clone(),
            false => ov.host_key_alias.clone().or(cfg.host_key_alias.clone()),
        },
        known_hosts_command: ov
            .known_hosts_command
            .clone()
            .or(cfg.known_hosts_command.clone())
            .filter(|c| c != "none"),
        hash_known_hosts: ov
            .hash_known_hosts
            .or(cfg.hash_known_hosts)
            .unwrap_or(false),
        address_family: ov.address_family.or(cfg.address_family).unwrap_or_default(),
        // A whole HostKeyAlgorithms list is used as is (OpenSSH).
        known_host_key_types_first: cfg
            .value("hostkeyalgorithms")
            .is_none_or(|v| v.trim().starts_with(['+', '-'])),
        certificates: ov
            .certificates
            .iter()
            .chain(&cfg.certificate_files)
            .cloned()
            .collect(),
        // Never to a jump host: no session runs there.
        forward_agent: match ov.forward_agent.as_ref().or(cfg.forward_agent.as_ref()) {
            Some(v) if !hop => tether_ssh::agent_socket(&agent_path(v, &cfg)?)?,
            _ => None,
        },
        steps: ov.steps.clone(),
    };
    Ok((target, connect))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(h: &str) -> HostSpec {
        HostSpec::parse(h).unwrap_or_else(|e| panic!("{e}"))
    }

    /// ssh_config `text` written to a file of its own, and the overrides
    /// reading it.
    fn with_config(name: &str, text: &str, ov: Overrides) -> (PathBuf, Overrides) {
        let file =
            std::env::temp_dir().join(format!("tether-resolve-{name}-{}.conf", std::process::id()));
        std::fs::write(&file, text).unwrap_or_else(|e| panic!("{e}"));
        let ov = Overrides {
            config: Some(file.clone()),
            ..ov
        };
        (file, ov)
    }

    fn route_of(ov: &Overrides, host: &str) -> (Vec<String>, Option<String>) {
        let (_, o) = resolve(&spec(host), ov, false).unwrap_or_else(|e| panic!("{e}"));
        (
            o.jumps.iter().map(|j| j.target.host.clone()).collect(),
            o.proxy_command,
        )
    }

    #[test]
    fn proxy_jump_and_proxy_command_first_obtained_wins_command_line_first() {
        let text = "Host cmd-first\n  ProxyCommand nc %h %p\n  ProxyJump j1\n\
                    Host jump-first\n  ProxyJump j2\n  ProxyCommand nc %h %p\n\
                    Host none-first\n  ProxyCommand none\n  ProxyJump j3\n\
                    Host j1\n  ProxyCommand nc bastion %p\n";
        let (file, ov) = with_config("route", text, Overrides::default());
        let nc = Some("nc %h %p".to_owned());
        assert_eq!(route_of(&ov, "cmd-first"), (vec![], nc.clone()));
        assert_eq!(route_of(&ov, "jump-first"), (vec!["j2".into()], None));
        assert_eq!(route_of(&ov, "none-first"), (vec![], None));
        // The command line wins over ssh_config: -J …
        let j = Overrides {
            jumps: Some(vec!["j9".into()]),
            ..ov.clone()
        };
        assert_eq!(route_of(&j, "cmd-first"), (vec!["j9".into()], None));
        // … and -o ProxyCommand (`none`: direct).
        let p = Overrides {
            proxy_command: Some("none".into()),
            ..ov.clone()
        };
        assert_eq!(route_of(&p, "jump-first"), (vec![], None));
        // A jump host keeps its own ProxyCommand (the first hop runs it).
        let (_, o) = resolve(
            &spec("jump-first"),
            &Overrides {
                jumps: Some(vec!["j1".into()]),
                ..ov.clone()
            },
            false,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            o.jumps[0].options.proxy_command.as_deref(),
            Some("nc bastion %p")
        );
        let _ = std::fs::remove_file(file);
    }

    #[test]
    fn keepalive_is_15_times_3_unless_something_says_otherwise() {
        let keepalive = |text: &str, ov: Overrides| {
            let (file, ov) = with_config("alive", text, ov);
            let (_, o) = resolve(&spec("web01"), &ov, false).unwrap_or_else(|e| panic!("{e}"));
            let _ = std::fs::remove_file(file);
            o.keepalive
        };
        let secs = Duration::from_secs;
        assert_eq!(keepalive("", Overrides::default()), Some((secs(15), 3)));
        let set = "Host *\n  ServerAliveInterval 4\n  ServerAliveCountMax 7\n";
        assert_eq!(keepalive(set, Overrides::default()), Some((secs(4), 7)));
        let cli = Overrides {
            alive_interval: Some(secs(1)),
            alive_max: Some(2),
            ..Overrides::default()
        };
        assert_eq!(keepalive(set, cli), Some((secs(1), 2)));
        // 0 turns it off, as OpenSSH's.
        let off = "Host *\n  ServerAliveInterval 0\n";
        assert_eq!(keepalive(off, Overrides::default()), None);
    }

    #[test]
    fn trust_and_login_directives_reach_the_connect_options() {
        let text = "Host *\n  IdentityAgent $HOME\n  HostKeyAlias Alias1\n  KnownHostsCommand /bin/kh %H\n  HashKnownHosts yes\n  CertificateFile /c/%h-cert.pub\n  ForwardAgent /run/agent.sock\n";
        let (file, ov) = with_config("trust", text, Overrides::default());
        let (_, o) = resolve(&spec("web01"), &ov, false).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(o.host_key_alias.as_deref(), Some("Alias1"));
        // `IdentityAgent $VAR`: the socket the variable names.
        assert_eq!(o.agent, std::env::var_os("HOME").map(PathBuf::from));
        assert_eq!(o.known_hosts_command.as_deref(), Some("/bin/kh %H"));
        assert!(o.hash_known_hosts);
        assert_eq!(o.certificates, [PathBuf::from("/c/web01-cert.pub")]);
        assert_eq!(o.forward_agent, Some(PathBuf::from("/run/agent.sock")));
        // Never by default, never to a jump host, and `no` wins when first.
        let none = Overrides::default();
        let (_, o) = resolve(&spec("web01"), &none, false).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(o.forward_agent, None);
        let (_, o) = resolve(&spec("web01"), &ov, true).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(o.forward_agent, None);
        // A command line's alias is the target's alone.
        let aliased = Overrides {
            host_key_alias: Some("cli-alias".into()),
            ..Overrides::default()
        };
        let (_, o) = resolve(&spec("j"), &aliased, true).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(o.host_key_alias, None);
        let (_, o) = resolve(&spec("t"), &aliased, false).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(o.host_key_alias.as_deref(), Some("cli-alias"));
        // `-o UserKnownHostsFile` and `-o ForwardAgent` paths: tokens and
        // `${VAR}` expanded, as ssh expands them (OpenSSH's percent test).
        let typed = Overrides {
            known_hosts: Some(vec![PathBuf::from("/k/%h-%p")]),
            agent: Some(Some(PathBuf::from("/s/%r"))),
            user: Some("u1".into()),
            forward_agent: Some("/a/%n".into()),
            ..Overrides::default()
        };
        let (_, o) = resolve(&spec("web01"), &typed, false).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(o.known_hosts[0], PathBuf::from("/k/web01-22"));
        assert_eq!(o.forward_agent, Some(PathBuf::from("/a/web01")));
        assert_eq!(o.agent, Some(PathBuf::from("/s/u1")));
        let no = Overrides {
            forward_agent: Some("no".into()),
            ..ov.clone()
        };
        let (_, o) = resolve(&spec("web01"), &no, false).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(o.forward_agent, None);
        let _ = std::fs::remove_file(file);
    }
}
