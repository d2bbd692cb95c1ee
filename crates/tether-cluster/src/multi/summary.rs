//! The line after each command of the multi-node prompt: every node's
//! outcome, nodes with the same outcome folded into one node set
//! (`web[01-47]: 0  web[48-50]: 1`). Exit codes come first, smallest
//! first, then the other outcomes in a fixed order.

use std::collections::BTreeMap;

use crate::NodeSet;

/// How a node's link failed under its command.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Link {
    /// It ended (the connection closed).
    Lost,
    /// It stopped answering (the keepalive's bound, or a round trip that
    /// got no answer).
    Hung,
}

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
    /// The connection dropped (or hung) while it ran: whether it
    /// finished is unknown.
    Lost(Link),
    /// The link dropped (or hung) while it ran in tether on the node: it
    /// runs on there, and its end is collected when the link is back.
    Away(Link),
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
            Outcome::Lost(Link::Lost) => "connection lost, outcome unknown".to_owned(),
            Outcome::Lost(Link::Hung) => "the link hung, outcome unknown".to_owned(),
            Outcome::Away(Link::Lost) => {
                "link lost, runs on there (its end follows when the link is back)".to_owned()
            }
            Outcome::Away(Link::Hung) => {
                "the link hung, runs on there (its end follows when the link is back)".to_owned()
            }
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

/// The summary of an earlier line's outcomes, shown when they are
/// collected after it was left (a second Ctrl-C, a wait for input, a
/// client that came back): ``earlier line `CMD`: n1: 3``, `CMD` the line's
/// first line without control characters, at most 60 characters (`…`
/// when cut); `None`: a command from before whose line is not known.
pub fn earlier(line: Option<&str>, results: &[(&str, Outcome)]) -> String {
    let line = line.map_or_else(
        || "(a command from before)".to_owned(),
        |line| {
            let first = line.lines().next().unwrap_or_default();
            let kept: Vec<char> = first.chars().filter(|c| !c.is_control()).collect();
            let mut text: String = kept.iter().take(60).collect();
            if kept.len() > 60 || line.lines().nth(1).is_some() {
                text.push('…');
            }
            format!("`{text}`")
        },
    );
    format!("earlier line {line}: {}", summary(results))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_earlier_line_is_named_short() {
        let r = [("n1", Outcome::Exit(3)), ("n2", Outcome::Exit(3))];
        assert_eq!(
            earlier(Some("sleep 5; (exit 3)"), &r),
            "earlier line `sleep 5; (exit 3)`: n[1-2]: 3"
        );
        assert_eq!(
            earlier(Some("cat <<EOF\nbody\nEOF"), &r[..1]),
            "earlier line `cat <<EOF…`: n1: 3"
        );
        let long = "x".repeat(70);
        assert_eq!(
            earlier(Some(&long), &[("n1", Outcome::Running)]),
            format!("earlier line `{}…`: n1: running", "x".repeat(60))
        );
        assert_eq!(
            earlier(Some("a\x1b]52;c;e\x07b"), &r[..1]),
            "earlier line `a]52;c;eb`: n1: 3"
        );
        assert_eq!(
            earlier(None, &r[..1]),
            "earlier line (a command from before): n1: 3"
        );
    }

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
            ("n3", Outcome::Lost(Link::Lost)),
            ("n8", Outcome::Lost(Link::Hung)),
            ("n9", Outcome::Away(Link::Hung)),
            ("n1", Outcome::Exit(2)),
            ("n5", Outcome::Signal("KILL".into())),
            ("n2", Outcome::Exit(0)),
            ("n4", Outcome::Exit(2)),
            ("n6", Outcome::Waiting("read".into())),
            ("n7", Outcome::NotRun),
        ];
        assert_eq!(
            summary(&results),
            "n2: 0  n[1,4]: 2  n5: signal KILL  n6: waiting for input (read)  n3: connection lost, outcome unknown  n8: the link hung, outcome unknown  n9: the link hung, runs on there (its end follows when the link is back)  n7: not run (no connection)"
        );
        assert_eq!(summary(&[]), "");
    }
}
