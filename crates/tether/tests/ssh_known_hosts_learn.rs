//! Keys learned as OpenSSH learns them: under `StrictHostKeyChecking no`
//! (as under `accept-new`) an unknown key is written to the first user
//! known_hosts file, hashed under `HashKnownHosts yes`, and found again
//! under `yes`; `UserKnownHostsFile none` is no file (nothing is written,
//! no file named `none` appears).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use tether_testkit::{Scratch, Sshd, free_port, keygen};

const TETHER: &str = env!("CARGO_BIN_EXE_tether");
const IP: &str = "127.0.0.83";

struct World {
    scratch: Scratch,
    config: PathBuf,
    known: PathBuf,
    _sshd: Sshd,
}

fn start(name: &str) -> Option<World> {
    if let Some(why) = tether_testkit::unavailable() {
        eprintln!("SKIPPED: {why}");
        return None;
    }
    let scratch = Scratch::new(&format!("ssh-known-hosts-learn-{name}"));
    let key = keygen(&scratch.0.join("id_ed25519"), "").unwrap();
    let port = free_port(IP).unwrap();
    let sshd = Sshd::start_with(IP, port, &[&key.with_extension("pub")], false, "").unwrap();
    let known = scratch.0.join("known_hosts");
    let config = scratch.0.join("ssh_config");
    std::fs::write(
        &config,
        format!(
            "Host web\n  HostName {IP}\n  Port {port}\nHost *\n  User {user}\n  IdentityFile {key}\n  IdentityAgent none\n  GlobalKnownHostsFile none\n  BatchMode yes\n",
            user = tether_testkit::user(),
            key = key.display(),
        ),
    )
    .unwrap();
    Some(World {
        scratch,
        config,
        known,
        _sshd: sshd,
    })
}

impl World {
    fn ssh(&self, cwd: &Path, args: &[&str]) -> Output {
        Command::new(TETHER)
            .arg("ssh")
            .arg("-F")
            .arg(&self.config)
            .args(args)
            .arg("web")
            .arg("true")
            .current_dir(cwd)
            .env("HOME", &self.scratch.0)
            .env_remove("XDG_CONFIG_HOME")
            .env_remove("SSH_AUTH_SOCK")
            .stdin(Stdio::null())
            .output()
            .unwrap()
    }

    fn known_opt(&self) -> String {
        format!("UserKnownHostsFile={}", self.known.display())
    }
}

#[test]
fn no_learns_an_unknown_key_hashed_and_finds_it_again() {
    let Some(w) = start("no") else { return };
    let cwd = w.scratch.0.clone();
    // Not known: refused under the default policy.
    let out = w.ssh(&cwd, &["-o", &w.known_opt()]);
    assert_eq!(out.status.code(), Some(255));
    let out = w.ssh(
        &cwd,
        &[
            "-o",
            &w.known_opt(),
            "-o",
            "StrictHostKeyChecking=no",
            "-o",
            "HashKnownHosts=yes",
        ],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&w.known).unwrap();
    assert_eq!(text.lines().count(), 1, "{text}");
    assert!(text.starts_with("|1|"), "{text}");
    assert!(!text.contains(IP), "{text}");
    // Found again under the default policy.
    let out = w.ssh(&cwd, &["-o", &w.known_opt()]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn user_known_hosts_file_none_is_no_file() {
    let Some(w) = start("none") else { return };
    let cwd = w.scratch.0.join("cwd");
    std::fs::create_dir_all(&cwd).unwrap();
    for policy in ["no", "accept-new"] {
        let out = w.ssh(
            &cwd,
            &[
                "-o",
                "UserKnownHostsFile=none",
                "-o",
                &format!("StrictHostKeyChecking={policy}"),
            ],
        );
        assert_eq!(
            out.status.code(),
            Some(0),
            "{policy}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(!cwd.join("none").exists(), "{policy}: a file named none");
    }
    // Nothing learned: still unknown under `yes`.
    let out = w.ssh(&cwd, &["-o", "UserKnownHostsFile=none"]);
    assert_eq!(out.status.code(), Some(255));
}
