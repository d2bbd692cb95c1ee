//! Output of many nodes on one terminal: each line prefixed with its node
//! (a colour per node unless `NO_COLOR`), whole lines only, so two nodes
//! never interleave inside a line; or, gathered, identical outputs folded
//! under one node set at the end (as `clush -b`). On a terminal, the
//! nodes' text has its control characters shown escaped, as `tether
//! exec` shows a host's (`tether_term::printable`); on a pipe it is exact.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::io::{IsTerminal, Write};

use tether_cluster::NodeSet;

const PALETTE: [&str; 6] = [
    "\x1b[36m", "\x1b[33m", "\x1b[35m", "\x1b[32m", "\x1b[34m", "\x1b[31m",
];

/// Prints the nodes' output for one line.
pub struct Printer {
    names: Vec<String>,
    width: usize,
    color: bool,
    gather: bool,
    partial: Vec<String>,
    whole: Vec<String>,
    since: Option<std::time::Instant>,
    /// stdout is a terminal: the nodes' text is shown escaped.
    escape: bool,
}

impl Printer {
    /// A printer for nodes `names` (indexes as in events); `since`: lines
    /// start with the time since then.
    pub fn new(
        names: &[String],
        color: bool,
        gather: bool,
        since: Option<std::time::Instant>,
    ) -> Printer {
        Printer {
            width: names
                .iter()
                .map(|n| tether_term::printable::escaped(n, false).len())
                .max()
                .unwrap_or(0),
            names: names.to_vec(),
            color,
            gather,
            partial: vec![String::new(); names.len()],
            whole: vec![String::new(); names.len()],
            since,
            escape: std::io::stdout().is_terminal(),
        }
    }

    /// A node's `text` as stdout gets it: escaped on a terminal (newlines
    /// and tabs kept).
    fn shown<'a>(&self, text: &'a str) -> Cow<'a, str> {
        if self.escape {
            tether_term::printable::escaped(text, true)
        } else {
            Cow::Borrowed(text)
        }
    }

    /// Output of node `i`; `at`: when it came, since its command was typed
    /// (the lines it finishes are stamped so; else with the time now).
    pub fn output(&mut self, i: usize, text: &str, at: Option<std::time::Duration>) {
        if self.gather {
            self.whole[i].push_str(text);
            return;
        }
        self.partial[i].push_str(text);
        let Some(cut) = self.partial[i].rfind('\n') else {
            return;
        };
        let lines: String = self.partial[i].drain(..=cut).collect();
        let prefix = self.prefix(i, at);
        let mut out = std::io::stdout().lock();
        for line in lines.lines() {
            let _ = writeln!(out, "{prefix}{}", self.shown(line));
        }
        let _ = out.flush();
    }

    /// What tether says of node `i` (not its output), on stderr, after
    /// the node's partial line.
    pub fn notice(&mut self, i: usize, text: &str) {
        let _ = std::io::stdout().flush();
        let name = tether_term::printable::escaped(&self.names[i], false);
        eprintln!("tether: {name}: {text}");
    }

    /// Node `i` is done: its last partial line is printed.
    pub fn done(&mut self, i: usize) {
        if self.gather || self.partial[i].is_empty() {
            return;
        }
        let rest = std::mem::take(&mut self.partial[i]);
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{}{}", self.prefix(i, None), self.shown(&rest));
        let _ = out.flush();
    }

    /// Gathered: every node's output, identical ones folded, in the
    /// order of their first node.
    pub fn finish(&mut self) {
        if !self.gather {
            return;
        }
        let mut order: Vec<&str> = Vec::new();
        let mut groups: BTreeMap<&str, NodeSet> = BTreeMap::new();
        for (name, text) in self.names.iter().zip(&self.whole) {
            if !groups.contains_key(text.as_str()) {
                order.push(text);
            }
            groups.entry(text).or_default().insert(name);
        }
        let mut out = std::io::stdout().lock();
        for text in order {
            let Some(nodes) = groups.get(text) else {
                continue;
            };
            if text.is_empty() {
                continue;
            }
            let header = format!(
                "{} ({})",
                tether_term::printable::escaped(&nodes.fold(), false),
                nodes.len()
            );
            let rule = "-".repeat(header.chars().count().min(72));
            let _ = writeln!(out, "{rule}\n{header}\n{rule}");
            let _ = write!(out, "{}", self.shown(text));
            if !text.ends_with('\n') {
                let _ = writeln!(out);
            }
        }
        let _ = out.flush();
        for w in &mut self.whole {
            w.clear();
        }
    }

    fn prefix(&self, i: usize, at: Option<std::time::Duration>) -> String {
        let name = tether_term::printable::escaped(&self.names[i], false);
        let time = self
            .since
            .map(|t| at.unwrap_or_else(|| t.elapsed()))
            .map(|at| format!("[+{:.2}s] ", at.as_secs_f64()))
            .unwrap_or_default();
        if self.color {
            let c = PALETTE[i % PALETTE.len()];
            format!("{time}{c}{name:<w$}\x1b[0m: ", w = self.width)
        } else {
            format!("{time}{name:<w$}: ", w = self.width)
        }
    }
}
