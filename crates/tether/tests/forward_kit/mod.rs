//! Helpers for the forwarding tests (`ssh_forward.rs`,
//! `ssh_forward_modes.rs`): small servers on loopback (HTTP, echo, a
//! deterministic byte stream), `tether ssh` started or run against the
//! test hosts, and waits with deadlines.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};

use crate::common::remote::Remote;
use crate::common::wait_for;

/// What the HTTP server answers.
pub const BODY: &str = "hello through the forward\n";

/// A tiny HTTP server on loopback: every request gets [`BODY`].
pub fn http_server() -> u16 {
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
pub fn echo_server() -> u16 {
    serve(|mut s| {
        let mut r = s.try_clone().unwrap();
        let _ = std::io::copy(&mut r, &mut s);
    })
}

/// A server sending `n` bytes of [`blob`] to each connection.
pub fn blob_server(n: u64) -> u16 {
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
pub fn fill(state: &mut u64, buf: &mut [u8]) {
    for b in buf {
        *state ^= *state << 13;
        *state ^= *state >> 7;
        *state ^= *state << 17;
        *b = (*state >> 24) as u8;
    }
}

pub fn serve(each: impl Fn(TcpStream) + Send + Sync + Copy + 'static) -> u16 {
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
pub fn closed_port() -> u16 {
    tether_testkit::free_port("127.0.0.1").unwrap()
}

pub fn port() -> u16 {
    tether_testkit::free_port("127.0.0.1").unwrap()
}

/// `tether ssh ARGS` in the background, stderr piped.
pub fn spawn(r: &Remote, args: &[&str]) -> Child {
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

pub fn run(r: &Remote, args: &[&str], stdin: &[u8]) -> std::process::Output {
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
pub fn listening(port: u16) {
    wait_for(30, &format!("a listener on port {port}"), || {
        tether_testkit::accepts("127.0.0.1", port).then_some(())
    });
}

/// GET / on 127.0.0.1:`port`: the body.
pub fn get(port: u16) -> String {
    get_at("127.0.0.1", port)
}

/// GET / on `ip`:`port`: the body.
pub fn get_at(ip: &str, port: u16) -> String {
    let mut s = TcpStream::connect((ip, port)).unwrap();
    s.set_read_timeout(Some(std::time::Duration::from_secs(30)))
        .unwrap();
    s.write_all(b"GET / HTTP/1.0\r\nHost: x\r\n\r\n").unwrap();
    let mut all = String::new();
    let _ = s.read_to_string(&mut all);
    all.split("\r\n\r\n").nth(1).unwrap_or_default().to_owned()
}

pub fn stop(mut c: Child) -> String {
    let _ = c.kill();
    let out = c.wait_with_output().unwrap();
    String::from_utf8_lossy(&out.stderr).into_owned()
}

pub fn curl(args: &[&str]) -> Option<String> {
    let out = Command::new("curl")
        .args(["-s", "--max-time", "30"])
        .args(args)
        .output()
        .ok()?;
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The pids whose command line holds every one of `words`.
pub fn pids_with(words: &[&str]) -> Vec<i32> {
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
