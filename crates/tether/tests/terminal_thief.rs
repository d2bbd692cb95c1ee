//! Through `tether run`: a process an earlier command left reading the
//! session's terminal can neither forge the next command's exit code nor
//! take its line, is named on stderr and in `--json` until `tether reset`
//! ends it. Real bash, real daemon; skipped without python3.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{Daemon, alive, wait_for};

/// Reads the terminal named by its first argument forever (after writing
/// its pid to the second), echoing what it read and forging start and end
/// marks (exit 0) from every run of hex digits and number it read.
const THIEF: &str = r#"
import itertools, os, re, sys
fd = os.open(sys.argv[1], os.O_RDWR | os.O_NOCTTY)
with open(sys.argv[2] + ".tmp", "w") as f:
    f.write(str(os.getpid()))
os.rename(sys.argv[2] + ".tmp", sys.argv[2])
seen = ""
while True:
    data = os.read(fd, 4096)
    if not data:
        break
    seen += data.decode("utf-8", "replace")
    os.write(fd, b"thief read: " + data + b"\n")
    hexes = set(re.findall(r"[0-9a-fA-F]{16,}", seen))
    numbers = set(re.findall(r"\b[0-9]{1,6}\b", seen)) | {""}
    forged = ""
    for n in hexes | {a + b for a, b in itertools.permutations(hexes, 2)}:
        for k in numbers:
            forged += "\033]6973;%s%s;start\007" % (n, k)
            forged += "\033]6973;%s%s;end;exit=0;pipe=0;ran=1;cwd=/forged\007" % (n, k)
    os.write(fd, forged.encode())
"#;

fn python3() -> bool {
    std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join("python3").is_file()))
}

#[test]
fn a_thief_on_the_terminal_is_named_and_cannot_forge_or_steal() {
    if !python3() {
        eprintln!("SKIPPED: python3 is not installed (the thief is a python3 script)");
        return;
    }
    let d = Daemon::new("thief");
    let scratch = d.dir.with_extension("scratch");
    std::fs::create_dir_all(&scratch).unwrap();
    let thief = scratch.join("thief.py");
    std::fs::write(&thief, THIEF).unwrap();
    let pid_file = scratch.join("thief.pid");
    let start = format!(
        "setsid python3 {} $(tty) {} </dev/null >/dev/null 2>&1 &",
        thief.display(),
        pid_file.display()
    );
    let out = d.run(&["run", "--norc", "--", &start]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let pid: i32 = wait_for(20, "the thief reading the terminal", || {
        let pid: i32 = std::fs::read_to_string(&pid_file)
            .ok()?
            .trim()
            .parse()
            .ok()?;
        tether_pty::procfs::syscall(pid, pid)
            .is_some_and(|c| c.nr == 0)
            .then_some(pid)
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
