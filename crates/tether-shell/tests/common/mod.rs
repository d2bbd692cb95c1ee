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

/// A bash session without rc files, with `TERM=xterm-256color` (what the
/// screen and waiting suites need for their programs' queries).
pub async fn xterm_session() -> Session {
    let opts = SessionOptions {
        run_rc_files: false,
        env_overrides: vec![("TERM".into(), "xterm-256color".into())],
        ..SessionOptions::default()
    };
    Session::start(opts).await.unwrap()
}

/// Run options with a timeout of `secs` seconds.
pub fn within(secs: u64) -> tether_shell::RunOptions {
    tether_shell::RunOptions {
        timeout: std::time::Duration::from_secs(secs),
        ..tether_shell::RunOptions::default()
    }
}
