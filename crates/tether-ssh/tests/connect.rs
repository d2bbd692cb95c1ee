//! Connections against real OpenSSH sshd on loopback: key files and the
//! agent, every host-key verdict and policy, a host that is down, one that
//! blackholes, and a command past its deadline. Skips with a message when
//! sshd is not installed.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::time::Duration;

use tether_ssh::{
    ConnectOptions, Connection, Event, HostKeyPolicy, Jump, SshError, Target, connect,
};
use tether_testkit::{Agent, Blackhole, Scratch, Sshd, keygen, user};

struct World {
    scratch: Scratch,
    key: PathBuf,
    sshd: Sshd,
}

fn world(ip: &str) -> Option<World> {
    if let Some(why) = tether_testkit::unavailable() {
        eprintln!("SKIPPED: {why}");
        return None;
    }
    let scratch = Scratch::new("ssh-client");
    let key = keygen(&scratch.0.join("id_ed25519"), "").unwrap();
    let sshd = Sshd::start(ip, &[&key.with_extension("pub")], false).unwrap();
    Some(World { scratch, key, sshd })
}

impl World {
    fn known_hosts(&self) -> PathBuf {
        self.scratch.0.join("known_hosts")
    }

    fn trust(&self) {
        std::fs::write(self.known_hosts(), self.sshd.known_hosts_line()).unwrap();
    }

    fn target(&self) -> Target {
        Target {
            host: self.sshd.ip.clone(),
            hostname: self.sshd.ip.clone(),
            port: self.sshd.port,
            user: user(),
        }
    }

    fn options(&self) -> ConnectOptions {
        ConnectOptions {
            known_hosts: vec![self.known_hosts()],
            policy: HostKeyPolicy::Yes,
            identities: vec![self.key.clone()],
            identities_only: true,
            agent: None,
            passwords: false,
            ..ConnectOptions::default()
        }
    }
}

async fn run(c: &Connection, cmd: &str) -> (String, String, tether_ssh::Ended) {
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let ended = c
        .exec(cmd, Some(Duration::from_secs(20)), |e| match e {
            Event::Stdout(b) => out.extend(b),
            Event::Stderr(b) => err.extend(b),
        })
        .await
        .unwrap();
    (
        String::from_utf8(out).unwrap(),
        String::from_utf8(err).unwrap(),
        ended,
    )
}

#[tokio::test]
async fn a_key_file_authenticates_and_commands_report_exactly() {
    let Some(w) = world("127.0.0.2") else { return };
    w.trust();
    let c = connect(&w.target(), &w.options()).await.unwrap();
    let (out, err, ended) = run(&c, "echo out; echo err >&2; exit 3").await;
    assert_eq!(
        (out.as_str(), err.as_str(), ended.exit_code),
        ("out\n", "err\n", Some(3))
    );
    // Several commands share the connection; a signal is reported as one.
    let (_, _, ended) = run(&c, "kill -TERM $$").await;
    assert_eq!(
        (ended.exit_code, ended.signal.as_deref()),
        (None, Some("TERM"))
    );
    let ended = c
        .exec("sleep 30", Some(Duration::from_millis(300)), |_| {})
        .await
        .unwrap();
    assert!(ended.timed_out);
    c.disconnect().await;
}

#[tokio::test]
async fn ecdsa_and_rsa_key_files_authenticate() {
    if let Some(why) = tether_testkit::unavailable() {
        eprintln!("SKIPPED: {why}");
        return;
    }
    let scratch = Scratch::new("ssh-key-types");
    let keys: Vec<PathBuf> = ["ecdsa", "rsa"]
        .iter()
        .map(|k| tether_testkit::keygen_of(k, &scratch.0.join(format!("id_{k}")), "").unwrap())
        .collect();
    for key in &keys {
        let w = World {
            key: key.clone(),
            sshd: Sshd::start("127.0.0.15", &[&key.with_extension("pub")], false).unwrap(),
            scratch: Scratch::new("ssh-key-type"),
        };
        w.trust();
        let c = connect(&w.target(), &w.options()).await.unwrap();
        let (out, _, _) = run(&c, "echo key-ok").await;
        assert_eq!(out, "key-ok\n", "{}", key.display());
    }
}

#[tokio::test]
async fn the_agent_authenticates() {
    let Some(w) = world("127.0.0.3") else { return };
    w.trust();
    let agent = Agent::start(&[&w.key]).unwrap();
    let opts = ConnectOptions {
        identities: vec![],
        identities_only: false,
        agent: Some(agent.socket.clone()),
        ..w.options()
    };
    let c = connect(&w.target(), &opts).await.unwrap();
    assert_eq!(run(&c, "echo via-agent").await.0, "via-agent\n");
    // No agent and no key: a clear refusal naming what was tried.
    let none = ConnectOptions {
        identities: vec![PathBuf::from("/nonexistent/key")],
        agent: None,
        ..w.options()
    };
    let e = connect(&w.target(), &none).await.unwrap_err();
    assert!(matches!(e, SshError::Auth { .. }), "{e}");
    assert!(e.to_string().contains("authentication failed"), "{e}");
}

#[tokio::test]
async fn host_keys_are_verified_under_each_policy() {
    let Some(w) = world("127.0.0.4") else { return };
    let t = w.target();
    // Unknown: refused by default, naming the file.
    let e = connect(&t, &w.options()).await.unwrap_err();
    assert!(matches!(e, SshError::UnknownHostKey { .. }), "{e}");
    assert!(
        e.to_string()
            .contains(&w.known_hosts().display().to_string()),
        "{e}"
    );
    // accept-new learns it; afterwards the strict policy accepts it.
    let learn = ConnectOptions {
        policy: HostKeyPolicy::AcceptNew,
        ..w.options()
    };
    connect(&t, &learn).await.unwrap();
    let written = std::fs::read_to_string(w.known_hosts()).unwrap();
    assert_eq!(written, w.sshd.known_hosts_line());
    connect(&t, &w.options()).await.unwrap();
    // Changed: refused under yes and accept-new, with file and line.
    let other = keygen(&w.scratch.0.join("other_host"), "").unwrap();
    let other_pub = std::fs::read_to_string(other.with_extension("pub")).unwrap();
    let fake: Vec<&str> = other_pub.split_whitespace().take(2).collect();
    let text = format!("# a comment\n[{}]:{} {}\n", t.host, t.port, fake.join(" "));
    std::fs::write(w.known_hosts(), text).unwrap();
    for policy in [HostKeyPolicy::Yes, HostKeyPolicy::AcceptNew] {
        let e = connect(
            &t,
            &ConnectOptions {
                policy,
                ..w.options()
            },
        )
        .await
        .unwrap_err();
        assert!(matches!(e, SshError::ChangedHostKey { .. }), "{e}");
        assert!(
            e.to_string()
                .contains(&format!("{}:2", w.known_hosts().display())),
            "{e}"
        );
    }
    // `no` accepts anything, when asked for.
    connect(
        &t,
        &ConnectOptions {
            policy: HostKeyPolicy::No,
            ..w.options()
        },
    )
    .await
    .unwrap();
    // Revoked: refused even though a line also trusts it.
    let text = format!(
        "{}@revoked * {}\n",
        w.sshd.known_hosts_line(),
        w.sshd.host_key
    );
    std::fs::write(w.known_hosts(), text).unwrap();
    let e = connect(&t, &w.options()).await.unwrap_err();
    assert!(matches!(e, SshError::RevokedHostKey { .. }), "{e}");
    // Hashed entries (as `ssh-keygen -H` writes them) and wildcards match.
    std::fs::write(w.known_hosts(), w.sshd.known_hosts_line()).unwrap();
    let out = std::process::Command::new("ssh-keygen")
        .arg("-H")
        .arg("-f")
        .arg(w.known_hosts())
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(
        std::fs::read_to_string(w.known_hosts())
            .unwrap()
            .starts_with("|1|")
    );
    connect(&t, &w.options()).await.unwrap();
    let wildcard = format!("[127.0.0.?]:{},!127.0.0.9 {}\n", t.port, w.sshd.host_key);
    std::fs::write(w.known_hosts(), wildcard).unwrap();
    connect(&t, &w.options()).await.unwrap();
}

#[tokio::test]
async fn down_and_blackholed_hosts_fail_fast_and_clearly() {
    if tether_testkit::unavailable().is_some() {
        eprintln!("SKIPPED: sshd is not installed");
        return;
    }
    let port = tether_testkit::free_port("127.0.0.5").unwrap();
    let t = Target {
        host: "down".into(),
        hostname: "127.0.0.5".into(),
        port,
        user: user(),
    };
    let e = connect(&t, &ConnectOptions::default()).await.unwrap_err();
    assert!(matches!(e, SshError::Connect { .. }), "{e}");
    assert!(e.to_string().contains("refused"), "{e}");
    let hole = Blackhole::start().unwrap();
    let t = Target {
        host: "hole".into(),
        hostname: "127.0.0.1".into(),
        port: hole.port,
        user: user(),
    };
    let opts = ConnectOptions {
        connect_timeout: Duration::from_millis(400),
        ..ConnectOptions::default()
    };
    let e = connect(&t, &opts).await.unwrap_err();
    assert!(matches!(e, SshError::Timeout { .. }), "{e}");
    let t = Target {
        host: "nxdomain".into(),
        hostname: "no-such-host.invalid".into(),
        port: 22,
        user: user(),
    };
    let e = connect(&t, &ConnectOptions::default()).await.unwrap_err();
    assert!(matches!(e, SshError::Resolve { .. }), "{e}");
}

#[tokio::test]
async fn proxy_jump_goes_through_the_jump_host() {
    let Some(w) = world("127.0.0.7") else { return };
    let key_pub = w.key.with_extension("pub");
    let ip = "127.0.0.6";
    let jump = Sshd::start(ip, &[&key_pub], false).unwrap();
    let closed_ip = "127.0.0.8";
    let port = tether_testkit::free_port(closed_ip).unwrap();
    let closed = Sshd::start_with(
        closed_ip,
        port,
        &[&key_pub],
        false,
        "AllowTcpForwarding no\n",
    )
    .unwrap();
    let known = format!(
        "{}{}{}",
        w.sshd.known_hosts_line(),
        jump.known_hosts_line(),
        closed.known_hosts_line()
    );
    std::fs::write(w.known_hosts(), known).unwrap();
    let hop = |s: &Sshd| Jump {
        target: Target {
            host: s.ip.clone(),
            hostname: s.ip.clone(),
            port: s.port,
            user: user(),
        },
        options: w.options(),
    };
    let via = ConnectOptions {
        jumps: vec![hop(&jump)],
        ..w.options()
    };
    let c = connect(&w.target(), &via).await.unwrap();
    let (out, _, _) = run(&c, "set -- $SSH_CONNECTION; echo $3").await;
    assert_eq!(out, "127.0.0.7\n");
    // Two hops, and a jump host that refuses to forward.
    let two = ConnectOptions {
        jumps: vec![hop(&jump), hop(&jump)],
        ..w.options()
    };
    connect(&w.target(), &two).await.unwrap();
    let refused = ConnectOptions {
        jumps: vec![hop(&closed)],
        ..w.options()
    };
    let e = connect(&w.target(), &refused).await.unwrap_err();
    assert!(e.to_string().contains("would not forward"), "{e}");
}

/// Answers every question with one secret, counting the questions.
struct Answer(&'static str, std::sync::atomic::AtomicUsize);

impl tether_ssh::Prompter for Answer {
    fn secret(&self, _prompt: &str) -> Option<String> {
        self.1.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Some(self.0.to_owned())
    }
}

#[tokio::test]
async fn an_encrypted_key_is_asked_for_once_per_run() {
    let Some(w) = world("127.0.0.9") else { return };
    w.trust();
    let locked = keygen(&w.scratch.0.join("id_locked"), "open sesame").unwrap();
    std::fs::write(
        w.sshd.dir().join("authorized_keys"),
        std::fs::read(locked.with_extension("pub")).unwrap(),
    )
    .unwrap();
    let answer = std::sync::Arc::new(Answer("open sesame", Default::default()));
    let secrets = tether_ssh::Secrets::new(answer.clone(), false);
    let opts = ConnectOptions {
        identities: vec![locked.clone()],
        secrets: Some(secrets),
        ..w.options()
    };
    for _ in 0..3 {
        let c = connect(&w.target(), &opts).await.unwrap();
        assert_eq!(run(&c, "echo unlocked").await.0, "unlocked\n");
    }
    assert_eq!(
        answer.1.load(std::sync::atomic::Ordering::SeqCst),
        1,
        "asked once for three connections"
    );
    // Without anyone to ask, the key is skipped and authentication fails clearly.
    let e = connect(
        &w.target(),
        &ConnectOptions {
            identities: vec![locked],
            ..w.options()
        },
    )
    .await
    .unwrap_err();
    assert!(matches!(e, SshError::Auth { .. }), "{e}");
}

fn is_root_with_test_user() -> bool {
    let root = std::fs::metadata("/proc/self")
        .map(|m| std::os::unix::fs::MetadataExt::uid(&m))
        .unwrap_or(1)
        == 0;
    root && std::process::Command::new("id")
        .arg("tether-test")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Gives tether-test the password `pw-for-tests` (key logins still work).
fn set_test_password() {
    let hash = std::process::Command::new("openssl")
        .args(["passwd", "-6", "pw-for-tests"])
        .output()
        .unwrap();
    let hash = String::from_utf8(hash.stdout).unwrap();
    let set = std::process::Command::new("usermod")
        .args(["-p", hash.trim(), "tether-test"])
        .output()
        .unwrap();
    assert!(set.status.success(), "{set:?}");
}

/// tether-test's target on `sshd`, trusted, and options that answer its
/// password (`reuse`: once per run).
fn password_login(
    w: &World,
    sshd: &Sshd,
    reuse: bool,
) -> (Target, ConnectOptions, std::sync::Arc<Answer>) {
    std::fs::write(w.known_hosts(), sshd.known_hosts_line()).unwrap();
    set_test_password();
    let target = Target {
        host: sshd.ip.clone(),
        hostname: sshd.ip.clone(),
        port: sshd.port,
        user: "tether-test".into(),
    };
    let answer = std::sync::Arc::new(Answer("pw-for-tests", Default::default()));
    let opts = ConnectOptions {
        identities: vec![],
        secrets: Some(tether_ssh::Secrets::new(answer.clone(), reuse)),
        passwords: true,
        ..w.options()
    };
    (target, opts, answer)
}

#[tokio::test]
async fn a_password_authenticates_a_test_user() {
    if !is_root_with_test_user() {
        eprintln!("SKIPPED: needs root and the user tether-test (scripts/test creates it)");
        return;
    }
    let Some(w) = world("127.0.0.10") else { return };
    let port = tether_testkit::free_port("127.0.0.11").unwrap();
    let sshd = Sshd::start_with("127.0.0.11", port, &[], true, "").unwrap();
    let (target, opts, answer) = password_login(&w, &sshd, true);
    let c = connect(&target, &opts).await.unwrap();
    assert_eq!(run(&c, "id -un").await.0, "tether-test\n");
    connect(&target, &opts).await.unwrap();
    assert_eq!(
        answer.1.load(std::sync::atomic::Ordering::SeqCst),
        1,
        "reused across connections when asked to"
    );
    let wrong = ConnectOptions {
        secrets: Some(tether_ssh::Secrets::new(
            std::sync::Arc::new(Answer("wrong", Default::default())),
            false,
        )),
        ..opts.clone()
    };
    let e = connect(&target, &wrong).await.unwrap_err();
    assert!(
        e.to_string().contains("authentication failed") && !e.to_string().contains("wrong"),
        "{e}"
    );
}

/// Keyboard-interactive needs PAM on Linux (sshd has no other challenge
/// source), so this sshd alone runs with `UsePAM yes`.
#[tokio::test]
async fn keyboard_interactive_authenticates_a_test_user() {
    if !is_root_with_test_user() {
        eprintln!("SKIPPED: needs root and the user tether-test (scripts/test creates it)");
        return;
    }
    let Some(w) = world("127.0.0.12") else { return };
    let port = tether_testkit::free_port("127.0.0.13").unwrap();
    let sshd = Sshd::start_with(
        "127.0.0.13",
        port,
        &[],
        false,
        "UsePAM yes\nKbdInteractiveAuthentication yes\n",
    )
    .unwrap();
    let (target, opts, answer) = password_login(&w, &sshd, false);
    let c = connect(&target, &opts).await.unwrap();
    assert_eq!(run(&c, "id -un").await.0, "tether-test\n");
    assert_eq!(answer.1.load(std::sync::atomic::Ordering::SeqCst), 1);
}

#[tokio::test]
async fn ciphers_and_key_exchanges_can_be_chosen() {
    let Some(w) = world("127.0.0.14") else { return };
    w.trust();
    let aes = ConnectOptions {
        ciphers: Some(vec!["aes128-gcm@openssh.com".into()]),
        kex: Some(vec!["curve25519-sha256".into()]),
        ..w.options()
    };
    let c = connect(&w.target(), &aes).await.unwrap();
    assert_eq!(run(&c, "echo aes").await.0, "aes\n");
    let bad = ConnectOptions {
        ciphers: Some(vec!["rot13".into()]),
        ..w.options()
    };
    let e = connect(&w.target(), &bad).await.unwrap_err().to_string();
    assert!(
        e.contains("cipher \"rot13\" is not supported") && e.contains("aes128-gcm"),
        "{e}"
    );
}
