//! A command whose line the shell receives but does not run as typed (a
//! disabled `.`, an alias over `builtin` or `.`) is an error saying it did
//! not run, never `exited` with a stale `$?`; a restart brings the session
//! back. Real bash, zsh, dash and busybox sh (a shell not installed is
//! skipped with a printed reason).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use tether_shell::dialect::{Bash, Posix, Zsh};
use tether_shell::{RunOptions, Session, ShellError, Status};

mod common;
use common::session;

/// `breaker` leaves the shell unable to run the wrapper as typed; the next
/// command must be refused as not run (its `echo` never printed, its status
/// never reported), and after a restart the same command runs.
async fn refused_then_restarted(mut s: Session, breaker: &str) {
    let opts = RunOptions::default();
    let r = s.run(&format!("cd /tmp; {breaker}"), &opts).await.unwrap();
    assert_eq!(r.status, Status::Exited, "{r:?}");
    let e = s.run("echo ran-it; (exit 7)", &opts).await;
    match e {
        Err(ShellError::NotDelivered { output, .. }) => {
            assert!(!output.contains("ran-it"), "{output:?}")
        }
        other => panic!("{breaker}: expected NotDelivered, got {other:?}"),
    }
    let msg = s
        .run("echo ran-it; (exit 7)", &opts)
        .await
        .unwrap_err()
        .to_string();
    assert!(
        msg.contains("did not run") && msg.contains("tether reset"),
        "{msg}"
    );
    s.restart().await.unwrap();
    let r = s.run("echo ran-it; (exit 7)", &opts).await.unwrap();
    assert_eq!(
        (r.status, r.exit_code, r.output.as_str()),
        (Status::Exited, Some(7), "ran-it\n"),
        "{breaker}: {r:?}"
    );
    assert_eq!(r.cwd.as_deref(), Some(std::path::Path::new("/tmp")));
    s.shut_down().await;
}

#[tokio::test]
async fn bash_with_dot_disabled() {
    if let Some(s) = session(Arc::new(Bash), "bash").await {
        refused_then_restarted(s, "enable -n . source").await;
    }
}

#[tokio::test]
async fn bash_with_builtin_aliased() {
    if let Some(s) = session(Arc::new(Bash), "bash").await {
        refused_then_restarted(s, "alias builtin=:").await;
    }
}

#[tokio::test]
async fn zsh_with_dot_disabled() {
    if let Some(s) = session(Arc::new(Zsh), "zsh").await {
        refused_then_restarted(s, "disable .").await;
    }
}

#[tokio::test]
async fn dash_with_dot_aliased() {
    if let Some(s) = session(Arc::new(Posix::dash()), "dash").await {
        refused_then_restarted(s, "alias .=echo").await;
    }
}

#[tokio::test]
async fn busybox_with_dot_aliased() {
    if let Some(s) = session(Arc::new(Posix::busybox()), "busybox").await {
        refused_then_restarted(s, "alias .=echo").await;
    }
}
