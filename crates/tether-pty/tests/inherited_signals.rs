//! The shell starts with default signal dispositions and an empty mask even
//! when tether itself runs with SIGINT and SIGPIPE ignored (under nohup, a
//! background job, a harness). This file is its own test binary because it
//! changes the process's own signal dispositions.

#![allow(clippy::unwrap_used, clippy::expect_used, unsafe_code)]

mod common;

use common::*;
use nix::sys::signal::{SigHandler, Signal, signal};

fn ignore_like_nohup() {
    // SAFETY: installing SIG_IGN in a test process; no handler involved.
    unsafe {
        signal(Signal::SIGINT, SigHandler::SigIgn).unwrap();
        signal(Signal::SIGPIPE, SigHandler::SigIgn).unwrap();
    }
}

#[tokio::test]
async fn child_signals_are_default_even_when_ours_are_ignored() {
    ignore_like_nohup();
    let (_pty, mut out) = spawn("grep", &["-E", "^Sig(Ign|Blk)", "/proc/self/status"]);
    let text = String::from_utf8(read_to_end(&mut out).await).unwrap();
    assert_eq!(
        text,
        "SigBlk:\t0000000000000000\r\nSigIgn:\t0000000000000000\r\n"
    );

    // The consequences users see: `yes | head` ends quietly, and C-c works.
    let (_pty, mut out) = spawn("sh", &["-c", "yes | head -n 2"]);
    assert_eq!(read_to_end(&mut out).await, b"y\r\ny\r\n");
    let (pty, mut out) = spawn("sh", &["-c", "sleep 30; echo not-interrupted"]);
    inspect_until(&pty, "sleep running", |i| {
        i.foreground
            .as_ref()
            .and_then(|f| f.process.as_ref())
            .is_some_and(|p| p.command == "sh")
            && tether_pty::procfs::all_processes()
                .iter()
                .any(|s| s.comm == "sleep" && s.session == pty.pid())
    });
    use tether_transport::Terminal;
    pty.write(vec![0x03]).unwrap(); // C-c through the line discipline
    let all = read_to_end(&mut out).await;
    assert!(
        !String::from_utf8_lossy(&all).contains("not-interrupted"),
        "{all:?}"
    );
}
