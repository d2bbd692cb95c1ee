//! The resolver the node-set grammar asks (`nodeset::Groups`): tether's
//! `[groups]` and ClusterShell's sources, looked up as `mod.rs` says.

use std::collections::BTreeMap;

use super::conf::{Source, SourceKind, Upcalls};
use super::upcall::{self, Upcall};
use super::{GroupSources, TETHER_SOURCE};
use crate::error::ClusterError;
use crate::nodeset::{GroupBody, GroupRef, Groups, NodeSet};

/// tether's `[groups]` and ClusterShell's sources, together.
#[derive(Clone, Copy)]
pub struct Resolver<'a> {
    /// tether's `[groups]`.
    pub tether: &'a BTreeMap<String, String>,
    /// ClusterShell's sources.
    pub sources: &'a GroupSources,
}

/// A source.
#[derive(Clone, Copy)]
pub(super) enum Src<'a> {
    Tether(&'a BTreeMap<String, String>),
    Conf(&'a Source),
}

impl Src<'_> {
    pub(super) fn name(&self) -> &str {
        match self {
            Src::Tether(_) => TETHER_SOURCE,
            Src::Conf(s) => &s.name,
        }
    }

    /// Its groups when they are static (tether's, a YAML file's).
    fn table(&self) -> Option<Vec<(&str, &str)>> {
        match self {
            Src::Tether(t) => Some(t.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect()),
            Src::Conf(Source {
                kind: SourceKind::Static(g),
                ..
            }) => Some(g.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect()),
            Src::Conf(_) => None,
        }
    }

    /// True for an upcall source with a `reverse` upcall.
    pub(super) fn has_reverse(&self) -> bool {
        self.upcalls().is_some_and(|u| u.reverse.is_some())
    }

    fn upcalls(&self) -> Option<&Upcalls> {
        match self {
            Src::Conf(Source {
                kind: SourceKind::Upcalls(u),
                ..
            }) => Some(u),
            _ => None,
        }
    }
}

/// The words of an upcall's output as one node set: whitespace and lines
/// between them are unions (ClusterShell joins them with `,`).
fn words(output: &str) -> String {
    output.split_whitespace().collect::<Vec<_>>().join(",")
}

/// True for a name safe to put into an upcall's shell text.
fn safe(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._+-%=/:".contains(c))
}

impl<'a> Resolver<'a> {
    pub(super) fn loaded_sources(&self) -> Result<&'a [Source], ClusterError> {
        Ok(&self.sources.loaded()?.sources)
    }

    /// The source named `name`.
    fn named(&self, name: &str) -> Result<Src<'a>, ClusterError> {
        if name == TETHER_SOURCE {
            return Ok(Src::Tether(self.tether));
        }
        self.loaded_sources()?
            .iter()
            .find(|s| s.name == name)
            .map(Src::Conf)
            .ok_or_else(|| ClusterError::UnknownSource {
                name: name.to_owned(),
                known: self.source_names(),
            })
    }

    /// The default source of ClusterShell's configuration, if it has one.
    pub(super) fn default_source(&self) -> Result<Option<Src<'a>>, ClusterError> {
        let loaded = self.sources.loaded()?;
        Ok(loaded
            .default
            .as_deref()
            .and_then(|d| loaded.sources.iter().find(|s| s.name == d))
            .map(Src::Conf))
    }

    /// Every source's name, the default marked.
    fn source_names(&self) -> String {
        let mut all = vec![format!("{TETHER_SOURCE} (the config's [groups])")];
        if let Ok(l) = self.sources.loaded() {
            for s in &l.sources {
                if l.default.as_deref() == Some(&s.name) {
                    all.push(format!("{} (the default)", s.name));
                } else {
                    all.push(s.name.clone());
                }
            }
        }
        all.join(", ")
    }

    /// Runs `upcall` of `src` with `arg` as `$GROUP` or `$NODE`, once per
    /// run.
    fn call(
        &self,
        src: &Source,
        u: &Upcalls,
        upcall: Upcall,
        arg: Option<(&str, &str)>,
    ) -> Result<Option<String>, ClusterError> {
        let template = match upcall {
            Upcall::Map => Some(&u.map),
            Upcall::All => u.all.as_ref(),
            Upcall::List => u.list.as_ref(),
            Upcall::Reverse => u.reverse.as_ref(),
        };
        let Some(template) = template else {
            return Ok(None);
        };
        let value = arg.map_or("", |(_, v)| v);
        if arg.is_some() && !safe(value) {
            return Err(ClusterError::UnsafeName {
                source_name: src.name.clone(),
                name: value.to_owned(),
            });
        }
        let cfgdir = u.cfgdir.to_string_lossy();
        let mut vars = vec![("SOURCE", src.name.as_str()), ("CFGDIR", &*cfgdir)];
        vars.extend(arg);
        let command = upcall::substitute(template, &vars);
        let key = (src.name.clone(), upcall, value.to_owned());
        self.sources
            .inner
            .cache
            .get_or_run(key, u.cache_time, || {
                upcall::run(&command, &u.cfgdir, self.sources.inner.timeout)
            })
            .map(Some)
            .map_err(|failure| ClusterError::Upcall {
                source_name: src.name.clone(),
                upcall,
                command: upcall::redact(&command),
                failure,
            })
    }

    /// The text of group `g` of `src`; `None` when it has no such group.
    fn map(&self, src: Src<'a>, g: &str) -> Result<Option<String>, ClusterError> {
        if let Some(table) = src.table() {
            return Ok(table
                .iter()
                .find(|(k, _)| *k == g)
                .map(|(_, v)| v.to_string()));
        }
        let (Src::Conf(s), Some(u)) = (src, src.upcalls()) else {
            return Ok(None);
        };
        let text = words(
            &self
                .call(s, u, Upcall::Map, Some(("GROUP", g)))?
                .unwrap_or_default(),
        );
        if text.is_empty() && u.list.is_some() && !self.names(src)?.iter().any(|n| n == g) {
            return Ok(None);
        }
        Ok(Some(text))
    }

    /// Every node of `src`: its `all` upcall or group, else the union of
    /// its groups.
    fn all(&self, src: Src<'a>) -> Result<String, ClusterError> {
        if let Some(table) = src.table() {
            if let Some((_, all)) = table.iter().find(|(k, _)| *k == "all") {
                return Ok(all.to_string());
            }
            return Ok(table.iter().map(|(_, v)| *v).collect::<Vec<_>>().join(","));
        }
        if let (Src::Conf(s), Some(u)) = (src, src.upcalls()) {
            if let Some(out) = self.call(s, u, Upcall::All, None)? {
                return Ok(words(&out));
            }
            if u.list.is_some() {
                let mut parts = Vec::new();
                for g in self.names(src)? {
                    parts.extend(self.map(src, &g)?.filter(|t| !t.is_empty()));
                }
                return Ok(parts.join(","));
            }
        }
        Err(ClusterError::NoAllNodes {
            source_name: src.name().to_owned(),
        })
    }

    /// The names of `src`'s groups (ranges in a `list` upcall's output
    /// expanded, as ClusterShell does).
    pub(super) fn names(&self, src: Src<'a>) -> Result<Vec<String>, ClusterError> {
        if let Some(table) = src.table() {
            return Ok(table.iter().map(|(k, _)| k.to_string()).collect());
        }
        let (Src::Conf(s), Some(u)) = (src, src.upcalls()) else {
            return Ok(Vec::new());
        };
        let Some(out) = self.call(s, u, Upcall::List, None)? else {
            return Err(ClusterError::NoListUpcall {
                source_name: s.name.clone(),
            });
        };
        let mut names = Vec::new();
        for w in out.split_whitespace() {
            match NodeSet::parse(w) {
                Ok(set) => names.extend(set.names()),
                Err(_) => names.push(w.to_owned()),
            }
        }
        Ok(names)
    }

    /// The groups `src`'s `reverse` upcall gives for `node` (none for a
    /// source without one).
    pub(super) fn reverse(&self, src: Src<'a>, node: &str) -> Result<Vec<String>, ClusterError> {
        let (Src::Conf(s), Some(u)) = (src, src.upcalls()) else {
            return Ok(Vec::new());
        };
        let out = self.call(s, u, Upcall::Reverse, Some(("NODE", node)))?;
        Ok(out
            .unwrap_or_default()
            .split_whitespace()
            .map(str::to_owned)
            .collect())
    }

    /// What exists, for an unknown group's error: `src`'s groups (when
    /// they can be listed) and the sources.
    fn known(&self, src: Option<Src<'a>>) -> String {
        let mut said = Vec::new();
        let mut tell = |s: Src<'a>| {
            let which = match s {
                Src::Tether(_) => "tether's [groups]".to_owned(),
                Src::Conf(c) => format!("source {:?}", c.name),
            };
            said.push(match self.names(s) {
                Ok(n) if n.is_empty() => format!("{which} has none"),
                Ok(n) => format!("{which} has {}", n.join(", ")),
                Err(_) => format!("{which} cannot list its groups"),
            });
        };
        match src {
            Some(s) => tell(s),
            None => {
                tell(Src::Tether(self.tether));
                if let Ok(Some(d)) = self.default_source() {
                    tell(d);
                }
            }
        }
        format!(
            "{}; the sources are {}",
            said.join("; "),
            self.source_names()
        )
    }
}

impl Groups for Resolver<'_> {
    fn resolve(&self, source: Option<&str>, what: GroupRef<'_>) -> Result<GroupBody, ClusterError> {
        let body = |text: String, source: Option<&str>| GroupBody {
            text,
            source: source.map(str::to_owned),
        };
        let Some(name) = source else {
            // The default: tether's [groups] first, then ClusterShell's
            // default source; its groups' groups are looked up the same way.
            return match what {
                GroupRef::Group(g) => {
                    if let Some(t) = self.tether.get(g) {
                        return Ok(body(t.clone(), None));
                    }
                    let found = match self.default_source()? {
                        Some(d) => self.map(d, g)?,
                        None => None,
                    };
                    found
                        .map(|t| body(t, None))
                        .ok_or_else(|| ClusterError::UnknownGroupOf {
                            name: g.to_owned(),
                            known: self.known(None),
                        })
                }
                GroupRef::All => {
                    let src = self.default_source()?.unwrap_or(Src::Tether(self.tether));
                    Ok(body(self.all(src)?, None))
                }
                GroupRef::Names => {
                    let src = self.default_source()?.unwrap_or(Src::Tether(self.tether));
                    Ok(body(self.names(src)?.join(","), None))
                }
            };
        };
        let src = self.named(name)?;
        let text = match what {
            GroupRef::Group(g) => {
                self.map(src, g)?
                    .ok_or_else(|| ClusterError::UnknownGroupOf {
                        name: format!("{name}:{g}"),
                        known: self.known(Some(src)),
                    })?
            }
            GroupRef::All => self.all(src)?,
            GroupRef::Names => self.names(src)?.join(","),
        };
        // tether's groups are looked up bare, so the groups they name
        // are too (tether's, then the default source's).
        let inner = (name != TETHER_SOURCE).then_some(name);
        Ok(body(text, inner))
    }
}
