//! The node-set grammar: terms joined by `,` (union), `!` (difference),
//! `&` (intersection) and `^` (symmetric difference), evaluated left to
//! right as ClusterShell does, and refused where ClusterShell's `nodeset`
//! refuses them (`scan.rs`, `range.rs`). A term is `@group`, or a host
//! pattern: literal text and bracketed range lists (`n[1-3,7,10-20/5]`,
//! padding kept: `[01-10]`). Two deliberate differences: whitespace
//! between terms is a union (`nodeset` takes `n1 n2` as one name), and a
//! bracket holding `:` is an IPv6 literal (`[::1]`, as in
//! `user@[::1]:22`).

use super::NodeSet;
use super::groups::{self, GroupRef, Groups};
use super::scan::{OPS, Op, ScanError, scan};
use crate::error::{ClusterError, SyntaxProblem};

/// The most hosts one expression may expand to.
pub const MAX_NODES: usize = 1 << 20;

struct Parser<'a> {
    expr: &'a str,
    groups: &'a dyn Groups,
    /// The groups being expanded, as `source:name` (`:name` for the
    /// default source).
    visiting: Vec<String>,
}

pub fn parse(expr: &str, groups: &dyn Groups) -> Result<NodeSet, ClusterError> {
    Parser {
        expr,
        groups,
        visiting: Vec::new(),
    }
    .expression(expr, None, None)
}

/// `text` with whitespace outside brackets settled: between two terms it
/// becomes `,`; next to an operator or at either end it goes. With each
/// byte's column (in characters, from 1) in `text`.
fn settle_whitespace(text: &str) -> (String, Vec<usize>) {
    let chars: Vec<char> = text.chars().collect();
    let (mut out, mut cols) = (String::with_capacity(text.len()), Vec::new());
    let mut depth = 0usize;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if depth == 0 && c.is_whitespace() {
            let end = (i..chars.len())
                .find(|&j| !chars[j].is_whitespace())
                .unwrap_or(chars.len());
            let between = |c: Option<&char>| c.is_some_and(|c| !OPS.contains(c));
            if between(i.checked_sub(1).and_then(|p| chars.get(p))) && between(chars.get(end)) {
                out.push(',');
                cols.push(i + 1);
            }
            i = end;
            continue;
        }
        match c {
            '[' => depth += 1,
            ']' => depth = depth.saturating_sub(1),
            _ => {}
        }
        out.push(c);
        cols.extend(std::iter::repeat_n(i + 1, c.len_utf8()));
        i += 1;
    }
    (out, cols)
}

impl Parser<'_> {
    /// The set `text` names: the expression, or the body of `group`; its
    /// `@name`s are looked up in `source` (`None`: the default).
    fn expression(
        &mut self,
        text: &str,
        group: Option<&str>,
        source: Option<&str>,
    ) -> Result<NodeSet, ClusterError> {
        let (settled, cols) = settle_whitespace(text);
        let syntax = |at: usize, problem| ClusterError::Syntax {
            expr: text.to_owned(),
            group: group.map(str::to_owned),
            column: cols.get(at).copied().unwrap_or(text.chars().count() + 1),
            problem,
        };
        let terms = scan(&settled).map_err(|e| match e {
            ScanError::At(at, problem) => syntax(at, problem),
            ScanError::TooLarge => ClusterError::TooLarge(self.expr.to_owned()),
        })?;
        let mut acc = NodeSet::new();
        for term in terms {
            let total = term
                .segments
                .iter()
                .try_fold(1usize, |n, s| n.checked_mul(s.len()));
            if total.is_none_or(|n| n > MAX_NODES) {
                return Err(ClusterError::TooLarge(self.expr.to_owned()));
            }
            let mut set = NodeSet::new();
            if term.group {
                let mut names = Vec::new();
                expand(&term.segments, &mut String::new(), &mut |n| {
                    names.push(n[1..].to_owned())
                });
                for name in names {
                    if name.is_empty() {
                        return Err(syntax(term.at, SyntaxProblem::EmptyGroupName));
                    }
                    set.union(&self.group(&name, source)?);
                }
            } else {
                expand(&term.segments, &mut String::new(), &mut |name| {
                    set.insert(name)
                });
            }
            match term.op {
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

    /// The hosts of `@name` (the text after `@`), read in `source`
    /// unless it names its own.
    fn group(&mut self, name: &str, source: Option<&str>) -> Result<NodeSet, ClusterError> {
        let (named, what) = groups::read(name);
        let source = named.or(source);
        let key = format!("{}:{name}", source.unwrap_or(""));
        if self.visiting.contains(&key) {
            return Err(ClusterError::GroupCycle(name.to_owned()));
        }
        let body = self.groups.resolve(source, what)?;
        if matches!(what, GroupRef::Names) {
            // Group names are nodes here, never groups again.
            let mut set = NodeSet::new();
            for n in body
                .text
                .split(',')
                .map(str::trim)
                .filter(|n| !n.is_empty())
            {
                set.union(&self.expression(n, Some(name), None)?);
            }
            return Ok(set);
        }
        self.visiting.push(key);
        let set = self.expression(&body.text, Some(name), body.source.as_deref());
        self.visiting.pop();
        set
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
