//! Listing groups (`tether hosts --list-groups`): every group of every
//! source with its source and nodes, tether's first, then the default
//! source, then the others in their order; or, given nodes, the groups
//! holding any of them with those nodes (as `nodeset -ll NODES`), found
//! by a source's `reverse` upcall (`$NODE`, once per node) where it has
//! one, else by its groups' nodes.

use super::resolve::{Resolver, Src};
use crate::error::ClusterError;
use crate::nodeset::NodeSet;

/// One group of a listing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GroupRow {
    /// The group as typed (`@name`, or `@source:name` when `@name` is
    /// another's); `None` when the source's groups cannot be listed.
    pub name: Option<String>,
    /// Its source.
    pub source: String,
    /// Its nodes (those of the nodes asked about, when some were), or
    /// why they are not known.
    pub nodes: Result<NodeSet, String>,
}

impl<'a> Resolver<'a> {
    /// Every group of every source, with its nodes; with `only`, the
    /// groups holding any of its nodes, with those nodes. An error in one
    /// is its row, not the listing's end.
    pub fn rows(&self, only: Option<&NodeSet>) -> Vec<GroupRow> {
        let mut sources = vec![Src::Tether(self.tether)];
        let mut rows = Vec::new();
        let default = match (self.default_source(), self.loaded_sources()) {
            (Ok(d), Ok(all)) => {
                sources.extend(d);
                let d = d.map(|d| d.name().to_owned());
                sources.extend(
                    all.iter()
                        .filter(|s| Some(&s.name) != d.as_ref())
                        .map(Src::Conf),
                );
                d
            }
            (Err(e), _) | (_, Err(e)) => {
                rows.push(GroupRow {
                    name: None,
                    source: "groups.conf".into(),
                    nodes: Err(e.to_string()),
                });
                None
            }
        };
        for src in sources {
            self.rows_of(src, default.as_deref(), only, &mut rows);
        }
        rows
    }

    fn rows_of(
        &self,
        src: Src<'a>,
        default: Option<&str>,
        only: Option<&NodeSet>,
        rows: &mut Vec<GroupRow>,
    ) {
        let source = src.name().to_owned();
        let names = match only {
            Some(set) if src.has_reverse() => self.holding(src, set),
            _ => self.names(src),
        };
        let names = match names {
            Ok(n) => n,
            Err(e) => {
                rows.push(GroupRow {
                    name: None,
                    source,
                    nodes: Err(e.to_string()),
                });
                return;
            }
        };
        for g in names {
            let bare = matches!(src, Src::Tether(_))
                || (Some(source.as_str()) == default && !self.tether.contains_key(&g));
            let name = if bare {
                format!("@{g}")
            } else {
                format!("@{source}:{g}")
            };
            let mut nodes =
                NodeSet::parse_in(&format!("@{source}:{g}"), self).map_err(|e| e.to_string());
            if let (Some(set), Ok(n)) = (only, nodes.as_mut()) {
                n.intersection(set);
                if n.is_empty() {
                    continue;
                }
            }
            rows.push(GroupRow {
                name: Some(name),
                source: source.clone(),
                nodes,
            });
        }
    }

    /// The groups of `src` its `reverse` upcall gives for the nodes of
    /// `set`, each once, in the order first given.
    fn holding(&self, src: Src<'a>, set: &NodeSet) -> Result<Vec<String>, ClusterError> {
        let mut names: Vec<String> = Vec::new();
        for node in set.names() {
            for g in self.reverse(src, &node)? {
                if !names.contains(&g) {
                    names.push(g);
                }
            }
        }
        Ok(names)
    }
}
