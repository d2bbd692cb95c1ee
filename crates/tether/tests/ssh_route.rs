//! How `tether ssh`, `exec`, `cp` and `run --host` reach and trust a host,
//! as OpenSSH's client does, against a real sshd and a private ssh_config:
//! a `ProxyCommand` (`nc %h %p`) carries the connection (its tokens
//! expanded, its process group ended with the connection, a failing one
//! named with its stderr shown and exit 255); keys looked up under
//! `HostKeyAlias`, from a `KnownHostsCommand`, and learned hashed under
//! `HashKnownHosts` (which OpenSSH's `ssh-keygen -F` then finds); the
//! server's `Banner` on stderr (escaped; not under `-q`); `-A` forwarding
//! the agent; certificate logins (`KEY-cert.pub` beside the key,
//! `CertificateFile`, and one the agent holds).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use tether_testkit::{Scratch, Sshd, keygen};

const TETHER: &str = env!("CARGO_BIN_EXE_tether");

struct World {
    scratch: Scratch,
    key: PathBuf,
    sshd: Sshd,
}

/// An sshd on `ip` (with `sshd_extra` first in its config) accepting
/// `authorized` keys (default: this world's key).
fn start(name: &str, ip: &str, sshd_extra: &str, authorize: bool) -> Option<World> {
    if let Some(why) = tether_testkit::unavailable() {
        eprintln!("SKIPPED: {why}");
        return None;
    }
    let scratch = Scratch::new(&format!("route-{name}"));
    let key = keygen(&scratch.0.join("id_ed25519"), "").unwrap();
    let port = tether_testkit::free_port(ip).unwrap();
    let pubkey = key.with_extension("pub");
    let authorized: Vec<&Path> = if authorize { vec![&pubkey] } else { vec![] };
    let sshd = Sshd::start_with(ip, port, &authorized, false, sshd_extra).unwrap();
    Some(World { scratch, key, sshd })
}

impl World {
    fn known(&self) -> PathBuf {
        self.scratch.0.join("known_hosts")
    }

    fn file(&self, name: &str) -> PathBuf {
        self.scratch.0.join(name)
    }

    /// An ssh_config naming the host `target`: `first` lines, then its
    /// address, port, user, key and known_hosts (known: the sshd's line
    /// unless `first` says otherwise).
    fn config(&self, first: &str) -> PathBuf {
        let file = self.file("ssh_config");
        let text = format!(
            "Host target\n{first}  HostName {ip}\n  Port {port}\n  User {user}\n  IdentityFile {key}\n  IdentityAgent none\n  UserKnownHostsFile {known}\n  BatchMode yes\n",
            ip = self.sshd.ip,
            port = self.sshd.port,
            user = tether_testkit::user(),
            key = self.key.display(),
            known = self.known().display(),
        );
        std::fs::write(&file, text).unwrap();
        file
    }

    fn know_the_host(&self) {
        std::fs::write(self.known(), self.sshd.known_hosts_line()).unwrap();
    }

    fn tether(&self, args: &[&str], env: &[(&str, &Path)]) -> Output {
        let mut c = Command::new(TETHER);
        c.args(args)
            .env("HOME", &self.scratch.0)
            .env("TETHER_DIR", self.file("tether-dir"))
            .env("USER", tether_testkit::user())
            .env_remove("XDG_CONFIG_HOME")
            .env_remove("SSH_AUTH_SOCK");
        for (k, v) in env {
            c.env(k, v);
        }
        c.output().unwrap()
    }

    /// `tether ssh -F CONFIG ARGS`.
    fn ssh(&self, config: &Path, args: &[&str]) -> Output {
        let mut all = vec!["ssh", "-F", config.to_str().unwrap()];
        all.extend_from_slice(args);
        self.tether(&all, &[])
    }
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn a_proxy_command_carries_ssh_and_exec_with_its_tokens() {
    if common::nc_missing() {
        return;
    }
    let Some(w) = start("proxy", "127.0.0.70", "", true) else {
        return;
    };
    w.know_the_host();
    let log = w.file("proxy.log");
    let config = w.config(&format!(
        "  ProxyCommand sh -c 'echo \"%h %p %r %n %%\" >> {}; exec nc %h %p'\n",
        log.display()
    ));
    let out = w.ssh(&config, &["target", "echo through; exit 4"]);
    assert_eq!(
        (out.status.code(), text(&out.stdout).as_str()),
        (Some(4), "through\n"),
        "{out:?}"
    );
    let expected = format!(
        "{} {} {} target %\n",
        w.sshd.ip,
        w.sshd.port,
        tether_testkit::user()
    );
    assert_eq!(std::fs::read_to_string(&log).unwrap(), expected);
    // `tether exec` reaches it through the same connection code.
    let out = w.tether(
        &[
            "exec",
            "-F",
            config.to_str().unwrap(),
            "-H",
            "target",
            "--",
            "echo via-exec",
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(text(&out.stdout).contains("via-exec"), "{out:?}");
    assert_eq!(std::fs::read_to_string(&log).unwrap(), expected.repeat(2));
    // `-o ProxyCommand` on the command line wins over ssh_config's.
    let direct = w.config("");
    let out = w.ssh(
        &direct,
        &[
            "-o",
            &format!(
                "ProxyCommand=sh -c 'echo cli >> {}; exec nc %h %p'",
                log.display()
            ),
            "target",
            "true",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(std::fs::read_to_string(&log).unwrap().ends_with("cli\n"));
}

#[test]
fn a_failing_proxy_command_is_named_with_its_stderr_and_255() {
    let Some(w) = start("proxy-fails", "127.0.0.71", "", true) else {
        return;
    };
    w.know_the_host();
    let config = w.config("  ProxyCommand sh -c 'echo proxy-went-wrong >&2; exit 3'\n");
    let out = w.ssh(&config, &["target", "true"]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(255), "{out:?}");
    assert!(err.contains("proxy-went-wrong"), "{err}");
    assert!(
        err.contains("ProxyCommand") && err.contains("status 3"),
        "{err}"
    );
    // One that exits at once without a word: closed before the banner.
    let config = w.config("  ProxyCommand true\n");
    let out = w.ssh(&config, &["target", "true"]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(255), "{out:?}");
    assert!(err.contains("ProxyCommand `true`"), "{err}");
}

#[test]
fn the_proxy_commands_processes_end_with_the_connection() {
    if common::nc_missing() {
        return;
    }
    let Some(w) = start("proxy-ends", "127.0.0.72", "", true) else {
        return;
    };
    w.know_the_host();
    let pid_file = w.file("sleeper.pid");
    // A helper the command started (its output elsewhere: tether's
    // stderr pipe would keep this test waiting on it).
    let config = w.config(&format!(
        "  ProxyCommand sh -c 'sleep 300 </dev/null >/dev/null 2>&1 & echo $! > {}; exec nc %h %p'\n",
        pid_file.display()
    ));
    let out = w.ssh(&config, &["target", "true"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let pid: i32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    common::wait_for(20, "the proxy's helper to end", || {
        (!common::alive(pid)).then_some(())
    });
}

#[test]
fn host_keys_under_an_alias_from_a_command_and_learned_hashed() {
    let Some(w) = start("host-keys", "127.0.0.73", "", true) else {
        return;
    };
    // Known only under the alias: found.
    let key = &w.sshd.host_key;
    std::fs::write(w.known(), format!("the-alias {key}\n")).unwrap();
    // CheckHostIP is accepted (OpenSSH 9.2's default is no, as tether does).
    let config =
        w.config("  HostKeyAlias the-alias\n  StrictHostKeyChecking yes\n  CheckHostIP yes\n");
    let out = w.ssh(&config, &["target", "echo aliased"]);
    assert_eq!(
        (out.status.code(), text(&out.stdout).as_str()),
        (Some(0), "aliased\n"),
        "{out:?}"
    );
    // A KnownHostsCommand's output is read as known_hosts lines, its
    // tokens expanded.
    std::fs::write(w.known(), "").unwrap();
    let lines = w.file("from-command");
    std::fs::write(&lines, w.sshd.known_hosts_line()).unwrap();
    let log = w.file("command.log");
    let config = w.config(&format!(
        "  KnownHostsCommand /bin/sh -c \"cat {}; echo %I %H >> {}\"\n  StrictHostKeyChecking yes\n",
        lines.display(),
        log.display()
    ));
    let out = w.ssh(&config, &["target", "echo commanded"]);
    assert_eq!(
        (out.status.code(), text(&out.stdout).as_str()),
        (Some(0), "commanded\n"),
        "{out:?}"
    );
    let name = format!("[{}]:{}", w.sshd.ip, w.sshd.port);
    assert!(
        std::fs::read_to_string(&log)
            .unwrap()
            .contains(&format!("HOSTNAME {name}")),
        "{:?}",
        std::fs::read_to_string(&log)
    );
    // Learned hashed: no address in the file, and OpenSSH finds it.
    std::fs::write(w.known(), "").unwrap();
    let config = w.config("  HashKnownHosts yes\n  StrictHostKeyChecking accept-new\n");
    let out = w.ssh(&config, &["target", "true"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let learned = std::fs::read_to_string(w.known()).unwrap();
    assert!(
        learned.starts_with("|1|") && !learned.contains(&w.sshd.ip),
        "{learned}"
    );
    let found = Command::new("ssh-keygen")
        .args(["-F", &name, "-f"])
        .arg(w.known())
        .output()
        .unwrap();
    assert!(found.status.success(), "{found:?}");
    // And tether matches the hashed line itself.
    let config = w.config("  StrictHostKeyChecking yes\n");
    let out = w.ssh(&config, &["target", "true"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
}

#[test]
fn the_servers_banner_is_shown_escaped_unless_quiet() {
    let scratch = Scratch::new("route-banner-text");
    let banner = scratch.0.join("banner");
    std::fs::write(&banner, "Authorized use only\x1b[2J\n").unwrap();
    let Some(w) = start(
        "banner",
        "127.0.0.74",
        &format!("Banner {}\n", banner.display()),
        true,
    ) else {
        return;
    };
    w.know_the_host();
    let config = w.config("");
    let out = w.ssh(&config, &["target", "true"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(text(&out.stderr), "Authorized use only\\x1b[2J\n");
    let out = w.ssh(&config, &["-q", "target", "true"]);
    assert_eq!(
        (out.status.code(), text(&out.stderr).as_str()),
        (Some(0), "")
    );
}

#[test]
fn dash_a_forwards_the_agent_and_only_when_asked() {
    let Some(w) = start("agent", "127.0.0.75", "", true) else {
        return;
    };
    w.know_the_host();
    let agent_key = keygen(&w.file("agent_key"), "").unwrap();
    let agent = tether_testkit::Agent::start(&[&agent_key]).unwrap();
    let config = w.config("");
    let sock = agent.socket.as_path();
    let fingerprint = Command::new("ssh-keygen")
        .arg("-lf")
        .arg(agent_key.with_extension("pub"))
        .output()
        .unwrap();
    let fingerprint = text(&fingerprint.stdout)
        .split_whitespace()
        .nth(1)
        .unwrap()
        .to_owned();
    let cfg = config.to_str().unwrap();
    let out = w.tether(
        &["ssh", "-F", cfg, "-A", "target", "ssh-add -l"],
        &[("SSH_AUTH_SOCK", sock)],
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(text(&out.stdout).contains(&fingerprint), "{out:?}");
    // Not by default: the host has no agent.
    let out = w.tether(
        &["ssh", "-F", cfg, "target", "ssh-add -l"],
        &[("SSH_AUTH_SOCK", sock)],
    );
    assert_ne!(out.status.code(), Some(0), "{out:?}");
    assert!(!text(&out.stdout).contains(&fingerprint), "{out:?}");
}

/// `ssh-keygen -s CA` on `key`'s public half, for the test user.
fn sign(ca: &Path, key: &Path) {
    let out = Command::new("ssh-keygen")
        .args(["-q", "-s"])
        .arg(ca)
        .args(["-I", "tether-test-cert", "-n", &tether_testkit::user()])
        .arg(key.with_extension("pub"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
}

#[test]
fn a_certificate_logs_in_beside_the_key_or_named() {
    let ca_dir = Scratch::new("route-ca");
    let ca = keygen(&ca_dir.0.join("ca"), "").unwrap();
    // The key itself is not authorized: only the CA is trusted.
    let Some(w) = start(
        "cert",
        "127.0.0.76",
        &format!("TrustedUserCAKeys {}\n", ca.with_extension("pub").display()),
        false,
    ) else {
        return;
    };
    w.know_the_host();
    let config = w.config("");
    let out = w.ssh(&config, &["target", "true"]);
    assert_eq!(out.status.code(), Some(255), "{out:?}");
    // `id_ed25519-cert.pub` beside the key, as ssh-keygen -s writes it.
    sign(&ca, &w.key);
    let beside = w.file("id_ed25519-cert.pub");
    let out = w.ssh(&config, &["target", "echo certified"]);
    assert_eq!(
        (out.status.code(), text(&out.stdout).as_str()),
        (Some(0), "certified\n"),
        "{out:?}"
    );
    // Elsewhere, named by CertificateFile.
    let named = w.file("elsewhere.cert");
    std::fs::rename(&beside, &named).unwrap();
    let out = w.ssh(&config, &["target", "true"]);
    assert_eq!(out.status.code(), Some(255), "{out:?}");
    let config = w.config(&format!("  CertificateFile {}\n", named.display()));
    let out = w.ssh(&config, &["target", "echo named"]);
    assert_eq!(
        (out.status.code(), text(&out.stdout).as_str()),
        (Some(0), "named\n"),
        "{out:?}"
    );
    // Held by the agent (ssh-add takes the certificate beside the key),
    // the key file gone: the agent's certificate logs in.
    std::fs::rename(&named, &beside).unwrap();
    let agent = tether_testkit::Agent::start(&[&w.key]).unwrap();
    std::fs::remove_file(&w.key).unwrap();
    std::fs::remove_file(&beside).unwrap();
    let config = w.config("");
    let sock = format!("IdentityAgent={}", agent.socket.display());
    let out = w.ssh(&config, &["-o", &sock, "target", "echo from-agent"]);
    assert_eq!(
        (out.status.code(), text(&out.stdout).as_str()),
        (Some(0), "from-agent\n"),
        "{out:?}"
    );
}

#[test]
fn a_proxy_command_serves_cp_and_the_daemons_remote_shells() {
    if common::nc_missing() {
        return;
    }
    let Some(sftp) = tether_testkit::sftp_server() else {
        eprintln!("SKIPPED: OpenSSH's sftp-server is not installed");
        return;
    };
    let subsystem = format!("Subsystem sftp {}\n", sftp.display());
    let Some(w) = start("proxy-cp-run", "127.0.0.77", &subsystem, true) else {
        return;
    };
    w.know_the_host();
    let log = w.file("proxy.log");
    let config = w.config(&format!(
        "  ProxyCommand sh -c 'echo %n >> {}; exec nc %h %p'\n",
        log.display()
    ));
    // `tether cp` (SFTP on the connection).
    let local = w.file("payload");
    std::fs::write(&local, "copied through the proxy\n").unwrap();
    let remote = format!("/tmp/tether-route-cp-{}", std::process::id());
    let out = w.tether(
        &[
            "cp",
            "-F",
            config.to_str().unwrap(),
            local.to_str().unwrap(),
            &format!("target:{remote}"),
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(
        std::fs::read_to_string(&remote).unwrap(),
        "copied through the proxy\n"
    );
    let _ = std::fs::remove_file(&remote);
    // The daemon's remote shell (`run --host`), from ~/.ssh/config.
    let ssh_dir = w.scratch.0.join(".ssh");
    std::fs::create_dir_all(&ssh_dir).unwrap();
    std::fs::copy(&config, ssh_dir.join("config")).unwrap();
    let d = common::Daemon::new("route-run-host");
    let out = d
        .cmd(&["run", "--host", "target", "--", "echo ran-remotely"])
        .env("HOME", &w.scratch.0)
        .env("USER", tether_testkit::user())
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("SSH_AUTH_SOCK")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(text(&out.stdout).contains("ran-remotely"), "{out:?}");
    assert_eq!(
        std::fs::read_to_string(&log).unwrap(),
        "target\ntarget\n",
        "one connection through the proxy each"
    );
}
