//! A jump host's own `ProxyCommand` carries the first hop (as OpenSSH's
//! `-W` chain runs the jump host's ProxyCommand), the target is reached
//! through the jump host, and the banner each server sends is the one the
//! caller sees for the target; the steps of a connection (`-v`) are told
//! as they happen. Real sshd, `nc` as the proxy.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use tether_ssh::{ConnectOptions, HostKeyPolicy, Jump, Target, connect};
use tether_testkit::{Scratch, Sshd, keygen, user};

#[tokio::test]
async fn a_jump_hosts_proxy_command_carries_the_first_hop() {
    if let Some(why) = tether_testkit::unavailable() {
        eprintln!("SKIPPED: {why}");
        return;
    }
    if std::process::Command::new("nc").arg("-h").output().is_err() {
        eprintln!("SKIPPED: nc is missing (scripts/test installs netcat-openbsd)");
        return;
    }
    let scratch = Scratch::new("proxy-hops");
    let key = keygen(&scratch.0.join("id_ed25519"), "").unwrap();
    let key_pub = key.with_extension("pub");
    let banner = scratch.0.join("banner");
    std::fs::write(&banner, "target's banner\n").unwrap();
    let start = |ip: &str, extra: &str| {
        let port = tether_testkit::free_port(ip).unwrap();
        Sshd::start_with(ip, port, &[&key_pub], false, extra).unwrap()
    };
    let jump = start("127.0.0.78", "");
    let target = start("127.0.0.79", &format!("Banner {}\n", banner.display()));
    let known = scratch.0.join("known_hosts");
    std::fs::write(
        &known,
        format!("{}{}", jump.known_hosts_line(), target.known_hosts_line()),
    )
    .unwrap();
    let log = scratch.0.join("proxy.log");
    let options = ConnectOptions {
        known_hosts: vec![known],
        policy: HostKeyPolicy::Yes,
        identities: vec![key],
        identities_only: true,
        agent: None,
        ..ConnectOptions::default()
    };
    let at = |s: &Sshd| Target {
        host: s.ip.clone(),
        hostname: s.ip.clone(),
        port: s.port,
        user: user(),
    };
    let via = ConnectOptions {
        jumps: vec![Jump {
            target: at(&jump),
            options: ConnectOptions {
                proxy_command: Some(format!(
                    "sh -c 'echo %h:%p >> {}; exec nc %h %p'",
                    log.display()
                )),
                ..options.clone()
            },
        }],
        ..options.clone()
    };
    let c = connect(&at(&target), &via).await.unwrap();
    let mut out = Vec::new();
    c.exec("set -- $SSH_CONNECTION; echo $3", None, |e| {
        if let tether_ssh::Event::Stdout(b) = e {
            out.extend_from_slice(&b);
        }
    })
    .await
    .unwrap();
    assert_eq!(String::from_utf8_lossy(&out), "127.0.0.79\n");
    assert_eq!(
        std::fs::read_to_string(&log).unwrap(),
        format!("{}:{}\n", jump.ip, jump.port)
    );
    assert_eq!(c.banner().as_deref(), Some("target's banner\n"));
}

#[tokio::test]
async fn the_steps_say_where_what_vouched_for_the_key_and_how_it_logged_in() {
    if let Some(why) = tether_testkit::unavailable() {
        eprintln!("SKIPPED: {why}");
        return;
    }
    let scratch = Scratch::new("steps");
    let key = keygen(&scratch.0.join("id_ed25519"), "").unwrap();
    let ip = "127.0.0.80";
    let port = tether_testkit::free_port(ip).unwrap();
    let sshd = Sshd::start_with(ip, port, &[&key.with_extension("pub")], false, "").unwrap();
    let known = scratch.0.join("known_hosts");
    std::fs::write(&known, sshd.known_hosts_line()).unwrap();
    let said = std::sync::Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let heard = std::sync::Arc::clone(&said);
    let options = ConnectOptions {
        known_hosts: vec![known.clone()],
        identities: vec![key.clone()],
        identities_only: true,
        agent: None,
        steps: Some(tether_ssh::Steps(std::sync::Arc::new(move |l: &str| {
            heard.lock().unwrap().push(l.to_owned())
        }))),
        ..ConnectOptions::default()
    };
    let target = Target {
        host: "web".into(),
        hostname: ip.into(),
        port,
        user: user(),
    };
    connect(&target, &options).await.unwrap();
    let said = said.lock().unwrap().clone();
    assert_eq!(said.len(), 3, "{said:?}");
    assert_eq!(said[0], format!("web: connected to {ip}:{port}"));
    assert!(
        said[1].ends_with(&format!("is known as [{ip}]:{port}: {}:1", known.display())),
        "{said:?}"
    );
    assert_eq!(
        said[2],
        format!(
            "web: authenticated as {} with the key {}",
            user(),
            key.display()
        )
    );
}
