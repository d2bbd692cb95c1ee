//! A closed stdout never panics: every subcommand that prints ends quietly
//! with 141 when its reader has gone (as a program SIGPIPE ended), and with
//! one line on stderr when the disk is full (`/dev/full`).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::{Command, Stdio};

/// The printing subcommands, each with what it needs to print something.
const PRINTING: &[&[&str]] = &[
    &["completions", "bash"],
    &["hosts", "web[01-20]"],
    &["hosts", "-e", "web[01-20]"],
    &["--help"],
    &["--version"],
    &["exec", "--help"],
    &["ssh", "-G", "example.org"],
];

fn tether(args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_tether"));
    c.args(args).stdin(Stdio::null()).stderr(Stdio::piped());
    c
}

#[test]
fn a_reader_that_went_away_ends_each_quietly() {
    for args in PRINTING {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let out = tether(args).stdout(writer).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(141), "{args:?}: {stderr}");
        assert!(stderr.is_empty(), "{args:?}: {stderr}");
    }
}

#[test]
fn a_full_disk_is_one_line() {
    if !std::path::Path::new("/dev/full").exists() {
        eprintln!("SKIPPED: no /dev/full here");
        return;
    }
    for args in PRINTING {
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap();
        let out = tether(args).stdout(full).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(255), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(
            stderr.contains("No space left on device"),
            "{args:?}: {stderr}"
        );
    }
}
