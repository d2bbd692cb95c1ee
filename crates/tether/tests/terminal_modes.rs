//! A program that leaves the terminal in another mode (cbreak, raw, no
//! signals, no CR translation, echo on, output processing on) never makes
//! a later command lie: the engine puts the line discipline back before
//! each command, locally and on a remote host (real sshd), and the next
//! command runs and reports its own output and exit code.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::Daemon;
use common::remote::start;

/// What crashed or careless programs leave behind.
const LEFT_BEHIND: &[&str] = &[
    "-icanon",
    "raw",
    "-isig",
    "-icrnl",
    "echo",
    "opost",
    "-icanon -echo min 0 time 5",
    "cbreak",
    "-iexten -ixon",
];

/// Runs each mode change, then a command that must really run; returns the
/// failures.
fn check(shell: &str, mut run: impl FnMut(&str) -> (i32, serde_json::Value)) -> Vec<String> {
    let mut bad = Vec::new();
    for mode in LEFT_BEHIND {
        let (code, v) = run(&format!("stty {mode}"));
        assert_eq!(code, 0, "stty {mode}: {v}");
        let (code, v) = run("echo x; (exit 7)");
        if (code, v["output"].as_str()) != (7, Some("x\n")) || v["status"] != "exited" {
            bad.push(format!("{shell}: after `stty {mode}`: exit {code}, {v}"));
        }
        let (_, v) = run("stty -a");
        bad.extend(not_restored(shell, &format!("`stty {mode}`"), &v));
    }
    // A job that changed them and was stopped (dash and busybox leave the
    // modes as it left them) is still the shell's child, never reaped:
    // the modes are put back all the same, before the very next command.
    run("sh -c 'stty raw; kill -STOP $$'");
    let (_, v) = run("stty -a");
    bad.extend(not_restored(shell, "a stopped job", &v));
    run("kill -KILL %1; :");
    bad
}

/// What `stty -a` (its result `v`) says is not in the mode the session's
/// contract says: line mode, signals, no echo.
fn not_restored(shell: &str, after: &str, v: &serde_json::Value) -> Vec<String> {
    let modes = v["output"].as_str().unwrap_or_default();
    let words = format!(
        " {} ",
        modes.split_whitespace().collect::<Vec<_>>().join(" ")
    );
    [" icanon ", " isig ", " -echo ", " icrnl "]
        .into_iter()
        .filter(|want| !words.contains(want))
        .map(|want| format!("{shell}: after {after}: {want} not restored: {modes}"))
        .collect()
}

fn json(out: std::process::Output) -> (i32, serde_json::Value) {
    let v =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {out:?}"));
    (out.status.code().unwrap(), v)
}

/// The shells of each test: a session per shell (`-s SHELL`).
const SHELLS: &[&str] = &["bash", "zsh", "dash", "busybox"];

fn installed(shell: &str) -> bool {
    let ok = std::process::Command::new("sh")
        .args(["-c", &format!("command -v {shell}")])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        eprintln!("SKIPPED for {shell}: not installed");
    }
    ok
}

#[test]
fn a_local_session_restores_line_mode_before_each_command() {
    let d = Daemon::new("modes-local");
    let mut bad = Vec::new();
    for shell in SHELLS.iter().filter(|s| installed(s)) {
        bad.extend(check(shell, |code| {
            json(d.run(&[
                "run",
                "-s",
                shell,
                "--shell",
                shell,
                "--norc",
                "--timeout",
                "10",
                "--json",
                "--",
                code,
            ]))
        }));
    }
    assert!(bad.is_empty(), "{bad:#?}");
}

#[test]
fn a_remote_session_restores_line_mode_before_each_command() {
    let Some(r) = start("modes-remote") else {
        return;
    };
    let mut bad = Vec::new();
    for shell in ["bash", "zsh", "sh"] {
        bad.extend(check(shell, |code| {
            r.json(&[
                "run",
                "-s",
                shell,
                "--shell",
                shell,
                "--host",
                "web01",
                "--timeout",
                "10",
                "--",
                code,
            ])
        }));
    }
    assert!(bad.is_empty(), "{bad:#?}");
    // C-c still interrupts a remote command after `stty -isig` (a remote
    // interrupt goes through the terminal's line discipline).
    let (code, _) = r.json(&["run", "-s", "bash", "--", "stty -isig"]);
    assert_eq!(code, 0);
    let (code, v) = r.json(&["run", "-s", "bash", "--timeout", "1", "--", "sleep 30"]);
    assert_eq!(v["status"], "timed_out", "{v}");
    assert_eq!(v["shell_restarted"], false, "{v}");
    assert_eq!(code, 124, "{v}");
}
