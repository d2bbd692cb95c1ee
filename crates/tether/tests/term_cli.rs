//! `tether term` end to end, on recorded fixtures.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::process::{Command, Output};

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures")
        .join(name)
        .join("output.bin")
}

fn tether(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tether"))
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn project_prints_the_final_progress_frame() {
    let out = tether(&[
        "term",
        "project",
        fixture("progress-python").to_str().unwrap(),
    ]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.starts_with("100%|####################| 500/500\n"),
        "{text}"
    );
}

#[test]
fn filter_removes_replies_and_says_how_many() {
    let path = fixture("echo-leak");
    let out = tether(&["term", "filter", path.to_str().unwrap()]);
    assert!(out.status.success());
    let original = std::fs::read(&path).unwrap();
    assert!(out.stdout.len() < original.len());
    assert!(!out.stdout.windows(9).any(|w| w == b"\x1b[?62;22c"));
    assert!(out.stdout.windows(6).any(|w| w == b"\x1b]52;c"));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "tether: removed 6 terminal replies\n"
    );
}

#[test]
fn modes_shows_state_and_restore_bytes() {
    let out = tether(&["term", "modes", fixture("kitty-keyboard").to_str().unwrap()]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("screen: Alternate"), "{text}");
    assert!(text.ends_with(
        "restore: \\u{1b}[?1000;1004;1006;2004l\\u{1b}[?1049l\\u{1b}[<1u\\u{1b}7\\u{1b}[?47h\\u{1b}[<1u\\u{1b}[?47l\\u{1b}8\\u{1b}[>4;0m\n"
    ), "{text}");
}

#[test]
fn missing_file_is_a_clear_error() {
    let out = tether(&["term", "project", "/nonexistent/stream.bin"]);
    assert!(!out.status.success());
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("cannot read /nonexistent/stream.bin: check the path"),
        "{err}"
    );
}
