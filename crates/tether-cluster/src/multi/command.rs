//! A typed line of the multi-node prompt: a command for the active nodes,
//! or one of tether's own, which start with a prefix (`!` unless the
//! config says otherwise). The prefix typed twice sends the rest of the
//! line with one prefix (`!!` → `!` for the shell).

use crate::ClusterError;

/// The prefix of tether's commands when the config names none.
pub const DEFAULT_PREFIX: char = '!';

/// Every command: its name, its argument, what it does (one list, for the
/// parser, `!help` and completion).
pub const COMMANDS: &[(&str, &str, &str)] = &[
    (
        "list",
        "",
        "each node: state, connection, cwd, last exit code and duration",
    ),
    (
        "use",
        "EXPR",
        "make these nodes the active ones (node sets, @groups)",
    ),
    ("all", "", "make every node active"),
    (
        "add",
        "EXPR",
        "add nodes to the session (node sets, @groups), their shells started as the others'",
    ),
    (
        "drop",
        "[--keep] EXPR",
        "take nodes out of the session, closing their shells (--keep: left running apart)",
    ),
    (
        "broadcast",
        "CMD",
        "run CMD on every node, whichever are active",
    ),
    (
        "gather",
        "on|off",
        "fold identical outputs under one node set",
    ),
    (
        "send",
        "TEXT",
        "type TEXT and Enter into the nodes waiting for input (each only if it still waits)",
    ),
    (
        "status",
        "",
        "the session: nodes, active ones, connections, settings",
    ),
    (
        "attach",
        "NODE",
        "a full terminal on NODE's shell, kept apart or not (~. comes back here)",
    ),
    ("help", "", "this list"),
    ("exit", "", "leave, closing every node's shell"),
    (
        "detach",
        "",
        "leave, every node's shell kept running (tether shell --attach NAME)",
    ),
];

/// What a typed line asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Line {
    /// Nothing typed (spaces only).
    Empty,
    /// A command line for the active nodes' shells, as typed.
    Run(String),
    /// One of tether's commands.
    Meta(Meta),
}

/// tether's commands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Meta {
    /// `!list`.
    List,
    /// `!use EXPR`.
    Use(String),
    /// `!NODE` or `!EXPR`: the same as `!use`.
    Select(String),
    /// `!all`.
    All,
    /// `!add EXPR`: nodes that join the session.
    Add(String),
    /// `!drop [--keep] EXPR`: nodes that leave the session, their shells
    /// closed, or (`keep`) left running apart.
    Drop {
        /// The nodes.
        expr: String,
        /// Their shells keep running outside the session.
        keep: bool,
    },
    /// `!broadcast CMD`.
    Broadcast(String),
    /// `!gather on|off`.
    Gather(bool),
    /// `!send TEXT`.
    Send(String),
    /// `!status`.
    Status,
    /// `!attach NODE`.
    Attach(String),
    /// `!help`.
    Help,
    /// `!exit`.
    Exit,
    /// `!detach`.
    Detach,
}

fn bad(line: &str, prefix: char, problem: String) -> ClusterError {
    ClusterError::BadPromptCommand {
        line: line.to_owned(),
        prefix,
        problem,
    }
}

/// `!drop`'s argument: `--keep` (first) and the nodes.
fn drop(line: &str, prefix: char, arg: &str) -> Result<Meta, ClusterError> {
    let (keep, expr) = match arg.strip_prefix("--keep") {
        Some(rest) if rest.is_empty() || rest.starts_with(char::is_whitespace) => {
            (true, rest.trim())
        }
        _ => (false, arg),
    };
    if expr.is_empty() {
        return Err(bad(line, prefix, format!("{prefix}drop needs EXPR")));
    }
    if expr.starts_with('-') {
        return Err(bad(
            line,
            prefix,
            format!("{prefix}drop takes --keep (before the nodes) and nothing else"),
        ));
    }
    Ok(Meta::Drop {
        expr: expr.to_owned(),
        keep,
    })
}

/// Parses one typed line (without its newline) with `prefix` as the
/// commands' prefix.
pub fn parse(line: &str, prefix: char) -> Result<Line, ClusterError> {
    let text = line.trim_start();
    if text.trim().is_empty() {
        return Ok(Line::Empty);
    }
    let Some(rest) = text.strip_prefix(prefix) else {
        return Ok(Line::Run(line.to_owned()));
    };
    if rest.starts_with(prefix) {
        return Ok(Line::Run(rest.to_owned()));
    }
    let (word, arg) = match rest.split_once(char::is_whitespace) {
        Some((w, a)) => (w, a.trim()),
        None => (rest, ""),
    };
    if word.is_empty() {
        return Err(bad(
            line,
            prefix,
            format!("a command name goes right after {prefix}"),
        ));
    }
    let takes = COMMANDS.iter().find(|(name, _, _)| *name == word);
    let Some((name, wanted, _)) = takes else {
        // Not a command: a node or node set to make active.
        if !arg.is_empty() {
            return Err(bad(
                line,
                prefix,
                format!(
                    "{prefix}{word} is not a command; to run a command on some nodes, {prefix}use them first"
                ),
            ));
        }
        return Ok(Line::Meta(Meta::Select(word.to_owned())));
    };
    if wanted.is_empty() && !arg.is_empty() {
        return Err(bad(
            line,
            prefix,
            format!("{prefix}{name} takes no argument"),
        ));
    }
    if !wanted.is_empty() && arg.is_empty() {
        return Err(bad(line, prefix, format!("{prefix}{name} needs {wanted}")));
    }
    let meta = match *name {
        "list" => Meta::List,
        "use" => Meta::Use(arg.to_owned()),
        "all" => Meta::All,
        "add" => Meta::Add(arg.to_owned()),
        "drop" => drop(line, prefix, arg)?,
        "broadcast" => Meta::Broadcast(arg.to_owned()),
        "gather" => match arg {
            "on" => Meta::Gather(true),
            "off" => Meta::Gather(false),
            _ => return Err(bad(line, prefix, format!("{prefix}gather takes on or off"))),
        },
        "send" => Meta::Send(arg.to_owned()),
        "status" => Meta::Status,
        "attach" if arg.contains(char::is_whitespace) => {
            return Err(bad(line, prefix, format!("{prefix}attach takes one node")));
        }
        "attach" => Meta::Attach(arg.to_owned()),
        "help" => Meta::Help,
        "exit" => Meta::Exit,
        _ => Meta::Detach,
    };
    Ok(Line::Meta(meta))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn p(line: &str) -> Line {
        parse(line, '!').unwrap()
    }

    fn err(line: &str) -> String {
        parse(line, '!').unwrap_err().to_string()
    }

    #[test]
    fn lines_without_the_prefix_run_as_typed() {
        assert_eq!(p("ls -l  /srv "), Line::Run("ls -l  /srv ".into()));
        assert_eq!(p("   "), Line::Empty);
        assert_eq!(p(""), Line::Empty);
        assert_eq!(p("echo a!b"), Line::Run("echo a!b".into()));
        // The prefix twice: the shell gets one.
        assert_eq!(p("!!"), Line::Run("!".into()));
        assert_eq!(p("!!ls"), Line::Run("!ls".into()));
    }

    #[test]
    fn each_command_and_its_argument() {
        assert_eq!(p("!list"), Line::Meta(Meta::List));
        assert_eq!(p("  !all "), Line::Meta(Meta::All));
        assert_eq!(
            p("!use web[01-03],@db"),
            Line::Meta(Meta::Use("web[01-03],@db".into()))
        );
        assert_eq!(p("!web02"), Line::Meta(Meta::Select("web02".into())));
        assert_eq!(
            p("!web[1-3]!web2"),
            Line::Meta(Meta::Select("web[1-3]!web2".into()))
        );
        assert_eq!(
            p("!broadcast  echo  a  b "),
            Line::Meta(Meta::Broadcast("echo  a  b".into()))
        );
        assert_eq!(p("!gather on"), Line::Meta(Meta::Gather(true)));
        assert_eq!(p("!gather off"), Line::Meta(Meta::Gather(false)));
        assert_eq!(p("!send y"), Line::Meta(Meta::Send("y".into())));
        assert_eq!(p("!attach web03"), Line::Meta(Meta::Attach("web03".into())));
        assert_eq!(
            p("!add web[04-05],@db"),
            Line::Meta(Meta::Add("web[04-05],@db".into()))
        );
        assert_eq!(
            p("!drop web02"),
            Line::Meta(Meta::Drop {
                expr: "web02".into(),
                keep: false
            })
        );
        assert_eq!(
            p("!drop  --keep  web[1-2]"),
            Line::Meta(Meta::Drop {
                expr: "web[1-2]".into(),
                keep: true
            })
        );
        for (line, meta) in [
            ("!status", Meta::Status),
            ("!help", Meta::Help),
            ("!exit", Meta::Exit),
            ("!detach", Meta::Detach),
        ] {
            assert_eq!(p(line), Line::Meta(meta));
        }
        // Another prefix.
        assert_eq!(parse("%list", '%').unwrap(), Line::Meta(Meta::List));
        assert_eq!(parse("!list", '%').unwrap(), Line::Run("!list".into()));
    }

    #[test]
    fn mistakes_say_what_is_wrong() {
        assert!(err("!").contains("a command name goes right after !"));
        assert!(err("! list").contains("a command name"));
        assert!(err("!list web01").contains("!list takes no argument"));
        assert!(err("!use").contains("!use needs EXPR"));
        assert!(err("!broadcast").contains("!broadcast needs CMD"));
        assert!(err("!gather maybe").contains("on or off"));
        assert!(err("!attach a b").contains("one node"));
        assert!(err("!add").contains("!add needs EXPR"));
        assert!(err("!drop").contains("!drop needs [--keep] EXPR"));
        assert!(err("!drop --keep").contains("!drop needs EXPR"));
        assert!(err("!drop --force web1").contains("takes --keep"));
        assert!(err("!drop --keepers").contains("takes --keep"));
        assert!(err("!web01 uptime").contains("!web01 is not a command"));
        assert!(err("!use").contains("!help lists the commands"));
    }

    #[test]
    fn every_command_is_listed_once() {
        let mut names: Vec<&str> = COMMANDS.iter().map(|c| c.0).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), COMMANDS.len());
    }
}
