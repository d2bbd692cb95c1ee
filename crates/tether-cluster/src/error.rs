//! The crate's error type.

/// Errors of node-set expressions.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ClusterError {
    /// The expression does not parse.
    #[error("bad node set {expr:?}: {problem}")]
    Syntax {
        /// The whole expression.
        expr: String,
        /// What is wrong there, and where.
        problem: String,
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
    /// A cluster the config does not define.
    #[error("there is no cluster {0:?} in the config; define it under [clusters.{0}]")]
    UnknownCluster(String),
    /// A range too large to expand.
    #[error("the node set {0:?} has more than {max} nodes; narrow it", max = crate::nodeset::MAX_NODES)]
    TooLarge(String),
}
