//! What the real-shell suites share: a session of a dialect whose program
//! may not be installed here.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use tether_shell::dialect::Dialect;
use tether_shell::{Session, SessionOptions};

/// A session of `dialect` without rc files, or `None` (with a printed
/// reason) when its program is not installed.
pub async fn session(dialect: Arc<dyn Dialect>, program: &str) -> Option<Session> {
    let found = std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(program).is_file()));
    if !found {
        eprintln!("SKIPPED: {program} is not installed (scripts/test installs it as root)");
        return None;
    }
    let opts = SessionOptions {
        dialect,
        run_rc_files: false,
        ..SessionOptions::default()
    };
    Some(Session::start(opts).await.unwrap())
}
