//! How the daemon reaches remote hosts for persistent shells: one pooled
//! SSH connection per host, shared by that host's sessions, resolved as
//! `tether exec -H HOST` with no SSH flags resolves it (`ssh_opts`: the
//! defaults of tether's config, then `~/.ssh/config`), in batch mode: the daemon has no terminal to ask on,
//! so keys come from the agent or unencrypted files.

use std::sync::Arc;

use anyhow::Result;
use tether_cluster::exec::{self, Overrides, Resolver};
use tether_cluster::pool::HostPool;
use tether_daemon::ops::HostProvider;

use crate::ssh_opts;

/// The daemon's hosts.
pub fn provider() -> HostProvider {
    // The configs are read at each connect, so an edit applies to the next
    // connection without restarting the daemon.
    let resolve: Resolver = Arc::new(|spec| {
        let ov = overrides().map_err(|e| format!("{e:#}"))?;
        exec::resolve(spec, &ov, false)
    });
    let pool = HostPool::new(resolve);
    Arc::new(move |name| pool.host(name).map_err(|e| e.to_string()))
}

/// What `tether exec -H` would use with no flags (`~/.ssh/config`, then
/// the defaults of tether's config), without a prompter: batch mode.
fn overrides() -> Result<Overrides> {
    let config = ssh_opts::load_config(None)?;
    ssh_opts::overrides(
        &ssh_opts::SshArgs::default(),
        Overrides::default(),
        &config.defaults,
    )
}
