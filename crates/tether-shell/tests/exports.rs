//! The exports snapshot read back: what bash, zsh, dash and busybox sh
//! print for `export -p` parses to the exact values they hold.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::os::unix::ffi::OsStrExt;
use std::process::Command;

use tether_shell::exports::parse_exports;

/// Values that need every kind of quoting.
fn values() -> Vec<(&'static str, Vec<u8>)> {
    vec![
        ("PLAIN_TOKEN", b"plainvalue123".to_vec()),
        ("QUOTES_TOKEN", b"a\"b'c`d$e\\f g!h=i".to_vec()),
        ("LINES_TOKEN", b"first line\nsecond\tline\r".to_vec()),
        ("BYTES_TOKEN", b"caf\xc3\xa9 \xff\x01\x7f\x1b[0m".to_vec()),
        ("EMPTY_TOKEN", Vec::new()),
        ("SPACES_TOKEN", b"  lead and trail  ".to_vec()),
    ]
}

fn check(program: &str, args: &[&str]) {
    if Command::new(program)
        .arg("-c")
        .arg("true")
        .output()
        .is_err()
    {
        eprintln!("SKIPPED: {program} is not installed");
        return;
    }
    let mut cmd = Command::new(program);
    cmd.args(args).arg("-c").arg("export -p").env_clear();
    for (name, value) in values() {
        cmd.env(name, std::ffi::OsStr::from_bytes(&value));
    }
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "{program}: {out:?}");
    let parsed = parse_exports(&out.stdout);
    for (name, value) in values() {
        let got = parsed.iter().find(|(n, _)| n == name).map(|(_, v)| v);
        assert_eq!(
            got.map(|v| String::from_utf8_lossy(v).into_owned()),
            Some(String::from_utf8_lossy(&value).into_owned()),
            "{program} {name} in {:?}",
            String::from_utf8_lossy(&out.stdout)
        );
        assert_eq!(got, Some(&value), "{program} {name}");
    }
}

#[test]
fn bash_export_p() {
    check("bash", &[]);
}

#[test]
fn zsh_export_p() {
    check("zsh", &["-f"]);
}

#[test]
fn dash_export_p() {
    check("dash", &[]);
}

#[test]
fn busybox_export_p() {
    check("busybox", &["sh"]);
}

#[test]
fn pwsh_snapshot_and_a_variable_without_value() {
    let text = b"$env:A_TOKEN = 'it''s a\nsecret'\ndeclare -x NO_VALUE\ndeclare -rx RO_TOKEN=\"read-only\"\n";
    let parsed = parse_exports(text);
    assert_eq!(
        parsed,
        vec![
            ("A_TOKEN".to_owned(), b"it's a\nsecret".to_vec()),
            ("RO_TOKEN".to_owned(), b"read-only".to_vec()),
        ]
    );
}

#[test]
fn fish_snapshot() {
    let text = b"set -gx A_TOKEN 'it\\'s a\nback\\\\slash \\n'\nset -gx EMPTY ''\n";
    assert_eq!(
        parse_exports(text),
        vec![
            ("A_TOKEN".to_owned(), b"it's a\nback\\slash \\n".to_vec()),
            ("EMPTY".to_owned(), Vec::new()),
        ]
    );
}
