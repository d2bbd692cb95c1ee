//! Session names are checked (no path tricks, no control or invisible
//! characters, 128 bytes at most), and what tether prints from session
//! data (names, working directories, foreground programs) cannot drive
//! the terminal it is printed on: control characters come out escaped.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::process::Output;

use common::Daemon;

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// True when `bytes` hold a control character other than newline (raw
/// ESC, BEL, a C1 control as UTF-8 …).
fn has_raw_control(bytes: &[u8]) -> bool {
    String::from_utf8_lossy(bytes)
        .chars()
        .any(|c| c.is_control() && c != '\n')
}

#[test]
fn bad_session_names_are_refused_saying_why() {
    let d = Daemon::new("names");
    let long = "x".repeat(129);
    let cases = [
        ("a/b/c", "has more than one '/'"),
        ("../x", "is '.' or '..'"),
        ("x/..", "is '.' or '..'"),
        (".", "is '.' or '..'"),
        ("..", "is '.' or '..'"),
        ("/x", "has an empty part around its '/'"),
        ("x/", "has an empty part around its '/'"),
        ("a\x1b[31mb", "contains a control or invisible character"),
        ("a\nb", "contains a control or invisible character"),
        ("a\u{9b}2Jb", "contains a control or invisible character"),
        (
            "abc\u{202e}fdp.exe",
            "contains a control or invisible character",
        ),
        (long.as_str(), "is too long"),
    ];
    for (name, why) in cases {
        let out = d.run(&["run", "-s", name, "--norc", "--", "echo ran"]);
        assert_eq!(out.status.code(), Some(255), "{name:?}: {out:?}");
        assert!(out.stdout.is_empty(), "{name:?} ran: {out:?}");
        let said = stderr(&out);
        assert!(said.contains(why), "{name:?}: {said}");
        assert!(said.contains("a name is 1 to 128 bytes"), "{said}");
        assert!(!has_raw_control(&out.stderr), "{name:?}: {said:?}");
    }
    let longest = "y".repeat(128);
    for name in [longest.as_str(), "web-01.example", "with space", "café"] {
        let out = d.run(&["run", "-s", name, "--norc", "--", "echo ran"]);
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            "ran\n",
            "{name:?}: {out:?}"
        );
    }
    let ls = d.stdout(&["ls", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&ls).unwrap();
    assert_eq!(v["sessions"].as_array().unwrap().len(), 4, "{ls}");
}

#[test]
fn ls_and_notes_show_session_data_escaped() {
    let d = Daemon::new("printing");
    let scratch = std::env::temp_dir().join(format!("tether-printing-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch);
    std::fs::create_dir_all(&scratch).unwrap();
    // A directory whose name retitles the terminal and turns it red, and a
    // program whose name clears the screen.
    let setup = format!(
        r#"dir="$(printf '{0}/t\033]0;pwned\007\033[31mred')"; mkdir "$dir" && cp "$(command -v sleep)" "$(printf '{0}/z\033[2J')" && cd "$dir" && echo ready"#,
        scratch.display()
    );
    let out = d.run(&["run", "-s", "esc", "--norc", "--", &setup]);
    assert_eq!(String::from_utf8_lossy(&out.stdout), "ready\n", "{out:?}");
    let sleeper = format!(r#""$(printf '{}/z\033[2J')" 60"#, scratch.display());
    let out = d.run(&[
        "run",
        "-s",
        "esc",
        "--keep",
        "--timeout",
        "1",
        "--",
        &sleeper,
    ]);
    assert_eq!(out.status.code(), Some(123), "{out:?}");
    let note = stderr(&out);
    assert!(note.contains("z\\x1b[2J (pid "), "{note:?}");
    assert!(!has_raw_control(&out.stderr), "{note:?}");

    let out = d.run(&["ls"]);
    let listed = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(!has_raw_control(&out.stdout), "{listed:?}");
    assert!(listed.contains("z\\x1b[2J["), "{listed}");
    assert!(
        listed.contains("/t\\x1b]0;pwned\\x07\\x1b[31mred"),
        "{listed}"
    );
    let _ = d.run(&["close", "-s", "esc"]);
    let _ = std::fs::remove_dir_all(&scratch);
}
