//! A host for the daemon's persistent shells (`tether run --host`,
//! `tether shell`'s nodes, MCP's `host`), resolved here, in the process of
//! whoever named it, exactly as `tether exec` resolves it with the same
//! words: the flags, `-o`, tether's config (a cluster's settings, else the
//! defaults) and ssh_config, through `ssh_opts::overrides` and
//! `exec::resolve`. The result crosses the daemon protocol with the
//! request, so the daemon never reads another user's or another `HOME`'s
//! files to guess. Batch mode: the daemon has no terminal to ask on.

use anyhow::Result;
use tether_cluster::config::Settings;
use tether_cluster::exec::{self, HostSpec, Overrides};
use tether_daemon::protocol::HostRoute;

use crate::ssh_opts::{self, SshArgs};

/// The settings hosts named with `ssh` and tether's config `settings`
/// are reached with, in batch mode (no one asked for secrets).
pub fn overrides(ssh: &SshArgs, settings: &Settings) -> Result<Overrides> {
    ssh_opts::overrides(ssh, Overrides::default(), settings)
}

/// How to reach `name` (`[user@]host[:port]`) with `ov`; the error says
/// why not, naming the host once.
pub fn resolve(name: &str, ov: &Overrides) -> Result<HostRoute, String> {
    let spec = HostSpec::parse(name).map_err(|e| e.to_string())?;
    let (target, options) = exec::resolve(&spec, ov, false).map_err(|e| format!("{name}: {e}"))?;
    Ok(HostRoute {
        name: name.to_owned(),
        route: Box::new(tether_ssh::Route { target, options }),
        far: Default::default(),
    })
}

/// `name` as a lone host of the command line (`tether run --host`, MCP's
/// `host`): the flags over tether's config defaults (its default file).
pub fn single(name: &str, ssh: &SshArgs) -> Result<HostRoute> {
    let config = ssh_opts::load_config(None)?;
    let ov = overrides(ssh, &config.defaults)?;
    resolve(name, &ov).map_err(anyhow::Error::msg)
}
