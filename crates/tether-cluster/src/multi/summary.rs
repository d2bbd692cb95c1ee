//! The line after each command of the multi-node prompt: every node's
//! outcome, nodes with the same outcome folded into one node set
//! (`web[01-47]: 0  web[48-50]: 1`). Exit codes come first, smallest
//! first, then the other outcomes in a fixed order.

use std::collections::BTreeMap;

use crate::NodeSet;

/// How a command ended on one node.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Outcome {
    /// It exited with this status.
    Exit(i32),
    /// A signal ended it (its name, `KILL`).
    Signal(String),
    /// It is waiting for input (the program's name; empty when the shell
    /// itself reads, as `read` does).
    Waiting(String),
    /// It is still running (past the prompt's wait), its output streaming.
    Running,
    /// Its shell exited, or was replaced.
    ShellExited,
    /// The line was unfinished (an open quote, a heredoc): not run.
    Incomplete,
    /// The connection dropped while it ran: whether it finished is unknown.
    Lost,
    /// The node's shell was not there (not connected).
    NotRun,
}

impl Outcome {
    fn label(&self) -> String {
        match self {
            Outcome::Exit(code) => code.to_string(),
            Outcome::Signal(name) => format!("signal {name}"),
            Outcome::Waiting(program) if program.is_empty() => "waiting for input".to_owned(),
            Outcome::Waiting(program) => format!("waiting for input ({program})"),
            Outcome::Running => "running".to_owned(),
            Outcome::ShellExited => "shell exited".to_owned(),
            Outcome::Incomplete => "incomplete input, not run".to_owned(),
            Outcome::Lost => "connection lost, outcome unknown".to_owned(),
            Outcome::NotRun => "not run (no connection)".to_owned(),
        }
    }
}

/// The summary line of `results` (node, outcome), without a newline;
/// empty when there are none.
pub fn summary(results: &[(&str, Outcome)]) -> String {
    let mut groups: BTreeMap<&Outcome, NodeSet> = BTreeMap::new();
    for (node, outcome) in results {
        groups.entry(outcome).or_default().insert(node);
    }
    let parts: Vec<String> = groups
        .into_iter()
        .map(|(outcome, nodes)| format!("{}: {}", nodes.fold(), outcome.label()))
        .collect();
    parts.join("  ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_fold_by_node_set_smallest_first() {
        let names: Vec<String> = (1..=50).map(|i| format!("web{i:02}")).collect();
        let results: Vec<(&str, Outcome)> = names
            .iter()
            .enumerate()
            .map(|(i, n)| (n.as_str(), Outcome::Exit(i32::from(i >= 47))))
            .collect();
        assert_eq!(summary(&results), "web[01-47]: 0  web[48-50]: 1");
    }

    #[test]
    fn other_outcomes_follow_the_codes() {
        let results = [
            ("n3", Outcome::Lost),
            ("n1", Outcome::Exit(2)),
            ("n5", Outcome::Signal("KILL".into())),
            ("n2", Outcome::Exit(0)),
            ("n4", Outcome::Exit(2)),
            ("n6", Outcome::Waiting("read".into())),
            ("n7", Outcome::NotRun),
        ];
        assert_eq!(
            summary(&results),
            "n2: 0  n[1,4]: 2  n5: signal KILL  n6: waiting for input (read)  n3: connection lost, outcome unknown  n7: not run (no connection)"
        );
        assert_eq!(summary(&[]), "");
    }
}
