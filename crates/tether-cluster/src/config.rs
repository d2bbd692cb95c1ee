//! tether's own config, `~/.config/tether/config.toml` (or `--config`):
//! defaults, groups and clusters (with the far side's `deploy` and
//! `tether_path`: `config_far.rs`). It adds to OpenSSH's config and never
//! contradicts it silently: what it sets applies only where the command
//! line does not, and ssh_config still applies underneath. A syntax error
//! or an unknown key is an error with file, line and column. No config is
//! ever read from the current directory.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::error::ClusterError;
use crate::groups::GroupSources;
use crate::nodeset::NodeSet;

#[path = "config_cluster_table.rs"]
mod cluster_table;
#[path = "config_far.rs"]
mod far;

/// Connection settings, at the top (`[defaults]`) or per cluster.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Settings {
    /// The user.
    pub user: Option<String>,
    /// The port.
    pub port: Option<u16>,
    /// A key file.
    pub identity: Option<String>,
    /// Jump hosts, comma-separated.
    pub jump: Option<String>,
    /// Most connections at once (1 or more: 0 is an error, as `-f 0` is).
    pub fanout: Option<usize>,
    /// Seconds to connect.
    pub connect_timeout: Option<u64>,
    /// `yes`, `accept-new` or `no`.
    pub strict_host_key_checking: Option<String>,
    /// `false`: tether is neither copied to these hosts nor used there
    /// (they stay agentless); default true.
    pub deploy: Option<bool>,
    /// tether's binary on these hosts (an absolute path), used instead of
    /// the cache tether copies itself into.
    pub tether_path: Option<String>,
    /// The longest wait in seconds (1 to 3600) between tries to reach
    /// these hosts again after a lost link, for sessions living in tether
    /// there; default 2.
    pub reconnect_max: Option<u32>,
    /// Where `deploy` was set (`FILE:LINE for TABLE`), filled by
    /// [`Config::parse`]: the reason a host is kept agentless names it.
    #[serde(skip)]
    pub deploy_set_at: Option<String>,
}

/// Colours in `tether shell`.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum ColorChoice {
    /// When the output is a terminal and `NO_COLOR` is unset.
    #[default]
    Auto,
    /// Always.
    Always,
    /// Never.
    Never,
}

/// `tether shell` settings, at the top (`[shell]`) or per cluster
/// (`[clusters.NAME.shell]`, over the top ones); its flags override both.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct ShellSettings {
    /// The prefix of tether's commands at the prompt (one character).
    pub prefix: Option<char>,
    /// The prompt, with `{nodes}` (the indicators), `{cwd}` (the active
    /// nodes' common directory), `{failed}` (how many failed the last
    /// line) and `{name}` (the session's name).
    pub prompt: Option<String>,
    /// Past this many nodes the prompt counts states instead of listing
    /// each node.
    pub prompt_fold_above: Option<usize>,
    /// `auto`, `always` or `never`.
    pub color: Option<ColorChoice>,
    /// Each output line starts with the time since the line was sent.
    pub timestamps: Option<bool>,
    /// The history file (default: in tether's private directory, one per
    /// session); an empty string keeps no history.
    pub history: Option<String>,
    /// Identical outputs folded under one node set (`!gather on`).
    pub gather: Option<bool>,
    /// After a line, say how to answer the nodes waiting for input.
    pub waiting_hint: Option<bool>,
}

impl ShellSettings {
    /// These settings, each unset one taken from `under`.
    pub fn over(&self, under: &ShellSettings) -> ShellSettings {
        ShellSettings {
            prefix: self.prefix.or(under.prefix),
            prompt: self.prompt.clone().or(under.prompt.clone()),
            prompt_fold_above: self.prompt_fold_above.or(under.prompt_fold_above),
            color: self.color.or(under.color),
            timestamps: self.timestamps.or(under.timestamps),
            history: self.history.clone().or(under.history.clone()),
            gather: self.gather.or(under.gather),
            waiting_hint: self.waiting_hint.or(under.waiting_hint),
        }
    }
}

/// A named set of nodes with its own settings (read as one table, its
/// settings beside `nodes`: `cluster_table.rs`).
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(from = "cluster_table::ClusterTable")]
pub struct Cluster {
    /// Its nodes: a node set (may name `@groups`).
    pub nodes: String,
    /// Its `tether shell` settings.
    pub shell: ShellSettings,
    /// Its settings.
    pub settings: Settings,
}

/// The whole file.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Settings for every host.
    #[serde(default)]
    pub defaults: Settings,
    /// `name = "node set"`, used as `@name`.
    #[serde(default)]
    pub groups: BTreeMap<String, String>,
    /// Clusters, by name.
    #[serde(default)]
    pub clusters: BTreeMap<String, Cluster>,
    /// `tether shell` settings.
    #[serde(default)]
    pub shell: ShellSettings,
    /// `[group_sources]`: how ClusterShell's group sources are used.
    #[serde(default)]
    pub group_sources: GroupSourceSettings,
    /// The group sources beside `groups`: ClusterShell's when
    /// [`Config::load`] made this config (none for [`Config::parse`]).
    #[serde(skip)]
    pub sources: GroupSources,
    /// The confinement of the local sessions `tether run` and `tether mcp`
    /// create (`[confine]`: mode, roots, read_only, deny, allow_net,
    /// unix_sockets); for an MCP server it is the least its agent's calls
    /// may ask.
    #[serde(default)]
    pub confine: Option<tether_confine::Confine>,
}

/// `[group_sources]`: ClusterShell's `groups.conf` sources beside
/// `[groups]` (`crate::groups`).
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct GroupSourceSettings {
    /// `false`: ClusterShell's `groups.conf` is not read (only `[groups]`
    /// names groups); default true.
    pub clustershell: Option<bool>,
    /// Seconds an upcall may run before it is killed (1 or more; default
    /// 30).
    pub timeout: Option<u64>,
}

impl GroupSourceSettings {
    /// The sources these settings ask for.
    pub fn sources(&self) -> GroupSources {
        if self.clustershell == Some(false) {
            return GroupSources::none();
        }
        let timeout = self.timeout.map_or(
            crate::groups::DEFAULT_TIMEOUT,
            std::time::Duration::from_secs,
        );
        GroupSources::clustershell(timeout)
    }
}

/// `$XDG_CONFIG_HOME/tether/config.toml`, else `~/.config/tether/config.toml`.
pub fn default_path() -> PathBuf {
    let base = std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".config")
        });
    base.join("tether").join("config.toml")
}

/// Where in `text` the value of `key` in `table` (`defaults`,
/// `clusters.NAME`) stands.
fn value_offset(text: &str, table: &str, key: &str) -> Option<usize> {
    let doc = toml::de::DeTable::parse(text).ok()?;
    let mut at = doc.get_ref();
    let mut keys = table.split('.').collect::<Vec<_>>();
    if keys.len() > 2 {
        // A cluster's name may hold dots: it is everything after
        // `clusters.`.
        keys = vec!["clusters", &table["clusters.".len()..]];
    }
    for k in keys {
        at = at.get(k)?.get_ref().as_table()?;
    }
    Some(at.get(key)?.span().start)
}

fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}

impl Config {
    /// Parses `text` (from `file`, for messages).
    pub fn parse(file: &Path, text: &str) -> Result<Config, ClusterError> {
        let placed = |offset: usize, problem: String| {
            let (line, column) = line_col(text, offset);
            ClusterError::Config {
                file: file.to_path_buf(),
                line,
                column,
                problem,
            }
        };
        let mut config: Config = toml::from_str(text)
            .map_err(|e| placed(e.span().map_or(0, |s| s.start), e.message().to_owned()))?;
        if let Some((table, offset)) = config.zero_fanout(text) {
            return Err(placed(
                offset,
                format!(
                    "fanout = 0 in [{table}] would run nothing: set it to 1 or more, or remove it (default 64)"
                ),
            ));
        }
        if config.group_sources.timeout == Some(0) {
            let offset = value_offset(text, "group_sources", "timeout").unwrap_or(0);
            return Err(placed(
                offset,
                "timeout = 0 in [group_sources] would stop every upcall: give seconds, 1 or more (default 30)".into(),
            ));
        }
        config.place_far(file, text)?;
        Ok(config)
    }

    /// The table that sets `fanout = 0` (refused, as `-f 0` is) and where
    /// in `text` its value stands.
    fn zero_fanout(&self, text: &str) -> Option<(String, usize)> {
        let mut tables = vec![("defaults".to_owned(), &self.defaults)];
        tables.extend(
            self.clusters
                .iter()
                .map(|(name, c)| (format!("clusters.{name}"), &c.settings)),
        );
        let (table, _) = tables.into_iter().find(|(_, s)| s.fanout == Some(0))?;
        let offset = value_offset(text, &table, "fanout");
        Some((table, offset.unwrap_or(0)))
    }

    /// Reads `file`; a missing file is an empty config only when it is the
    /// default one (`required` false). Its group sources are ClusterShell's
    /// too, unless `[group_sources] clustershell = false`.
    pub fn load(file: &Path, required: bool) -> Result<Config, ClusterError> {
        let mut config = match std::fs::read_to_string(file) {
            Ok(text) => Config::parse(file, &text)?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && !required => Config::default(),
            Err(e) => {
                return Err(ClusterError::ConfigRead {
                    file: file.to_path_buf(),
                    reason: e.to_string(),
                });
            }
        };
        config.sources = config.group_sources.sources();
        Ok(config)
    }

    /// The `tether shell` settings for `cluster` (its own over the top
    /// ones), or the top ones.
    pub fn shell_settings(&self, cluster: Option<&str>) -> ShellSettings {
        match cluster.and_then(|c| self.clusters.get(c)) {
            Some(c) => c.shell.over(&self.shell),
            None => self.shell.clone(),
        }
    }

    /// A cluster's nodes and settings (its own over the defaults).
    pub fn cluster(&self, name: &str) -> Result<(NodeSet, Settings), ClusterError> {
        let c = self
            .clusters
            .get(name)
            .ok_or_else(|| ClusterError::UnknownCluster {
                name: name.to_owned(),
                known: crate::select::names(self.clusters.keys()),
            })?;
        let d = &self.defaults;
        let s = &c.settings;
        let settings = Settings {
            user: s.user.clone().or(d.user.clone()),
            port: s.port.or(d.port),
            identity: s.identity.clone().or(d.identity.clone()),
            jump: s.jump.clone().or(d.jump.clone()),
            fanout: s.fanout.or(d.fanout),
            connect_timeout: s.connect_timeout.or(d.connect_timeout),
            strict_host_key_checking: s
                .strict_host_key_checking
                .clone()
                .or(d.strict_host_key_checking.clone()),
            deploy: s.deploy.or(d.deploy),
            tether_path: s.tether_path.clone().or(d.tether_path.clone()),
            reconnect_max: s.reconnect_max.or(d.reconnect_max),
            deploy_set_at: if s.deploy.is_some() {
                s.deploy_set_at.clone()
            } else {
                d.deploy_set_at.clone()
            },
        };
        Ok((self.nodes(&c.nodes)?, settings))
    }

    /// The hosts `named` names, and the settings for them (a cluster's own
    /// over the defaults; the defaults for a node set). A selection that
    /// names no host is an error.
    pub fn select(&self, named: Selection<'_>) -> Result<(NodeSet, Settings), ClusterError> {
        let (set, settings) = match named {
            Selection::Cluster(c) => self.cluster(c)?,
            Selection::ClusterOrNodes(c) if self.clusters.contains_key(c) => self.cluster(c)?,
            Selection::Nodes(e) | Selection::ClusterOrNodes(e) => {
                (self.nodes(e)?, self.defaults.clone())
            }
        };
        if set.is_empty() {
            return Err(ClusterError::NoHosts(named.text().to_owned()));
        }
        Ok((set, settings))
    }
}

/// How a caller names the hosts of a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Selection<'a> {
    /// A node-set expression (`web[01-10]`, `@group`).
    Nodes(&'a str),
    /// A cluster of the config.
    Cluster(&'a str),
    /// A cluster of the config when one has this name, else a node set.
    ClusterOrNodes(&'a str),
}

impl Selection<'_> {
    /// The name or expression, as the caller wrote it.
    pub fn text(&self) -> &str {
        match self {
            Selection::Nodes(t) | Selection::Cluster(t) | Selection::ClusterOrNodes(t) => t,
        }
    }
}

/// Most hosts reached at once when neither a flag nor the config says.
pub const DEFAULT_FANOUT: usize = 64;

impl Settings {
    /// Most hosts reached at once: `flag`, else the config's, else
    /// [`DEFAULT_FANOUT`]; at least 1.
    pub fn fanout_or(&self, flag: Option<usize>) -> usize {
        flag.or(self.fanout).unwrap_or(DEFAULT_FANOUT).max(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_selection_is_a_cluster_or_a_node_set_and_names_hosts() {
        let text = "[defaults]\nuser = \"ops\"\nfanout = 8\n[groups]\nnone = \"a!a\"\n[clusters.prod]\nnodes = \"db[1-2]\"\nport = 2222\n";
        let c = Config::parse(Path::new("c.toml"), text).unwrap_or_default();
        let (set, s) = c
            .select(Selection::ClusterOrNodes("prod"))
            .unwrap_or_default();
        assert_eq!((set.fold().as_str(), s.port), ("db[1-2]", Some(2222)));
        let (set, s) = c
            .select(Selection::ClusterOrNodes("web1"))
            .unwrap_or_default();
        assert_eq!((set.fold().as_str(), s.port), ("web1", None));
        assert_eq!(s.user.as_deref(), Some("ops"));
        assert!(matches!(
            c.select(Selection::Cluster("web1")),
            Err(ClusterError::UnknownCluster { .. })
        ));
        assert_eq!(
            c.select(Selection::Nodes("@none")).map(|_| ()),
            Err(ClusterError::NoHosts("@none".into()))
        );
        assert_eq!(s.fanout_or(None), 8);
        assert_eq!(s.fanout_or(Some(3)), 3);
        assert_eq!(Settings::default().fanout_or(None), DEFAULT_FANOUT);
        assert_eq!(Settings::default().fanout_or(Some(0)), 1);
    }

    #[test]
    fn groups_clusters_and_errors_with_places() {
        let text = "[defaults]\nuser = \"ops\"\n[groups]\nweb = \"web[1-3]\"\n[clusters.prod]\nnodes = \"@web,db1\"\nport = 2222\n";
        let c = Config::parse(Path::new("c.toml"), text).unwrap_or_default();
        let (nodes, s) = c.cluster("prod").unwrap_or_default();
        assert_eq!(nodes.fold(), "db1,web[1-3]");
        assert_eq!((s.user.as_deref(), s.port), (Some("ops"), Some(2222)));
        assert!(matches!(
            c.cluster("nope"),
            Err(ClusterError::UnknownCluster { .. })
        ));
        let e = Config::parse(Path::new("c.toml"), "[defaults]\nuser = \"a\"\nprot = 22\n")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("c.toml:3:1: "), "{e}");
        let e = Config::parse(Path::new("c.toml"), "[groups]\nweb = [1\n")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("c.toml:2:"), "{e}");
    }

    #[test]
    fn fanout_0_is_an_error_naming_the_file_and_key() {
        for (text, at) in [
            ("[defaults]\nfanout = 0\n", "c.toml:2:"),
            (
                "[clusters.prod]\nnodes = \"web1\"\nfanout = 0\n",
                "c.toml:3:",
            ),
        ] {
            let e = Config::parse(Path::new("c.toml"), text)
                .unwrap_err()
                .to_string();
            assert!(
                e.starts_with(at) && e.contains("fanout = 0"),
                "{text:?}: {e}"
            );
        }
        let c = Config::parse(Path::new("c.toml"), "[defaults]\nfanout = 3\n").unwrap_or_default();
        assert_eq!(c.defaults.fanout, Some(3));
    }

    #[test]
    fn shell_settings_per_cluster_over_the_top_ones() {
        let text = "[shell]\nprefix = \"%\"\ngather = true\ncolor = \"never\"\n[clusters.prod]\nnodes = \"web[1-3]\"\n[clusters.prod.shell]\ngather = false\nprompt = \"{name} {nodes}$ \"\n";
        let c = Config::parse(Path::new("c.toml"), text).unwrap_or_default();
        let s = c.shell_settings(Some("prod"));
        assert_eq!(
            (s.prefix, s.gather, s.color, s.prompt.as_deref()),
            (
                Some('%'),
                Some(false),
                Some(ColorChoice::Never),
                Some("{name} {nodes}$ ")
            )
        );
        assert_eq!(c.shell_settings(None).gather, Some(true));
        // Bad values and unknown keys are placed.
        for (bad, at) in [
            ("[shell]\nprefix = \"!!\"\n", "c.toml:2:"),
            ("[shell]\ncolor = \"blue\"\n", "c.toml:2:"),
            ("[shell]\ngather = true\nprompts = \"x\"\n", "c.toml:3:"),
        ] {
            let e = Config::parse(Path::new("c.toml"), bad)
                .unwrap_err()
                .to_string();
            assert!(e.starts_with(at), "{bad:?}: {e}");
        }
    }
}
