//! Where and how to reach a host: the host spec (`user@host:port`), then
//! what the command line set, then the OpenSSH client config, then the
//! defaults, as `ssh` decides.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tether_ssh::{ConnectOptions, HostKeyPolicy, Target};

use super::{HostSpec, Resolver};

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
    /// `-o` options, as typed: read as ssh_config lines before `config`.
    pub options: Vec<String>,
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

/// A resolver for [`super::run`] from `ov` (and the config file it names).
pub fn resolver(ov: Overrides) -> Resolver {
    Arc::new(move |spec| resolve(spec, &ov, false))
}

/// Where and how to reach `spec`: the host spec, then the command line,
/// then ssh_config, then the defaults (`hop`: a jump host, whose own
/// jumps are not followed).
pub fn resolve(
    spec: &HostSpec,
    ov: &Overrides,
    hop: bool,
) -> Result<(Target, ConnectOptions), String> {
    let cfg = tether_ssh::config::resolve_with(
        ov.config.as_deref(),
        &ov.options,
        &spec.host,
        spec.user.as_deref().or(ov.user.as_deref()),
        spec.port.or(ov.port),
    )
    .map_err(|e| e.to_string())?;
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
    let interval = ov
        .alive_interval
        .or(cfg.server_alive_interval.map(Duration::from_secs))
        .filter(|d| !d.is_zero());
    let max = ov.alive_max.or(cfg.server_alive_count_max).unwrap_or(3);
    let jumps = if hop {
        Vec::new()
    } else {
        ov.jumps
            .clone()
            .or(cfg.proxy_jump.clone())
            .unwrap_or_default()
    };
    let jumps = jumps
        .iter()
        .map(|j| {
            let spec = HostSpec::parse(j.trim()).map_err(|e| e.to_string())?;
            let (target, options) = resolve(&spec, ov, true)?;
            Ok(tether_ssh::Jump { target, options })
        })
        .collect::<Result<Vec<_>, String>>()?;
    let connect = ConnectOptions {
        known_hosts: match &cfg.global_known_hosts {
            // GlobalKnownHostsFile: after the user's files (new keys go to
            // the first of those), instead of /etc/ssh/ssh_known_hosts.
            Some(global) => ov
                .known_hosts
                .clone()
                .or(cfg.user_known_hosts.clone())
                .unwrap_or_else(|| defaults.known_hosts.iter().take(1).cloned().collect())
                .into_iter()
                .chain(global.iter().cloned())
                .collect(),
            None => ov
                .known_hosts
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
        jumps,
    };
    Ok((target, connect))
}
