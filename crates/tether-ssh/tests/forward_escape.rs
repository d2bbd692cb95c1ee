//! The escape command line (`~C`) and the `~#` list against real sshd:
//! `-L` adds a forward that carries data, `~#` names its open connection,
//! `-KL` cancels it (the port stops answering), `-R 0:` allocates and says
//! so, `-KR` cancels that, `?` is the help, and a bad line is an error
//! that changes nothing.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;

use tether_ssh::forward::{self, Forwards, Settings};
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

fn echo_through(port: u16) -> TcpStream {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(std::time::Duration::from_secs(30)))
        .unwrap();
    s.write_all(b"hi\n").unwrap();
    let mut b = [0u8; 3];
    s.read_exact(&mut b).unwrap();
    assert_eq!(&b, b"hi\n");
    s
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn command_line_adds_lists_and_cancels_forwards() {
    if let Some(why) = tether_testkit::unavailable() {
        eprintln!("SKIPPED: {why}");
        return;
    }
    let scratch = Scratch::new("fwd-escape");
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
        Arc::clone(&conn),
        Settings {
            gateway_ports: false,
            say: Arc::new(|_| {}),
            permit_remote_open: None,
            bind_mask: tether_ssh::forward::DEFAULT_BIND_MASK,
            bind_unlink: false,
            max_connections: tether_ssh::forward::connection_limit(),
        },
    );
    let echo = echo_server();
    let p = tether_testkit::free_port("127.0.0.1").unwrap();

    assert!(
        forward::command_line(&f, "?")
            .await
            .unwrap()
            .contains("-KL[bind_address:]port")
    );
    assert_eq!(forward::command_line(&f, "").await.unwrap(), "");
    assert!(forward::command_line(&f, "-X 1").await.is_err());
    assert!(forward::command_line(&f, "-L nonsense").await.is_err());
    assert_eq!(forward::list(&f), "No forwarded connections are open.\n");

    let line = format!("-L{p}:127.0.0.1:{echo}");
    assert_eq!(
        forward::command_line(&f, &line).await.unwrap(),
        "Forwarding port.\n"
    );
    let held = tokio::task::spawn_blocking(move || echo_through(p))
        .await
        .unwrap();
    let listed = forward::list(&f);
    assert!(
        listed.starts_with("The following connections are open:\n")
            && listed.contains(&format!("-L {p}:127.0.0.1:{echo}")),
        "{listed}"
    );
    assert_eq!(f.open(), 1);
    assert_eq!(
        forward::command_line(&f, &format!("-KL {p}"))
            .await
            .unwrap(),
        "Canceled forwarding.\n"
    );
    assert!(!tether_testkit::accepts("127.0.0.1", p));
    assert!(
        forward::command_line(&f, &format!("-KL {p}"))
            .await
            .is_err()
    );
    // The connection open before the cancel goes on; when it ends, the
    // forwards are idle.
    drop(held);
    tokio::time::timeout(std::time::Duration::from_secs(30), f.idle())
        .await
        .unwrap();

    let said = forward::command_line(&f, &format!("-R 0:127.0.0.1:{echo}"))
        .await
        .unwrap();
    let allocated: u16 = said
        .strip_prefix("Allocated port ")
        .and_then(|l| l.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{said}"));
    assert!(said.ends_with("Forwarding port.\n"), "{said}");
    drop(
        tokio::task::spawn_blocking(move || echo_through(allocated))
            .await
            .unwrap(),
    );
    assert_eq!(
        forward::command_line(&f, &format!("-KR {allocated}"))
            .await
            .unwrap(),
        "Canceled forwarding.\n"
    );
    let gone = tokio::task::spawn_blocking(move || {
        // The server stops listening once it has read the cancel.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while tether_testkit::accepts("127.0.0.1", allocated) {
            assert!(std::time::Instant::now() < deadline);
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    });
    gone.await.unwrap();

    // ~&'s first step: no new connection is taken, the open ones go on.
    let q = tether_testkit::free_port("127.0.0.1").unwrap();
    forward::command_line(&f, &format!("-L {q}:127.0.0.1:{echo}"))
        .await
        .unwrap();
    let held = tokio::task::spawn_blocking(move || echo_through(q))
        .await
        .unwrap();
    f.stop_listening().await;
    assert!(!tether_testkit::accepts("127.0.0.1", q));
    let held = tokio::task::spawn_blocking(move || {
        let mut s = held;
        s.write_all(b"hi\n").unwrap();
        let mut b = [0u8; 3];
        s.read_exact(&mut b).unwrap();
        assert_eq!(&b, b"hi\n");
        s
    })
    .await
    .unwrap();
    assert_eq!(f.open(), 1);
    held.shutdown(std::net::Shutdown::Both).unwrap();
    tokio::time::timeout(std::time::Duration::from_secs(30), f.idle())
        .await
        .unwrap();
    f.close();
}
