//! Secrets in remote persistent shells, against real sshd on 127.0.0.2:
//! a secret the remote session exports is redacted in the call that sets
//! it and in later calls, in the result, the spill file and the screen
//! (the exports snapshot is on the host; the engine reads it there).
//! Skips with a message when sshd is not installed.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::process::Output;

use common::Daemon;
use tether_testkit::{Scratch, Sshd, fleet, keygen};

struct Remote {
    daemon: Daemon,
    home: Scratch,
    _sshd: Vec<Sshd>,
}

/// One host, `web01` (127.0.0.2), in the daemon's ssh_config.
fn start(name: &str) -> Option<Remote> {
    if let Some(why) = tether_testkit::unavailable() {
        eprintln!("SKIPPED: {why}");
        return None;
    }
    let home = Scratch::new("remote-secrets-home");
    let ssh = home.0.join(".ssh");
    std::fs::create_dir_all(&ssh).unwrap();
    let key = keygen(&ssh.join("id_test"), "").unwrap();
    let (port, sshd, known) = fleet(&["127.0.0.2"], &[&key.with_extension("pub")]).unwrap();
    std::fs::write(ssh.join("known_hosts"), known).unwrap();
    let config = format!(
        "Host web01\n  HostName 127.0.0.2\n  Port {port}\n  User {user}\n  IdentityFile {key}\n  IdentityAgent none\n  UserKnownHostsFile {known}\n",
        user = tether_testkit::user(),
        key = key.display(),
        known = ssh.join("known_hosts").display(),
    );
    std::fs::write(ssh.join("config"), config).unwrap();
    Some(Remote {
        daemon: Daemon::new(name),
        home,
        _sshd: sshd,
    })
}

impl Remote {
    fn tether(&self, args: &[&str]) -> Output {
        self.daemon
            .cmd(args)
            .env("HOME", &self.home.0)
            .env_remove("XDG_CONFIG_HOME")
            .env_remove("SSH_AUTH_SOCK")
            .output()
            .unwrap()
    }

    fn json(&self, args: &[&str]) -> serde_json::Value {
        let mut all = args.to_vec();
        let at = all.iter().position(|a| *a == "--").unwrap_or(all.len());
        all.insert(at, "--json");
        let out = self.tether(&all);
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {out:?}"))
    }
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
    let v = r.json(&[
        "run",
        "--host",
        "web01",
        "--",
        &format!("export MY_API_TOKEN={own}; echo \"$MY_API_TOKEN\""),
    ]);
    assert_eq!(v["output"], "[redacted]\n", "{v}");
    let v = r.json(&["run", "-s", "web01", "--", "printenv MY_API_TOKEN"]);
    assert_eq!(v["output"], "[redacted]\n", "{v}");

    // Loaded from a file, without naming it on the command line; spilled.
    let pw = random("pw-");
    let v = r.json(&[
        "run",
        "-s",
        "web01",
        "--",
        &format!("printf 'export DB_PASSWORD=%s\\n' {pw} > ~/.tether-test-creds"),
    ]);
    assert_eq!(v["status"], "exited", "{v}");
    let v = r.json(&[
        "run",
        "-s",
        "web01",
        "--output-limit",
        "20",
        "--",
        ". ~/.tether-test-creds; rm ~/.tether-test-creds; printf '%s\\n' \"$(printenv DB_PASSWORD)\" padding padding padding",
    ]);
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
