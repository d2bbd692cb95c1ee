//! The daemon's protocol has bounds, and a client that breaks them gets an
//! error and loses its own connection only: a line without a newline
//! never grows the daemon past the line bound, an attach with an
//! impossible terminal size (at the request or in a resize frame) or an
//! oversized frame is refused, and every session lives on.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::net::UnixStream;
use std::time::Duration;

use common::Daemon;
use tether_daemon::frame::{Frame, read_frame};
use tether_daemon::lines::{MAX_HELLO_LINE, MAX_REQUEST_LINE, human_size};
use tether_daemon::protocol::{Reply, Request};

/// The shell pid of session `name` (created on first use).
fn shell_pid(d: &Daemon, name: &str) -> String {
    let out = d.run(&["run", "-s", name, "--norc", "--", "echo $$"]);
    assert!(out.status.success(), "{out:?}");
    let pid = String::from_utf8(out.stdout).unwrap().trim().to_owned();
    assert!(pid.parse::<u32>().is_ok(), "{pid:?}");
    pid
}

/// A kernel figure of the daemon's memory, in KiB (`VmHWM`: the most it
/// ever had resident).
fn kib(pid: i32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with(field)).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// A raw connection: the socket, and a reader of its replies.
fn connect(d: &Daemon, hello: bool) -> (UnixStream, BufReader<UnixStream>) {
    let s = UnixStream::connect(d.dir.join("daemon.sock")).unwrap();
    // A deadline for a daemon that would never answer, not a measurement.
    s.set_read_timeout(Some(Duration::from_secs(120))).unwrap();
    let mut r = BufReader::new(s.try_clone().unwrap());
    let mut w = s;
    if hello {
        let h = tether_daemon::client::hello("daemon_bounds test", None, false);
        writeln!(w, "{}", serde_json::to_string(&h).unwrap()).unwrap();
        assert!(matches!(reply(&mut r), Reply::Ok(_)));
    }
    (w, r)
}

fn reply(r: &mut BufReader<UnixStream>) -> Reply {
    let mut line = String::new();
    r.read_line(&mut line).unwrap();
    serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line:?}"))
}

fn error_message(reply: Reply) -> String {
    match reply {
        Reply::Error(f) => f.message,
        other => panic!("expected an error, got {other:?}"),
    }
}

/// Writes `total` bytes of `x` with no newline, until the daemon stops
/// reading; returns how many it took.
fn flood(w: &mut UnixStream, total: usize) -> usize {
    let chunk = vec![b'x'; 1 << 20];
    let mut sent = 0;
    while sent < total {
        match w.write(&chunk) {
            Ok(n) => sent += n,
            Err(_) => break,
        }
    }
    let _ = w.shutdown(std::net::Shutdown::Write);
    sent
}

fn closed(r: &mut BufReader<UnixStream>) -> bool {
    let mut rest = Vec::new();
    matches!(r.read_to_end(&mut rest), Ok(0) | Err(_)) && rest.is_empty()
}

#[test]
fn a_line_without_a_newline_is_refused_at_the_bound_and_memory_stays_bounded() {
    let d = Daemon::new("bounds-line");
    let before = shell_pid(&d, "keep");
    let pid = d.pid();

    // Before the hello: a line of 16 times the hello's bound.
    let (mut w, mut r) = connect(&d, false);
    let writer = std::thread::spawn(move || flood(&mut w, 16 * MAX_HELLO_LINE));
    let msg = error_message(reply(&mut r));
    assert!(msg.contains(&human_size(MAX_HELLO_LINE as u64)), "{msg}");
    assert!(closed(&mut r), "the connection stays open after {msg}");
    writer.join().unwrap();

    // After the hello: three times the bound (384 MiB) without a newline.
    let (mut w, mut r) = connect(&d, true);
    let total = 3 * MAX_REQUEST_LINE;
    let writer = std::thread::spawn(move || flood(&mut w, total));
    let msg = error_message(reply(&mut r));
    assert!(
        msg.contains(&human_size(MAX_REQUEST_LINE as u64)) && msg.contains("without a newline"),
        "{msg}"
    );
    assert!(closed(&mut r), "the connection stays open after {msg}");
    let sent = writer.join().unwrap();
    assert!(sent < total, "the daemon read all {sent} bytes");

    // The daemon never held much more than the bound, nor the flood.
    let peak = kib(pid, "VmHWM:");
    eprintln!("the daemon took {sent} bytes of the line; its peak RSS is {peak} KiB");
    let limit = (MAX_REQUEST_LINE as u64 >> 10) + (64 << 10);
    assert!(peak < limit, "the daemon's peak RSS is {peak} KiB");
    assert_eq!(d.pid(), pid, "the daemon was replaced");
    assert_eq!(shell_pid(&d, "keep"), before, "the session was restarted");
}

#[test]
fn an_attach_with_an_impossible_size_is_refused_and_every_session_lives() {
    let d = Daemon::new("bounds-attach");
    let a = shell_pid(&d, "a");
    let b = shell_pid(&d, "b");
    let pid = d.pid();

    // At the request: an error to this client, before any frame.
    let (mut w, mut r) = connect(&d, true);
    let attach = |rows, cols| Request::Attach {
        session: "a".into(),
        rows,
        cols,
        host: None,
        resume: None,
    };
    let line = serde_json::to_string(&attach(65535, 65535)).unwrap();
    writeln!(w, "{line}").unwrap();
    let msg = error_message(reply(&mut r));
    assert!(msg.contains("65535") && msg.contains("rows"), "{msg}");
    assert!(closed(&mut r), "the connection stays open after {msg}");

    // A real size attaches.
    let (mut w, mut r) = connect(&d, true);
    let line = serde_json::to_string(&attach(30, 100)).unwrap();
    writeln!(w, "{line}").unwrap();
    assert!(matches!(reply(&mut r), Reply::Ok(_)));
    // In a resize frame: that attachment ends, with the reason.
    w.write_all(
        &Frame::Resize {
            rows: 65535,
            cols: 65535,
        }
        .encode(),
    )
    .unwrap();
    let why = ended(&mut r);
    assert!(why.contains("65535") && why.contains("rows"), "{why}");

    assert_eq!(d.pid(), pid, "the daemon was replaced");
    assert_eq!(shell_pid(&d, "a"), a, "session a was restarted");
    assert_eq!(shell_pid(&d, "b"), b, "session b was restarted");
    // The session has its own size back.
    let screen = d.stdout(&["screen", "-s", "a"]);
    assert!(screen.lines().count() <= 24, "{screen:?}");
}

#[test]
fn an_oversized_frame_ends_that_attachment_with_the_reason() {
    let d = Daemon::new("bounds-frame");
    let a = shell_pid(&d, "a");
    let (mut w, mut r) = connect(&d, true);
    let line = serde_json::to_string(&Request::Attach {
        session: "a".into(),
        rows: 24,
        cols: 80,
        host: None,
        resume: None,
    })
    .unwrap();
    writeln!(w, "{line}").unwrap();
    assert!(matches!(reply(&mut r), Reply::Ok(_)));
    // An input frame that says it carries 4 GiB.
    w.write_all(&[1, 0xff, 0xff, 0xff, 0xff]).unwrap();
    let why = ended(&mut r);
    assert!(why.contains("16 MiB"), "{why}");
    assert_eq!(shell_pid(&d, "a"), a, "session a was restarted");
}

/// Reads frames until `Ended`; returns its reason.
fn ended(r: &mut BufReader<UnixStream>) -> String {
    loop {
        match read_frame(r).unwrap() {
            Some(Frame::Ended(why)) => return why,
            Some(_) => {}
            None => panic!("the connection closed without saying why"),
        }
    }
}
