//! Secrets off the command line: `tether run -f FILE` takes the command
//! from a file (`-f -`: from stdin) and `tether send -f FILE` its input,
//! so neither shows in `ps`; without `-f`, a pipe on stdin stays the
//! command's stdin.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::io::Write;
use std::path::PathBuf;
use std::process::{Output, Stdio};

use common::Daemon;

/// `tether ARGS` with `input` on its stdin.
fn piped(d: &Daemon, args: &[&str], input: &str) -> Output {
    let mut child = d
        .cmd(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A scratch file, removed with the test.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str, text: &str) -> Scratch {
        let path = std::env::temp_dir().join(format!("tether-cf-{name}-{}", std::process::id()));
        std::fs::write(&path, text).unwrap();
        Scratch(path)
    }

    fn arg(&self) -> &str {
        self.0.to_str().unwrap()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

#[test]
fn run_takes_its_command_from_a_file_or_stdin() {
    let d = Daemon::new("cf-run");
    let code = Scratch::new(
        "code",
        "answer=$((6*7))\ncat <<EOF\nthe answer: $answer 'quoted'\nEOF\n",
    );
    let out = d.run(&["run", "--norc", "-f", code.arg()]);
    assert_eq!(stdout(&out), "the answer: 42 'quoted'\n", "{out:?}");

    let out = piped(&d, &["run", "-f", "-"], "echo from stdin; (exit 3)\n");
    assert_eq!(
        (stdout(&out), out.status.code()),
        ("from stdin\n".into(), Some(3))
    );

    // A pipe stays the command's stdin when the command is in a file.
    let cat = Scratch::new("cat", "tr a-z A-Z");
    let out = piped(&d, &["run", "-f", cat.arg()], "piped data\n");
    assert_eq!(stdout(&out), "PIPED DATA\n", "{out:?}");
    let out = piped(&d, &["run", "--", "cat"], "as before\n");
    assert_eq!(stdout(&out), "as before\n", "{out:?}");

    let out = d.run(&["run", "--once", "--norc", "-f", code.arg()]);
    assert_eq!(stdout(&out), "the answer: 42 'quoted'\n", "{out:?}");
}

#[test]
fn a_bad_command_file_is_a_clear_error_and_nothing_runs() {
    let d = Daemon::new("cf-bad");
    let missing = std::env::temp_dir().join(format!("tether-cf-none-{}", std::process::id()));
    let marker = Scratch::new("marker", "");
    std::fs::remove_file(&marker.0).unwrap();
    let out = d.run(&["run", "-f", missing.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(255), "{out:?}");
    let said = String::from_utf8_lossy(&out.stderr).into_owned();
    let expected = format!(
        "tether: cannot read the command from {}; nothing was run (give -f a readable file, or - for standard input): No such file or directory",
        missing.display()
    );
    assert!(said.starts_with(&expected), "{said}");

    let empty = Scratch::new("empty", " \n");
    let out = d.run(&["run", "-f", empty.arg()]);
    assert_eq!(out.status.code(), Some(255), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("is empty; nothing was run"));

    // Both a file and words is a usage error; nothing runs.
    let touch = format!("touch {}", marker.arg());
    let out = d.run(&["run", "-f", empty.arg(), "--", &touch]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(!marker.0.exists());
}

#[test]
fn send_takes_its_input_from_a_file_or_stdin() {
    let d = Daemon::new("cf-send");
    let ask = "read -r a; read -r b; echo \"got $a and $b\"";
    let out = d.run(&["run", "--norc", "--", ask]);
    assert_eq!(out.status.code(), Some(125), "{out:?}");
    let first = Scratch::new("first", "pass-phrase one");
    let out = d.run(&["send", "-f", first.arg(), "-k", "Enter"]);
    assert_eq!(out.status.code(), Some(125), "{out:?}");
    let out = piped(&d, &["send", "-f", "-"], "two\n");
    assert_eq!(stdout(&out), "got pass-phrase one and two\n", "{out:?}");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
}
