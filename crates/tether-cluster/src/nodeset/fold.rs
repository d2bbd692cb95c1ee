//! Folding the nodes of one multi-dimensional pattern (`rack1-n2`) into
//! vectors of index sets (`rack[1-2]-n[1-3]`), the way ClusterShell's
//! `RangeSetND` does, so `tether hosts -f` prints what `nodeset -f` prints:
//! start from one vector per node; then, until nothing changes, sort the
//! vectors (most nodes first, then per dimension: larger set first, lower
//! first index, lower last index) and merge each vector with the next one
//! when they differ in exactly one dimension.

use std::cmp::Reverse;
use std::collections::BTreeSet;

use super::index::Index;

/// A set of nodes of one pattern: one index set per dimension.
pub type Vector = Vec<BTreeSet<Index>>;

fn size(v: &Vector) -> usize {
    v.iter().map(BTreeSet::len).product()
}

fn sort(vectors: &mut [Vector]) {
    vectors.sort_by_cached_key(|v| {
        let dims: Vec<_> = v
            .iter()
            .map(|set| {
                (
                    Reverse(set.len()),
                    set.first().cloned(),
                    set.last().cloned(),
                )
            })
            .collect();
        (Reverse(size(v)), dims)
    });
}

/// The one dimension in which `a` and `b` differ, if exactly one does.
fn single_difference(a: &Vector, b: &Vector) -> Option<usize> {
    let mut diff = None;
    for (d, (x, y)) in a.iter().zip(b).enumerate() {
        if x != y {
            if diff.is_some() {
                return None;
            }
            diff = Some(d);
        }
    }
    diff
}

/// Folds `nodes` (index vectors of one pattern, all of one length).
pub fn fold(nodes: &BTreeSet<Vec<Index>>) -> Vec<Vector> {
    let mut vectors: Vec<Vector> = nodes
        .iter()
        .map(|n| n.iter().map(|i| BTreeSet::from([i.clone()])).collect())
        .collect();
    loop {
        sort(&mut vectors);
        let mut changed = false;
        let mut i = 0;
        while i + 1 < vectors.len() {
            match single_difference(&vectors[i], &vectors[i + 1]) {
                Some(d) => {
                    let next = vectors.remove(i + 1);
                    let merged = next.into_iter().nth(d).unwrap_or_default();
                    vectors[i][d].extend(merged);
                    changed = true;
                }
                None => i += 1,
            }
        }
        if !changed {
            return vectors;
        }
    }
}
