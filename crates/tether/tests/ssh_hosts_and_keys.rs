//! How `tether ssh` and `tether exec` read a host and what they say about
//! its key, against a real sshd: IPv6 literals as OpenSSH reads them
//! (`::1`, `user@::1`, and `[::1]:PORT` in a host spec), `-p 0` refused
//! before anything runs, and a changed host key accepted under
//! `StrictHostKeyChecking=no` only with OpenSSH's loud warning on stderr.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::process::{Command, Output};

use tether_testkit::{Scratch, Sshd, keygen};

const TETHER: &str = env!("CARGO_BIN_EXE_tether");

struct World {
    scratch: Scratch,
    key: PathBuf,
    sshd: Sshd,
}

/// An sshd on 127.0.0.49 and, when this machine has it, on `[::1]` at the
/// same port.
fn start(name: &str, v6: bool) -> Option<World> {
    if let Some(why) = tether_testkit::unavailable() {
        eprintln!("SKIPPED: {why}");
        return None;
    }
    if v6 && std::net::TcpListener::bind("[::1]:0").is_err() {
        eprintln!("SKIPPED: no IPv6 loopback here");
        return None;
    }
    let scratch = Scratch::new(&format!("hosts-keys-{name}"));
    let key = keygen(&scratch.0.join("id_ed25519"), "").unwrap();
    let port = tether_testkit::free_port("127.0.0.49").unwrap();
    let extra = if v6 {
        format!("ListenAddress [::1]:{port}\n")
    } else {
        String::new()
    };
    let sshd = Sshd::start_with(
        "127.0.0.49",
        port,
        &[&key.with_extension("pub")],
        false,
        &extra,
    )
    .unwrap();
    Some(World { scratch, key, sshd })
}

impl World {
    fn known(&self) -> PathBuf {
        self.scratch.0.join("known_hosts")
    }

    /// `tether SUB` with this world's SSH flags, then `args`.
    fn tether(&self, sub: &str, args: &[&str]) -> Output {
        Command::new(TETHER)
            .arg(sub)
            .args([
                "-F",
                "none",
                "-o",
                "BatchMode=yes",
                "-o",
                "IdentityAgent=none",
            ])
            .args(["-i", self.key.to_str().unwrap()])
            .args([
                "-o",
                &format!("UserKnownHostsFile={}", self.known().display()),
            ])
            .args(args)
            .env("HOME", &self.scratch.0)
            .env("USER", tether_testkit::user())
            .env_remove("XDG_CONFIG_HOME")
            .env_remove("SSH_AUTH_SOCK")
            .output()
            .unwrap()
    }
}

fn said(out: &Output) -> (Option<i32>, String) {
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

#[test]
fn ipv6_literals_are_hosts_as_openssh_reads_them() {
    let Some(w) = start("v6", true) else { return };
    let port = w.sshd.port.to_string();
    std::fs::write(w.known(), format!("[::1]:{port} {}\n", w.sshd.host_key)).unwrap();
    let with_user = format!("{}@::1", tether_testkit::user());
    let bracketed = format!("[::1]:{port}");
    for (host, flags) in [
        ("::1", vec!["-p", port.as_str()]),
        (with_user.as_str(), vec!["-p", port.as_str()]),
        (bracketed.as_str(), vec![]),
    ] {
        let mut args = flags.clone();
        args.extend([host, "echo reached"]);
        let out = w.tether("ssh", &args);
        assert_eq!(said(&out), (Some(0), "reached\n".into()), "{host}: {out:?}");
    }
}

#[test]
fn port_zero_is_refused_before_anything_runs() {
    let Some(w) = start("port0", false) else {
        return;
    };
    for args in [
        vec!["ssh", "-p", "0", "127.0.0.49", "true"],
        vec!["ssh", "127.0.0.49:0", "true"],
        vec!["exec", "-p", "0", "-H", "127.0.0.49", "--", "true"],
        vec!["ssh", "-o", "Port=0", "127.0.0.49", "true"],
    ] {
        let out = Command::new(TETHER)
            .args(&args)
            .env("HOME", &w.scratch.0)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.code() != Some(0) && err.contains("1 to 65535"),
            "{args:?}: {out:?}"
        );
    }
}

#[test]
fn a_changed_key_under_policy_no_is_warned_about_loudly() {
    let Some(w) = start("changed", false) else {
        return;
    };
    let other = keygen(&w.scratch.0.join("other_host_key"), "").unwrap();
    let other = std::fs::read_to_string(other.with_extension("pub")).unwrap();
    let other: Vec<&str> = other.split_whitespace().take(2).collect();
    std::fs::write(
        w.known(),
        format!("[127.0.0.49]:{} {}\n", w.sshd.port, other.join(" ")),
    )
    .unwrap();
    let port = w.sshd.port.to_string();
    let out = w.tether(
        "ssh",
        &[
            "-p",
            &port,
            "-o",
            "StrictHostKeyChecking=no",
            "127.0.0.49",
            "echo reached",
        ],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(said(&out), (Some(0), "reached\n".into()), "{out:?}");
    assert!(
        err.contains("REMOTE HOST IDENTIFICATION HAS CHANGED")
            && err.contains("Password authentication is disabled"),
        "{err}"
    );
    // The default policy still refuses it.
    let out = w.tether("ssh", &["-p", &port, "127.0.0.49", "echo reached"]);
    assert_eq!(out.status.code(), Some(255), "{out:?}");
}
