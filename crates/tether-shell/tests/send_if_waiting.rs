//! Input typed only into a program that reads the terminal when it is
//! typed (`Session::send_if_waiting`, what `tether shell`'s `!send` uses):
//! a command that runs without reading, one that ended, and a session with
//! no command get nothing, so the shell never runs a reply as a command.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::{Duration, Instant};

use tether_shell::{NotWaiting, OnTimeout, RunOptions, ShellError, Status};

fn kept(ms: u64) -> RunOptions {
    RunOptions {
        timeout: Duration::from_millis(ms),
        on_timeout: OnTimeout::Keep,
        ..RunOptions::default()
    }
}

#[tokio::test]
async fn input_is_typed_only_while_the_command_reads_the_terminal() {
    let mut s = common::xterm_session().await;
    let wait = Duration::from_secs(5);
    // Waiting: typed.
    let r = s
        .run("read -r a; echo got-$a", &common::within(10))
        .await
        .unwrap();
    assert_eq!(r.status, Status::WaitingForInput);
    let r = s.send_if_waiting(Some("yes\n"), &[], wait).await.unwrap();
    assert_eq!((r.status, r.output.as_str()), (Status::Exited, "got-yes\n"));
    // Nothing runs.
    let e = s.send_if_waiting(Some("echo typed-0\n"), &[], wait).await;
    assert!(
        matches!(e, Err(ShellError::NotWaiting(NotWaiting::NoCommand))),
        "{e:?}"
    );
    // Running without reading: nothing typed.
    let r = s.run("sleep 1; echo slept", &kept(100)).await.unwrap();
    assert_eq!(r.status, Status::Running);
    let e = s.send_if_waiting(Some("echo typed-1\n"), &[], wait).await;
    assert!(
        matches!(e, Err(ShellError::NotWaiting(NotWaiting::NotReading(_)))),
        "{e:?}"
    );
    let r = s.read(wait).await.unwrap();
    assert_eq!((r.status, r.output.as_str()), (Status::Exited, "slept\n"));
    // Ended (its end not read yet): nothing typed, and the end is kept.
    let r = s.run("sleep 0.3; (exit 7)", &kept(50)).await.unwrap();
    assert_eq!(r.status, Status::Running);
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        match s.send_if_waiting(Some("echo typed-2\n"), &[], wait).await {
            Err(ShellError::NotWaiting(NotWaiting::Ended)) => break,
            Err(ShellError::NotWaiting(NotWaiting::NotReading(_))) => {}
            other => panic!("{other:?}"),
        }
        assert!(Instant::now() < deadline, "the command never ended");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let r = s.read(wait).await.unwrap();
    assert_eq!((r.status, r.exit_code), (Status::Exited, Some(7)));
    // None of the refused replies ran.
    let r = s.run("echo next", &common::within(10)).await.unwrap();
    assert_eq!(r.output, "next\n");
}
