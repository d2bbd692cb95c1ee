//! `tether run` end to end: output, exit codes, and what it says when the
//! command cannot complete.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::{Command, Output};

fn tether(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tether"))
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn prints_output_and_exits_with_the_command_code() {
    let out = tether(&["run", "--norc", "echo hello; (exit 3)"]);
    assert_eq!(String::from_utf8_lossy(&out.stdout), "hello\n");
    assert_eq!(out.status.code(), Some(3));
}

#[test]
fn every_shell_runs() {
    for shell in ["bash", "zsh", "dash", "busybox"] {
        let out = tether(&["run", "--norc", "--shell", shell, "echo ok"]);
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            "ok\n",
            "{shell}: {out:?}"
        );
    }
}

#[test]
fn incomplete_input_and_timeouts_are_explained() {
    let out = tether(&["run", "--norc", "echo 'open"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("incomplete"));
    let out = tether(&[
        "run",
        "--norc",
        "--timeout",
        "0.3",
        "echo started; sleep 30",
    ]);
    assert_eq!(out.status.code(), Some(124));
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("started\n"));
    let out = tether(&["run", "--norc", "--timeout=-1", "true"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("--timeout must be a positive number"));
}

#[test]
fn clipped_output_names_the_spill_file() {
    let out = tether(&["run", "--norc", "--output-limit", "40", "seq 1 500"]);
    let err = String::from_utf8_lossy(&out.stderr);
    let path = err.trim_end().rsplit(' ').next().unwrap();
    let full = std::fs::read_to_string(path).unwrap();
    assert!(full.starts_with("1\n2\n") && full.ends_with("499\n500\n"));
    let _ = std::fs::remove_file(path);
}
