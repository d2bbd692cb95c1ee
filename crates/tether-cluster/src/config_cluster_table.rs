//! A cluster's table as the file has it: `nodes`, `shell` and the
//! settings side by side. Read through this flat struct rather than with
//! `#[serde(flatten)]`, which buffers the table and loses where a value
//! stands: a bad value in a cluster is then placed at its own line, as in
//! `[defaults]`, not at the table's.

use serde::Deserialize;

use super::{Cluster, Settings, ShellSettings};

/// Every key a cluster's table takes (the same as [`Settings`]' plus
/// `nodes` and `shell`); any other is refused.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ClusterTable {
    nodes: String,
    #[serde(default)]
    shell: ShellSettings,
    user: Option<String>,
    port: Option<u16>,
    identity: Option<String>,
    jump: Option<String>,
    fanout: Option<usize>,
    connect_timeout: Option<u64>,
    strict_host_key_checking: Option<String>,
    deploy: Option<bool>,
    tether_path: Option<String>,
    reconnect_max: Option<u32>,
}

impl From<ClusterTable> for Cluster {
    fn from(t: ClusterTable) -> Cluster {
        // Every field named, with no `..`: a setting added to `Settings`
        // does not build until a cluster's table takes it too.
        Cluster {
            nodes: t.nodes,
            shell: t.shell,
            settings: Settings {
                user: t.user,
                port: t.port,
                identity: t.identity,
                jump: t.jump,
                fanout: t.fanout,
                connect_timeout: t.connect_timeout,
                strict_host_key_checking: t.strict_host_key_checking,
                deploy: t.deploy,
                tether_path: t.tether_path,
                reconnect_max: t.reconnect_max,
                deploy_set_at: None,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::super::Config;

    fn parse(text: &str) -> Result<Config, crate::error::ClusterError> {
        Config::parse(Path::new("c.toml"), text)
    }

    #[test]
    fn in_a_cluster_a_bad_value_or_unknown_key_is_placed_at_its_own_line() {
        // Not at the table's header: a cluster's table is read flat.
        for (bad, at) in [
            (
                "[clusters.lab]\nnodes = \"n1\"\ndeploi = false\n",
                "c.toml:3:1:",
            ),
            (
                "[clusters.lab]\nnodes = \"n1\"\n\nport = \"x\"\n",
                "c.toml:4:8:",
            ),
            ("[clusters.lab]\nnodes = \"n1\"\nuser = 3\n", "c.toml:3:8:"),
        ] {
            let e = parse(bad).map(|_| ()).unwrap_err().to_string();
            assert!(e.starts_with(at), "{bad:?}: {e}");
        }
        // A cluster still needs its nodes.
        let e = parse("[clusters.lab]\nport = 22\n")
            .map(|_| ())
            .unwrap_err()
            .to_string();
        assert!(e.contains("nodes"), "{e}");
    }
}
