//! Group sources as ClusterShell defines them (issue 28): the sources of
//! ClusterShell's `groups.conf` (`conf.rs`: its sections' upcalls,
//! `groups.conf.d`, `groups.d/*.yaml` in `yaml.rs`, the default source)
//! beside tether's own `[groups]`, which is the source named `tether`.
//!
//! How a name is looked up, so that both kinds of users get what they
//! expect: `@name` is tether's `[groups]` entry when the config has one,
//! else the default source's group (as `nodeset` resolves it);
//! `@source:name` is that source's only (`@tether:name` tether's);
//! `@*` is every node of the default source (`clush -a`), or of tether's
//! groups when ClusterShell defines none; `@@source` is the names of a
//! source's groups. The groups a group names are looked up in its own
//! source, as in ClusterShell (those of tether's groups as a bare name
//! is, so `[groups]` may name the default source's groups).
//!
//! An upcall runs at most once per run for each source and argument
//! (`cache.rs`; kept for the section's `cache_time` in a long-lived
//! process), within `[group_sources] timeout` (`upcall.rs`). Nothing is
//! read or run until a group needs it: a config whose `[groups]` has the
//! name never reads `groups.conf`. Unlike ClusterShell, an unknown group
//! of tether's or a YAML source is an error naming those that exist (not
//! an empty set), and so is one an upcall source's `list` does not have
//! when its `map` prints nothing.

mod cache;
mod conf;
mod list;
mod resolve;
mod upcall;
mod yaml;

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

pub use list::GroupRow;
pub use resolve::Resolver;
pub use upcall::{Upcall, UpcallFailure};

use crate::error::ClusterError;

/// The name of tether's own `[groups]` as a source.
pub const TETHER_SOURCE: &str = "tether";

/// How long an upcall may run when the config does not say.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// ClusterShell's group sources, read when first needed.
#[derive(Clone)]
pub struct GroupSources {
    inner: Arc<Inner>,
}

struct Inner {
    /// The `groups.conf` files to read (those that exist).
    files: Vec<PathBuf>,
    /// The most an upcall may run.
    timeout: Duration,
    loaded: OnceLock<Result<conf::Loaded, ClusterError>>,
    cache: cache::Cache,
}

impl GroupSources {
    /// No source but tether's own.
    pub fn none() -> Self {
        Self::from_files(Vec::new(), DEFAULT_TIMEOUT)
    }

    /// The sources of the `groups.conf` files ClusterShell reads
    /// (`/etc/clustershell`, `~/.local/etc/clustershell`,
    /// `$XDG_CONFIG_HOME/clustershell`, `$CLUSTERSHELL_CFGDIR`), each
    /// upcall given at most `timeout`.
    pub fn clustershell(timeout: Duration) -> Self {
        Self::from_files(conf::candidates(), timeout)
    }

    /// The sources of `files` (in ClusterShell's order; those missing are
    /// skipped).
    pub fn from_files(files: Vec<PathBuf>, timeout: Duration) -> Self {
        Self {
            inner: Arc::new(Inner {
                files,
                timeout,
                loaded: OnceLock::new(),
                cache: cache::Cache::default(),
            }),
        }
    }

    fn loaded(&self) -> Result<&conf::Loaded, ClusterError> {
        self.inner
            .loaded
            .get_or_init(|| conf::load(&self.inner.files))
            .as_ref()
            .map_err(Clone::clone)
    }
}

impl Default for GroupSources {
    fn default() -> Self {
        Self::none()
    }
}

impl std::fmt::Debug for GroupSources {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GroupSources")
            .field("files", &self.inner.files)
            .field("timeout", &self.inner.timeout)
            .finish_non_exhaustive()
    }
}

/// Two are equal when they read the same files with the same limit.
impl PartialEq for GroupSources {
    fn eq(&self, other: &Self) -> bool {
        self.inner.files == other.inner.files && self.inner.timeout == other.inner.timeout
    }
}

impl Eq for GroupSources {}
