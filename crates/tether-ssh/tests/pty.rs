//! A remote PTY as a `Terminal`, against a real sshd: the login shell reads
//! what is written, echo and output processing follow the request, resize
//! reaches `stty`, C-c interrupts the foreground program, and the exit
//! status arrives after every byte.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use tether_ssh::{ConnectOptions, HostKeyPolicy, PtyRequest, Target, connect};
use tether_testkit::{Scratch, Sshd, keygen, user};
use tether_transport::{ExitInfo, Signal, TermSize, Terminal};

/// Reads output until `want` appears (or panics after 20 s); returns all.
async fn until(out: &mut tether_transport::OutputStream, seen: &mut String, want: &str) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !seen.contains(want) {
        let left = deadline.saturating_duration_since(Instant::now());
        match tokio::time::timeout(left, out.recv()).await {
            Ok(Some(b)) => seen.push_str(&String::from_utf8_lossy(&b)),
            _ => panic!("never saw {want:?}; saw {seen:?}"),
        }
    }
}

#[tokio::test]
async fn a_remote_shell_on_a_pty_behaves_as_a_terminal() {
    if let Some(why) = tether_testkit::unavailable() {
        eprintln!("SKIPPED: {why}");
        return;
    }
    let scratch = Scratch::new("ssh-pty");
    let key = keygen(&scratch.0.join("id_ed25519"), "").unwrap();
    let sshd = Sshd::start("127.0.0.15", &[&key.with_extension("pub")], false).unwrap();
    std::fs::write(scratch.0.join("known_hosts"), sshd.known_hosts_line()).unwrap();
    let opts = ConnectOptions {
        known_hosts: vec![scratch.0.join("known_hosts")],
        policy: HostKeyPolicy::Yes,
        identities: vec![key],
        agent: None,
        ..ConnectOptions::default()
    };
    let target = Target {
        host: sshd.ip.clone(),
        hostname: sshd.ip.clone(),
        port: sshd.port,
        user: user(),
    };
    let conn = connect(&target, &opts).await.unwrap();
    let req = PtyRequest {
        term: "xterm-256color".into(),
        size: TermSize {
            rows: 30,
            cols: 100,
        },
        echo: false,
        output_processing: false,
        env: vec![("LC_TETHER".into(), "from-env".into())],
        command: Some("/bin/sh -i".into()),
    };
    let term = conn.open_pty(&req).await.unwrap();
    let mut out = term.take_output().unwrap();
    let mut seen = String::new();
    term.write(
        b"echo $((6*7)) $TERM $LC_TETHER; stty size; stty -a | grep -o -- '-echo \\|-opost'\n"
            .to_vec(),
    )
    .unwrap();
    until(&mut out, &mut seen, "42 xterm-256color from-env\n30 100\n").await;
    assert!(!seen.contains("echo $((6*7))"), "echo is off: {seen:?}");
    until(&mut out, &mut seen, "-opost").await;
    // A resize reaches the remote terminal.
    term.resize(TermSize {
        rows: 40,
        cols: 120,
    })
    .unwrap();
    term.write(b"stty size\n".to_vec()).unwrap();
    until(&mut out, &mut seen, "40 120\n").await;
    // C-c reaches the foreground program through the remote line discipline.
    // The mark comes from the process that becomes `sleep` (exec), so C-c
    // finds it in the foreground however soon it is sent.
    term.write(b"sh -c 'echo sleep-$((2+2)); exec sleep 30'; echo not-interrupted\n".to_vec())
        .unwrap();
    until(&mut out, &mut seen, "sleep-4").await;
    term.signal_foreground(Signal::Int, None).unwrap();
    term.write(b"echo after-$((1+1))\n".to_vec()).unwrap();
    until(&mut out, &mut seen, "after-2").await;
    assert!(!seen.contains("not-interrupted"), "{seen:?}");
    assert!(
        term.inspect().unwrap().foreground.is_none(),
        "no foreground evidence over SSH"
    );
    // The exit status, after all output.
    term.write(b"echo bye; exit 3\n".to_vec()).unwrap();
    let mut exit = term.exit();
    let info = *exit.wait_for(|e| e.is_some()).await.unwrap();
    while let Some(b) = out.recv().await {
        seen.push_str(&String::from_utf8_lossy(&b));
    }
    assert!(seen.contains("bye"), "{seen:?}");
    assert_eq!(info, Some(ExitInfo::Code(3)));
}
