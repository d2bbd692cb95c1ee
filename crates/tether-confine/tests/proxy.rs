//! The allowlist's proxy alone, over its Unix socket (issue 36): an
//! allowed destination that is this machine or next to it, by IPv6
//! loopback, a link-local address or an IPv4-mapped one, is refused over
//! SOCKS5 and HTTP, with the reason recorded, unless the allowlist names
//! the address; a destination elsewhere is not judged by its form.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::sync::{Arc, Mutex};

use tether_confine::{Allowlist, Denied, Proxy};
use tether_testkit::Scratch;

/// A proxy for `allow` on its own runtime; its socket and its refusals.
struct Running {
    _proxy: Proxy,
    _rt: tokio::runtime::Runtime,
    _s: Scratch,
    socket: std::path::PathBuf,
    denied: Denied,
}

fn start(allow: &[&str]) -> Running {
    let s = Scratch::new("proxy");
    let socket = s.0.join("proxy.sock");
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let list: Vec<String> = allow.iter().map(|a| a.to_string()).collect();
    let denied: Denied = Arc::new(Mutex::new(Vec::new()));
    let proxy = {
        let _g = rt.enter();
        Proxy::start(&socket, Allowlist::new(&list).unwrap(), Arc::clone(&denied)).unwrap()
    };
    Running {
        _proxy: proxy,
        _rt: rt,
        _s: s,
        socket,
        denied,
    }
}

/// SOCKS5 CONNECT to an IPv6 or IPv4 address: the reply's code.
fn socks(p: &Running, ip: std::net::IpAddr, port: u16) -> u8 {
    let mut c = UnixStream::connect(&p.socket).unwrap();
    c.write_all(&[5, 1, 0]).unwrap();
    let mut hello = [0u8; 2];
    c.read_exact(&mut hello).unwrap();
    let mut req = vec![5, 1, 0];
    match ip {
        std::net::IpAddr::V4(v4) => {
            req.push(1);
            req.extend_from_slice(&v4.octets());
        }
        std::net::IpAddr::V6(v6) => {
            req.push(4);
            req.extend_from_slice(&v6.octets());
        }
    }
    req.extend_from_slice(&port.to_be_bytes());
    c.write_all(&req).unwrap();
    let mut reply = [0u8; 10];
    c.read_exact(&mut reply).unwrap();
    reply[1]
}

/// A plain HTTP request through the proxy: its status line.
fn http(p: &Running, url: &str) -> String {
    let mut c = UnixStream::connect(&p.socket).unwrap();
    write!(c, "GET {url} HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
    let mut text = String::new();
    let _ = c.read_to_string(&mut text);
    text.lines().next().unwrap_or("").to_owned()
}

fn taken(p: &Running) -> Vec<String> {
    std::mem::take(&mut *p.denied.lock().unwrap())
}

#[test]
fn this_machine_is_refused_by_any_form_of_its_address_unless_named() {
    let ip = |s: &str| s.parse::<std::net::IpAddr>().unwrap();
    // A listener on IPv6 loopback, when this machine has one.
    let v6 = std::net::TcpListener::bind("[::1]:0").ok();
    let p = start(&["*:*"]);
    if let Some(l) = &v6 {
        let port = l.local_addr().unwrap().port();
        assert_eq!(socks(&p, ip("::1"), port), 2);
        let d = taken(&p);
        assert!(d[0].contains("::1, a loopback address"), "{d:?}");
        assert!(
            d[0].contains(&format!("name [::1]:{port} in the allowlist")),
            "{d:?}"
        );
    } else {
        eprintln!("SKIPPED IPv6 loopback: this machine has none");
    }
    // The cloud's metadata service, and loopback in IPv4-mapped form.
    assert_eq!(socks(&p, ip("169.254.169.254"), 80), 2);
    assert_eq!(socks(&p, ip("::ffff:127.0.0.1"), 80), 2);
    let status = http(&p, "http://[::ffff:7f00:1]:80/");
    assert!(status.contains("403"), "{status}");
    let d = taken(&p);
    assert!(d[0].contains("a link-local address"), "{d:?}");
    assert!(d[1].contains("127.0.0.1, a loopback address"), "{d:?}");
    assert_eq!(d.len(), 3, "{d:?}");

    // Named as an address: reached (the listener answers the SOCKS reply
    // with success).
    if let Some(l) = &v6 {
        let port = l.local_addr().unwrap().port();
        let p = start(&["[::1]:*"]);
        assert_eq!(socks(&p, ip("::1"), port), 0);
        assert_eq!(taken(&p), Vec::<String>::new());
    }
}
