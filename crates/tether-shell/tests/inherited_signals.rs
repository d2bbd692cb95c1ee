//! The engine started with SIGINT and SIGPIPE ignored (as under nohup or a
//! Python harness) still gives its shells default dispositions: `yes | head`
//! ends quietly and a timeout's interrupt recovers the shell. Its own test
//! binary, because it changes the process's signal dispositions.

#![allow(clippy::unwrap_used, clippy::expect_used, unsafe_code)]

use std::time::Duration;

use nix::sys::signal::{SigHandler, Signal, signal};
use tether_shell::{RunOptions, Session, SessionOptions, Status};

#[tokio::test]
async fn sessions_get_default_signals_when_the_engine_ignores_them() {
    // SAFETY: installing SIG_IGN in a test process; no handler involved.
    unsafe {
        signal(Signal::SIGINT, SigHandler::SigIgn).unwrap();
        signal(Signal::SIGPIPE, SigHandler::SigIgn).unwrap();
    }
    let opts = SessionOptions {
        run_rc_files: false,
        ..SessionOptions::default()
    };
    let mut s = Session::start(opts).await.unwrap();
    let r = s
        .run("yes | head -n 2", &RunOptions::default())
        .await
        .unwrap();
    assert_eq!(
        (r.status, r.exit_code, r.output.as_str()),
        (Status::Exited, Some(0), "y\ny\n")
    );
    assert_eq!(r.pipe_status, Some(vec![141, 0]), "yes died of SIGPIPE");
    let quick = RunOptions {
        timeout: Duration::from_millis(300),
        ..RunOptions::default()
    };
    let r = s.run("sleep 30", &quick).await.unwrap();
    assert_eq!(r.status, Status::TimedOut);
    assert!(
        !r.shell_restarted,
        "SIGINT reached sleep: the shell was recovered, not restarted"
    );
    let r = s
        .run("grep SigIgn /proc/self/status", &RunOptions::default())
        .await
        .unwrap();
    assert_eq!(r.output, "SigIgn:\t0000000000000000\n");
}
