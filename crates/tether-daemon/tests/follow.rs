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
