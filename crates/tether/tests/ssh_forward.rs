//! `tether ssh` port forwarding against real sshd: `-L` (TCP and Unix
//! sockets, 100 connections at once, a large transfer checked by
//! checksum, a target that refuses), `-D` (curl through SOCKS 5 and 4a),
//! `-R` (fixed, port 0 allocated and printed, dynamic, to a socket,
//! PermitRemoteOpen), GatewayPorts, StreamLocalBindMask/Unlink.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
mod forward_kit;

use std::io::{Read, Write};
use std::net::TcpStream;

use common::remote::start;
use common::wait_for;
use forward_kit::*;

#[test]
fn local_forward_reaches_a_server_and_a_refusing_target_only_closes_its_connection() {
    let Some(r) = start("fwd-local") else {
        return;
    };
    let http = http_server();
    let (p, refused) = (port(), port());
    let spec = format!("{p}:127.0.0.1:{http}");
    let bad = format!("{refused}:127.0.0.1:{}", closed_port());
    let c = spawn(&r, &["-N", "-L", &bad, "-L", &spec, "web01"]);
    // Set up in order: the last one listening means both are.
    listening(p);
    assert_eq!(get(p), BODY);
    // The refusing target: accepted here, then closed with nothing read.
    let mut s = TcpStream::connect(("127.0.0.1", refused)).unwrap();
    s.set_read_timeout(Some(std::time::Duration::from_secs(30)))
        .unwrap();
    let mut buf = Vec::new();
    assert_eq!(s.read_to_end(&mut buf).unwrap(), 0);
    // The session lives on.
    assert_eq!(get(p), BODY);
    let err = stop(c);
    assert!(err.contains("could not connect"), "{err}");
}

#[test]
fn a_hundred_connections_at_once_through_one_forward() {
    let Some(r) = start("fwd-many") else {
        return;
    };
    let echo = echo_server();
    let p = port();
    let c = spawn(&r, &["-N", "-L", &format!("{p}:127.0.0.1:{echo}"), "web01"]);
    listening(p);
    let threads: Vec<_> = (0..100)
        .map(|i| {
            std::thread::spawn(move || {
                let mut s = TcpStream::connect(("127.0.0.1", p)).unwrap();
                s.set_read_timeout(Some(std::time::Duration::from_secs(60)))
                    .unwrap();
                let msg = format!("connection {i} says hello\n").repeat(100);
                s.write_all(msg.as_bytes()).unwrap();
                s.shutdown(std::net::Shutdown::Write).unwrap();
                let mut back = String::new();
                s.read_to_string(&mut back).unwrap();
                back == msg
            })
        })
        .collect();
    let ok = threads
        .into_iter()
        .filter_map(|t| t.join().ok().filter(|ok| *ok))
        .count();
    assert_eq!(ok, 100);
    stop(c);
}

#[test]
fn a_large_transfer_through_local_forward_keeps_every_byte() {
    let Some(r) = start("fwd-large") else {
        return;
    };
    // TETHER_FORWARD_MIB sets the size (the benchmark's is 1024).
    let mib: u64 = std::env::var("TETHER_FORWARD_MIB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(64);
    let n = mib * 1024 * 1024;
    let blob = blob_server(n);
    let p = port();
    let c = spawn(&r, &["-N", "-L", &format!("{p}:127.0.0.1:{blob}"), "web01"]);
    listening(p);
    let mut s = TcpStream::connect(("127.0.0.1", p)).unwrap();
    s.set_read_timeout(Some(std::time::Duration::from_secs(120)))
        .unwrap();
    let (mut state, mut got, mut diff) = (1u64, 0u64, 0u64);
    let mut buf = vec![0u8; 256 * 1024];
    let mut want = vec![0u8; 256 * 1024];
    loop {
        let k = s.read(&mut buf).unwrap();
        if k == 0 {
            break;
        }
        fill(&mut state, &mut want[..k]);
        diff += buf[..k]
            .iter()
            .zip(&want[..k])
            .filter(|(a, b)| a != b)
            .count() as u64;
        got += k as u64;
    }
    assert_eq!((got, diff), (n, 0));
    stop(c);
}

#[test]
fn dynamic_forward_serves_socks5_and_socks4a() {
    let Some(r) = start("fwd-socks") else {
        return;
    };
    if curl(&["--version"]).is_none() {
        eprintln!("SKIPPED: curl is not installed");
        return;
    }
    let http = http_server();
    let p = port();
    let c = spawn(&r, &["-N", "-D", &p.to_string(), "web01"]);
    listening(p);
    let url = format!("http://localhost:{http}/");
    let proxy = format!("127.0.0.1:{p}");
    assert_eq!(
        curl(&["--socks5-hostname", &proxy, &url]).as_deref(),
        Some(BODY)
    );
    assert_eq!(curl(&["--socks4a", &proxy, &url]).as_deref(), Some(BODY));
    assert_eq!(
        curl(&["--socks5", &proxy, &format!("http://127.0.0.1:{http}/")]).as_deref(),
        Some(BODY)
    );
    stop(c);
}

#[test]
fn remote_forwards_fixed_allocated_and_dynamic() {
    let Some(r) = start("fwd-remote") else {
        return;
    };
    let http = http_server();
    let (fixed, socks) = (port(), port());
    let c = spawn(
        &r,
        &[
            "-N",
            "-R",
            &format!("{fixed}:127.0.0.1:{http}"),
            "-R",
            &format!("0:127.0.0.1:{http}"),
            "-R",
            &socks.to_string(),
            "web01",
        ],
    );
    // The server (on this machine) listens on its loopback.
    listening(fixed);
    let body = get(fixed);
    if body != BODY {
        panic!("{body:?}: {}", stop(c));
    }
    listening(socks);
    if curl(&["--version"]).is_some() {
        let url = format!("http://localhost:{http}/");
        assert_eq!(
            curl(&["--socks5-hostname", &format!("127.0.0.1:{socks}"), &url]).as_deref(),
            Some(BODY)
        );
    }
    let err = stop(c);
    let allocated: u16 = err
        .lines()
        .find_map(|l| l.strip_prefix("Allocated port "))
        .and_then(|l| l.split_whitespace().next())
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("no Allocated port line: {err}"));
    assert!(
        err.contains(&format!(
            "Allocated port {allocated} for remote forward to 127.0.0.1:{http}"
        )),
        "{err}"
    );
}

#[test]
fn permit_remote_open_limits_a_dynamic_remote_forward() {
    let Some(r) = start("fwd-permit") else {
        return;
    };
    if curl(&["--version"]).is_none() {
        eprintln!("SKIPPED: curl is not installed");
        return;
    }
    let http = http_server();
    let socks = port();
    let c = spawn(
        &r,
        &[
            "-N",
            "-o",
            &format!("PermitRemoteOpen=localhost:{http}"),
            "-R",
            &socks.to_string(),
            "web01",
        ],
    );
    listening(socks);
    let proxy = format!("127.0.0.1:{socks}");
    assert_eq!(
        curl(&[
            "--socks5-hostname",
            &proxy,
            &format!("http://localhost:{http}/")
        ])
        .as_deref(),
        Some(BODY)
    );
    // The same server by another name is not in the list.
    assert_eq!(
        curl(&[
            "--socks5-hostname",
            &proxy,
            &format!("http://127.0.0.1:{http}/")
        ])
        .as_deref(),
        Some("")
    );
    let err = stop(c);
    assert!(err.contains("not allowed by PermitRemoteOpen"), "{err}");
}

#[test]
fn remote_allocated_port_is_usable() {
    let Some(r) = start("fwd-remote0") else {
        return;
    };
    let http = http_server();
    let mut c = spawn(&r, &["-N", "-R", &format!("0:127.0.0.1:{http}"), "web01"]);
    let mut err = c.stderr.take().unwrap();
    let mut line = Vec::new();
    let mut b = [0u8; 1];
    while !line.ends_with(b"\n") && err.read(&mut b).unwrap_or(0) == 1 {
        line.push(b[0]);
    }
    let line = String::from_utf8_lossy(&line).into_owned();
    let p: u16 = line
        .strip_prefix("Allocated port ")
        .and_then(|l| l.split_whitespace().next())
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("{line:?}"));
    listening(p);
    assert_eq!(get(p), BODY);
    stop(c);
}

#[test]
fn gateway_ports_listens_beyond_loopback_only_when_asked() {
    let Some(r) = start("fwd-gateway") else {
        return;
    };
    let http = http_server();
    let (p, q) = (port(), port());
    let c = spawn(&r, &["-N", "-L", &format!("{p}:127.0.0.1:{http}"), "web01"]);
    listening(p);
    // 127.0.0.1 only: another loopback address is not served.
    assert!(!tether_testkit::accepts("127.0.0.5", p));
    stop(c);
    let c = spawn(
        &r,
        &["-N", "-g", "-L", &format!("{q}:127.0.0.1:{http}"), "web01"],
    );
    listening(q);
    let mut s = TcpStream::connect(("127.0.0.5", q)).unwrap();
    s.write_all(b"GET / HTTP/1.0\r\n\r\n").unwrap();
    let mut all = String::new();
    s.read_to_string(&mut all).unwrap();
    assert!(all.ends_with(BODY), "{all}");
    stop(c);
}

#[test]
fn unix_socket_forwards_both_ways() {
    let Some(r) = start("fwd-unix") else {
        return;
    };
    let http = http_server();
    // World-reachable: sshd connects as the login user.
    let dir = std::env::temp_dir().join(format!("tether-fwd-unix-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
    let remote_sock = dir.join("remote.sock");
    let l = std::os::unix::net::UnixListener::bind(&remote_sock).unwrap();
    std::fs::set_permissions(&remote_sock, std::fs::Permissions::from_mode(0o777)).unwrap();
    std::thread::spawn(move || {
        for s in l.incoming().flatten() {
            let mut s2 = s.try_clone().unwrap();
            let mut s = s;
            std::thread::spawn(move || {
                let _ = std::io::copy(&mut s, &mut s2);
            });
        }
    });
    let local_sock = dir.join("local.sock");
    let served_sock = dir.join("served.sock");
    // A stale socket in the way: refused, unless StreamLocalBindUnlink.
    drop(std::os::unix::net::UnixListener::bind(&local_sock).unwrap());
    let out = run(
        &r,
        &[
            "-o",
            "ExitOnForwardFailure=yes",
            "-L",
            &format!("{}:127.0.0.1:{http}", local_sock.display()),
            "web01",
            "true",
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(255), "{out:?}");
    let p = port();
    let c = spawn(
        &r,
        &[
            "-N",
            "-o",
            "StreamLocalBindUnlink=yes",
            "-R",
            &format!("{}:127.0.0.1:{http}", served_sock.display()),
            "-L",
            &format!("{}:127.0.0.1:{http}", local_sock.display()),
            "-L",
            &format!("{p}:{}", remote_sock.display()),
            "web01",
        ],
    );
    listening(p);
    let mut s = TcpStream::connect(("127.0.0.1", p)).unwrap();
    s.write_all(b"to a unix socket\n").unwrap();
    s.shutdown(std::net::Shutdown::Write).unwrap();
    let mut back = String::new();
    s.read_to_string(&mut back).unwrap();
    assert_eq!(back, "to a unix socket\n");
    let mut u = wait_for(30, "the local socket", || {
        std::os::unix::net::UnixStream::connect(&local_sock).ok()
    });
    // StreamLocalBindMask's default, 0177: the owner only.
    use std::os::unix::fs::MetadataExt;
    assert_eq!(
        std::fs::metadata(&local_sock).unwrap().mode() & 0o777,
        0o600
    );
    u.write_all(b"GET / HTTP/1.0\r\n\r\n").unwrap();
    let mut all = String::new();
    u.read_to_string(&mut all).unwrap();
    assert!(all.ends_with(BODY), "{all}");
    // -R with a socket path: the server listens there.
    let mut u = wait_for(30, "the served socket", || {
        std::os::unix::net::UnixStream::connect(&served_sock).ok()
    });
    u.write_all(b"GET / HTTP/1.0\r\n\r\n").unwrap();
    let mut all = String::new();
    u.read_to_string(&mut all).unwrap();
    assert!(all.ends_with(BODY), "{all}");
    stop(c);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_chain_of_local_and_remote_forwards_as_openssh_regress_builds_it() {
    let Some(r) = start("fwd-chain") else {
        return;
    };
    // OpenSSH's regress/forwarding.sh: -La:127.0.0.1:b -Rb:127.0.0.1:c,
    // each link's c the link before's a, the first c the server.
    let mut last = http_server();
    let mut args: Vec<String> = vec!["-f".into(), "-N".into()];
    for _ in 0..3 {
        let (a, b) = (port(), port());
        args.push(format!("-L{a}:127.0.0.1:{b}"));
        args.push(format!("-R{b}:127.0.0.1:{last}"));
        last = a;
    }
    args.push("web01".into());
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    // -f returns once every link is set up (the -R ones too).
    let mut all = vec!["ssh"];
    all.extend_from_slice(&refs);
    // stdout and stderr not piped: the background copy keeps them.
    let status = r
        .daemon
        .cmd(&all)
        .env("HOME", &r.home.0)
        .env_remove("SSH_AUTH_SOCK")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .unwrap();
    assert_eq!(status.code(), Some(0));
    let got = get(last);
    for pid in pids_with(&["ssh", &args[2]]) {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(pid),
            nix::sys::signal::Signal::SIGTERM,
        );
    }
    assert_eq!(got, BODY);
}
