//! Range lists, the text inside brackets (`1-3,7,10-20/5`, `01-10`), read
//! as ClusterShell's `RangeSet` reads them, with its errors: whitespace
//! around numbers is ignored; when either end of a range is zero-padded
//! both ends must have the same width (`01-10`, not `01-100` or `1-010`);
//! the padding is the start's (`0-00` is `0`). Digits written right next
//! to the brackets join the numbers as ClusterShell joins them
//! ([`join_after`], [`join_before`]). ClusterShell also reads Python's
//! integer syntax (`+1`, `1_0`, other scripts' digits) and negative
//! indices (`-5`, making `n-5`); tether refuses those.

use std::collections::BTreeSet;

use super::index::{Index, fold, padded};
use super::parse::MAX_NODES;
use crate::error::RangeProblem;

/// A failure: the problem and the piece of the list it is in (`None`:
/// more than [`MAX_NODES`] indices).
pub type Failure = Option<(RangeProblem, String)>;

/// The indices of a range list.
pub fn parse(list: &str) -> Result<BTreeSet<Index>, Failure> {
    let mut out = BTreeSet::new();
    for raw in list.split(',') {
        let piece = raw.trim();
        let fail = |p: RangeProblem| Some((p, piece.to_owned()));
        let (base, step) = match piece.split_once('/') {
            Some((base, step)) => (base, number(step.trim()).map_err(fail)?),
            None => (piece, 1),
        };
        let (a, b) = match base.split_once('-') {
            None if step != 1 => return Err(fail(RangeProblem::StepWithoutRange)),
            None => (base.trim(), base.trim()),
            // `-5`, `-3-2`, `-8--4`, and ClusterShell reads `x-3-2` as
            // `-3-2`.
            Some((a, b)) if a.trim().is_empty() || b.contains('-') => {
                let negative = base.contains(|c: char| c.is_ascii_digit());
                return Err(fail(if negative {
                    RangeProblem::Negative
                } else {
                    RangeProblem::NotANumber
                }));
            }
            Some((a, b)) => (a.trim(), b.trim()),
        };
        if piece.is_empty() {
            return Err(fail(RangeProblem::Empty));
        }
        let (from, to) = (number(a).map_err(fail)?, number(b).map_err(fail)?);
        let pad = start_pad(a);
        if (pad > 0 || pad_of(b) > 0) && a.len() != b.len() {
            return Err(fail(RangeProblem::PaddingMismatch));
        }
        if from > to {
            return Err(fail(RangeProblem::Reversed));
        }
        if step == 0 {
            return Err(fail(RangeProblem::BadStep));
        }
        if (to - from) / step >= MAX_NODES as u64 {
            return Err(None);
        }
        let mut v = from;
        while v <= to {
            out.insert(Index(padded(v, pad)));
            if out.len() > MAX_NODES {
                return Err(None);
            }
            v = match v.checked_add(step) {
                Some(n) => n,
                None => break,
            };
        }
    }
    Ok(out)
}

/// ASCII digits as a number.
fn number(s: &str) -> Result<u64, RangeProblem> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        let negative = s.starts_with('-') && s.len() > 1;
        return Err(if negative {
            RangeProblem::Negative
        } else {
            RangeProblem::NotANumber
        });
    }
    s.parse().map_err(|_| RangeProblem::NumberTooLarge)
}

/// The zero-padded width of a range's end as written (0: not padded):
/// `007` is 3; all zeros (`0`, `00`) is 0, as ClusterShell has it.
fn pad_of(s: &str) -> usize {
    let stripped = s.trim_start_matches('0');
    if !stripped.is_empty() && stripped.len() < s.len() {
        s.len()
    } else {
        0
    }
}

/// The zero-padded width of a range's start: as an end's, but all zeros
/// of more than one digit (`00`) are padded too.
fn start_pad(s: &str) -> usize {
    if s.len() > 1 && s.bytes().all(|b| b == b'0') {
        s.len()
    } else {
        pad_of(s)
    }
}

/// The list with `digits` (written right after its `]`) joined to every
/// number, as ClusterShell does: `1-3` and `5` make `15-35/10`.
pub fn join_after(list: &str, digits: &str) -> String {
    list.split(',')
        .map(|piece| {
            let joined: Vec<String> = piece.split('-').map(|b| format!("{b}{digits}")).collect();
            let mut s = joined.join("-");
            if piece.contains('-') {
                s.push_str("/1");
                s.push_str(&"0".repeat(digits.len()));
            }
            s
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// The list with `digits` (written right before its `[`) put in front of
/// both ends of each of its folded runs, as ClusterShell does: `1` and
/// `8-10` make `18-110`.
pub fn join_before(list: &str, digits: &str) -> Result<String, Failure> {
    let set = parse(list)?;
    let sorted: Vec<&Index> = set.iter().collect();
    Ok(fold(&sorted)
        .split(',')
        .map(|run| {
            run.split('-')
                .map(|b| format!("{digits}{b}"))
                .collect::<Vec<_>>()
                .join("-")
        })
        .collect::<Vec<_>>()
        .join(","))
}
