//! The SSH connection options, in one place for every front-end: the
//! OpenSSH flags a user types ([`SshArgs`]: `-l -p -i -J -o -F`, flattened
//! into `tether exec`, `tether ssh` and `tether cp`, whose port is `-P` as
//! in scp), tether's own config ([`load_config`]) and the OpenSSH client
//! config ([`ssh_config_file`]: `-F FILE`, `-F none`, else
//! `~/.ssh/config`), turned into the executor's [`Overrides`] by one
//! function ([`overrides`]).
//! `tether exec`, the daemon's hosts (`run --host`, `tether shell`, MCP's
//! `host`, through `host_route.rs`) and MCP `exec_hosts` all build their
//! connection settings here, so they cannot disagree.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use clap::Args;
use tether_cluster::config::{Config, Settings};
use tether_cluster::exec::{self, HostSpec, Overrides};
use tether_ssh::HostKeyPolicy;
use tether_ssh::directives::Treatment;

fn options_help() -> &'static str {
    "An OpenSSH option, `KEY=VALUE` or \"KEY VALUE\" (repeatable; wins over \
     the flags above). One list with ssh_config: tether applies it, accepts it \
     as changing nothing it does (a note under `tether ssh -v`), or refuses it \
     saying why (README, `tether ssh`)"
}

/// The OpenSSH client flags, as `ssh` spells them.
#[derive(Clone, Debug, Default, Args)]
#[command(next_help_heading = "SSH options")]
pub struct SshArgs {
    /// The user, where a host names none (default: ssh_config's, else you).
    #[arg(short = 'l', long)]
    pub user: Option<String>,
    /// The port, where a host names none (default: ssh_config's, else 22).
    #[arg(short = 'p', long, value_parser = port_number)]
    pub port: Option<u16>,
    /// Jump hosts, comma-separated (ProxyJump; `none`: no jump, whatever
    /// ssh_config says).
    #[arg(short = 'J', long = "jump")]
    pub jump: Option<String>,
    /// The OpenSSH client config to read (default ~/.ssh/config; `none`:
    /// none).
    #[arg(short = 'F', long = "ssh-config")]
    pub ssh_config: Option<PathBuf>,
    /// A key file to try (repeatable; default ~/.ssh/id_ed25519, id_ecdsa, id_rsa).
    #[arg(short = 'i', long = "identity")]
    pub identities: Vec<PathBuf>,
    #[arg(short = 'o', value_name = "KEY=VALUE", help = options_help())]
    pub options: Vec<String>,
    /// Use IPv4 addresses only (AddressFamily inet).
    #[arg(short = '4', conflicts_with = "ipv6")]
    pub ipv4: bool,
    /// Use IPv6 addresses only (AddressFamily inet6).
    #[arg(short = '6')]
    pub ipv6: bool,
}

/// A port as `-p`, `-P` and `-o Port` take it: 1 to 65535 (0 is no port
/// a host listens on).
pub fn port_number(value: &str) -> std::result::Result<u16, String> {
    match value.trim().parse::<u16>() {
        Ok(0) | Err(_) => Err(format!(
            "{value:?} is not a port: give a number from 1 to 65535"
        )),
        Ok(p) => Ok(p),
    }
}

/// tether's config: `file` (which must exist), else the default one (which
/// may not).
pub fn load_config(file: Option<&Path>) -> Result<Config> {
    Ok(match file {
        Some(f) => Config::load(f, true)?,
        None => Config::load(&tether_cluster::config::default_path(), false)?,
    })
}

/// The OpenSSH client config to read: `-F FILE`, nothing for `-F none`,
/// else `~/.ssh/config` when it exists.
pub fn ssh_config_file(flag: Option<&Path>) -> Option<PathBuf> {
    match flag {
        Some(p) if p.as_os_str() == "none" => None,
        Some(p) => Some(p.to_owned()),
        None => Some(tether_ssh::config::expand_tilde("~/.ssh/config")).filter(|p| p.is_file()),
    }
}

/// The connection settings of a run: what the front-end decided itself
/// (`ov`: who asks for secrets, its own timeout flag), then the flags, then
/// `-o` (later wins, as the flags were typed before), then tether's config
/// `settings` where none of those said anything; ssh_config applies
/// underneath all of them at resolution.
pub fn overrides(args: &SshArgs, mut ov: Overrides, settings: &Settings) -> Result<Overrides> {
    ov.config = ssh_config_file(args.ssh_config.as_deref());
    if let Some(user) = &args.user {
        ov.user = Some(user.clone());
    }
    ov.port = args.port.or(ov.port);
    ov.identities
        .extend(args.identities.iter().map(|p| tilde_path(p)));
    if let Some(j) = &args.jump {
        ov.jumps = Some(command_line_jumps("-J", j)?);
    }
    for o in &args.options {
        apply_option(o, &mut ov)?;
    }
    // -4 and -6 as OpenSSH takes them: AddressFamily, over -o's.
    if args.ipv4 {
        ov.address_family = Some(tether_ssh::AddressFamily::Inet);
    } else if args.ipv6 {
        ov.address_family = Some(tether_ssh::AddressFamily::Inet6);
    }
    apply_settings(&mut ov, settings)?;
    Ok(ov)
}

/// A mistake in the OpenSSH client config `ov` names, or in its `-o`
/// options, is the user's to fix before anything runs: read it once for
/// `host` (a command line's front-ends; the daemon and MCP report it per
/// host instead).
pub fn check_ssh_config(ov: &Overrides, host: &str) -> Result<()> {
    tether_ssh::config::resolve_with(
        ov.config.as_deref(),
        &ov.options,
        host,
        ov.user.as_deref(),
        ov.port,
    )?;
    Ok(())
}

/// `~/` expanded in a path typed somewhere a shell did not expand it.
fn tilde_path(p: &Path) -> PathBuf {
    p.to_str()
        .map_or_else(|| p.to_owned(), tether_ssh::config::expand_tilde)
}

/// `-J`, `ProxyJump` and tether's `jump`: hops, comma-separated; `none` is
/// no hop (as in ssh_config).
fn jump_list(value: &str) -> Vec<String> {
    if value.trim().eq_ignore_ascii_case("none") {
        return Vec::new();
    }
    value.split(',').map(|h| h.trim().to_owned()).collect()
}

/// [`jump_list`] from the command line (`-J`, `-o ProxyJump`): each hop
/// must be a host ssh's command line takes (no shell characters), as
/// ssh checks them; `flag` names where it came from.
fn command_line_jumps(flag: &str, value: &str) -> Result<Vec<String>> {
    let hops = jump_list(value);
    for hop in &hops {
        HostSpec::parse(hop).map_err(|e| anyhow::anyhow!("{flag} {value}: {e}"))?;
    }
    Ok(hops)
}

fn seconds(what: &str, v: f64) -> Result<Duration> {
    Duration::try_from_secs_f64(v)
        .with_context(|| format!("{what} must be a number of seconds, got {v}"))
}

/// `--connect-timeout` and the like: seconds, as a duration.
pub fn seconds_flag(what: &str, v: Option<f64>) -> Result<Option<Duration>> {
    v.map(|t| seconds(what, t)).transpose()
}

fn policy(v: &str) -> Result<HostKeyPolicy> {
    exec::policy_of(v)
        .with_context(|| format!("StrictHostKeyChecking={v}: use yes, accept-new or no"))
}

/// One `-o` in OpenSSH's spellings: `Key=Value`, `Key Value`, `Key = Value`
/// (a value in double quotes loses them); `None` without a value.
pub fn split_option(o: &str) -> Option<(&str, &str)> {
    let o = o.trim();
    let at = o.find(|c: char| c.is_whitespace() || c == '=')?;
    let (key, rest) = o.split_at(at);
    let rest = rest.trim_start();
    let rest = rest.strip_prefix('=').unwrap_or(rest).trim_start();
    let value = rest
        .strip_prefix('"')
        .and_then(|v| v.strip_suffix('"'))
        .unwrap_or(rest);
    Some((key, value))
}

/// Applies one `-o` (OpenSSH's names, case-insensitive).
fn apply_option(o: &str, ov: &mut Overrides) -> Result<()> {
    let (key, value) = split_option(o).with_context(|| {
        format!(
            "-o {o:?}: write KEY=VALUE or \"KEY VALUE\", as in -o StrictHostKeyChecking=accept-new"
        )
    })?;
    let yes = |v: &str| matches!(v.to_ascii_lowercase().as_str(), "yes" | "true");
    let secs = |what: &str| seconds(what, value.parse().unwrap_or(-1.0));
    let list =
        |kind| tether_ssh::algorithms::assemble(kind, value).map_err(|e| anyhow::anyhow!("-o {e}"));
    use tether_ssh::algorithms::Kind;
    match key.to_ascii_lowercase().as_str() {
        "stricthostkeychecking" => ov.policy = Some(policy(value)?),
        "userknownhostsfile" => {
            ov.known_hosts = Some(
                value
                    .split_whitespace()
                    .map(tether_ssh::config::expand_tilde)
                    .collect(),
            )
        }
        "identityfile" => ov.identities.push(tether_ssh::config::expand_tilde(value)),
        "identitiesonly" => ov.identities_only = Some(yes(value)),
        "identityagent" => {
            // `${VAR}` and `%` tokens are expanded at resolution.
            ov.agent = Some(
                match value.strip_prefix('$').filter(|v| !v.starts_with('{')) {
                    // `$VAR` and `SSH_AUTH_SOCK`: the socket the variable names.
                    Some(var) => std::env::var_os(var).map(PathBuf::from),
                    None if value == "SSH_AUTH_SOCK" => std::env::var_os(value).map(PathBuf::from),
                    None => (value != "none").then(|| tether_ssh::config::expand_tilde(value)),
                },
            )
        }
        "connecttimeout" => ov.connect_timeout = Some(secs("ConnectTimeout")?),
        "serveraliveinterval" => ov.alive_interval = Some(secs("ServerAliveInterval")?),
        "serveralivecountmax" => {
            ov.alive_max = Some(
                value
                    .parse()
                    .context("ServerAliveCountMax must be a number")?,
            )
        }
        "user" => ov.user = Some(value.to_owned()),
        "port" => ov.port = Some(port_number(value).map_err(|e| anyhow::anyhow!("-o Port: {e}"))?),
        "proxyjump" if ov.proxy_command.is_none() && ov.jumps.is_none() => {
            ov.jumps = Some(command_line_jumps("-o ProxyJump", value)?)
        }
        "proxyjump" => {
            command_line_jumps("-o ProxyJump", value)?;
        }
        // The first of -J, ProxyJump and ProxyCommand wins (OpenSSH).
        "proxycommand" if ov.jumps.is_none() && ov.proxy_command.is_none() => {
            ov.proxy_command = Some(value.to_owned())
        }
        "proxycommand" => {}
        "hostkeyalias" => ov.host_key_alias = Some(value.to_owned()),
        "knownhostscommand" => ov.known_hosts_command = Some(value.to_owned()),
        "hashknownhosts" => ov.hash_known_hosts = Some(yes(value)),
        "addressfamily" => {
            ov.address_family = Some(
                tether_ssh::AddressFamily::parse(value)
                    .context("-o AddressFamily takes any, inet or inet6")?,
            )
        }
        "certificatefile" => ov
            .certificates
            .push(tether_ssh::config::expand_tilde(value)),
        "forwardagent" => ov.forward_agent = Some(value.to_owned()),
        "ciphers" => ov.ciphers = Some(list(Kind::Cipher)?),
        "kexalgorithms" => ov.kex = Some(list(Kind::Kex)?),
        "passwordauthentication"
        | "kbdinteractiveauthentication"
        | "challengeresponseauthentication" => ov.passwords = Some(yes(value)),
        "preferredauthentications" => {
            if !tether_ssh::directives::preferred_authentications(value)
                .map_err(|e| anyhow::anyhow!("-o {e}"))?
            {
                ov.passwords = Some(false);
            }
        }
        "batchmode" if yes(value) => ov.secrets = None,
        "batchmode" => {}
        // The rest through ssh_config's list and reading (`-o` lines come
        // before the files): applied there, accepted with a note, or
        // refused with why.
        _ => match tether_ssh::directives::treatment(key, value) {
            Some(Treatment::Refused(why)) => {
                bail!("-o {key}={value}: {why}. Until tether supports it, leave it out")
            }
            Some(_) => ov.options.push(o.to_owned()),
            None => bail!(
                "-o {key}: not an OpenSSH option tether knows; the README's `tether ssh` section lists the options tether applies, accepts and refuses"
            ),
        },
    }
    Ok(())
}

/// tether's config settings, where the command line said nothing.
fn apply_settings(ov: &mut Overrides, settings: &Settings) -> Result<()> {
    if ov.user.is_none() {
        ov.user = settings.user.clone();
    }
    ov.port = ov.port.or(settings.port);
    if let Some(id) = &settings.identity {
        ov.identities.push(tether_ssh::config::expand_tilde(id));
    }
    if ov.jumps.is_none() {
        ov.jumps = settings.jump.as_deref().map(jump_list);
    }
    if ov.connect_timeout.is_none() {
        ov.connect_timeout = settings.connect_timeout.map(Duration::from_secs);
    }
    if let (None, Some(p)) = (ov.policy, &settings.strict_host_key_checking) {
        ov.policy = Some(policy(p)?);
    }
    Ok(())
}

#[cfg(test)]
#[path = "ssh_opts_tests.rs"]
mod tests;
