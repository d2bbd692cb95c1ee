//! Naming a run's hosts as pdsh, ClusterShell and bssh users type it (issue
//! 28): a host file wherever a node set is taken (`^FILE`: one node or node
//! set per line, `#` comments, as pdsh's `-w ^file` and ClusterShell's
//! `--hostfile`), a cluster narrowed by `-H`, `-x`/`--exclude` sets, and
//! `--filter` patterns (a glob on names, or a node set); errors that name
//! what the config defines.

use std::path::Path;

use crate::config::{Config, Selection, Settings};
use crate::error::ClusterError;
use crate::groups::{GroupRow, Resolver};
use crate::nodeset::NodeSet;

/// The most bytes of a host file.
const MAX_HOST_FILE: u64 = 16 << 20;

/// How a run narrows the hosts it names.
#[derive(Clone, Copy, Debug, Default)]
pub struct Narrow<'a> {
    /// `-x`/`--exclude`: node sets taken away.
    pub exclude: &'a [String],
    /// `--filter`: patterns every host must match (each a glob with `*`
    /// and `?`, or a node set).
    pub filter: &'a [String],
}

impl Config {
    /// Parses a node set, `@group`s resolved from this config's `[groups]`
    /// and its group sources (`crate::groups`); `^FILE` reads the node
    /// sets in FILE. An unknown group's error names those that exist.
    pub fn nodes(&self, expr: &str) -> Result<NodeSet, ClusterError> {
        if let Some(path) = expr.trim_start().strip_prefix('^') {
            return self.host_file(Path::new(path.trim_end()));
        }
        NodeSet::parse_in(expr, &self.resolver())
    }

    /// The resolver of `@group`s: `[groups]` and the group sources.
    pub fn resolver(&self) -> Resolver<'_> {
        Resolver {
            tether: &self.groups,
            sources: &self.sources,
        }
    }

    /// The union of the node sets in host file `path`, one per line.
    fn host_file(&self, path: &Path) -> Result<NodeSet, ClusterError> {
        let failed = |reason: String| ClusterError::HostFile {
            path: path.to_owned(),
            reason,
        };
        if path.as_os_str().is_empty() {
            return Err(failed("name the file after ^ (^/path/to/hosts)".into()));
        }
        let meta = std::fs::metadata(path).map_err(|e| failed(e.to_string()))?;
        if !meta.is_file() || meta.len() > MAX_HOST_FILE {
            return Err(failed(format!(
                "not a regular file of at most {} MiB",
                MAX_HOST_FILE >> 20
            )));
        }
        let text = std::fs::read_to_string(path).map_err(|e| failed(e.to_string()))?;
        let mut set = NodeSet::new();
        for (n, line) in text.lines().enumerate() {
            let line = line.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            if line.starts_with('^') {
                return Err(failed(format!(
                    "line {}: a host file names no other",
                    n + 1
                )));
            }
            let part = self
                .nodes(line)
                .map_err(|e| failed(format!("line {}: {e}", n + 1)))?;
            set.union(&part);
        }
        Ok(set)
    }

    /// The hosts of `cluster` (narrowed to `hosts` when both are given) or
    /// of `hosts`, less `narrow`'s exclusions, kept to its filters; and the
    /// settings for them. A selection left with no host is an error.
    pub fn select_narrowed(
        &self,
        cluster: Option<&str>,
        hosts: Option<&str>,
        narrow: Narrow<'_>,
    ) -> Result<(NodeSet, Settings), ClusterError> {
        let (set, settings) = match (cluster, hosts) {
            (Some(c), Some(h)) => {
                let (all, settings) = self.select(Selection::Cluster(c))?;
                let asked = self.nodes(h)?;
                let mut outside = asked.clone();
                outside.difference(&all);
                if !outside.is_empty() {
                    return Err(ClusterError::NotInCluster {
                        nodes: outside.fold(),
                        cluster: c.to_owned(),
                        has: all.fold(),
                    });
                }
                (asked, settings)
            }
            (Some(c), None) => self.select(Selection::Cluster(c))?,
            (None, Some(h)) => self.select(Selection::Nodes(h))?,
            (None, None) => return Err(ClusterError::NoHosts(String::new())),
        };
        Ok((self.narrowed(set, narrow)?, settings))
    }

    /// `set` less `narrow`'s exclusions, kept to its filters; an error
    /// when they leave nothing of a set that had hosts.
    pub fn narrowed(&self, mut set: NodeSet, narrow: Narrow<'_>) -> Result<NodeSet, ClusterError> {
        let before = set.len();
        for x in narrow.exclude {
            set.difference(&self.nodes(x)?);
        }
        for f in narrow.filter {
            set = self.filtered(&set, f)?;
        }
        if set.is_empty() && before > 0 {
            return Err(ClusterError::NarrowedToNothing(before));
        }
        Ok(set)
    }

    /// The hosts of `set` that `pattern` keeps.
    fn filtered(&self, set: &NodeSet, pattern: &str) -> Result<NodeSet, ClusterError> {
        if pattern.contains(['*', '?']) {
            let mut kept = NodeSet::new();
            for name in set.names().iter().filter(|n| glob(pattern, n)) {
                kept.insert(name);
            }
            return Ok(kept);
        }
        let mut kept = set.clone();
        kept.intersection(&self.nodes(pattern)?);
        Ok(kept)
    }

    /// The clusters: name, how many hosts, and the node set they come
    /// from (an error in one is its line, not the listing's end).
    pub fn list_clusters(&self) -> Vec<(String, Result<usize, String>, String)> {
        self.listed(self.clusters.iter().map(|(name, c)| (name, &c.nodes)))
    }

    /// Every group of every source, with its nodes; with `only`, the
    /// groups holding any of its nodes, with those (a source's `reverse`
    /// upcall used where it has one). An error in one is its row, not the
    /// listing's end.
    pub fn list_groups(&self, only: Option<&NodeSet>) -> Vec<GroupRow> {
        self.resolver().rows(only)
    }

    /// Each (name, node set) with its size, or why it has none.
    fn listed<'a>(
        &self,
        named: impl Iterator<Item = (&'a String, &'a String)>,
    ) -> Vec<(String, Result<usize, String>, String)> {
        named
            .map(|(name, expr)| {
                let size = self.nodes(expr).map(|s| s.len()).map_err(|e| e.to_string());
                (name.clone(), size, expr.clone())
            })
            .collect()
    }
}

/// The names, comma-separated, or "none".
pub(crate) fn names<'a>(keys: impl Iterator<Item = &'a String>) -> String {
    let all: Vec<&str> = keys.map(String::as_str).collect();
    if all.is_empty() {
        "none".to_owned()
    } else {
        all.join(", ")
    }
}

/// True when `name` matches `pattern`, whose `*` stands for any run of
/// characters and `?` for one. Written here rather than taken from a glob
/// crate: in a node set `[...]` is a range of numbers, which a glob crate
/// would read as a class of characters.
fn glob(pattern: &str, name: &str) -> bool {
    let (p, n): (Vec<char>, Vec<char>) = (pattern.chars().collect(), name.chars().collect());
    let (mut pi, mut ni) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ni < n.len() {
        match p.get(pi) {
            Some('*') => {
                star = Some((pi, ni));
                pi += 1;
            }
            Some(&c) if c == '?' || c == n[ni] => {
                pi += 1;
                ni += 1;
            }
            _ => match star {
                Some((sp, sn)) => {
                    pi = sp + 1;
                    ni = sn + 1;
                    star = Some((sp, sn + 1));
                }
                None => return false,
            },
        }
    }
    p[pi..].iter().all(|c| *c == '*')
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn config(text: &str) -> Config {
        Config::parse(Path::new("t.toml"), text).unwrap()
    }

    #[test]
    fn globs_match_as_a_shell_does() {
        for (p, n, want) in [
            ("web*", "web01", true),
            ("web*", "db01", false),
            ("*1", "web01", true),
            ("w?b0*", "web07", true),
            ("*", "", true),
            ("a*b*c", "axxbyyc", true),
            ("a*b*c", "axxbyy", false),
            ("n?", "n10", false),
        ] {
            assert_eq!(glob(p, n), want, "{p} {n}");
        }
    }

    #[test]
    fn a_cluster_narrowed_excluded_and_filtered() {
        let c = config(
            "[groups]\nold = \"n[1-3]\"\n[clusters.lab]\nnodes = \"n[1-10]\"\nuser = \"ops\"\n",
        );
        let x = ["@old".to_owned(), "n10".to_owned()];
        let (set, settings) = c
            .select_narrowed(
                Some("lab"),
                None,
                Narrow {
                    exclude: &x,
                    filter: &[],
                },
            )
            .unwrap();
        assert_eq!(set.fold(), "n[4-9]");
        assert_eq!(settings.user.as_deref(), Some("ops"));
        let (set, _) = c
            .select_narrowed(Some("lab"), Some("n[2-4]"), Narrow::default())
            .unwrap();
        assert_eq!(set.fold(), "n[2-4]");
        let e = c
            .select_narrowed(Some("lab"), Some("n[9-12]"), Narrow::default())
            .unwrap_err();
        assert!(
            e.to_string().contains("n[11-12]") && e.to_string().contains("lab"),
            "{e}"
        );
        let f = ["n?".to_owned()];
        let (set, _) = c
            .select_narrowed(
                None,
                Some("n[1-20]"),
                Narrow {
                    exclude: &[],
                    filter: &f,
                },
            )
            .unwrap();
        assert_eq!(set.fold(), "n[1-9]");
        let f = ["n[5-30]".to_owned()];
        let (set, _) = c
            .select_narrowed(
                None,
                Some("n[1-20]"),
                Narrow {
                    exclude: &[],
                    filter: &f,
                },
            )
            .unwrap();
        assert_eq!(set.fold(), "n[5-20]");
        let all = ["n[1-20]".to_owned()];
        let e = c
            .select_narrowed(
                None,
                Some("n[1-20]"),
                Narrow {
                    exclude: &all,
                    filter: &[],
                },
            )
            .unwrap_err();
        assert!(e.to_string().contains("none of the 20"), "{e}");
    }

    #[test]
    fn unknown_names_are_told_with_what_exists() {
        let c = config("[groups]\nweb = \"w1\"\ndb = \"d1\"\n[clusters.lab]\nnodes = \"n1\"\n");
        let e = c.nodes("@nope").unwrap_err().to_string();
        assert!(e.contains("db, web"), "{e}");
        let e = c
            .select(Selection::Cluster("nosuch"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("lab"), "{e}");
        assert_eq!(c.list_clusters()[0].1, Ok(1));
        assert_eq!(c.list_groups(None).len(), 2);
    }

    #[test]
    fn host_files_hold_node_sets_and_comments() {
        let dir = std::env::temp_dir().join(format!("tether-hf-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("hosts");
        std::fs::write(&f, "# the web tier\nweb[01-03]\n\n  db1  # primary\n@g\n").unwrap();
        let c = config("[groups]\ng = \"x1\"\n");
        let set = c.nodes(&format!("^{}", f.display())).unwrap();
        assert_eq!(set.names(), vec!["db1", "web01", "web02", "web03", "x1"]);
        std::fs::write(&f, "web[01-\n").unwrap();
        let e = c
            .nodes(&format!("^{}", f.display()))
            .unwrap_err()
            .to_string();
        assert!(e.contains("line 1"), "{e}");
        let e = c.nodes("^/no/such/file").unwrap_err().to_string();
        assert!(e.contains("/no/such/file"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
