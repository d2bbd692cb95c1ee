//! Through `tether run`: a process an earlier command left reading the
//! session's terminal can neither forge the next command's exit code nor
//! take its line, is named on stderr and in `--json` until `tether reset`
//! ends it. Real bash, real daemon; skipped without python3.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{Daemon, alive, wait_for};
use tether_testkit::thief::{self, Echo};

#[test]
fn a_thief_on_the_terminal_is_named_and_cannot_forge_or_steal() {
    if let Some(why) = thief::unavailable() {
        eprintln!("SKIPPED: {why}");
        return;
    }
    let d = Daemon::new("thief");
    let scratch = d.dir.with_extension("scratch");
    std::fs::create_dir_all(&scratch).unwrap();
    let thief = thief::write(&scratch, Echo::Raw);
    let pid_file = scratch.join("thief.pid");
    let start = format!(
        "setsid python3 {} $(tty) {} </dev/null >/dev/null 2>&1 &",
        thief.display(),
        pid_file.display()
    );
    let out = d.run(&["run", "--norc", "--", &start]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let pid: i32 = wait_for(20, "the thief reading the terminal", || {
        common::thief_reading(&pid_file)
    });
    for i in 1..=4 {
        let ran = scratch.join(format!("ran-{i}"));
        let code = format!("touch {}; echo own-{i}; (exit {i})", ran.display());
        let out = d.run(&["run", "--", &code]);
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(ran.exists(), "command {i} never ran: {out:?}");
        assert_eq!(out.status.code(), Some(i), "command {i}: {out:?}");
        assert!(stdout.contains(&format!("own-{i}\n")), "{stdout}");
        let named = format!("python3 (pid {pid}");
        let line = stderr
            .lines()
            .find(|l| l.contains("holding this session's terminal"))
            .unwrap_or_else(|| panic!("no line names the thief: {stderr}"));
        assert!(line.contains(&named), "{line}");
        assert!(line.contains("tether reset -s main"), "{line}");
    }
    let out = d.run(&["run", "--json", "--", "echo json"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let holders = v["terminal_holders"].as_array().unwrap();
    let thief_entry = holders
        .iter()
        .find(|h| h["pid"] == pid)
        .unwrap_or_else(|| panic!("{v}"));
    assert_eq!(thief_entry["program"], "python3", "{v}");
    let can_type = tether_pty::procfs::tiocsti_allowed() && tether_pty::procfs::has_sys_admin(pid);
    assert_eq!(thief_entry["can_type"], can_type, "{v}");
    assert_eq!(
        (v["exit_code"].as_i64(), v["output"].as_str()),
        (Some(0), Some("json\n"))
    );
    // A reset ends it; the next result names nobody.
    let out = d.run(&["reset", "-s", "main"]);
    assert!(out.status.success(), "{out:?}");
    wait_for(20, "the thief ended by the reset", || {
        (!alive(pid)).then_some(())
    });
    let out = d.run(&["run", "--json", "--", "echo after"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["terminal_holders"], serde_json::json!([]), "{v}");
    assert_eq!(v["output"], "after\n", "{v}");
    let _ = std::fs::remove_dir_all(&scratch);
}
