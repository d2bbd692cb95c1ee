//! Node sets: named hosts grouped by pattern (`web%`) and index vectors,
//! with set algebra, and the printed forms `nodeset` has: expanded (`-e`),
//! folded (`-f`) and counted (`-c`).

mod fold;
mod groups;
mod index;
mod parse;
mod range;
mod scan;

use std::collections::{BTreeMap, BTreeSet};

pub use groups::{GroupBody, GroupRef, Groups};
pub use index::Index;
pub use parse::MAX_NODES;

use crate::error::ClusterError;

/// Where a numeric part sits in a pattern.
const SLOT: char = '\u{0}';

/// A set of host names.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NodeSet {
    /// Pattern (literal text with a `SLOT` per numeric part) to the index
    /// vectors of its nodes.
    patterns: BTreeMap<String, BTreeSet<Vec<Index>>>,
}

/// Splits a host name into its pattern and its numeric parts. A name with
/// a bracket (an IPv6 literal) or a slot character is kept whole.
fn split(name: &str) -> (String, Vec<Index>) {
    if name.contains(['[', ']', SLOT]) {
        return (name.to_owned(), Vec::new());
    }
    let mut pattern = String::new();
    let mut indices = Vec::new();
    let mut digits = String::new();
    for c in name.chars() {
        if c.is_ascii_digit() {
            digits.push(c);
            continue;
        }
        if !digits.is_empty() {
            indices.push(Index(std::mem::take(&mut digits)));
            pattern.push(SLOT);
        }
        pattern.push(c);
    }
    if !digits.is_empty() {
        indices.push(Index(digits));
        pattern.push(SLOT);
    }
    (pattern, indices)
}

/// The name of the node `indices` of `pattern`.
fn join(pattern: &str, indices: &[&Index]) -> String {
    let mut out = String::with_capacity(pattern.len() + 8);
    let mut next = indices.iter();
    for c in pattern.chars() {
        match (c, c == SLOT) {
            (_, true) => out.push_str(next.next().map_or("", |i| i.0.as_str())),
            (c, false) => out.push(c),
        }
    }
    out
}

impl NodeSet {
    /// An empty set.
    pub fn new() -> Self {
        Self::default()
    }

    /// Parses `expr`; a `@group` is an error (no groups are known).
    pub fn parse(expr: &str) -> Result<NodeSet, ClusterError> {
        parse::parse(expr, &groups::ByName(&|_| None))
    }

    /// Parses `expr`, expanding `@name` with `groups` (which returns the
    /// group's own expression; `@source:name` asks it for `source:name`).
    pub fn parse_with(
        expr: &str,
        groups: &dyn Fn(&str) -> Option<String>,
    ) -> Result<NodeSet, ClusterError> {
        parse::parse(expr, &groups::ByName(groups))
    }

    /// Parses `expr`, each `@group`, `@source:group`, `@*`, `@source:*`
    /// and `@@source` asked of `groups`.
    pub fn parse_in(expr: &str, groups: &dyn Groups) -> Result<NodeSet, ClusterError> {
        parse::parse(expr, groups)
    }

    /// Adds one host name.
    pub fn insert(&mut self, name: &str) {
        let (pattern, indices) = split(name);
        self.patterns.entry(pattern).or_default().insert(indices);
    }

    /// How many hosts.
    pub fn len(&self) -> usize {
        self.patterns.values().map(BTreeSet::len).sum()
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// True when `name` is in the set (whole names only: `node1` is not
    /// `node10`).
    pub fn contains(&self, name: &str) -> bool {
        let (pattern, indices) = split(name);
        self.patterns
            .get(&pattern)
            .is_some_and(|s| s.contains(&indices))
    }

    fn combine(
        &mut self,
        other: &NodeSet,
        op: fn(&mut BTreeSet<Vec<Index>>, &BTreeSet<Vec<Index>>),
    ) {
        let empty = BTreeSet::new();
        let keys: BTreeSet<String> = self
            .patterns
            .keys()
            .chain(other.patterns.keys())
            .cloned()
            .collect();
        for k in keys {
            let mine = self.patterns.entry(k.clone()).or_default();
            op(mine, other.patterns.get(&k).unwrap_or(&empty));
            if mine.is_empty() {
                self.patterns.remove(&k);
            }
        }
    }

    /// Adds every host of `other` (`,`).
    pub fn union(&mut self, other: &NodeSet) {
        // Only `other`'s patterns change: a group's body of thousands of
        // names is thousands of unions.
        for (pattern, nodes) in &other.patterns {
            match self.patterns.get_mut(pattern) {
                Some(mine) => mine.extend(nodes.iter().cloned()),
                None if nodes.is_empty() => {}
                None => {
                    self.patterns.insert(pattern.clone(), nodes.clone());
                }
            }
        }
    }

    /// Removes every host of `other` (`!`).
    pub fn difference(&mut self, other: &NodeSet) {
        self.combine(other, |a, b| a.retain(|x| !b.contains(x)));
    }

    /// Keeps only the hosts also in `other` (`&`).
    pub fn intersection(&mut self, other: &NodeSet) {
        self.combine(other, |a, b| a.retain(|x| b.contains(x)));
    }

    /// Keeps the hosts in exactly one of the two (`^`).
    pub fn symmetric_difference(&mut self, other: &NodeSet) {
        self.combine(other, |a, b| {
            for x in b {
                if !a.remove(x) {
                    a.insert(x.clone());
                }
            }
        });
    }

    /// The folded vectors of each pattern, in the order they print.
    fn folded(&self) -> Vec<(&str, Vec<fold::Vector>)> {
        self.patterns
            .iter()
            .map(|(pattern, nodes)| {
                let dims = nodes.first().map_or(0, Vec::len);
                let vectors = if dims == 1 {
                    // One dimension: a single sorted index set.
                    vec![vec![
                        nodes.iter().filter_map(|v| v.first().cloned()).collect(),
                    ]]
                } else {
                    fold::fold(nodes)
                };
                (pattern.as_str(), vectors)
            })
            .collect()
    }

    /// Every host name, in `nodeset -e` order.
    pub fn names(&self) -> Vec<String> {
        let mut out = Vec::with_capacity(self.len());
        for (pattern, vectors) in self.folded() {
            for v in vectors {
                let dims: Vec<Vec<&Index>> = v.iter().map(|s| s.iter().collect()).collect();
                product(&dims, &mut Vec::new(), &mut |ix| {
                    out.push(join(pattern, ix))
                });
            }
        }
        out
    }

    /// The folded form (`nodeset -f`): `web[01-03],db1`.
    pub fn fold(&self) -> String {
        let mut parts = Vec::new();
        for (pattern, vectors) in self.folded() {
            for v in vectors {
                let mut text = String::new();
                let mut dims = v.iter();
                for c in pattern.chars() {
                    if c != SLOT {
                        text.push(c);
                        continue;
                    }
                    let set: Vec<&Index> =
                        dims.next().map(|s| s.iter().collect()).unwrap_or_default();
                    match set.as_slice() {
                        [one] => text.push_str(&one.0),
                        many => {
                            text.push('[');
                            text.push_str(&index::fold(many));
                            text.push(']');
                        }
                    }
                }
                parts.push(text);
            }
        }
        parts.join(",")
    }
}

/// Calls `f` with every combination of one index per dimension, in order.
fn product<'a>(dims: &[Vec<&'a Index>], acc: &mut Vec<&'a Index>, f: &mut dyn FnMut(&[&'a Index])) {
    let Some((first, rest)) = dims.split_first() else {
        f(acc);
        return;
    };
    for &i in first {
        acc.push(i);
        product(rest, acc, f);
        acc.pop();
    }
}

impl std::fmt::Display for NodeSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.fold())
    }
}
