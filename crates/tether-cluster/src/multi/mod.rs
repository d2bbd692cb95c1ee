//! The pure parts of the multi-node prompt (`tether shell`): its `!`
//! commands parsed from a typed line ([`command`]), the prompt with a state
//! indicator per node that folds into counts past a few nodes ([`prompt`]),
//! and the one-line summary of a command's outcomes folded by node set
//! ([`summary()`]). No I/O: the front-end reads lines, runs commands on the
//! nodes' persistent shells and prints what these functions make.

pub mod command;
pub mod prompt;
pub mod summary;

pub use command::{COMMANDS, DEFAULT_PREFIX, Line, Meta, parse};
pub use prompt::{NodeState, PromptStyle, render};
pub use summary::{Link, Outcome, earlier, summary};
