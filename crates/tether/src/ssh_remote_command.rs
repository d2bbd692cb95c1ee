//! `RemoteCommand` for `tether ssh`, as ssh applies it: run (its `%`
//! tokens expanded, no `${VAR}`: the remote shell expands those) when the
//! command line gives no command; both at once is an error. `-G` prints it
//! (`ssh_show`). `tether exec`, `cp` and `shell` refuse a host that sets it
//! (`tether_cluster::exec::resolve`).

use anyhow::{Result, anyhow, bail};
use tether_ssh::config::HostConfig;

/// The command to run: the command line's, else `RemoteCommand`'s, else
/// none (a login shell).
pub fn command(typed: &[String], cfg: &HostConfig) -> Result<Option<String>> {
    let typed = (!typed.is_empty()).then(|| typed.join(" "));
    match (typed, &cfg.remote_command) {
        (Some(_), Some(_)) => bail!(
            "ssh_config sets RemoteCommand and the command line gives a command: ssh cannot run both; leave out one (-o RemoteCommand=none)"
        ),
        (Some(t), None) => Ok(Some(t)),
        (None, Some(rc)) => cfg
            .tokens
            .expand_for_shell(rc, &[])
            .map(Some)
            .map_err(|e| anyhow!("RemoteCommand: {e}")),
        (None, None) => Ok(None),
    }
}
