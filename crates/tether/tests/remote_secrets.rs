//! Secrets in remote persistent shells, against real sshd on 127.0.0.2:
//! a secret the remote session exports is redacted in the call that sets
//! it and in later calls, in the result, the spill file and the screen
//! (the exports snapshot is on the host; the engine reads it there).
//! Skips with a message when sshd is not installed.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::remote::{Remote, start};

/// `tether ARGS --json` on the shared two-host setup: the result.
fn json(r: &Remote, args: &[&str]) -> serde_json::Value {
    r.json(args).1
}

fn random(tag: &str) -> String {
    use std::io::Read;
    let mut buf = [0u8; 16];
    std::fs::File::open("/dev/urandom")
        .unwrap()
        .read_exact(&mut buf)
        .unwrap();
    let hex: String = buf.iter().map(|b| format!("{b:02x}")).collect();
    format!("{tag}{hex}")
}

#[test]
fn a_secret_a_remote_session_exports_is_redacted() {
    let Some(r) = start("remote-secrets") else {
        return;
    };
    let own = random("own-");
    let v = json(
        &r,
        &[
            "run",
            "--host",
            "web01",
            "--",
            &format!("export MY_API_TOKEN={own}; echo \"$MY_API_TOKEN\""),
        ],
    );
    assert_eq!(v["output"], "[redacted]\n", "{v}");
    let v = json(&r, &["run", "-s", "web01", "--", "printenv MY_API_TOKEN"]);
    assert_eq!(v["output"], "[redacted]\n", "{v}");

    // Loaded from a file, without naming it on the command line; spilled.
    let pw = random("pw-");
    let v = json(
        &r,
        &[
            "run",
            "-s",
            "web01",
            "--",
            &format!("printf 'export DB_PASSWORD=%s\\n' {pw} > ~/.tether-test-creds"),
        ],
    );
    assert_eq!(v["status"], "exited", "{v}");
    let v = json(
        &r,
        &[
            "run",
            "-s",
            "web01",
            "--output-limit",
            "20",
            "--",
            ". ~/.tether-test-creds; rm ~/.tether-test-creds; printf '%s\\n' \"$(printenv DB_PASSWORD)\" padding padding padding",
        ],
    );
    let path = v["truncated"]["full_output_path"].as_str().unwrap();
    let spilled = std::fs::read(path).unwrap();
    assert_eq!(
        String::from_utf8_lossy(&spilled),
        "[redacted]\npadding\npadding\npadding\n",
        "{v}"
    );
    let out = r.tether(&["screen", "-s", "web01"]);
    let screen = String::from_utf8_lossy(&out.stdout);
    assert!(!screen.contains(&own) && !screen.contains(&pw), "{screen}");
    assert!(screen.contains("[redacted]"), "{screen}");
}
