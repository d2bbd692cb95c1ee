//! One numeric part of a node name, kept as written (`01` and `1` are
//! different nodes), ordered as ClusterShell orders them: shorter first,
//! then by value; and the folding of a sorted run of them into ranges.

use std::cmp::Ordering;
use std::fmt::Write;

/// The digits of one numeric part of a node name.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Index(pub String);

impl Index {
    /// The number, when it fits.
    pub fn value(&self) -> Option<u64> {
        self.0.parse().ok()
    }

    /// The zero-padding width a range starting here uses (0: none).
    fn pad(&self) -> usize {
        if self.0.len() > 1 && self.0.starts_with('0') {
            self.0.len()
        } else {
            0
        }
    }
}

impl Ord for Index {
    fn cmp(&self, other: &Self) -> Ordering {
        // Equal lengths of digits compare as numbers do.
        (self.0.len(), &self.0).cmp(&(other.0.len(), &other.0))
    }
}

impl PartialOrd for Index {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// `value` written with at least `pad` digits.
pub fn padded(value: u64, pad: usize) -> String {
    format!("{value:0pad$}")
}

/// Folds sorted, distinct indices into `a-b` runs joined by commas: a run
/// goes on while the next index is the next number written with the run's
/// padding.
pub fn fold(sorted: &[&Index]) -> String {
    let mut out = String::new();
    let mut i = 0;
    while i < sorted.len() {
        let start = sorted[i];
        let pad = start.pad();
        let mut end = i;
        while let (Some(next), Some(v)) = (sorted.get(end + 1), sorted[end].value()) {
            if v.checked_add(1).is_some_and(|n| padded(n, pad) == next.0) {
                end += 1;
            } else {
                break;
            }
        }
        if !out.is_empty() {
            out.push(',');
        }
        out.push_str(&start.0);
        if end > i {
            let _ = write!(out, "-{}", sorted[end].0);
        }
        i = end + 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ix(list: &[&str]) -> Vec<Index> {
        let mut v: Vec<Index> = list.iter().map(|s| Index((*s).to_owned())).collect();
        v.sort();
        v
    }

    fn folded(list: &[&str]) -> String {
        let v = ix(list);
        fold(&v.iter().collect::<Vec<_>>())
    }

    #[test]
    fn shorter_sorts_first_and_padding_is_kept() {
        let v = ix(&["10", "9", "01", "5"]);
        let s: Vec<&str> = v.iter().map(|i| i.0.as_str()).collect();
        assert_eq!(s, ["5", "9", "01", "10"]);
        assert_eq!(
            folded(&["5", "6", "7", "8", "9", "01", "02", "10"]),
            "5-9,01-02,10"
        );
        assert_eq!(folded(&["9", "10"]), "9-10");
        assert_eq!(folded(&["08", "09", "10", "11"]), "08-11");
        assert_eq!(folded(&["1", "01", "001"]), "1,01,001");
        assert_eq!(folded(&["1", "3", "5"]), "1,3,5");
    }
}
