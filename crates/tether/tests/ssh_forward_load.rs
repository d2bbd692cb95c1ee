//! `tether ssh -L` under load (issue 36): 10,000 connections through one
//! forward, 100 at a time, each echoed back whole, against real sshd. No
//! limit below the listen backlog and the user's file limit: every
//! connection is answered, the last ones too.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
mod forward_kit;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use common::remote::start;
use forward_kit::*;

const TOTAL: usize = 10_000;
const AT_ONCE: usize = 100;

/// One connection through the forward: a line out, the same line back.
fn one(port: u16, i: usize) -> Result<(), String> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).map_err(|e| format!("connect: {e}"))?;
    s.set_read_timeout(Some(std::time::Duration::from_secs(60)))
        .map_err(|e| e.to_string())?;
    let msg = format!("connection {i}\n");
    s.write_all(msg.as_bytes())
        .map_err(|e| format!("write: {e}"))?;
    s.shutdown(std::net::Shutdown::Write)
        .map_err(|e| format!("shutdown: {e}"))?;
    let mut back = String::new();
    s.read_to_string(&mut back)
        .map_err(|e| format!("read: {e}"))?;
    if back == msg {
        Ok(())
    } else {
        Err(format!("got {back:?}"))
    }
}

#[test]
fn ten_thousand_connections_a_hundred_at_a_time_are_all_answered() {
    let Some(r) = start("fwd-load") else {
        return;
    };
    let echo = echo_server();
    let p = port();
    let c = spawn(&r, &["-N", "-L", &format!("{p}:127.0.0.1:{echo}"), "web01"]);
    listening(p);
    let next = Arc::new(AtomicUsize::new(0));
    let failures = Arc::new(std::sync::Mutex::new(Vec::new()));
    let workers: Vec<_> = (0..AT_ONCE)
        .map(|_| {
            let (next, failures) = (Arc::clone(&next), Arc::clone(&failures));
            std::thread::spawn(move || {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= TOTAL {
                        return;
                    }
                    if let Err(e) = one(p, i) {
                        failures.lock().unwrap().push((i, e));
                    }
                }
            })
        })
        .collect();
    for w in workers {
        w.join().unwrap();
    }
    let failures = failures.lock().unwrap();
    let err = stop(c);
    assert!(
        failures.is_empty(),
        "{} of {TOTAL} failed, first {:?}; tether said: {err}",
        failures.len(),
        failures.iter().take(5).collect::<Vec<_>>()
    );
}

#[test]
fn four_hundred_connections_held_open_at_once_are_all_answered() {
    let Some(r) = start("fwd-held") else {
        return;
    };
    let echo = echo_server();
    let p = port();
    let c = spawn(&r, &["-N", "-L", &format!("{p}:127.0.0.1:{echo}"), "web01"]);
    listening(p);
    let mut held: Vec<TcpStream> = (0..400)
        .map(|_| TcpStream::connect(("127.0.0.1", p)).unwrap())
        .collect();
    let mut answered = 0;
    for (i, s) in held.iter_mut().enumerate() {
        s.set_read_timeout(Some(std::time::Duration::from_secs(20)))
            .unwrap();
        let msg = format!("held {i}\n");
        s.write_all(msg.as_bytes()).unwrap();
        let mut back = vec![0u8; msg.len()];
        if s.read_exact(&mut back).is_ok() && back == msg.as_bytes() {
            answered += 1;
        }
    }
    let err = stop(c);
    assert_eq!(answered, 400, "tether said: {err}");
}
