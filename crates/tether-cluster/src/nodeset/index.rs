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

/// Folds sorted, distinct indices into `a-b` runs joined by commas, as
/// ClusterShell's `RangeSet` prints them (its `_slices_padding` with no
/// autostep, quirks included): a run goes on while the next index is the
/// next number and keeps the run's padding, where a run that follows a
/// broken step keeps the padding of the run before (`06,16-99,100-126`).
pub fn fold(sorted: &[&Index]) -> String {
    let value = |i: usize| sorted[i].0.parse::<i128>().unwrap_or(i128::MAX);
    let padded = |i: usize| sorted[i].0.len() > 1 && sorted[i].0.starts_with('0');
    let mut runs: Vec<(usize, usize)> = Vec::new();
    let Some(first) = sorted.first() else {
        return String::new();
    };
    let (mut start, mut last) = (0, 0);
    let (mut cur_padded, mut cur_pad) = (padded(0), first.0.len());
    let mut step: Option<i128> = None;
    #[allow(clippy::needless_range_loop)] // positions, compared with `start` and `last`
    for i in 1..sorted.len() {
        let diff = value(i).saturating_sub(value(last));
        let padding_mismatch = if cur_padded {
            sorted[i].0.len() != cur_pad
        } else {
            padded(i)
        };
        let step_mismatch = !padding_mismatch && step.is_some_and(|s| s != diff);
        if !(padding_mismatch || step_mismatch) {
            step = Some(diff);
            last = i;
            continue;
        }
        if step.is_none_or(|s| s == 1) {
            runs.push((start, last));
            (start, cur_padded, cur_pad) = (i, padded(i), sorted[i].0.len());
        } else {
            let end = if padding_mismatch { last + 1 } else { last };
            runs.extend((start..end).map(|j| (j, j)));
            if padding_mismatch {
                (start, cur_padded, cur_pad) = (i, padded(i), sorted[i].0.len());
            } else {
                start = last;
            }
        }
        step = step_mismatch.then_some(diff);
        last = i;
    }
    if step.is_none_or(|s| s == 1) {
        runs.push((start, last));
    } else {
        runs.extend((start..=last).map(|j| (j, j)));
    }
    let mut out = String::new();
    for (a, b) in runs {
        if !out.is_empty() {
            out.push(',');
        }
        out.push_str(&sorted[a].0);
        if b > a {
            let _ = write!(out, "-{}", sorted[b].0);
        }
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
        // ClusterShell's quirks: a padded run ends where the width does,
        // and a run after a broken step keeps the padding before it.
        assert_eq!(folded(&["09", "10", "99", "100"]), "09-10,99-100");
        let mut v: Vec<String> = (9..=99).map(|i| format!("{i:02}")).collect();
        v.push("100".into());
        let v: Vec<&str> = v.iter().map(String::as_str).collect();
        assert_eq!(folded(&v), "09-99,100");
        let mut v: Vec<String> = (16..=126).map(|i| i.to_string()).collect();
        v.push("06".into());
        let v: Vec<&str> = v.iter().map(String::as_str).collect();
        assert_eq!(folded(&v), "06,16-99,100-126");
        assert_eq!(folded(&["06", "08", "10", "11"]), "06,08,10-11");
    }
}
