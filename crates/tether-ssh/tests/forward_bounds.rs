//! One forward serves at most `Settings::max_connections` connections at
//! once (a front-end gives the file limit's, `connection_limit`): with
//! that many open, the next waits, and is served as soon as one ends.
//! Against real sshd.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;

use tether_ssh::forward::{ForwardKind, ForwardSpec, Forwards, Settings};

/// A cap small enough to reach in a test.
const MAX_CONNECTIONS: usize = 16;
use tether_ssh::{ConnectOptions, HostKeyPolicy, Target, connect};
use tether_testkit::{Scratch, Sshd, keygen, user};

fn echo_server() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for s in l.incoming().flatten() {
            std::thread::spawn(move || {
                let mut r = s.try_clone().unwrap();
                let mut w = s;
                let _ = std::io::copy(&mut r, &mut w);
            });
        }
    });
    port
}

fn round_trip(s: &mut TcpStream) {
    s.write_all(b"hi\n").unwrap();
    let mut b = [0u8; 3];
    s.read_exact(&mut b).unwrap();
    assert_eq!(&b, b"hi\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_forward_serves_at_most_its_cap_and_the_next_when_one_ends() {
    if let Some(why) = tether_testkit::unavailable() {
        eprintln!("SKIPPED: {why}");
        return;
    }
    let scratch = Scratch::new("fwd-bounds");
    let key = keygen(&scratch.0.join("id_ed25519"), "").unwrap();
    let sshd = Sshd::start("127.0.0.2", &[&key.with_extension("pub")], false).unwrap();
    let known = scratch.0.join("known_hosts");
    std::fs::write(&known, sshd.known_hosts_line()).unwrap();
    let target = Target {
        host: sshd.ip.clone(),
        hostname: sshd.ip.clone(),
        port: sshd.port,
        user: user(),
    };
    let opts = ConnectOptions {
        known_hosts: vec![known],
        policy: HostKeyPolicy::Yes,
        identities: vec![key.clone()],
        identities_only: true,
        agent: None,
        passwords: false,
        ..ConnectOptions::default()
    };
    let conn = Arc::new(connect(&target, &opts).await.unwrap());
    let f = Forwards::new(
        conn,
        Settings {
            gateway_ports: false,
            say: Arc::new(|_| {}),
            permit_remote_open: None,
            bind_mask: tether_ssh::forward::DEFAULT_BIND_MASK,
            bind_unlink: false,
            max_connections: MAX_CONNECTIONS,
        },
    );
    let echo = echo_server();
    let p = tether_testkit::free_port("127.0.0.1").unwrap();
    let spec = ForwardSpec::parse(ForwardKind::Local, &format!("{p}:127.0.0.1:{echo}")).unwrap();
    f.add(&spec).await.unwrap();
    let (held, next) = tokio::task::spawn_blocking(move || {
        let mut held: Vec<TcpStream> = (0..MAX_CONNECTIONS)
            .map(|_| {
                let mut s = TcpStream::connect(("127.0.0.1", p)).unwrap();
                s.set_read_timeout(Some(std::time::Duration::from_secs(60)))
                    .unwrap();
                round_trip(&mut s);
                s
            })
            .collect();
        let mut next = TcpStream::connect(("127.0.0.1", p)).unwrap();
        next.set_read_timeout(Some(std::time::Duration::from_secs(60)))
            .unwrap();
        next.write_all(b"hi\n").unwrap();
        // A round trip on a served connection after the extra one
        // connected: the accept loop had its chance to take it.
        round_trip(&mut held[0]);
        (held, next)
    })
    .await
    .unwrap();
    assert_eq!(f.open(), MAX_CONNECTIONS);
    let mut held = held;
    drop(held.pop());
    let mut next = next;
    let got = tokio::task::spawn_blocking(move || {
        let mut b = [0u8; 3];
        next.read_exact(&mut b).unwrap();
        b
    })
    .await
    .unwrap();
    assert_eq!(&got, b"hi\n");
    f.close();
}
