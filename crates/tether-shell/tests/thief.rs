//! A process left behind by an earlier command that reads the session's
//! terminal (`setsid python3 thief.py $(tty) &`) learns nothing it can
//! forge a mark with, cannot take the next command's line, and is named in
//! the next results until it exits: real bash, zsh, dash and busybox sh
//! sessions on a real PTY (a shell or python3 not installed is skipped with
//! a printed reason).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tether_shell::dialect::{Bash, Dialect, Posix, Zsh};
use tether_shell::{RunOptions, RunResult, Session, Status};
use tether_testkit::thief::{self, Echo};

mod common;

/// A private scratch directory for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tether-thief-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn python3() -> bool {
    let why = thief::unavailable();
    if let Some(why) = &why {
        eprintln!("SKIPPED: {why}");
    }
    why.is_none()
}

/// Waits (with a deadline) until the thief has recorded its pid and is
/// blocked reading the terminal.
fn thief_pid(pid_file: &Path) -> i32 {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Ok(text) = std::fs::read_to_string(pid_file) {
            let pid: i32 = text.trim().parse().unwrap();
            let reading = tether_pty::procfs::syscall(pid, pid).is_some_and(|c| c.nr == 0);
            if reading {
                return pid;
            }
        }
        assert!(Instant::now() < deadline, "the thief never started reading");
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn alive(pid: i32) -> bool {
    tether_pty::procfs::stat(pid).is_some_and(|s| s.state != 'Z')
}

async fn run(s: &mut Session, code: &str) -> RunResult {
    let opts = RunOptions {
        timeout: Duration::from_secs(10),
        ..RunOptions::default()
    };
    s.run(code, &opts).await.unwrap()
}

/// The thief is started by one command (in a subshell: busybox ash run
/// with `setsid prog &` as a job of its own sometimes reads end of file
/// and exits, on 032fa99 too); each of the next commands runs
/// (its file appears), reports its own exit code and output, and its
/// result names the thief; once the thief is gone, no result names it.
async fn thief_cannot_forge(mut s: Session, dir: &Path) {
    let thief = thief::write(dir, Echo::Quoted);
    let pid_file = dir.join("thief.pid");
    let r = run(
        &mut s,
        &format!(
            "t=$(tty); (setsid python3 {} $t {} </dev/null >/dev/null 2>&1 &)",
            thief.display(),
            pid_file.display()
        ),
    )
    .await;
    assert_eq!(r.status, Status::Exited, "{r:?}");
    let pid = thief_pid(&pid_file);
    for i in 1..=8 {
        let ran = dir.join(format!("ran-{i}"));
        let r = run(
            &mut s,
            &format!("touch {}; echo own-{i}; (exit {i})", ran.display()),
        )
        .await;
        assert!(ran.exists(), "command {i} never ran: {r:?}");
        assert_eq!(
            (r.status, r.exit_code),
            (Status::Exited, Some(i)),
            "command {i}: {r:?}"
        );
        assert!(r.output.contains(&format!("own-{i}\n")), "{r:?}");
        assert_ne!(r.cwd.as_deref(), Some(Path::new("/forged")), "{r:?}");
        let named: Vec<(i32, &str)> = r
            .terminal_holders
            .iter()
            .map(|h| (h.pid, h.program.as_str()))
            .collect();
        assert!(
            named.contains(&(pid, "python3")),
            "the thief is named: {r:?}"
        );
        // Whether it can type into the session by TIOCSTI: the kernel
        // allows it, and (not being in the session) it is privileged.
        let can_type =
            tether_pty::procfs::tiocsti_allowed() && tether_pty::procfs::has_sys_admin(pid);
        let thief = r.terminal_holders.iter().find(|h| h.pid == pid).unwrap();
        assert_eq!(thief.can_type, can_type, "{r:?}");
        assert!(alive(pid), "the thief still runs");
    }
    // Input sent to a program waiting for it reaches that program.
    let r = run(&mut s, "read -r answer; echo \"got:$answer\"").await;
    assert_eq!(r.status, Status::WaitingForInput, "{r:?}");
    let r = s
        .send(Some("hunter2\n"), &[], Duration::from_secs(10))
        .await
        .unwrap();
    assert_eq!((r.status, r.exit_code), (Status::Exited, Some(0)), "{r:?}");
    assert!(r.output.contains("got:hunter2\n"), "{r:?}");
    assert!(!r.output.contains("thief read"), "{r:?}");
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while alive(pid) {
        assert!(Instant::now() < deadline, "the thief did not die");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let r = run(&mut s, "echo after").await;
    assert_eq!((r.status, r.output.as_str()), (Status::Exited, "after\n"));
    assert!(r.terminal_holders.is_empty(), "{r:?}");
}

async fn each(dialect: Arc<dyn Dialect>, program: &str, name: &str) {
    if !python3() {
        return;
    }
    let Some(s) = common::session(dialect, program).await else {
        return;
    };
    let dir = scratch(name);
    thief_cannot_forge(s, &dir).await;
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn bash_thief_cannot_forge_or_steal() {
    each(Arc::new(Bash), "bash", "bash").await;
}

#[tokio::test]
async fn zsh_thief_cannot_forge_or_steal() {
    each(Arc::new(Zsh), "zsh", "zsh").await;
}

#[tokio::test]
async fn dash_thief_cannot_forge_or_steal() {
    each(Arc::new(Posix::dash()), "dash", "dash").await;
}

#[tokio::test]
async fn busybox_thief_cannot_forge_or_steal() {
    each(Arc::new(Posix::busybox()), "busybox", "busybox").await;
}

/// A background job keeps the terminal (its descriptors, and the terminal
/// as its controlling one): it is named, and can type into the session
/// wherever the kernel allows TIOCSTI; once it ends, no result names it.
#[tokio::test]
async fn a_background_job_on_the_terminal_is_named() {
    let Some(mut s) = common::session(Arc::new(Bash), "bash").await else {
        return;
    };
    let r = run(&mut s, "sleep 60 & echo $!").await;
    let pid: i32 = r.output.trim().parse().unwrap();
    let r = run(&mut s, "echo next").await;
    let job = r.terminal_holders.iter().find(|h| h.pid == pid);
    let job = job.unwrap_or_else(|| panic!("the job is named: {r:?}"));
    assert_eq!(
        (job.program.as_str(), job.can_type),
        ("sleep", tether_pty::procfs::tiocsti_allowed()),
        "{r:?}"
    );
    let r = run(&mut s, "kill %1; wait; echo gone").await;
    assert!(r.output.ends_with("gone\n"), "{r:?}");
    assert!(r.terminal_holders.is_empty(), "{r:?}");
}
