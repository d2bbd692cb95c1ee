//! Process trees that cannot escape: `setsid` with every descriptor
//! redirected, and a double-forked daemon, leave the session, the PTY and
//! the parentage; a restart and a close end them anyway (the session's
//! marker in their environment), and so does a later sweep for a session
//! whose owner was killed.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use tether_shell::{RunOptions, Session, SessionOptions, Status};

fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| !s.contains(") Z "))
}

fn wait_gone(pids: &[i32], what: &str) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while pids.iter().any(|p| alive(*p)) {
        assert!(Instant::now() < deadline, "{what}: {pids:?} still alive");
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tether-escapes-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Starts the two escapes and returns their pids once both run.
async fn escape(s: &mut Session, dir: &Path) -> Vec<i32> {
    let (a, b) = (dir.join("setsid.pid"), dir.join("daemon.pid"));
    let code = format!(
        "(setsid sh -c 'echo $$ > {a}; exec sleep 300' </dev/null >/dev/null 2>&1 &)\n\
         sh -c 'sh -c \"echo \\$\\$ > {b}; exec sleep 300\" </dev/null >/dev/null 2>&1 & exit 0' &\n\
         wait",
        a = a.display(),
        b = b.display()
    );
    let r = s.run(&code, &RunOptions::default()).await.unwrap();
    assert_eq!(r.status, Status::Exited, "{r:?}");
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let pids: Vec<i32> = [&a, &b]
            .iter()
            .filter_map(|p| std::fs::read_to_string(p).ok()?.trim().parse().ok())
            .collect();
        if pids.len() == 2 && pids.iter().all(|p| alive(*p)) {
            return pids;
        }
        assert!(Instant::now() < deadline, "the escapes did not start");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

fn options() -> SessionOptions {
    SessionOptions {
        run_rc_files: false,
        ..SessionOptions::default()
    }
}

#[tokio::test]
async fn close_and_restart_end_what_left_the_session() {
    let dir = scratch("close");
    let mut s = Session::start(options()).await.unwrap();
    let pids = escape(&mut s, &dir).await;
    s.restart().await.unwrap();
    wait_gone(&pids, "after a restart");
    let pids = escape(&mut s, &dir).await;
    s.shut_down().await;
    drop(s);
    wait_gone(&pids, "after close");
}

#[tokio::test]
async fn a_sweep_ends_what_a_killed_owner_left() {
    let dir = scratch("sweep");
    let mut s = Session::start(options()).await.unwrap();
    let pids = escape(&mut s, &dir).await;
    let id = s.dir().file_name().unwrap().to_str().unwrap().to_owned();
    // The owner dies without ending anything (as a SIGKILLed daemon):
    // the session is leaked, its escapes live on.
    std::mem::forget(s);
    assert!(pids.iter().all(|p| alive(*p)));
    tether_shell::end_leftovers(&id);
    wait_gone(&pids, "after the sweep");
}
