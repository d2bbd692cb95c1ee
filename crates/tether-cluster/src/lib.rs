//! `tether-cluster`: hosts and clusters.
//!
//! [`NodeSet`], node-set expressions with the syntax people know from
//! ClusterShell and pdsh (`web[01-10]`, `rack[1-2]-n[1-3]`, steps, padding,
//! `,` union, `!` difference, `&` intersection, `^` symmetric difference,
//! `@group`), expanded, folded and counted the way ClusterShell's `nodeset`
//! does (no I/O: groups come from a resolver the caller passes); tether's
//! TOML [`config`]; the parallel executor ([`exec`]) and copies over SFTP
//! on the same kind of window ([`copy`]); and the [`pool`] of
//! shared connections for remote persistent shells; and the pure parts of
//! the multi-node prompt ([`multi`]: its `!` commands, the prompt, the
//! outcome summary). It knows nothing of
//! shells or output formats beyond gathering identical results.

pub mod config;
pub mod copy;
mod error;
pub mod exec;
pub mod multi;
pub mod nodeset;
pub mod pool;
mod window;

pub use error::{ClusterError, RangeProblem, SyntaxProblem};
pub use nodeset::NodeSet;
