//! `tether-cluster`: hosts and clusters.
//!
//! Today: [`NodeSet`], node-set expressions with the syntax people know
//! from ClusterShell and pdsh (`web[01-10]`, `rack[1-2]-n[1-3]`, steps,
//! padding, `,` union, `!` difference, `&` intersection, `^` symmetric
//! difference, `@group`), expanded, folded and counted the way
//! ClusterShell's `nodeset` does. It does no I/O: groups come from a
//! resolver the caller passes. The config files and the parallel executor
//! come with the SSH layer.

pub mod config;
mod error;
pub mod exec;
pub mod nodeset;
pub mod pool;

pub use error::ClusterError;
pub use nodeset::NodeSet;
