//! A peer that goes silent mid-command (a TCP relay that starts dropping
//! every byte, as a dead link does) is noticed by keepalive: the command
//! ends and the connection is closed, instead of waiting for ever. Skips
//! with a message when sshd is not installed.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tether_ssh::{ConnectOptions, Event, HostKeyPolicy, Target, connect};
use tether_testkit::{Scratch, Sshd, keygen, user};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// Relays one connection to `upstream` until `dead` is set; from then on
/// every byte either way is dropped (the sockets stay open).
async fn relay(upstream: (String, u16), dead: Arc<AtomicBool>) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        let (client, _) = listener.accept().await.unwrap();
        let server = TcpStream::connect(upstream).await.unwrap();
        let (cr, cw) = client.into_split();
        let (sr, sw) = server.into_split();
        for (mut from, mut to) in [
            (
                Box::new(cr) as Box<dyn tokio::io::AsyncRead + Unpin + Send>,
                Box::new(sw) as Box<dyn tokio::io::AsyncWrite + Unpin + Send>,
            ),
            (Box::new(sr), Box::new(cw)),
        ] {
            let dead = Arc::clone(&dead);
            tokio::spawn(async move {
                let mut buf = vec![0u8; 32 * 1024];
                loop {
                    let n = match from.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => n,
                    };
                    if !dead.load(Ordering::SeqCst) && to.write_all(&buf[..n]).await.is_err() {
                        return;
                    }
                }
            });
        }
    });
    port
}

/// A scratch directory, a client key in it, and an sshd on `ip` that
/// takes it; `None` (with a printed reason) when sshd cannot run here.
fn host(name: &str, ip: &str) -> Option<(Scratch, PathBuf, Sshd)> {
    if let Some(why) = tether_testkit::unavailable() {
        eprintln!("SKIPPED: {why}");
        return None;
    }
    let scratch = Scratch::new(name);
    let key = keygen(&scratch.0.join("id_ed25519"), "").unwrap();
    let sshd = Sshd::start(ip, &[&key.with_extension("pub")], false).unwrap();
    Some((scratch, key, sshd))
}

/// Host keys checked against `known` only, `key` only (no agent), and
/// keepalives every `interval` with `count` unanswered allowed.
fn options(known: PathBuf, key: PathBuf, (interval, count): (Duration, usize)) -> ConnectOptions {
    ConnectOptions {
        known_hosts: vec![known],
        policy: HostKeyPolicy::Yes,
        identities: vec![key],
        identities_only: true,
        agent: None,
        keepalive: Some((interval, count)),
        ..ConnectOptions::default()
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_silent_peer_is_detected_within_the_keepalive_budget() {
    let Some((scratch, key, sshd)) = host("keepalive", "127.0.0.2") else {
        return;
    };
    let dead = Arc::new(AtomicBool::new(false));
    let port = relay((sshd.ip.clone(), sshd.port), Arc::clone(&dead)).await;
    let host_key = sshd.known_hosts_line();
    let host_key = host_key.split_once(' ').unwrap().1;
    let known = scratch.0.join("known_hosts");
    std::fs::write(&known, format!("[127.0.0.1]:{port} {host_key}")).unwrap();
    let target = Target {
        host: "relay".into(),
        hostname: "127.0.0.1".into(),
        port,
        user: user(),
    };
    let opts = options(known, key, (Duration::from_secs(1), 2));
    let c = connect(&target, &opts).await.unwrap();
    // The link dies once the command has started.
    let flag = Arc::clone(&dead);
    let ran = tokio::time::timeout(
        Duration::from_secs(60),
        c.exec("echo started; sleep 120", None, move |e| {
            if let Event::Stdout(_) = e {
                flag.store(true, Ordering::SeqCst);
            }
        }),
    )
    .await
    .expect("the dead link went unnoticed: keepalive did not end the command");
    assert!(dead.load(Ordering::SeqCst), "the command started");
    match ran {
        Ok(ended) => assert_eq!((ended.exit_code, ended.signal), (None, None)),
        Err(e) => eprintln!("ended with: {e}"),
    }
    assert!(c.is_closed(), "the connection is closed");
}

/// The sshd listening with `pid_file`, and every process under it (the
/// connection's own sshd processes).
fn sshd_tree(pid_file: &std::path::Path) -> Vec<i32> {
    let root: i32 = std::fs::read_to_string(pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let parent = |pid: i32| -> Option<i32> {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        stat.rsplit_once(')')?
            .1
            .split_whitespace()
            .nth(1)?
            .parse()
            .ok()
    };
    let all: Vec<i32> = std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .collect();
    let mut tree = vec![root];
    loop {
        let more: Vec<i32> = all
            .iter()
            .copied()
            .filter(|p| !tree.contains(p) && parent(*p).is_some_and(|pp| tree.contains(&pp)))
            .collect();
        if more.is_empty() {
            return tree;
        }
        tree.extend(more);
    }
}

fn signal(pids: &[i32], sig: &str) {
    for pid in pids {
        let _ = std::process::Command::new("kill")
            .args([&format!("-{sig}"), &pid.to_string()])
            .output();
    }
}

/// With the host's sshd stopped (SIGSTOP: the TCP connection stays up but
/// nothing answers), the connection ends after ServerAliveInterval ×
/// (ServerAliveCountMax + 1) of silence, as OpenSSH counts (a keepalive
/// is sent at each interval; when the one after the last allowed finds
/// them all unanswered, the link is given up). Prints what it measured;
/// asserts only that the end comes (a hang bound).
#[tokio::test(flavor = "multi_thread")]
async fn a_stopped_sshd_is_given_up_after_interval_times_count_plus_one() {
    let Some((scratch, key, sshd)) = host("keepalive-stop", "127.0.0.50") else {
        return;
    };
    let known = scratch.0.join("known_hosts");
    std::fs::write(&known, sshd.known_hosts_line()).unwrap();
    let target = Target {
        host: sshd.ip.clone(),
        hostname: sshd.ip.clone(),
        port: sshd.port,
        user: user(),
    };
    let (interval, count) = (Duration::from_secs(1), 2);
    let opts = options(known, key, (interval, count));
    let c = connect(&target, &opts).await.unwrap();
    let stopped = Arc::new(std::sync::Mutex::new((Vec::new(), None)));
    let s = Arc::clone(&stopped);
    let pid_file = sshd.dir().join("sshd.pid");
    let ran = tokio::time::timeout(
        Duration::from_secs(30),
        c.exec("echo started; sleep 120", None, move |e| {
            let mut s = s.lock().unwrap();
            if let Event::Stdout(_) = e
                && s.1.is_none()
            {
                // The host stops answering once the command has started.
                s.0 = sshd_tree(&pid_file);
                signal(&s.0, "STOP");
                s.1 = Some(std::time::Instant::now());
            }
        }),
    )
    .await;
    let (pids, since) = stopped.lock().unwrap().clone();
    signal(&pids, "CONT");
    let took = since.expect("the command started").elapsed();
    ran.expect("the stopped host went unnoticed: keepalive did not end the command")
        .ok();
    eprintln!(
        "keepalive {interval:?} x {count}: given up {took:?} after the host stopped \
         (OpenSSH's count: interval x (count + 1) = {:?})",
        interval * (count as u32 + 1)
    );
    assert!(c.is_closed(), "the connection is closed");
}
