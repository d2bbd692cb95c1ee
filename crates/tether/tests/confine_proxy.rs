//! The allowlist's proxy and this machine (issue 36): an allowed name
//! that resolves to loopback, or `*` reaching one of this machine's own
//! addresses, would take a confined session to the services outside its
//! fence. Refused, with the reason in the result's `denied`, unless the
//! allowlist names that address itself. As root and as the unprivileged
//! test user.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
mod fenced;

use fenced::{World, bwrap_missing, everyone, output};

/// An HTTP server outside the fence, on every address of this machine,
/// answering `hello`; its port.
fn server() -> u16 {
    let server = std::net::TcpListener::bind("0.0.0.0:0").unwrap();
    let port = server.local_addr().unwrap().port();
    std::thread::spawn(move || {
        use std::io::{Read, Write};
        for mut conn in server.incoming().flatten() {
            let mut buf = [0u8; 4096];
            let _ = conn.read(&mut buf);
            let _ = conn.write_all(b"HTTP/1.0 200 OK\r\nContent-Length: 6\r\n\r\nhello\n");
        }
    });
    port
}

/// This machine's outward address, when it has a route out.
fn outward() -> Option<std::net::IpAddr> {
    let probe = std::net::UdpSocket::bind("0.0.0.0:0").ok()?;
    probe.connect("192.0.2.1:9").ok()?;
    let ip = probe.local_addr().ok()?.ip();
    (!ip.is_loopback()).then_some(ip)
}

/// `curl` through the session's proxy: the body, or the HTTP code.
fn curl(url: &str) -> String {
    format!("curl -s -w ' %{{http_code}}' {url}")
}

#[test]
fn an_allowed_name_resolving_to_this_machine_is_refused_unless_its_address_is_named() {
    if bwrap_missing() {
        return;
    }
    let port = server();
    for who in everyone() {
        let w = World::new(who);
        let by_name = format!("localhost:{port}");
        let by_address = format!("127.0.0.1:{port}");
        let any = format!("*:{port}");
        let run = |session: &str, allow: &str, cmd: &str| {
            w.run(&[
                "-s",
                session,
                "--confine",
                "workspace",
                "--allow-net",
                allow,
                "--",
                cmd,
            ])
        };

        // The name is allowed, but it is this machine's loopback: refused,
        // and the reason says what would allow it.
        let r = run(
            "name",
            &by_name,
            &curl(&format!("http://localhost:{port}/")),
        );
        assert!(output(&r).contains("403"), "{who:?}: {r}");
        assert!(!output(&r).contains("hello"), "{who:?}: {r}");
        let denied = r["confinement"]["denied"].as_array().unwrap();
        let record = denied[0].as_str().unwrap();
        assert!(
            record.starts_with(&format!("connect localhost:{port}: it resolves to ")),
            "{who:?}: {r}"
        );
        assert!(record.contains("a loopback address"), "{who:?}: {r}");
        // Over SOCKS5 (the name resolved by the proxy): refused too.
        let socks = format!(
            "curl -s -w ' %{{http_code}}' --socks5-hostname 127.0.0.1:3128 http://localhost:{port}/ 2>&1"
        );
        let r = run("name", &by_name, &socks);
        assert!(!output(&r).contains("hello"), "{who:?}: {r}");
        assert_eq!(r["confinement"]["denied"].as_array().unwrap().len(), 1);

        // `*` for the port, and an address of this machine's: refused.
        let r = run("any", &any, &curl(&format!("http://127.0.0.1:{port}/")));
        assert!(output(&r).contains("403"), "{who:?}: {r}");
        let mapped = curl(&format!("http://[::ffff:127.0.0.1]:{port}/"));
        let r = run("any", &any, &mapped);
        assert!(!output(&r).contains("hello"), "{who:?}: {r}");
        if let Some(ip) = outward() {
            let r = run("any", &any, &curl(&format!("http://{ip}:{port}/")));
            assert!(output(&r).contains("403"), "{who:?}: {ip}: {r}");
            let record = r["confinement"]["denied"][0].as_str().unwrap_or("");
            assert!(record.contains("an address of this machine"), "{r}");
        } else {
            eprintln!("SKIPPED this machine's outward address: no route out");
        }

        // The allowlist names the address itself: reached.
        let r = run(
            "address",
            &by_address,
            &curl(&format!("http://127.0.0.1:{port}/")),
        );
        assert!(output(&r).contains("hello"), "{who:?}: {r}");
        assert_eq!(r["confinement"]["denied"], serde_json::json!([]), "{r}");
        // And with it named, the name that resolves to it may pass too.
        let both = format!("{by_name},{by_address}");
        let r = w.run(&[
            "-s",
            "both",
            "--confine",
            "workspace",
            "--allow-net",
            &by_name,
            "--allow-net",
            &by_address,
            "--",
            &curl(&format!("http://localhost:{port}/")),
        ]);
        assert!(output(&r).contains("hello"), "{who:?}: {both}: {r}");
    }
}
