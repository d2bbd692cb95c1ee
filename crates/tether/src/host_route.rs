//! A host for the daemon's persistent shells (`tether run --host`,
//! `tether shell`'s nodes, MCP's `host`), resolved here, in the process of
//! whoever named it, exactly as `tether exec` resolves it with the same
//! words: the flags, `-o`, tether's config (a cluster's settings, else the
//! defaults) and ssh_config, through `ssh_opts::overrides` and
//! `exec::resolve`. With it, the far side's settings: whether tether may
//! run on the host (`--agentless`, over the config's `deploy`) and where
//! its binary is (the config's `tether_path`). The result crosses the
//! daemon protocol with the request, so the daemon never reads another
//! user's or another `HOME`'s files to guess. Batch mode: the daemon has
//! no terminal to ask on.

use anyhow::Result;
use clap::Args;
use tether_cluster::config::Settings;
use tether_cluster::exec::{self, HostSpec, Overrides};
use tether_daemon::protocol::HostRoute;
use tether_transport::FarSettings;

use crate::ssh_opts::{self, SshArgs};

/// The far side's flag, on every door whose sessions live on a host
/// (`tether run`, `tether shell`, `tether mcp`); the doors that run no
/// session there (`exec`, `cp`, `ssh`) do not take it, so it is never
/// accepted and ignored.
#[derive(Clone, Copy, Debug, Default, Args)]
#[command(next_help_heading = "SSH options")]
pub struct FarArgs {
    /// Keep the hosts agentless: tether is neither copied to them nor used
    /// there when found; their sessions are shells driven over the link
    /// (wins over `deploy` in tether's config).
    #[arg(long)]
    pub agentless: bool,
}

/// The reason a host is agentless when the flag says so.
pub const AGENTLESS_FLAG: &str = "--agentless";

/// How the hosts of one command are reached and served.
#[derive(Clone, Debug)]
pub struct Reach {
    /// The SSH settings (flags, `-o`, tether's config), under which
    /// ssh_config applies at resolution.
    pub ov: Overrides,
    /// Whether tether may run on them, and where its binary is.
    pub far: FarSettings,
}

/// The settings hosts named with `ssh` and `far`, and tether's config
/// `settings`, are reached and served with, in batch mode (no one asked
/// for secrets).
pub fn reach(ssh: &SshArgs, far: FarArgs, settings: &Settings) -> Result<Reach> {
    Ok(Reach {
        ov: ssh_opts::overrides(ssh, Overrides::default(), settings)?,
        far: far_settings(far, settings),
    })
}

/// The far side's settings: tether's config for these hosts (`deploy`,
/// `tether_path`), the flag over it.
pub fn far_settings(flag: FarArgs, settings: &Settings) -> FarSettings {
    let mut far = settings.far();
    if flag.agentless {
        far.agentless = Some(AGENTLESS_FLAG.to_owned());
    }
    far
}

/// How to reach `name` (`[user@]host[:port]`) with `reach`; the error
/// says why not, naming the host once.
pub fn resolve(name: &str, reach: &Reach) -> Result<HostRoute, String> {
    let spec = HostSpec::parse(name).map_err(|e| e.to_string())?;
    let (target, options) =
        exec::resolve(&spec, &reach.ov, false).map_err(|e| format!("{name}: {e}"))?;
    Ok(HostRoute {
        name: name.to_owned(),
        route: Box::new(tether_ssh::Route { target, options }),
        far: reach.far.clone(),
    })
}

/// `name` as a lone host of the command line (`tether run --host`, MCP's
/// `host`): the flags over tether's config defaults (its default file).
pub fn single(name: &str, ssh: &SshArgs, far: FarArgs) -> Result<HostRoute> {
    let config = ssh_opts::load_config(None)?;
    let reach = reach(ssh, far, &config.defaults)?;
    resolve(name, &reach).map_err(anyhow::Error::msg)
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use tether_cluster::config::{Config, Selection};

    use super::*;

    fn settings(text: &str, named: Selection<'_>) -> Settings {
        let config = Config::parse(Path::new("/home/u/tether.toml"), text).unwrap();
        config.select(named).unwrap().1
    }

    /// No ssh_config: resolution reads no file of this machine's.
    fn no_ssh_config() -> SshArgs {
        SshArgs {
            ssh_config: Some("none".into()),
            ..SshArgs::default()
        }
    }

    const CONFIG: &str = "[defaults]\ntether_path = \"/opt/tether\"\nreconnect_max = 9\n\
                          [clusters.lab]\nnodes = \"n[1-2]\"\ndeploy = false\nuser = \"ops\"\n";

    #[test]
    fn a_route_carries_the_configs_far_settings() {
        let s = settings(CONFIG, Selection::Cluster("lab"));
        let r = reach(&no_ssh_config(), FarArgs::default(), &s).unwrap();
        let route = resolve("n1", &r).unwrap();
        assert_eq!(route.route.target.user, "ops");
        assert_eq!(
            route.far,
            FarSettings {
                agentless: Some("deploy = false in /home/u/tether.toml:6 for cluster lab".into()),
                path: Some("/opt/tether".into()),
                reconnect_max_s: Some(9),
            }
        );
        // A node set takes the defaults: tether may run there.
        let s = settings(CONFIG, Selection::Nodes("web1"));
        let r = reach(&no_ssh_config(), FarArgs::default(), &s).unwrap();
        let route = resolve("web1", &r).unwrap();
        assert_eq!(route.far.agentless, None);
        assert_eq!(route.far.path.as_deref(), Some("/opt/tether"));
    }

    /// `tether shell`'s nodes (and every session's host) get the default
    /// keepalive bound, 15 × 3, when nothing says otherwise; `-o` wins.
    #[test]
    fn a_route_has_the_default_keepalive_unless_told_otherwise() {
        let s = Settings::default();
        let r = reach(&no_ssh_config(), FarArgs::default(), &s).unwrap();
        let route = resolve("web1", &r).unwrap();
        assert_eq!(route.route.options.keepalive, Some(exec::DEFAULT_KEEPALIVE));
        let told = SshArgs {
            options: vec![
                "ServerAliveInterval=1".into(),
                "ServerAliveCountMax=2".into(),
            ],
            ..no_ssh_config()
        };
        let r = reach(&told, FarArgs::default(), &s).unwrap();
        let route = resolve("web1", &r).unwrap();
        assert_eq!(
            route.route.options.keepalive,
            Some((std::time::Duration::from_secs(1), 2))
        );
    }

    #[test]
    fn the_flag_wins_over_the_config() {
        let flag = FarArgs { agentless: true };
        for named in [Selection::Cluster("lab"), Selection::Nodes("web1")] {
            let s = settings(CONFIG, named);
            let route = resolve("web1", &reach(&no_ssh_config(), flag, &s).unwrap()).unwrap();
            assert_eq!(route.far.agentless.as_deref(), Some("--agentless"));
            assert_eq!(route.far.path.as_deref(), Some("/opt/tether"));
        }
        // Without a config, only the flag.
        let far = far_settings(flag, &Settings::default());
        assert_eq!(
            far,
            FarSettings {
                agentless: Some("--agentless".into()),
                ..FarSettings::default()
            }
        );
        assert_eq!(
            far_settings(FarArgs::default(), &Settings::default()),
            FarSettings::default()
        );
    }
}
