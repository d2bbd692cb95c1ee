//! Following a command through the daemon: a `run` with `follow` streams
//! the command's text as it comes; cut off mid-command and followed again
//! from the offset after its last piece, the client gets every byte once
//! and the command's end.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::net::Shutdown;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use tether_daemon::client::{Streamed, hello};
use tether_daemon::protocol::{Create, OnTimeout, Request, Status};
use tether_daemon::{Client, DaemonError, Paths, ServerOptions};

struct Daemon {
    paths: Paths,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Daemon {
    fn start(name: &str) -> Daemon {
        let dir = std::env::temp_dir().join(format!("tether-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let paths = Paths { dir };
        let opts = ServerOptions {
            paths: paths.clone(),
            idle_exit: Duration::from_secs(120),
            sessions: tether_shell::SessionOptions {
                run_rc_files: false,
                ..tether_shell::SessionOptions::default()
            },
            server: "follow-test".into(),
            hosts: None,
        };
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(tether_daemon::serve(opts)).unwrap();
        });
        Daemon {
            paths,
            thread: Some(thread),
        }
    }

    fn client(&self) -> Client {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            match Client::connect(&self.paths, &hello("test", None, false)) {
                Ok(c) => return c,
                Err(e) if Instant::now() < deadline => {
                    let _ = e;
                    std::thread::sleep(Duration::from_millis(10));
                }
                Err(e) => panic!("no daemon: {e}"),
            }
        }
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        if let Ok(mut c) = Client::connect(&self.paths, &hello("test", None, false)) {
            let _ = c.call(&Request::Stop);
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        let _ = std::fs::remove_dir_all(&self.paths.dir);
    }
}

fn go(dir: &Path, n: u32) -> PathBuf {
    dir.join(format!("go{n}"))
}

/// What a follower got: the text, and the offset after it.
#[derive(Default)]
struct Got {
    text: String,
    next: u64,
}

impl Got {
    fn take(&mut self, s: Streamed) {
        match s {
            Streamed::Piece(p) => {
                assert_eq!(p.offset, self.next, "contiguous, after {:?}", self.text);
                self.next = p.offset + p.text.len() as u64;
                self.text.push_str(&p.text);
            }
            Streamed::Omitted(o) => panic!("nothing is omitted here: {o:?}"),
        }
    }
}

#[test]
fn a_follow_cut_mid_command_and_resumed_from_its_offset_gets_every_byte_once() {
    let d = Daemon::start("dfollow");
    let dir = std::env::temp_dir().join(format!("tether-dfollow-go-{}", std::process::id()));
    // Fresh: an earlier run with the same pid may have left its files.
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    // Each line waits for the test's go-ahead, given once the line before
    // was seen: the command is mid-way whenever the follower is cut.
    let steps: Vec<String> = (1..=6)
        .map(|i| {
            format!(
                "echo line-{i}; while [ ! -e '{}' ]; do sleep 0.01; done",
                go(&dir, i).display()
            )
        })
        .collect();
    let run = |command: String, follow: bool| Request::Run {
        session: "f".into(),
        command,
        host: None,
        timeout_s: 60.0,
        on_timeout: OnTimeout::Interrupt,
        output_limit: 10_000,
        workdir: None,
        create: Create::default(),
        stdin: None,
        follow,
        pieces: false,
        call: None,
    };
    let mut got = Got::default();
    let mut first = d.client();
    let cut = first.cutter().unwrap();
    {
        let mut on = |s: Streamed| {
            got.take(s);
            if got.text.contains("line-1\n") && !go(&dir, 1).exists() {
                std::fs::write(go(&dir, 1), "").unwrap();
            }
            if got.text.contains("line-2\n") {
                // Cut mid-command; line-3 comes while nobody follows.
                cut.shutdown(Shutdown::Both).unwrap();
                std::fs::write(go(&dir, 2), "").unwrap();
            }
        };
        let r = first.follow(&run(steps.join("; "), true), &mut on);
        assert!(matches!(r, Err(DaemonError::Lost(_))), "{r:?}");
    }
    assert_eq!(got.text, "line-1\nline-2\n");
    let mut second = d.client();
    let follow = Request::Follow {
        session: "f".into(),
        from: Some(got.next),
        wait_s: None,
    };
    let end = second
        .follow(&follow, &mut |s| {
            got.take(s);
            for i in 3..=6 {
                if got.text.contains(&format!("line-{i}\n")) && !go(&dir, i).exists() {
                    std::fs::write(go(&dir, i), "").unwrap();
                }
            }
        })
        .unwrap();
    let want: String = (1..=6).map(|i| format!("line-{i}\n")).collect();
    assert_eq!(got.text, want);
    assert_eq!((end.status, end.exit_code), (Status::Exited, Some(0)));
    assert_eq!(end.output, "");
    // The session is free again: the next line runs.
    let mut third = d.client();
    let r: tether_daemon::protocol::ShellResult =
        third.request(&run("echo next".into(), false)).unwrap();
    assert_eq!(r.output, "next\n");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The one rule: a request the daemon never read (its connection broke
/// first) is sent again on a fresh connection; one it read is not, and the
/// caller follows again instead.
#[test]
fn only_a_request_the_daemon_never_read_is_sent_again() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use tether_daemon::Conn;
    use tether_daemon::protocol::ListReply;

    let d = Daemon::start("dretry");
    drop(d.client());
    let made = Arc::new(AtomicUsize::new(0));
    let (paths, count) = (d.paths.clone(), Arc::clone(&made));
    let mut conn = Conn::new(Box::new(move || {
        let c = Client::connect(&paths, &hello("test", None, false))?;
        // The first connection breaks before anything is written on it.
        if count.fetch_add(1, Ordering::SeqCst) == 0 {
            c.cutter().unwrap().shutdown(Shutdown::Both).unwrap();
        }
        Ok(c)
    }));
    let list: ListReply = conn.request(&Request::List { all: false }).unwrap();
    assert!(list.sessions.is_empty());
    assert_eq!(made.load(Ordering::SeqCst), 2);
    // Kept after the answer: the next request goes on the same connection.
    let _: ListReply = conn.request(&Request::List { all: false }).unwrap();
    assert_eq!(made.load(Ordering::SeqCst), 2);

    // Written, then cut while it is followed: lost, never sent again.
    let dir = std::env::temp_dir().join(format!("tether-dretry-go-{}", std::process::id()));
    // Fresh: an earlier run with the same pid may have left its files.
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let run = Request::Run {
        session: "r".into(),
        command: format!(
            "echo started; echo once >> '{}'; while [ ! -e '{}' ]; do sleep 0.01; done",
            dir.join("ran").display(),
            go(&dir, 1).display()
        ),
        host: None,
        timeout_s: 60.0,
        on_timeout: OnTimeout::Interrupt,
        output_limit: 10_000,
        workdir: None,
        create: Create::default(),
        stdin: None,
        follow: true,
        pieces: false,
        call: None,
    };
    let mut cutter = None;
    let r = conn.with(|c| {
        cutter = Some(c.cutter().unwrap());
        c.follow(&run, &mut |_| {
            if let Some(cut) = &cutter {
                let _ = cut.shutdown(Shutdown::Both);
            }
        })
    });
    assert!(matches!(r, Err(DaemonError::Lost(_))), "{r:?}");
    std::fs::write(go(&dir, 1), "").unwrap();
    let end = conn
        .follow(
            &Request::Follow {
                session: "r".into(),
                from: None,
                wait_s: None,
            },
            &mut |_| {},
        )
        .unwrap();
    assert_eq!(end.status, Status::Exited);
    let ran = std::fs::read_to_string(dir.join("ran")).unwrap();
    assert_eq!(ran, "once\n");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A `run` with `pieces` (what a relay sends for a call its client does
/// not follow): pieces for the head its result keeps (half the output
/// limit), then the reply whole, as without them: a flood crosses the
/// link once, clipped.
#[test]
fn pieces_carry_the_head_and_the_reply_is_whole() {
    let d = Daemon::start("dpieces");
    let run = Request::Run {
        session: "p".into(),
        command: "for i in $(seq 1 2000); do echo line-$i; done".into(),
        host: None,
        timeout_s: 60.0,
        on_timeout: OnTimeout::Interrupt,
        output_limit: 1000,
        workdir: None,
        create: Create::default(),
        stdin: None,
        follow: false,
        pieces: true,
        call: None,
    };
    let mut got = Got::default();
    let end = d.client().follow(&run, &mut |s| got.take(s)).unwrap();
    assert_eq!((end.status, end.exit_code), (Status::Exited, Some(0)));
    assert_eq!(got.text.len(), 500, "the head only: {:?}", got.text);
    assert!(got.text.starts_with("line-1\nline-2\n"), "{:?}", got.text);
    // The reply is the result as a plain run gives it: clipped, head and
    // tail, the head the pieces' text.
    assert!(end.output.starts_with(&got.text), "{:?}", end.output);
    assert!(end.output.ends_with("line-2000\n"), "{:?}", end.output);
    assert!(end.truncated.is_some(), "{end:?}");
}
