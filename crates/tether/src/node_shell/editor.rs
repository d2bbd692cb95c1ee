//! The line editor of `tether shell`: rustyline (emacs keys, Ctrl-R
//! search, a history file per named session), with completion of the `!`
//! commands and of node names after them.

use rustyline::completion::Completer;
use rustyline::highlight::Highlighter;
use rustyline::hint::Hinter;
use rustyline::validate::Validator;
use rustyline::{Context, Helper};
use tether_cluster::multi::COMMANDS;

/// Completes `!command` and node names.
pub struct Complete {
    /// The commands' prefix.
    pub prefix: char,
    /// The session's nodes.
    pub nodes: Vec<String>,
}

impl Completer for Complete {
    type Candidate = String;

    fn complete(
        &self,
        line: &str,
        pos: usize,
        _ctx: &Context<'_>,
    ) -> rustyline::Result<(usize, Vec<String>)> {
        let before = &line[..pos];
        let Some(rest) = before.trim_start().strip_prefix(self.prefix) else {
            return Ok((pos, Vec::new()));
        };
        let start = pos - rest.len();
        if !rest.contains(char::is_whitespace) {
            // The command, or a node to select.
            let names = COMMANDS
                .iter()
                .map(|c| c.0)
                .chain(self.nodes.iter().map(String::as_str))
                .filter(|n| n.starts_with(rest))
                .map(str::to_owned)
                .collect();
            return Ok((start, names));
        }
        let word_start = before
            .rfind(|c: char| c.is_whitespace() || c == ',')
            .map_or(0, |i| i + 1);
        let word = &before[word_start..];
        let names = self
            .nodes
            .iter()
            .filter(|n| n.starts_with(word))
            .cloned()
            .collect();
        Ok((word_start, names))
    }
}

impl Hinter for Complete {
    type Hint = String;
}

impl Highlighter for Complete {}

impl Validator for Complete {}

impl Helper for Complete {}
