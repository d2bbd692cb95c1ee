//! `run --host` against real sshd: a process an earlier command left
//! reading the remote session's terminal learns nothing typed there that
//! forges a mark. It may take a typed line (remote holders are not stopped
//! or seen: README, "The trust boundary"): that command then never starts
//! and the call ends at its deadline; an `exited` result is always the
//! command's own.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::remote::start;
use common::wait_for;
use tether_testkit::thief::{self, Echo};

#[test]
fn a_remote_thief_on_the_terminal_cannot_forge_an_exit() {
    if let Some(why) = thief::unavailable() {
        eprintln!("SKIPPED: {why}");
        return;
    }
    let Some(r) = start("remote-thief") else {
        return;
    };
    // The host is this machine: a directory its login user can write.
    let shared = std::env::temp_dir().join(format!("tether-rthief-{}", std::process::id()));
    std::fs::create_dir_all(&shared).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o1777)).unwrap();
    let thief = thief::write(&shared, Echo::Silent);
    let pid_file = shared.join("thief.pid");
    let start_thief = format!(
        "t=$(tty); (setsid python3 {} $t {} </dev/null >/dev/null 2>&1 &)",
        thief.display(),
        pid_file.display()
    );
    let out = r.tether(&["run", "--host", "web01", "-s", "rt", "--", &start_thief]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let pid: i32 = wait_for(30, "the thief reading the terminal", || {
        common::thief_reading(&pid_file)
    });
    for i in 1..=4 {
        let ran = shared.join(format!("ran-{i}"));
        let code = format!("touch {}; echo own-{i}; (exit {i})", ran.display());
        let (_, v) = r.json(&["run", "-s", "rt", "--timeout", "3", "--", &code]);
        match v["status"].as_str() {
            Some("exited") => {
                assert_eq!(v["exit_code"].as_i64(), Some(i64::from(i)), "{v}");
                assert!(ran.exists(), "an exited command ran: {v}");
                assert_ne!(v["cwd"], "/forged", "{v}");
                assert!(
                    v["output"].as_str().unwrap().contains(&format!("own-{i}")),
                    "{v}"
                );
            }
            // The thief took the line: the command never started.
            Some("timed_out" | "running") => assert!(!ran.exists(), "{v}"),
            _ => panic!("command {i}: {v}"),
        }
        if !common::alive(pid) {
            // A timeout's fresh shell ended it with the old one's tree.
            break;
        }
    }
    common::sigkill(pid);
    let _ = std::fs::remove_dir_all(&shared);
}
