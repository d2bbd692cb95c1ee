//! `tether ssh` port forwarding against real sshd: `-L` (TCP and Unix
//! sockets, 100 connections at once, a large transfer checked by
//! checksum, a target that refuses), `-D` (curl through SOCKS 5 and 4a),
//! `-R` (fixed, port 0 allocated and printed, dynamic), `-W`, `-N`, `-f`,
//! ExitOnForwardFailure, ClearAllForwardings and LocalForward in
//! ssh_config.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};

use common::Person;
use common::remote::{Remote, start};
use common::wait_for;
use tether_transport::{ExitInfo, Terminal};

/// What the HTTP server answers.
const BODY: &str = "hello through the forward\n";

/// A tiny HTTP server on loopback: every request gets [`BODY`].
fn http_server() -> u16 {
    serve(|mut s| {
        let mut buf = [0u8; 4096];
        let mut got = Vec::new();
        while !got.windows(4).any(|w| w == b"\r\n\r\n") {
            match s.read(&mut buf) {
                Ok(0) | Err(_) => return,
                Ok(n) => got.extend_from_slice(&buf[..n]),
            }
        }
        let _ = write!(
            s,
            "HTTP/1.0 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{BODY}",
            BODY.len()
        );
    })
}

/// An echo server on loopback.
fn echo_server() -> u16 {
    serve(|mut s| {
        let mut r = s.try_clone().unwrap();
        let _ = std::io::copy(&mut r, &mut s);
    })
}

/// A server sending `n` bytes of [`blob`] to each connection.
fn blob_server(n: u64) -> u16 {
    serve(move |mut s| {
        let mut sent = 0u64;
        let mut state = 1u64;
        let mut buf = vec![0u8; 64 * 1024];
        while sent < n {
            let len = usize::try_from((n - sent).min(buf.len() as u64)).unwrap();
            fill(&mut state, &mut buf[..len]);
            if s.write_all(&buf[..len]).is_err() {
                return;
            }
            sent += len as u64;
        }
    })
}

/// Deterministic bytes (xorshift), the same on both sides.
fn fill(state: &mut u64, buf: &mut [u8]) {
    for b in buf {
        *state ^= *state << 13;
        *state ^= *state >> 7;
        *state ^= *state << 17;
        *b = (*state >> 24) as u8;
    }
}

fn serve(each: impl Fn(TcpStream) + Send + Sync + Copy + 'static) -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for s in l.incoming().flatten() {
            std::thread::spawn(move || each(s));
        }
    });
    port
}

/// A port nothing listens on (bound, then let go).
fn closed_port() -> u16 {
    tether_testkit::free_port("127.0.0.1").unwrap()
}

fn port() -> u16 {
    tether_testkit::free_port("127.0.0.1").unwrap()
}

/// `tether ssh ARGS` in the background, stderr piped.
fn spawn(r: &Remote, args: &[&str]) -> Child {
    let mut all = vec!["ssh"];
    all.extend_from_slice(args);
    r.daemon
        .cmd(&all)
        .env("HOME", &r.home.0)
        .env_remove("SSH_AUTH_SOCK")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn run(r: &Remote, args: &[&str], stdin: &[u8]) -> std::process::Output {
    let mut all = vec!["ssh"];
    all.extend_from_slice(args);
    let mut child = r
        .daemon
        .cmd(&all)
        .env("HOME", &r.home.0)
        .env_remove("SSH_AUTH_SOCK")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    child.wait_with_output().unwrap()
}

/// Waits until something accepts at 127.0.0.1:`port`.
fn listening(port: u16) {
    wait_for(30, &format!("a listener on port {port}"), || {
        TcpStream::connect(("127.0.0.1", port)).ok().map(|_| ())
    });
}

/// GET / on 127.0.0.1:`port`: the body.
fn get(port: u16) -> String {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(std::time::Duration::from_secs(30)))
        .unwrap();
    s.write_all(b"GET / HTTP/1.0\r\nHost: x\r\n\r\n").unwrap();
    let mut all = String::new();
    let _ = s.read_to_string(&mut all);
    all.split("\r\n\r\n").nth(1).unwrap_or_default().to_owned()
}

fn stop(mut c: Child) -> String {
    let _ = c.kill();
    let out = c.wait_with_output().unwrap();
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn curl(args: &[&str]) -> Option<String> {
    let out = Command::new("curl")
        .args(["-s", "--max-time", "30"])
        .args(args)
        .output()
        .ok()?;
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}

#[test]
fn local_forward_reaches_a_server_and_a_refusing_target_only_closes_its_connection() {
    let Some(r) = start("fwd-local") else {
        return;
    };
    let http = http_server();
    let (p, refused) = (port(), port());
    let spec = format!("{p}:127.0.0.1:{http}");
    let bad = format!("{refused}:127.0.0.1:{}", closed_port());
    let c = spawn(&r, &["-N", "-L", &spec, "-L", &bad, "web01"]);
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
fn exit_on_forward_failure_with_a_taken_port_exits_255_before_the_session() {
    let Some(r) = start("fwd-eoff") else {
        return;
    };
    let taken = TcpListener::bind("127.0.0.1:0").unwrap();
    let p = taken.local_addr().unwrap().port();
    let spec = format!("{p}:127.0.0.1:80");
    let out = run(
        &r,
        &[
            "-o",
            "ExitOnForwardFailure=yes",
            "-L",
            &spec,
            "web01",
            "echo SESSION",
        ],
        b"",
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(255), "{err} {out:?}");
    assert!(!String::from_utf8_lossy(&out.stdout).contains("SESSION"));
    assert!(err.contains("cannot listen on 127.0.0.1"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    // Without it: one warning, and the session runs.
    let out = run(&r, &["-L", &spec, "web01", "echo SESSION"], b"");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "SESSION\n");
    assert!(err.contains("warning") && err.lines().count() == 1, "{err}");
    // ClearAllForwardings: nothing is bound, so nothing fails.
    let out = run(
        &r,
        &[
            "-o",
            "ExitOnForwardFailure=yes",
            "-o",
            "ClearAllForwardings=yes",
            "-L",
            &spec,
            "web01",
            "echo SESSION",
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    drop(taken);
    // A remote forward the server refuses (a privileged port, for a user
    // who is not root): 255 before the session, or a warning without.
    if tether_testkit::user() != "root" {
        let out = run(
            &r,
            &[
                "-o",
                "ExitOnForwardFailure=yes",
                "-R",
                "1:127.0.0.1:80",
                "web01",
                "echo SESSION",
            ],
            b"",
        );
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(255), "{err}");
        assert!(err.contains("refused the remote forward"), "{err}");
        assert!(out.stdout.is_empty());
        let out = run(&r, &["-R", "1:127.0.0.1:80", "web01", "echo SESSION"], b"");
        assert_eq!(
            (
                out.status.code(),
                String::from_utf8_lossy(&out.stdout).as_ref()
            ),
            (Some(0), "SESSION\n"),
            "{out:?}"
        );
    }
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
    assert!(TcpStream::connect(("127.0.0.5", p)).is_err());
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
fn forwarded_connections_close_when_the_session_ends() {
    let Some(r) = start("fwd-end") else {
        return;
    };
    let echo = echo_server();
    let p = port();
    let flag = r.home.0.join("session-may-end");
    let script = format!(
        "while [ ! -e {} ]; do sleep 0.05; done; echo ENDED",
        flag.display()
    );
    let c = spawn(
        &r,
        &["-L", &format!("{p}:127.0.0.1:{echo}"), "web01", &script],
    );
    listening(p);
    let mut s = TcpStream::connect(("127.0.0.1", p)).unwrap();
    s.set_read_timeout(Some(std::time::Duration::from_secs(30)))
        .unwrap();
    s.write_all(b"ping\n").unwrap();
    let mut buf = [0u8; 5];
    s.read_exact(&mut buf).unwrap();
    assert_eq!(&buf, b"ping\n");
    // The session's command ends: tether exits, and the open forwarded
    // connection is closed rather than kept.
    std::fs::write(&flag, "").unwrap();
    let out = c.wait_with_output().unwrap();
    assert_eq!(
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).as_ref()
        ),
        (Some(0), "ENDED\n")
    );
    let mut rest = Vec::new();
    assert_eq!(s.read_to_end(&mut rest).unwrap_or(0), 0);
    assert!(TcpStream::connect(("127.0.0.1", p)).is_err());
}

#[test]
fn a_forward_beside_an_interactive_session() {
    let Some(r) = start("fwd-tty") else {
        return;
    };
    let http = http_server();
    let p = port();
    let spec = format!("{p}:127.0.0.1:{http}");
    let person = Person::spawn(
        &["ssh", "-L", &spec, "web01"],
        &r.daemon,
        &[("HOME", r.home.0.display().to_string())],
    );
    person.pty.write(b"echo typed-$((6*7))\r".to_vec()).unwrap();
    person.sees("typed-42");
    assert_eq!(get(p), BODY);
    person.pty.write(b"exit 3\r".to_vec()).unwrap();
    assert_eq!(person.exit(), ExitInfo::Code(3));
}

#[test]
fn stdio_forward_carries_stdin_and_stdout() {
    let Some(r) = start("fwd-stdio") else {
        return;
    };
    let echo = echo_server();
    let out = run(
        &r,
        &["-W", &format!("127.0.0.1:{echo}"), "web01"],
        b"through -W\n",
    );
    assert_eq!(
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).as_ref()
        ),
        (Some(0), "through -W\n"),
        "{out:?}"
    );
    let out = run(
        &r,
        &["-W", &format!("127.0.0.1:{}", closed_port()), "web01"],
        b"",
    );
    assert_eq!(out.status.code(), Some(255), "{out:?}");
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
fn local_forward_and_session_type_from_ssh_config() {
    let Some(r) = start("fwd-config") else {
        return;
    };
    let http = http_server();
    let p = port();
    let config = r.home.0.join(".ssh/config");
    let text = std::fs::read_to_string(&config).unwrap();
    std::fs::write(
        &config,
        text.replace(
            "Host web01\n",
            &format!("Host web01\n  LocalForward {p} 127.0.0.1:{http}\n  SessionType none\n"),
        ),
    )
    .unwrap();
    // SessionType none: as -N, no command and no shell.
    let c = spawn(&r, &["web01"]);
    listening(p);
    assert_eq!(get(p), BODY);
    stop(c);
}

/// The pids whose command line holds every one of `words`.
fn pids_with(words: &[&str]) -> Vec<i32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            let args: Vec<String> = cmd
                .split(|b| *b == 0)
                .map(|a| String::from_utf8_lossy(a).into_owned())
                .collect();
            words.iter().all(|w| args.iter().any(|a| a == w))
        })
        .collect()
}

#[test]
fn background_after_forwarding_then_ended_by_its_pid() {
    let Some(r) = start("fwd-bg") else {
        return;
    };
    let http = http_server();
    let p = port();
    let spec = format!("{p}:127.0.0.1:{http}");
    let status = r
        .daemon
        .cmd(&[
            "ssh",
            "-o",
            "ForkAfterAuthentication=yes",
            "-N",
            "-L",
            &spec,
            "web01",
        ])
        .env("HOME", &r.home.0)
        .env_remove("SSH_AUTH_SOCK")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert_eq!(status.code(), Some(0));
    // Returned once forwarding: the port answers now, without waiting.
    assert_eq!(get(p), BODY);
    let pids = pids_with(&["ssh", "ForkAfterAuthentication=yes", &spec]);
    assert_eq!(pids.len(), 1, "{pids:?}");
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pids[0]),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    wait_for(30, "the background tether to end", || {
        (!common::alive(pids[0])).then_some(())
    });
    assert!(TcpStream::connect(("127.0.0.1", p)).is_err());

    // A background copy that fails (ExitOnForwardFailure, a taken port):
    // the foreground one exits with its 255, and its line is on stderr.
    let taken = TcpListener::bind("127.0.0.1:0").unwrap();
    let t = taken.local_addr().unwrap().port();
    let out = r
        .daemon
        .cmd(&[
            "ssh",
            "-f",
            "-N",
            "-o",
            "ExitOnForwardFailure=yes",
            "-L",
            &format!("{t}:127.0.0.1:{http}"),
            "web01",
        ])
        .env("HOME", &r.home.0)
        .env_remove("SSH_AUTH_SOCK")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(255), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot listen"));
    // -f with nothing to run in the background is refused at once.
    let out = run(&r, &["-f", "web01"], b"");
    assert_eq!(out.status.code(), Some(255), "{out:?}");
}
