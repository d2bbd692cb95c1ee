//! ssh_config directives tether does not apply but which change where, how
//! or as whom it connects, or what it trusts (`BindAddress`,
//! `RevokedHostKeys`, `VerifyHostKeyDNS`, …), are refused with the file, the
//! line and the directive by `tether exec`, `tether ssh` and `tether cp`,
//! and nothing is dialled; the same directives in blocks for other hosts
//! (`Host`, `Match`) change nothing; `-o` follows the same list. Against a
//! real sshd, and a listener that records whether anyone connected.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Command, Output};

use tether_testkit::{Scratch, Sshd, fleet, keygen};

const TETHER: &str = env!("CARGO_BIN_EXE_tether");

struct World {
    scratch: Scratch,
    config: PathBuf,
    /// Where the refused hosts point: it records connections.
    trap: TcpListener,
    _sshd: Vec<Sshd>,
}

/// The line of `config` (from 1) that holds `text`, the first after the
/// line holding `after`.
fn line_after(config: &str, after: &str, text: &str) -> usize {
    let start = config.lines().position(|l| l.contains(after)).unwrap();
    start
        + config
            .lines()
            .skip(start)
            .position(|l| l.contains(text))
            .unwrap()
        + 1
}

fn line_of(config: &str, text: &str) -> usize {
    line_after(config, text, text)
}

fn start(name: &str) -> Option<(World, String)> {
    if let Some(why) = tether_testkit::unavailable() {
        eprintln!("SKIPPED: {why}");
        return None;
    }
    let scratch = Scratch::new(&format!("cfg-refused-{name}"));
    let key = keygen(&scratch.0.join("id_ed25519"), "").unwrap();
    let (port, sshd, known) = fleet(&["127.0.0.61"], &[&key.with_extension("pub")]).unwrap();
    let known_file = scratch.0.join("known_hosts");
    std::fs::write(&known_file, known).unwrap();
    let trap = TcpListener::bind("127.0.0.62:0").unwrap();
    trap.set_nonblocking(true).unwrap();
    let trap_port = trap.local_addr().unwrap().port();
    let common = format!(
        "  User {user}\n  IdentityFile {key}\n  IdentityAgent none\n  UserKnownHostsFile {known}\n  BatchMode yes\n",
        user = tether_testkit::user(),
        key = key.display(),
        known = known_file.display(),
    );
    let config = format!(
        "# Blocks for other hosts: never read for `good`.\n\
         Host elsewhere\n  ProxyCommand nc %h %p\n  HostKeyAlias other\n\
         Match originalhost elsewhere\n  KnownHostsCommand /bin/false\n\
         Match host 10.9.9.9 exec \"false\"\n  ProxyCommand nc %h %p\n\
         Host good\n  HostName 127.0.0.61\n  Port {port}\n  LogLevel ERROR\n  ForwardAgent no\n{common}\
         Host proxied\n  HostName 127.0.0.62\n  Port {trap_port}\n  BindAddress 127.0.0.9\n{common}\
         Host aliased\n  HostName 127.0.0.62\n  Port {trap_port}\n{common}\
         Match originalhost aliased\n  RevokedHostKeys /dev/null\n\
         Host khc\n  HostName 127.0.0.62\n  Port {trap_port}\n  VerifyHostKeyDNS yes\n{common}"
    );
    let config_file = scratch.0.join("ssh_config");
    std::fs::write(&config_file, &config).unwrap();
    Some((
        World {
            scratch,
            config: config_file,
            trap,
            _sshd: sshd,
        },
        config,
    ))
}

impl World {
    fn tether(&self, args: &[&str]) -> Output {
        Command::new(TETHER)
            .args(args)
            .env("HOME", &self.scratch.0)
            .env("USER", tether_testkit::user())
            .env_remove("XDG_CONFIG_HOME")
            .env_remove("SSH_AUTH_SOCK")
            .output()
            .unwrap()
    }

    fn cfg(&self) -> &str {
        self.config.to_str().unwrap()
    }

    /// Nobody connected to the trap.
    fn nothing_dialled(&self) {
        match self.trap.accept() {
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            other => panic!("something connected to the trap: {other:?}"),
        }
    }

    /// `args` failed, saying `file:line` and `directive`, and dialled
    /// nothing.
    fn refused(&self, args: &[&str], line: usize, directive: &str) {
        let out = self.tether(args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_ne!(out.status.code(), Some(0), "{args:?}: {out:?}");
        let place = format!("{}:{line}", self.cfg());
        assert!(
            err.contains(&place) && err.contains(directive),
            "{args:?}: want {place} and {directive} in: {err}"
        );
        self.nothing_dialled();
    }
}

#[test]
fn a_refused_directive_is_refused_before_anything_connects() {
    let Some((w, config)) = start("proxy") else {
        return;
    };
    let c = w.cfg();
    let line = line_after(&config, "Host proxied", "BindAddress");
    w.refused(
        &["exec", "-F", c, "-H", "proxied", "--", "true"],
        line,
        "BindAddress",
    );
    w.refused(&["ssh", "-F", c, "proxied", "true"], line, "BindAddress");
    let file = w.scratch.0.join("f");
    std::fs::write(&file, "x").unwrap();
    let f = file.to_str().unwrap();
    w.refused(&["cp", "-F", c, f, "proxied:/tmp/"], line, "BindAddress");
    // Trust: a revoked-keys file (from a Match block that applies), a
    // global known_hosts file.
    let line = line_of(&config, "RevokedHostKeys /dev/null");
    w.refused(
        &["exec", "-F", c, "-H", "aliased", "--", "true"],
        line,
        "RevokedHostKeys",
    );
    w.refused(
        &["ssh", "-F", c, "aliased", "true"],
        line,
        "RevokedHostKeys",
    );
    let line = line_of(&config, "VerifyHostKeyDNS yes");
    w.refused(&["ssh", "-F", c, "khc", "true"], line, "VerifyHostKeyDNS");
    // A keyword tether does not know (a typo) is not skipped either, in
    // any block (as ssh): a file of its own, so the others still work.
    let typo = w.scratch.0.join("typo_config");
    std::fs::write(
        &typo,
        format!("Host typo\n  ProxyComand nc %h %p\n{}", config),
    )
    .unwrap();
    let out = w.tether(&["ssh", "-F", typo.to_str().unwrap(), "good", "true"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.code() == Some(255)
            && err.contains(&format!("{}:2", typo.display()))
            && err.contains("ProxyComand"),
        "{out:?}"
    );
    w.nothing_dialled();
}

#[test]
fn blocks_for_other_hosts_change_nothing() {
    let Some((w, _)) = start("others") else {
        return;
    };
    let c = w.cfg();
    let out = w.tether(&["ssh", "-F", c, "good", "echo reached"]);
    assert_eq!(
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).as_ref()
        ),
        (Some(0), "reached\n"),
        "{out:?}"
    );
    let out = w.tether(&["exec", "-F", c, "-H", "good", "--", "echo", "reached"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("reached"),
        "{out:?}"
    );
}

#[test]
fn dash_o_follows_the_same_list() {
    let Some((w, _)) = start("dash-o") else {
        return;
    };
    let c = w.cfg();
    // What tether does anyway, or what concerns nothing it does: accepted.
    let out = w.tether(&[
        "ssh",
        "-F",
        c,
        "-o",
        "ProxyCommand=none",
        "-o",
        "LogLevel=ERROR",
        "-o",
        "ControlMaster=no",
        "good",
        "echo reached",
    ]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    // What would change where or what it trusts: refused, nothing dialled.
    for (o, name) in [
        ("BindAddress=127.0.0.9", "BindAddress"),
        ("RevokedHostKeys=/dev/null", "RevokedHostKeys"),
        ("VerifyHostKeyDNS=yes", "VerifyHostKeyDNS"),
    ] {
        let out = w.tether(&["ssh", "-F", c, "-o", o, "good", "true"]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.code() != Some(0) && err.contains(name),
            "-o {o}: {out:?}"
        );
        w.nothing_dialled();
    }
}
