//! How the daemon reaches remote hosts for persistent shells: one pooled
//! SSH connection per host and route, shared by that host's sessions. The
//! route comes with the request, resolved by the caller (`host_route.rs`,
//! in the process of whoever named the host): the daemon reads no
//! ssh_config or tether config to guess, and connects in batch mode (it
//! has no terminal to ask on, so keys come from the agent or unencrypted
//! files).

use tether_cluster::pool::HostPool;
use tether_daemon::ops::HostProvider;

/// The daemon's hosts.
pub fn provider() -> HostProvider {
    let pool = HostPool::new();
    std::sync::Arc::new(move |host| {
        pool.host(&host.name, (*host.route).clone(), host.far.clone())
            .map_err(|e| e.to_string())
    })
}
