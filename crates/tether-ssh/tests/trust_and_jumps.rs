//! What `StrictHostKeyChecking=no` still refuses, as OpenSSH: a changed
//! host key connects with keys only (never a password or
//! keyboard-interactive, which a man in the middle would read), a revoked
//! key never connects; and a jump host that cannot be reached is named as
//! the jump host, not blamed on the target. Real sshd; a listener that
//! never answers; a port where nothing listens.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tether_ssh::{ConnectOptions, HostKeyPolicy, Jump, SshError, Target, connect};
use tether_testkit::{Blackhole, Scratch, Sshd, keygen, user};

/// Answers every question, counting them.
struct Asked(AtomicUsize);

impl tether_ssh::Prompter for Asked {
    fn secret(&self, _prompt: &str) -> Option<String> {
        self.0.fetch_add(1, Ordering::SeqCst);
        Some("not-the-password".into())
    }
}

struct World {
    scratch: Scratch,
    key: std::path::PathBuf,
    sshd: Sshd,
}

fn world(ip: &str) -> Option<World> {
    if let Some(why) = tether_testkit::unavailable() {
        eprintln!("SKIPPED: {why}");
        return None;
    }
    let scratch = Scratch::new("trust");
    let key = keygen(&scratch.0.join("id_ed25519"), "").unwrap();
    let port = tether_testkit::free_port(ip).unwrap();
    // Passwords on: the server would take one if the client sent it.
    let sshd = Sshd::start_with(ip, port, &[&key.with_extension("pub")], true, "").unwrap();
    Some(World { scratch, key, sshd })
}

impl World {
    fn target(&self) -> Target {
        Target {
            host: self.sshd.ip.clone(),
            hostname: self.sshd.ip.clone(),
            port: self.sshd.port,
            user: user(),
        }
    }

    /// known_hosts holding another key for this host, marked `marker`.
    fn known_with_other_key(&self, marker: &str) -> std::path::PathBuf {
        let other = keygen(&self.scratch.0.join("other_host_key"), "").unwrap();
        let other = std::fs::read_to_string(other.with_extension("pub")).unwrap();
        let other: Vec<&str> = other.split_whitespace().take(2).collect();
        let file = self.scratch.0.join("known_hosts");
        std::fs::write(
            &file,
            format!(
                "{marker}[{}]:{} {}\n",
                self.sshd.ip,
                self.sshd.port,
                other.join(" ")
            ),
        )
        .unwrap();
        file
    }

    fn options(&self, known: std::path::PathBuf, asked: &Arc<Asked>) -> ConnectOptions {
        ConnectOptions {
            known_hosts: vec![known],
            policy: HostKeyPolicy::No,
            identities: vec![self.key.clone()],
            identities_only: true,
            agent: None,
            passwords: true,
            secrets: Some(tether_ssh::Secrets::new(asked.clone(), false)),
            ..ConnectOptions::default()
        }
    }
}

#[tokio::test]
async fn a_changed_key_under_policy_no_connects_with_keys_only() {
    let Some(w) = world("127.0.0.45") else { return };
    let known = w.known_with_other_key("");
    let asked = Arc::new(Asked(AtomicUsize::new(0)));
    // With the key: connected, as OpenSSH does.
    connect(&w.target(), &w.options(known.clone(), &asked))
        .await
        .unwrap();
    // Without a key: no password is asked for nor sent.
    let keyless = ConnectOptions {
        identities: vec![w.scratch.0.join("no-such-key")],
        ..w.options(known, &asked)
    };
    let e = connect(&w.target(), &keyless).await.unwrap_err();
    match &e {
        SshError::Auth { tried, .. } => {
            assert!(!tried.contains("password"), "{e}");
            assert!(!tried.contains("keyboard"), "{e}");
        }
        other => panic!("{other}"),
    }
    assert_eq!(
        asked.0.load(Ordering::SeqCst),
        0,
        "a password was asked for"
    );
}

#[tokio::test]
async fn a_revoked_key_is_refused_whatever_the_policy() {
    let Some(w) = world("127.0.0.46") else { return };
    let line = format!("@revoked {}", w.sshd.known_hosts_line());
    let known = w.scratch.0.join("known_hosts");
    std::fs::write(&known, line).unwrap();
    let asked = Arc::new(Asked(AtomicUsize::new(0)));
    let e = connect(&w.target(), &w.options(known, &asked))
        .await
        .unwrap_err();
    assert!(matches!(e, SshError::RevokedHostKey { .. }), "{e}");
}

#[tokio::test]
async fn a_dead_jump_host_is_named_as_the_jump_host() {
    let Some(w) = world("127.0.0.47") else { return };
    let hole = Blackhole::start().unwrap();
    let down_port = tether_testkit::free_port("127.0.0.48").unwrap();
    let asked = Arc::new(Asked(AtomicUsize::new(0)));
    let mut opts = w.options(w.scratch.0.join("known_hosts"), &asked);
    opts.connect_timeout = Duration::from_secs(2);
    for (jump, port) in [("127.0.0.48", down_port), ("127.0.0.1", hole.port)] {
        let hop = Target {
            host: format!("hop-{jump}"),
            hostname: jump.to_owned(),
            port,
            user: user(),
        };
        let with_jump = ConnectOptions {
            jumps: vec![Jump {
                target: hop,
                options: opts.clone(),
            }],
            ..opts.clone()
        };
        let e = connect(&w.target(), &with_jump).await.unwrap_err();
        let m = e.to_string();
        assert!(
            matches!(&e, SshError::Jump { jump: j, host, .. } if *j == format!("hop-{jump}") && *host == w.sshd.ip),
            "{m}"
        );
        assert!(m.contains(&format!("jump host hop-{jump}")), "{m}");
    }
}
