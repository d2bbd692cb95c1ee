//! The crate's error type.

/// Errors of node-set expressions.
#[derive(Clone, Debug, thiserror::Error, PartialEq, Eq)]
pub enum ClusterError {
    /// The node-set expression does not parse (ClusterShell's `nodeset`
    /// refuses it too).
    #[error(
        "bad node set {expr:?}{}, column {column}: {problem}",
        group_note(group)
    )]
    Syntax {
        /// The text that does not parse: the expression, or the body of
        /// the group it names.
        expr: String,
        /// The group whose body `expr` is, when it is one.
        group: Option<String>,
        /// Where in `expr`, in characters from 1.
        column: usize,
        /// What is wrong there.
        problem: SyntaxProblem,
    },
    /// A host name that is not `[user@]host[:port]`.
    #[error("bad host {name:?}: {problem}")]
    BadHost {
        /// The host name.
        name: String,
        /// What is wrong with it.
        problem: &'static str,
    },
    /// A host name or user that holds what a name cannot (a shell
    /// character, a blank, a control character, a leading `-`): refused
    /// before any use, as OpenSSH refuses it, wherever it came from (the
    /// command line, MCP, a node set, a host file, a group source).
    #[error("refusing host {name:?}: {problem}")]
    BadName {
        /// The name as given (shown escaped).
        name: String,
        /// Why.
        problem: tether_ssh::destination::NameProblem,
    },
    /// A `@group` the resolver does not know.
    #[error("unknown group @{0}: define it in the config's [groups], or check the name")]
    UnknownGroup(String),
    /// Groups that name each other in a cycle.
    #[error("group @{0} includes itself (through other groups); break the cycle in the config")]
    GroupCycle(String),
    /// The config file does not parse, or has a key tether does not know.
    #[error("{file}:{line}:{column}: {problem}")]
    Config {
        /// The file.
        file: std::path::PathBuf,
        /// Line, from 1.
        line: usize,
        /// Column, from 1.
        column: usize,
        /// What is wrong.
        problem: String,
    },
    /// The config file cannot be read.
    #[error("cannot read {file}: {reason}")]
    ConfigRead {
        /// The file.
        file: std::path::PathBuf,
        /// What the OS said.
        reason: String,
    },
    /// A local source of a copy that cannot be copied (nothing was).
    #[error("cannot copy {}: {problem}; nothing was copied", path.display())]
    CopySource {
        /// The source.
        path: std::path::PathBuf,
        /// What is wrong with it.
        problem: String,
    },
    /// A node set or cluster that names no host.
    #[error("{0:?} names no hosts")]
    NoHosts(String),
    /// A cluster the config does not define.
    #[error(
        "there is no cluster {name:?} in the config (it defines: {known}); define it under [clusters.{name}]"
    )]
    UnknownCluster {
        /// The name asked.
        name: String,
        /// The clusters the config defines.
        known: String,
    },
    /// A `@group` no source defines.
    #[error(
        "unknown group @{name}: {known}; check the name, or define it in the config's [groups] or a groups.conf source"
    )]
    UnknownGroupOf {
        /// The name asked (`source:name` when a source was named).
        name: String,
        /// What exists: the groups of the source asked, and the sources.
        known: String,
    },
    /// `@source:group` with a source neither tether's config nor
    /// ClusterShell's `groups.conf` defines.
    #[error("unknown group source {name:?}: the sources are {known}")]
    UnknownSource {
        /// The source asked.
        name: String,
        /// The sources that exist.
        known: String,
    },
    /// A group source's upcall (a command of `groups.conf`) failed; the
    /// command is as run, after `$GROUP`, `$NODE`, `$SOURCE` and
    /// `$CFGDIR` were put in.
    #[error("group source {source_name:?}: its {upcall} upcall `{command}` {failure}")]
    Upcall {
        /// The source.
        source_name: String,
        /// Which upcall.
        upcall: crate::groups::Upcall,
        /// The command line given to `/bin/sh -c`.
        command: String,
        /// What went wrong.
        failure: crate::groups::UpcallFailure,
    },
    /// ClusterShell's `groups.conf` (or a `groups.conf.d/*.conf` or
    /// `groups.d/*.yaml` file) has something tether cannot apply.
    #[error("{}: {problem}", file.display())]
    GroupsConf {
        /// The file.
        file: std::path::PathBuf,
        /// What is wrong.
        problem: String,
    },
    /// `@*` or `@source:*` of a source with no way to list every node.
    #[error(
        "@{source_name}:* asks every node of group source {source_name:?}, which has no `all` upcall and no `list` upcall (nor an `all` group): add one to it"
    )]
    NoAllNodes {
        /// The source.
        source_name: String,
    },
    /// The names of an upcall source's groups, asked of a source with no
    /// `list` upcall.
    #[error(
        "group source {source_name:?} has no `list` upcall, so its groups cannot be listed: add one to its section"
    )]
    NoListUpcall {
        /// The source.
        source_name: String,
    },
    /// A group or node name an upcall would get that holds a character a
    /// shell reads (it is put into the command's text).
    #[error(
        "group source {source_name:?}: {name:?} has a character the shell reads; names given to upcalls are letters, digits and . _ + - % = / :"
    )]
    UnsafeName {
        /// The source.
        source_name: String,
        /// The name.
        name: String,
    },
    /// A host file (`^FILE`) that cannot be read or has a bad line.
    #[error("host file {}: {reason}", path.display())]
    HostFile {
        /// The file.
        path: std::path::PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// Nodes named with `-H` that the cluster named with `-C` lacks.
    #[error(
        "{nodes} not in cluster {cluster} (its nodes: {has}); -H narrows -C to some of its nodes"
    )]
    NotInCluster {
        /// The nodes outside it.
        nodes: String,
        /// The cluster.
        cluster: String,
        /// Its nodes.
        has: String,
    },
    /// `-x` and `--filter` took away every host.
    #[error("-x/--exclude and --filter leave none of the {0} hosts: nothing was run")]
    NarrowedToNothing(usize),
    /// A line of the multi-node prompt that starts with the command
    /// prefix but is not a command tether knows, or has a wrong argument.
    #[error("{line:?}: {problem} ({prefix}help lists the commands)")]
    BadPromptCommand {
        /// The line as typed.
        line: String,
        /// The commands' prefix.
        prefix: char,
        /// What is wrong.
        problem: String,
    },
    /// A range too large to expand.
    #[error("the node set {0:?} has more than {max} nodes; narrow it", max = crate::nodeset::MAX_NODES)]
    TooLarge(String),
}

fn group_note(group: &Option<String>) -> String {
    group
        .as_ref()
        .map(|g| format!(" (the group @{g})"))
        .unwrap_or_default()
}

/// What is wrong in a node-set expression: the cases ClusterShell's
/// `nodeset` refuses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SyntaxProblem {
    /// An operator (`,` `!` `&` `^`) with nothing on one side: `n[1-6]^`,
    /// `a,&b`, `,a`.
    MissingOperand {
        /// The operator.
        op: char,
        /// True when the operand after it is missing, false for the one
        /// before it.
        after: bool,
    },
    /// A `[` that is never closed.
    UnclosedBracket,
    /// A `]` that closes nothing.
    StrayBracket,
    /// A `[` right after a `]` (`n[1-3][4]`, also `n[1-3]5[4]`, where the
    /// digits join the first range).
    AdjacentRanges,
    /// Digits right after a range with a step (`n[1-5/2]7`).
    DigitsAfterStep,
    /// A bad range list inside brackets.
    Range {
        /// The piece of the list, as written.
        range: String,
        /// The piece as it reads with the digits next to the brackets
        /// joined to its numbers (`n1[8-10]` reads `18-110`), when
        /// that is what is wrong.
        joined: Option<String>,
        /// What is wrong with it.
        problem: RangeProblem,
    },
    /// A `@` with no group name.
    EmptyGroupName,
}

/// What is wrong with one piece of a range list (`1-10/2`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RangeProblem {
    /// Nothing there (`n[]`, `n[1,]`).
    Empty,
    /// Something other than digits (`n[a-b]`, `n[1-]`).
    NotANumber,
    /// A negative index (`n[-5]`): ClusterShell makes `n-5` of it; tether
    /// refuses it.
    Negative,
    /// Ends of different widths where one is zero-padded (`01-104`,
    /// `1-010`).
    PaddingMismatch,
    /// The start is after the end (`3-1`).
    Reversed,
    /// A step that is not a positive number (`1-4/0`).
    BadStep,
    /// A step on a single index (`1/2`).
    StepWithoutRange,
    /// A number too large for tether (more than 20 digits).
    NumberTooLarge,
}

impl std::fmt::Display for SyntaxProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::MissingOperand { op, after: true } => {
                write!(f, "missing operand after {op}")
            }
            Self::MissingOperand { op, after: false } => {
                write!(f, "missing operand before {op}")
            }
            Self::UnclosedBracket => f.write_str("this '[' is never closed"),
            Self::StrayBracket => f.write_str("this ']' closes nothing"),
            Self::AdjacentRanges => {
                f.write_str("a range right after a range: put text between them")
            }
            Self::DigitsAfterStep => {
                f.write_str("digits after a range with a step: write them inside the brackets")
            }
            Self::Range {
                range,
                joined,
                problem,
            } => {
                write!(f, "{problem} in range {range:?}")?;
                if let Some(j) = joined {
                    write!(f, " (read as {j:?}, with the digits next to the brackets)")?;
                }
                f.write_str(problem.hint())
            }
            Self::EmptyGroupName => f.write_str("'@' needs a group name"),
        }
    }
}

impl RangeProblem {
    fn hint(self) -> &'static str {
        match self {
            Self::Empty => ": write an index or a range there, or remove the comma",
            Self::NotANumber => ": use numbers, as in [1-10] or [01-10]",
            Self::Negative => ": indices are 0 or more",
            Self::PaddingMismatch => ": both ends must have the same width",
            Self::Reversed => ": write the smaller number first",
            Self::BadStep => ": the step must be 1 or more",
            Self::StepWithoutRange => ": a step needs a range, as in [1-9/2]",
            Self::NumberTooLarge => ": at most 20 digits and 18446744073709551615",
        }
    }
}

impl std::fmt::Display for RangeProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Empty => "empty piece",
            Self::NotANumber => "not a number",
            Self::Negative => "negative index",
            Self::PaddingMismatch => "padding mismatch",
            Self::Reversed => "the start is after the end",
            Self::BadStep => "bad step",
            Self::StepWithoutRange => "a step without a range",
            Self::NumberTooLarge => "number too large",
        })
    }
}
