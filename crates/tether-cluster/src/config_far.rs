//! The far side's settings in tether's config, in `[defaults]` or a
//! cluster's table: `deploy = false` keeps the hosts agentless (tether is
//! neither copied there nor used when found), `tether_path` names
//! tether's binary on them, `reconnect_max` caps the wait between tries
//! to reach them again after a lost link. A cluster's own value wins over the defaults'.
//! The reason a host is kept agentless names the file, line and table that
//! said so, so the person who reads it knows what to change.

use std::path::Path;

use tether_transport::FarSettings;

use super::{Config, Settings, line_col, value_offset};
use crate::error::ClusterError;

impl Config {
    /// Refuses a `tether_path` that is not a plain absolute path (placed
    /// at its value) and notes where each table sets `deploy`.
    pub(super) fn place_far(&mut self, file: &Path, text: &str) -> Result<(), ClusterError> {
        let defaults = std::iter::once((
            "defaults".to_owned(),
            "[defaults]".to_owned(),
            &mut self.defaults,
        ));
        let clusters = self.clusters.iter_mut().map(|(name, c)| {
            (
                format!("clusters.{name}"),
                format!("cluster {name}"),
                &mut c.settings,
            )
        });
        for (table, what, settings) in defaults.chain(clusters) {
            let place = |key| line_col(text, value_offset(text, &table, key).unwrap_or(0));
            if let Some(path) = &settings.tether_path
                && let Some(problem) = path_problem(path)
            {
                let (line, column) = place("tether_path");
                return Err(ClusterError::Config {
                    file: file.to_path_buf(),
                    line,
                    column,
                    problem: format!("tether_path = {path:?} in [{table}]: {problem}"),
                });
            }
            if let Some(cap) = settings.reconnect_max
                && !(1..=3600).contains(&cap)
            {
                let (line, column) = place("reconnect_max");
                return Err(ClusterError::Config {
                    file: file.to_path_buf(),
                    line,
                    column,
                    problem: format!(
                        "reconnect_max = {cap} in [{table}]: give the longest wait between tries in seconds, 1 to 3600"
                    ),
                });
            }
            if settings.deploy.is_some() {
                let (line, _) = place("deploy");
                settings.deploy_set_at = Some(format!("{}:{line} for {what}", file.display()));
            }
        }
        Ok(())
    }
}

/// Why `path` cannot name tether's binary on a host, if it cannot: it is
/// used as written there, with no shell to expand `~` or `$HOME`.
fn path_problem(path: &str) -> Option<&'static str> {
    if path.chars().any(char::is_control) {
        Some("a path on the host has no control characters")
    } else if !path.starts_with('/') {
        Some("give the full path on the host, starting with / (~ and variables are not expanded)")
    } else if path.ends_with('/') {
        Some("give the path of the binary itself, not its directory")
    } else {
        None
    }
}

impl Settings {
    /// How these hosts want their far side: agentless with the reason
    /// when `deploy = false`, and tether's path there.
    pub fn far(&self) -> FarSettings {
        FarSettings {
            agentless: (self.deploy == Some(false)).then(|| {
                format!(
                    "deploy = false in {}",
                    self.deploy_set_at.as_deref().unwrap_or("tether's config")
                )
            }),
            path: self.tether_path.clone(),
            reconnect_max_s: self.reconnect_max,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Selection;

    fn parse(text: &str) -> Result<Config, ClusterError> {
        Config::parse(Path::new("c.toml"), text)
    }

    fn far_of(c: &Config, named: Selection<'_>) -> FarSettings {
        c.select(named).map(|(_, s)| s.far()).unwrap_or_default()
    }

    #[test]
    fn deploy_and_tether_path_in_the_defaults_and_a_cluster_over_them() {
        let text = "[defaults]\ndeploy = false\ntether_path = \"/opt/tether/bin/tether\"\n\
                    [clusters.lab]\nnodes = \"n[1-2]\"\ndeploy = true\n\
                    [clusters.old]\nnodes = \"o1\"\ntether_path = \"/usr/local/bin/tether\"\nreconnect_max = 30\n\
                    [clusters.\"x.y\"]\nnodes = \"x1\"\nuser = \"ops\"\n\n\ndeploy = false\n";
        let c = parse(text).unwrap_or_default();
        // A node set takes the defaults: agentless, saying where and why.
        assert_eq!(
            far_of(&c, Selection::Nodes("web1")),
            FarSettings {
                agentless: Some("deploy = false in c.toml:2 for [defaults]".into()),
                path: Some("/opt/tether/bin/tether".into()),
                reconnect_max_s: None,
            }
        );
        // A cluster's own deploy wins; the path is the defaults'.
        assert_eq!(
            far_of(&c, Selection::Cluster("lab")),
            FarSettings {
                agentless: None,
                path: Some("/opt/tether/bin/tether".into()),
                reconnect_max_s: None,
            }
        );
        // Its own path wins; deploy is the defaults', with their line.
        assert_eq!(
            far_of(&c, Selection::Cluster("old")),
            FarSettings {
                agentless: Some("deploy = false in c.toml:2 for [defaults]".into()),
                path: Some("/usr/local/bin/tether".into()),
                reconnect_max_s: Some(30),
            }
        );
        // A cluster's name with a dot, and its own line.
        assert_eq!(
            far_of(&c, Selection::Cluster("x.y")).agentless.as_deref(),
            Some("deploy = false in c.toml:16 for cluster x.y")
        );
        // Nothing said: tether may deploy, from its cache.
        let c = parse("[defaults]\nuser = \"ops\"\n").unwrap_or_default();
        assert_eq!(far_of(&c, Selection::Nodes("web1")), FarSettings::default());
    }

    #[test]
    fn bad_values_and_unknown_keys_are_refused_with_their_place() {
        for (bad, at, says) in [
            ("[defaults]\ndeploy = \"no\"\n", "c.toml:2:", "bool"),
            (
                "[clusters.lab]\nnodes = \"n1\"\ndeploy = 0\n",
                "c.toml:3:",
                "bool",
            ),
            (
                "[defaults]\ntether_path = \"bin/tether\"\n",
                "c.toml:2:15:",
                "full path",
            ),
            (
                "[clusters.lab]\nnodes = \"n1\"\ntether_path = \"~/bin/tether\"\n",
                "c.toml:3:",
                "~",
            ),
            (
                "[defaults]\ntether_path = \"/opt/tether/\"\n",
                "c.toml:2:",
                "binary itself",
            ),
            ("[defaults]\ntether_path = 7\n", "c.toml:2:", "string"),
            (
                "[defaults]\nreconnect_max = 0\n",
                "c.toml:2:17:",
                "1 to 3600",
            ),
            (
                "[clusters.lab]\nnodes = \"n1\"\nreconnect_max = 9000\n",
                "c.toml:3:",
                "1 to 3600",
            ),
            ("[defaults]\nreconnect_max = 1.5\n", "c.toml:2:", "u32"),
            // Misspelt, as any other key: an error, never ignored.
            ("[defaults]\ndeploys = false\n", "c.toml:2:", "deploys"),
            (
                "[defaults]\ntether-path = \"/t\"\n",
                "c.toml:2:",
                "tether-path",
            ),
        ] {
            let e = parse(bad).map(|_| ()).unwrap_err().to_string();
            assert!(e.starts_with(at) && e.contains(says), "{bad:?}: {e}");
        }
    }
}
