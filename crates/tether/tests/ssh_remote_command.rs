//! `RemoteCommand` as ssh applies it: `tether ssh` runs it (its `%` tokens
//! expanded) when no command is given, refuses it together with a command
//! line's, prints it under `-G`; `tether exec` and `tether cp` refuse a
//! host that sets it (they run what they are given), and
//! `RemoteCommand none` takes it away.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

use tether_testkit::{Scratch, Sshd, free_port, keygen};

const TETHER: &str = env!("CARGO_BIN_EXE_tether");
const IP: &str = "127.0.0.82";

struct World {
    scratch: Scratch,
    config: PathBuf,
    _sshd: Sshd,
}

fn start(name: &str) -> Option<World> {
    if let Some(why) = tether_testkit::unavailable() {
        eprintln!("SKIPPED: {why}");
        return None;
    }
    let scratch = Scratch::new(&format!("ssh-remote-command-{name}"));
    let key = keygen(&scratch.0.join("id_ed25519"), "").unwrap();
    let port = free_port(IP).unwrap();
    let sshd = Sshd::start_with(IP, port, &[&key.with_extension("pub")], false, "").unwrap();
    let known = scratch.0.join("known_hosts");
    std::fs::write(&known, sshd.known_hosts_line()).unwrap();
    let config = scratch.0.join("ssh_config");
    std::fs::write(
        &config,
        format!(
            "Host web\n  HostName {IP}\n  Port {port}\n  RemoteCommand echo from-config %r %n %p\nHost *\n  User {user}\n  IdentityFile {key}\n  IdentityAgent none\n  UserKnownHostsFile {known}\n  BatchMode yes\n",
            user = tether_testkit::user(),
            key = key.display(),
            known = known.display(),
        ),
    )
    .unwrap();
    Some(World {
        scratch,
        config,
        _sshd: sshd,
    })
}

impl World {
    fn run(&self, front: &str, args: &[&str]) -> Output {
        Command::new(TETHER)
            .arg(front)
            .arg(if front == "ssh" { "-F" } else { "--ssh-config" })
            .arg(&self.config)
            .args(args)
            .env("HOME", &self.scratch.0)
            .env_remove("XDG_CONFIG_HOME")
            .env_remove("SSH_AUTH_SOCK")
            .stdin(Stdio::null())
            .output()
            .unwrap()
    }
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn ssh_runs_remote_command_when_no_command_is_given() {
    let Some(w) = start("runs") else { return };
    let user = tether_testkit::user();
    let out = w.run("ssh", &["web"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(
        stdout.starts_with(&format!("from-config {user} web ")),
        "{stdout:?}"
    );
    // -G prints it expanded, as ssh -G does.
    let out = w.run("ssh", &["-G", "web"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains(&format!("\nremotecommand echo from-config {user} web ")),
        "{}",
        text(&out.stdout)
    );
    // `none` takes it away: the command line's runs.
    let out = w.run("ssh", &["-o", "RemoteCommand=none", "web", "echo", "typed"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "typed\n");
}

#[test]
fn ssh_refuses_remote_command_with_a_command_line_command() {
    let Some(w) = start("both") else { return };
    let out = w.run("ssh", &["web", "echo", "typed"]);
    assert_eq!(out.status.code(), Some(255), "{}", text(&out.stderr));
    assert!(text(&out.stdout).is_empty());
    assert!(
        text(&out.stderr).contains("RemoteCommand"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn exec_and_cp_refuse_a_host_with_remote_command() {
    let Some(w) = start("fleet") else { return };
    let out = w.run("exec", &["--hosts", "web", "echo", "typed"]);
    assert_ne!(out.status.code(), Some(0));
    assert!(
        !text(&out.stdout).contains("typed"),
        "{}",
        text(&out.stdout)
    );
    assert!(
        text(&out.stderr).contains("RemoteCommand"),
        "{}",
        text(&out.stderr)
    );
    let src = w.scratch.0.join("src.txt");
    std::fs::write(&src, "x").unwrap();
    let out = w.run("cp", &[src.to_str().unwrap(), "web:/tmp/"]);
    assert_ne!(out.status.code(), Some(0));
    assert!(
        text(&out.stderr).contains("RemoteCommand"),
        "{}",
        text(&out.stderr)
    );
    // `-o RemoteCommand=none`: exec runs what it is given.
    let out = w.run(
        "exec",
        &[
            "-o",
            "RemoteCommand=none",
            "--hosts",
            "web",
            "echo",
            "typed",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("typed"), "{}", text(&out.stdout));
}
