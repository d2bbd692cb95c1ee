//! `run --host` against real sshd: a process an earlier command left
//! reading the remote session's terminal learns nothing typed there that
//! forges a mark. It may take a typed line (remote holders are not
//! stopped: README, "The trust boundary"): that command then never starts
//! and the call ends at its deadline; an `exited` result is always the
//! command's own. A holder is named in the results (the host's shell looks
//! in `/proc` at each end mark) until it exits.

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

/// A process an earlier command left holding the remote terminal is named
/// in the next results (pid, program, whether it can type by TIOCSTI), as
/// the host's shell saw it in its `/proc` at the end mark, and no longer
/// once it is gone.
#[test]
fn a_remote_holder_of_the_terminal_is_named_until_it_exits() {
    let Some(r) = start("remote-holder") else {
        return;
    };
    for shell in ["bash", "zsh", "dash", "busybox"] {
        holder_named_until_it_exits(&r, shell);
    }
}

fn holder_named_until_it_exits(r: &common::remote::Remote, shell: &str) {
    let session = format!("rh-{shell}");
    let s = session.as_str();
    let shared =
        std::env::temp_dir().join(format!("tether-rholder-{}-{shell}", std::process::id()));
    std::fs::create_dir_all(&shared).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o1777)).unwrap();
    let pid_file = shared.join("holder.pid");
    // Out of the shell's session (setsid, in a subshell: busybox ash may
    // exit after a setsid job): reading the terminal, not
    // typing into it (it is not its controlling terminal).
    let start_holder = format!(
        "t=$(tty); (setsid sh -c 'echo $$ > {}; exec sleep 3000' <$t >/dev/null 2>&1 &)",
        pid_file.display()
    );
    let (code, v) = r.json(&[
        "run",
        "--host",
        "web01",
        "--shell",
        shell,
        "-s",
        s,
        "--",
        &start_holder,
    ]);
    assert_eq!(code, 0, "{v}");
    let pid: i32 = wait_for(30, "the holder's pid", || {
        std::fs::read_to_string(&pid_file).ok()?.trim().parse().ok()
    });
    wait_for(30, "the holder to run sleep", || {
        std::fs::read_to_string(format!("/proc/{pid}/comm"))
            .ok()
            .filter(|c| c.trim() == "sleep")
    });
    for _ in 0..2 {
        let (code, v) = r.json(&["run", "-s", s, "--", "true"]);
        assert_eq!(code, 0, "{v}");
        let holders = v["terminal_holders"].as_array().unwrap();
        let h = holders
            .iter()
            .find(|h| h["pid"] == pid)
            .unwrap_or_else(|| panic!("{shell}: the holder {pid} is not named: {v}"));
        assert_eq!(h["program"], "sleep", "{v}");
        assert_eq!(h["can_type"], false, "{v}");
    }
    // A job of the shell's: the terminal is its controlling terminal, so it
    // can type where the kernel allows TIOCSTI (the host is this machine).
    let (code, v) = r.json(&["run", "-s", s, "--", "sleep 3001 & echo job=$!"]);
    assert_eq!(code, 0, "{v}");
    let job: i32 = v["output"]
        .as_str()
        .unwrap()
        .split("job=")
        .nth(1)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let (_, v) = r.json(&["run", "-s", s, "--", "true"]);
    let h = v["terminal_holders"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["pid"] == job)
        .unwrap_or_else(|| panic!("{shell}: the job {job} is not named: {v}"));
    assert_eq!(h["can_type"], tether_pty::procfs::tiocsti_allowed(), "{v}");
    common::sigkill(job);
    common::sigkill(pid);
    wait_for(30, "the holder to end", || {
        (!common::alive(pid)).then_some(())
    });
    let (code, v) = r.json(&["run", "-s", s, "--", "wait; true"]);
    assert_eq!(code, 0, "{v}");
    assert!(
        !v["terminal_holders"]
            .as_array()
            .unwrap()
            .iter()
            .any(|h| h["pid"] == pid || h["pid"] == job),
        "{v}"
    );
    let _ = r.tether(&["close", "-s", s]);
    let _ = std::fs::remove_dir_all(&shared);
}
