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
//!
//! In more detail:
//! - [`nodeset`]: the grammar (`parse.rs`), ClusterShell's index order and
//!   range folding (`index.rs`) and its multi-dimensional fold (`fold.rs`,
//!   the same greedy merge as `RangeSetND`, so `-f` prints what
//!   `nodeset -f` prints).
//! - [`groups`]: group sources as ClusterShell defines them: its
//!   `groups.conf` (with `groups.conf.d` and `groups.d/*.yaml`), upcalls
//!   run once per run within a time limit, and tether's `[groups]` as the
//!   source `tether`; the resolver the grammar asks.
//! - [`config`]: defaults, groups, clusters, and the `[shell]` settings
//!   (`ShellSettings`, per cluster over the top ones); [`select`]: naming
//!   the hosts as pdsh and ClusterShell users type it (host files, `-x`,
//!   `--filter`, a cluster narrowed by `-H`).
//! - `window.rs`: the sliding window `exec` and `copy` both run in:
//!   `fanout` permits taken in the hosts' order by one feeder, the cancel
//!   (a stop, or fail-fast set by the failed host before its permit goes),
//!   events to the caller, results in the hosts' order.
//! - [`exec`]: `run` with progress events; `resolve` (where and how to
//!   reach a host: the host spec, the front-end's `Overrides`, ssh_config,
//!   defaults; `RemoteCommand` is refused unless
//!   `Overrides::runs_remote_command`); `connect` (given up on a cancel
//!   before anything is sent); `gather` for identical results; kept
//!   outputs (`kept.rs`) and one shared `--stdin` (`input.rs`); one host
//!   stopped alone while the others go on (`stops.rs`, `HostStops`, for
//!   `tether exec`'s live view); a host's failure is a typed `HostError`.
//! - [`pool`]: `HostPool`, one shared SSH connection per host and route
//!   (the caller's resolved `tether_ssh::Route`, used as given), a
//!   `RemoteHost` per user of it. `far/` is its far side: tether's binary
//!   found on the host or copied there (checked, never repaired), the
//!   host's own daemon started there and reached through the connection.
//! - [`copy`]: `tether cp` on the executor's resolution and window:
//!   `plan.rs` walks a push's local sources once; `push.rs`/`pull.rs` copy
//!   with one host, every file under a temporary name renamed into place,
//!   a pull's listings checked name by name (`glob.rs` for patterns);
//!   `tasks.rs` runs a few files at once per host; `names.rs` holds remote
//!   paths, temporary names, and what to do with a name that is not UTF-8
//!   (a push refuses it before any host, a pull per host; never copied
//!   under a changed name).
//! - [`multi`]: the `!` command parser over one `COMMANDS` list, the prompt
//!   renderer that folds past a threshold, the outcome summary folded by
//!   node set.

pub mod config;
pub mod copy;
mod error;
pub mod exec;
mod far;
pub mod groups;
pub mod multi;
pub mod nodeset;
pub mod pool;
pub mod select;
mod window;

pub use error::{ClusterError, RangeProblem, SyntaxProblem};
pub use nodeset::NodeSet;
