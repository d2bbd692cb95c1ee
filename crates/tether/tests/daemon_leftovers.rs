//! A daemon that was killed (SIGKILL: no clean-up ran) leaves its session
//! directories behind; the next daemon to take the lock removes them, and
//! only them: a symlink, a directory of another name, mode or owner, and
//! `--once` sessions are left alone.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::Path;

use common::Daemon;

fn private_dir(path: &Path) {
    std::fs::DirBuilder::new().mode(0o700).create(path).unwrap();
    std::fs::write(path.join("keep"), "mine").unwrap();
}

#[test]
fn a_new_daemon_removes_a_killed_daemons_sessions_and_nothing_else() {
    let d = Daemon::new("leftovers");
    let out = d.run(&["run", "-s", "a", "--norc", "--", "echo $__tether_dir"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let left = std::path::PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    assert!(left.is_dir(), "{left:?}");
    let sessions = left.parent().unwrap().to_path_buf();

    // Things in the same folder that are not a dead daemon's sessions.
    let outside = d.dir.with_extension("outside");
    private_dir(&outside);
    std::os::unix::fs::symlink(&outside, sessions.join("0123456789abcdef")).unwrap();
    let other_name = sessions.join("not-a-session");
    private_dir(&other_name);
    let open_mode = sessions.join("fedcba9876543210");
    private_dir(&open_mode);
    std::fs::set_permissions(&open_mode, std::fs::Permissions::from_mode(0o755)).unwrap();
    let foreign = sessions.join("00112233445566ff");
    private_dir(&foreign);
    let root = nix::unistd::geteuid().is_root();
    if root {
        std::os::unix::fs::chown(&foreign, Some(65534), Some(65534)).unwrap();
    }

    let pid = nix::unistd::Pid::from_raw(d.pid());
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGKILL).unwrap();
    // Gone, or a zombie none reaps whose every thread has exited: a zombie
    // leader's other threads may still hold its files (the socket).
    common::wait_for(10, "the daemon to die", || {
        let state = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let threads = std::fs::read_dir(format!("/proc/{pid}/task")).map_or(0, |d| d.count());
        (state.is_empty() || (state.contains(") Z ") && threads <= 1)).then_some(())
    });
    assert!(left.is_dir(), "SIGKILL left the session directory behind");

    // The next daemon (started by the next command) removes it.
    let out = d.run(&["run", "-s", "b", "--norc", "--", "echo fresh"]);
    assert_eq!(String::from_utf8_lossy(&out.stdout), "fresh\n", "{out:?}");
    assert!(!left.exists(), "the dead daemon's session is still there");
    for kept in [&other_name, &open_mode, &foreign] {
        assert!(kept.join("keep").is_file(), "{kept:?} was removed");
    }
    assert!(
        sessions.join("0123456789abcdef").symlink_metadata().is_ok()
            && outside.join("keep").is_file(),
        "the symlink or what it points to was removed"
    );
    let log = std::fs::read_to_string(d.dir.join("daemon.log")).unwrap();
    assert!(log.contains("removed 1 session director"), "{log}");
    let _ = std::fs::remove_dir_all(&outside);
    if root {
        let _ = std::fs::remove_dir_all(&foreign);
    }
}
