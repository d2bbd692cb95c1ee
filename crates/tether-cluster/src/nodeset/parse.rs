//! The node-set grammar: terms joined by `,` (union), `!` (difference),
//! `&` (intersection) and `^` (symmetric difference), evaluated left to
//! right as ClusterShell does; whitespace between terms also means union.
//! A term is `@group`, or a host pattern: literal text and bracketed range
//! lists (`n[1-3,7,10-20/5]`, padding kept: `[01-10]`), where adjacent
//! brackets need text between them. A bracket holding `:` is an IPv6
//! literal (`[::1]`), as in `user@[::1]:22`.

use super::NodeSet;
use super::index::padded;
use crate::error::ClusterError;

/// The most hosts one expression may expand to.
pub const MAX_NODES: usize = 1 << 20;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    Union,
    Difference,
    Intersection,
    Symmetric,
}

fn op_of(c: char) -> Option<Op> {
    match c {
        ',' => Some(Op::Union),
        '!' => Some(Op::Difference),
        '&' => Some(Op::Intersection),
        '^' => Some(Op::Symmetric),
        c if c.is_whitespace() => Some(Op::Union),
        _ => None,
    }
}

struct Parser<'a> {
    expr: &'a str,
    groups: &'a dyn Fn(&str) -> Option<String>,
    visiting: Vec<String>,
}

pub fn parse(expr: &str, groups: &dyn Fn(&str) -> Option<String>) -> Result<NodeSet, ClusterError> {
    Parser {
        expr,
        groups,
        visiting: Vec::new(),
    }
    .expression(expr)
}

impl Parser<'_> {
    fn syntax(&self, problem: String) -> ClusterError {
        ClusterError::Syntax {
            expr: self.expr.to_owned(),
            problem,
        }
    }

    fn expression(&mut self, text: &str) -> Result<NodeSet, ClusterError> {
        let mut acc = NodeSet::new();
        for (op, term) in self.split(text)? {
            if term.is_empty() {
                continue;
            }
            let set = self.term(term)?;
            match op {
                Op::Union => acc.union(&set),
                Op::Difference => acc.difference(&set),
                Op::Intersection => acc.intersection(&set),
                Op::Symmetric => acc.symmetric_difference(&set),
            }
            if acc.len() > MAX_NODES {
                return Err(ClusterError::TooLarge(self.expr.to_owned()));
            }
        }
        Ok(acc)
    }

    /// The terms at bracket depth 0, each with the operator before it
    /// (whitespace between two terms is a union; around an operator it is
    /// nothing).
    fn split<'t>(&self, text: &'t str) -> Result<Vec<(Op, &'t str)>, ClusterError> {
        let mut out = Vec::new();
        let (mut op, mut start, mut depth) = (Op::Union, None::<usize>, 0usize);
        let end_term =
            |out: &mut Vec<(Op, &'t str)>, op: &mut Op, start: &mut Option<usize>, at: usize| {
                if let Some(s) = start.take() {
                    out.push((*op, &text[s..at]));
                    *op = Op::Union;
                }
            };
        for (i, c) in text.char_indices() {
            match c {
                '[' => depth += 1,
                ']' if depth == 0 => {
                    return Err(self.syntax(format!("a ']' at {i} closes nothing")));
                }
                ']' => depth -= 1,
                c if depth == 0 && op_of(c).is_some() => {
                    end_term(&mut out, &mut op, &mut start, i);
                    if !c.is_whitespace() {
                        op = op_of(c).unwrap_or(Op::Union);
                    }
                    continue;
                }
                _ => {}
            }
            start.get_or_insert(i);
        }
        if depth != 0 {
            return Err(self.syntax("a '[' is never closed".into()));
        }
        end_term(&mut out, &mut op, &mut start, text.len());
        Ok(out)
    }

    fn term(&mut self, term: &str) -> Result<NodeSet, ClusterError> {
        if let Some(name) = term.strip_prefix('@') {
            if name.is_empty() {
                return Err(self.syntax("'@' needs a group name".into()));
            }
            if self.visiting.iter().any(|g| g == name) {
                return Err(ClusterError::GroupCycle(name.to_owned()));
            }
            let body =
                (self.groups)(name).ok_or_else(|| ClusterError::UnknownGroup(name.to_owned()))?;
            self.visiting.push(name.to_owned());
            let set = self.expression(&body);
            self.visiting.pop();
            return set;
        }
        let mut set = NodeSet::new();
        let segments = self.segments(term)?;
        let total = segments
            .iter()
            .try_fold(1usize, |n, s| n.checked_mul(s.len()));
        if total.is_none_or(|n| n > MAX_NODES) {
            return Err(ClusterError::TooLarge(self.expr.to_owned()));
        }
        expand(&segments, &mut String::new(), &mut |name| set.insert(name));
        Ok(set)
    }

    /// A pattern's pieces: each is the list of texts it can be (one for
    /// literal text, one per index for a range list).
    fn segments(&self, term: &str) -> Result<Vec<Vec<String>>, ClusterError> {
        let mut out: Vec<Vec<String>> = Vec::new();
        let mut literal = String::new();
        let mut last_was_range = false;
        let mut rest = term;
        while let Some(open) = rest.find('[') {
            let close = rest[open..]
                .find(']')
                .map(|c| open + c)
                .ok_or_else(|| self.syntax(format!("missing ']' in {term:?}")))?;
            let inside = &rest[open + 1..close];
            literal.push_str(&rest[..open]);
            if inside.contains(':') {
                // An IPv6 literal: text, brackets included.
                literal.push_str(&rest[open..=close]);
            } else {
                if literal.is_empty() && last_was_range {
                    return Err(self.syntax(format!(
                        "two ranges must have text between them in {term:?}"
                    )));
                }
                if !literal.is_empty() {
                    out.push(vec![std::mem::take(&mut literal)]);
                }
                out.push(self.ranges(inside)?);
                last_was_range = true;
            }
            rest = &rest[close + 1..];
        }
        literal.push_str(rest);
        if !literal.is_empty() {
            out.push(vec![literal]);
        }
        Ok(out)
    }

    /// `1-3,7,10-20/5`, with the padding of each range's start.
    fn ranges(&self, list: &str) -> Result<Vec<String>, ClusterError> {
        let mut out = Vec::new();
        for piece in list.split(',') {
            let bad = |why: &str| self.syntax(format!("bad range {piece:?}: {why}"));
            let (span, step) = match piece.split_once('/') {
                Some((span, step)) => (
                    span,
                    step.parse::<u64>()
                        .ok()
                        .filter(|s| *s > 0)
                        .ok_or_else(|| bad("the step must be a positive number"))?,
                ),
                None => (piece, 1),
            };
            let (a, b) = span.split_once('-').unwrap_or((span, span));
            let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
            if !digits(a) || !digits(b) {
                return Err(bad("use numbers, as in [1-10] or [01-10]"));
            }
            let (from, to) = match (a.parse::<u64>(), b.parse::<u64>()) {
                (Ok(f), Ok(t)) if f <= t => (f, t),
                (Ok(_), Ok(_)) => return Err(bad("the start is after the end")),
                _ => return Err(bad("the numbers are too large")),
            };
            if (to - from) / step >= MAX_NODES as u64 {
                return Err(ClusterError::TooLarge(self.expr.to_owned()));
            }
            let pad = if a.len() > 1 && a.starts_with('0') {
                a.len()
            } else {
                0
            };
            let mut v = from;
            while v <= to {
                out.push(padded(v, pad));
                v = match v.checked_add(step) {
                    Some(n) => n,
                    None => break,
                };
            }
        }
        Ok(out)
    }
}

fn expand(segments: &[Vec<String>], acc: &mut String, f: &mut dyn FnMut(&str)) {
    let Some((first, rest)) = segments.split_first() else {
        f(acc);
        return;
    };
    for text in first {
        let len = acc.len();
        acc.push_str(text);
        expand(rest, acc, f);
        acc.truncate(len);
    }
}
