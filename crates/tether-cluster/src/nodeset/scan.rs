//! The scanner: an expression (whitespace already settled by `parse`) cut
//! into terms, each with the operator before it and the pieces its names
//! are made of, the way ClusterShell's `ParsingEngine._scan_string` cuts
//! it, so it refuses what `nodeset` refuses: an operator needs an operand
//! on both sides; a `[` needs its `]` and a `]` its `[`; a range needs
//! text before the next one; digits next to a bracket join its numbers
//! (`n[1-3]5` is `n[15-35/10]`, `n1[8-10]` is `n[18-110]`, as in
//! ClusterShell), but not after a step. A bracket holding `:` is an IPv6
//! literal (`[::1]`), kept as text.

use super::range::{self, Failure, join_after, join_before};
use crate::error::SyntaxProblem;

/// The set operators, in ClusterShell's spelling.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// `,`
    Union,
    /// `!`
    Difference,
    /// `&`
    Intersection,
    /// `^`
    Symmetric,
}

/// The operator characters.
pub const OPS: [char; 4] = [',', '!', '&', '^'];

fn op_of(c: char) -> Op {
    match c {
        '!' => Op::Difference,
        '&' => Op::Intersection,
        '^' => Op::Symmetric,
        _ => Op::Union,
    }
}

/// One term of an expression.
#[derive(Debug)]
pub struct Term {
    /// The operator joining it to the terms before it.
    pub op: Op,
    /// Its byte offset in the text.
    pub at: usize,
    /// True for a `@group` term.
    pub group: bool,
    /// The pieces of its names: each is the list of texts it can be (one
    /// for literal text, one per index for a range list).
    pub segments: Vec<Vec<String>>,
}

/// Why a text does not scan.
#[derive(Debug)]
pub enum ScanError {
    /// A problem at a byte offset of the text.
    At(usize, SyntaxProblem),
    /// A range list of more than `MAX_NODES` indices.
    TooLarge,
}

fn digits_at_start(s: &str) -> usize {
    s.len() - s.trim_start_matches(|c: char| c.is_ascii_digit()).len()
}

/// The terms of `text`.
pub fn scan(text: &str) -> Result<Vec<Term>, ScanError> {
    let mut terms = Vec::new();
    let (mut op, mut at, mut rest) = (Op::Union, 0, text);
    loop {
        let lead = rest.len() - rest.trim_start().len();
        at += lead;
        rest = rest[lead..].trim_end();
        if rest.is_empty() {
            return Ok(terms);
        }
        let mut term = Term {
            op,
            at,
            group: rest.starts_with('@'),
            segments: Vec::new(),
        };
        // A '[' counts only before the next operator: searched there
        // alone, so a long list of names is not read again at each term.
        let bracket_before_op = |t: &str| t[..t.find(OPS).unwrap_or(t.len())].find('[');
        let bracketed = bracket_before_op(rest).is_some();
        let (mut tail, mut tail_at) = (rest, at);
        while let Some(open) = bracket_before_op(tail) {
            (tail, tail_at) = bracket(tail, tail_at, open, &mut term.segments)?;
        }
        let (left, next) = match tail.find(OPS) {
            Some(i) => {
                let c = tail[i..].chars().next().unwrap_or(',');
                let right = &tail[i + 1..];
                let missing = |after| {
                    ScanError::At(tail_at + i, SyntaxProblem::MissingOperand { op: c, after })
                };
                if right.is_empty() {
                    return Err(missing(true));
                }
                if !bracketed && i == 0 {
                    return Err(missing(false));
                }
                (&tail[..i], Some((op_of(c), tail_at + i + 1, right)))
            }
            None => (tail, None),
        };
        if let Some(i) = left.find(']') {
            return Err(ScanError::At(tail_at + i, SyntaxProblem::StrayBracket));
        }
        let left = left.trim_end();
        if !left.is_empty() {
            term.segments.push(vec![left.to_owned()]);
        }
        terms.push(term);
        match next {
            Some((o, a, r)) => (op, at, rest) = (o, a, r),
            None => return Ok(terms),
        }
    }
}

/// Reads the bracket at `open` of `text` (at byte `at` of the whole) and
/// the text before it into `segments`; returns the text after it.
fn bracket<'t>(
    text: &'t str,
    at: usize,
    open: usize,
    segments: &mut Vec<Vec<String>>,
) -> Result<(&'t str, usize), ScanError> {
    let err = |i: usize, p| ScanError::At(at + i, p);
    let pfx = &text[..open];
    let close = text[open..]
        .find(']')
        .map(|c| open + c)
        .ok_or_else(|| err(open, SyntaxProblem::UnclosedBracket))?;
    if let Some(i) = pfx.find(']') {
        return Err(err(i, SyntaxProblem::StrayBracket));
    }
    let rng = &text[open + 1..close];
    let (mut sfx, mut sfx_at) = (&text[close + 1..], close + 1);
    if let Some(end) = sfx.find(']')
        && end < sfx.find('[').unwrap_or(end + 1)
    {
        return Err(err(sfx_at + end, SyntaxProblem::StrayBracket));
    }
    if rng.contains(':') {
        // An IPv6 literal: text, brackets included.
        segments.push(vec![text[..=close].to_owned()]);
        if sfx.starts_with('[') {
            return Err(err(sfx_at, SyntaxProblem::AdjacentRanges));
        }
        return Ok((sfx, at + sfx_at));
    }
    let mut list = rng.to_owned();
    let mut joined = false;
    let after = digits_at_start(sfx);
    if after > 0 {
        if rng.contains('/') {
            return Err(err(sfx_at, SyntaxProblem::DigitsAfterStep));
        }
        list = join_after(&list, &sfx[..after]);
        joined = true;
        (sfx, sfx_at) = (&sfx[after..], sfx_at + after);
    }
    let literal = pfx.trim_end_matches(|c: char| c.is_ascii_digit());
    let range_err = |joined: bool| {
        move |f: Failure| match f {
            None => ScanError::TooLarge,
            Some((problem, piece)) => {
                let (range, joined, col) = if joined {
                    (rng.to_owned(), Some(piece), open + 1)
                } else {
                    let col = open + 1 + rng.find(piece.as_str()).unwrap_or(0);
                    (piece, None, col)
                };
                err(
                    col,
                    SyntaxProblem::Range {
                        range,
                        joined,
                        problem,
                    },
                )
            }
        }
    };
    if literal.len() < pfx.len() {
        list = join_before(&list, &pfx[literal.len()..]).map_err(range_err(joined))?;
        joined = true;
    }
    if !literal.is_empty() {
        segments.push(vec![literal.to_owned()]);
    }
    if sfx.starts_with('[') {
        return Err(err(sfx_at, SyntaxProblem::AdjacentRanges));
    }
    let set = range::parse(&list).map_err(range_err(joined))?;
    segments.push(set.into_iter().map(|i| i.0).collect());
    Ok((sfx, at + sfx_at))
}
