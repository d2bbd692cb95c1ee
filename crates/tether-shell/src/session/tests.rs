//! The engine's call, readiness and interrupt logic on a scripted shell
//! ([`crate::testing`]): no process starts, so each case takes
//! milliseconds, or the engine's own graces (C-c's one second) where it
//! waits for them.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::Duration;

use tether_transport::Signal;

use super::Session;
use crate::options::{OnTimeout, RunOptions, SessionOptions};
use crate::result::{LinkFailure, Status};
use crate::testing::{FakeHost, FakeLocal, Scripted};

async fn start(host: &FakeHost) -> Session {
    let runtime = std::env::temp_dir().join(format!("tether-unit-{}", std::process::id()));
    Session::start(SessionOptions {
        dialect: Arc::new(Scripted),
        run_rc_files: false,
        base_env: Vec::new(),
        runtime_dir: Some(runtime),
        host: Some(Arc::new(host.clone())),
        ..SessionOptions::default()
    })
    .await
    .expect("the scripted shell starts")
}

/// A session on the place like this machine (the kernel's view of the
/// foreground), its files and terminals kept by `host`.
async fn start_here(host: &FakeHost) -> Session {
    let runtime = std::env::temp_dir().join(format!("tether-unit-{}", std::process::id()));
    let opts = SessionOptions {
        dialect: Arc::new(Scripted),
        run_rc_files: false,
        base_env: Vec::new(),
        runtime_dir: Some(runtime),
        ..SessionOptions::default()
    };
    Session::start_at(opts, Some(Arc::new(FakeLocal::new(host))))
        .await
        .expect("the scripted shell starts")
}

fn within(timeout: Duration, on_timeout: OnTimeout) -> RunOptions {
    RunOptions {
        timeout,
        on_timeout,
        ..RunOptions::default()
    }
}

/// The output between the marks and the status the end mark names make
/// the result; the typed line names the command's number, never the
/// session secret.
#[tokio::test]
async fn a_result_is_what_the_marks_enclose() {
    let host = FakeHost::default();
    let mut s = start(&host).await;
    let r = s
        .run("print hello\nexit 3", &RunOptions::default())
        .await
        .unwrap();
    assert_eq!(
        (r.status, r.exit_code, r.output.as_str()),
        (Status::Exited, Some(3), "hello\n"),
        "{r:?}"
    );
    assert_eq!(r.pipe_status, Some(vec![3]));
    assert_eq!(s.cwd(), Some(std::path::Path::new("/fake")));
    let nonce = host.nonce().unwrap();
    let typed = String::from_utf8_lossy(&host.world().typed).into_owned();
    assert!(typed.contains("run "), "{typed:?}");
    assert!(!typed.contains(&nonce[..16]), "no part of the secret typed");
    // The next command gets the next number, and its own marks.
    let r = s.run("print again", &RunOptions::default()).await.unwrap();
    assert_eq!((r.exit_code, r.output.as_str()), (Some(0), "again\n"));
}

/// A program blocked reading the terminal is waiting for input once the
/// host's `/proc` has said so twice with no output between; the answer
/// sent reaches it, and the command then ends.
#[tokio::test]
async fn waiting_for_input_needs_two_verdicts_then_input_reaches_the_program() {
    let host = FakeHost::default();
    let mut s = start(&host).await;
    let r = s
        .run(
            "read name? \nprint done",
            &within(Duration::from_secs(10), OnTimeout::Interrupt),
        )
        .await
        .unwrap();
    assert_eq!(
        (r.status, r.output.as_str()),
        (Status::WaitingForInput, "name? ")
    );
    assert_eq!(r.foreground.map(|f| f.command).as_deref(), Some("prog"));
    assert!(host.world().probes >= 2, "two verdicts in a row");
    let r = s
        .send(Some("bob\n"), &[], Duration::from_secs(10))
        .await
        .unwrap();
    assert_eq!(
        (r.status, r.output.as_str()),
        (Status::Exited, "got bob\ndone\n"),
        "{r:?}"
    );
}

/// A silent program the host sees asleep is `running` at its deadline
/// (kept), never taken for one waiting for input; a later read returns
/// its end.
#[tokio::test]
async fn a_silent_program_is_running_not_waiting() {
    let host = FakeHost::default();
    let mut s = start(&host).await;
    let r = s
        .run("hang", &within(Duration::from_millis(700), OnTimeout::Keep))
        .await
        .unwrap();
    assert_eq!(r.status, Status::Running, "{r:?}");
    assert!(host.world().probes >= 1, "the host was asked");
    assert!(
        host.world().signals.is_empty(),
        "a kept command is not signalled"
    );
    s.signal(Signal::Int).unwrap();
    let r = s.read(Duration::from_secs(5)).await.unwrap();
    assert_eq!(
        (r.status, r.exit_code),
        (Status::Exited, Some(130)),
        "{r:?}"
    );
}

/// Past its deadline a command gets C-c, and the prompt it comes back to
/// keeps the shell.
#[tokio::test]
async fn a_deadline_interrupts_with_c_c_and_keeps_the_shell() {
    let host = FakeHost::default();
    let mut s = start(&host).await;
    let r = s
        .run(
            "print partial\nhang",
            &within(Duration::from_millis(200), OnTimeout::Interrupt),
        )
        .await
        .unwrap();
    assert_eq!(
        (r.status, r.output.as_str()),
        (Status::TimedOut, "partial\n")
    );
    assert!(!r.shell_restarted, "{r:?}");
    assert_eq!(host.world().signals, [Signal::Int]);
    assert_eq!(host.world().terminals, 1);
}

/// A program that ignores C-c gets C-\ after the grace.
#[tokio::test]
async fn c_backslash_follows_an_ignored_c_c() {
    let host = FakeHost::default();
    let mut s = start(&host).await;
    let r = s
        .run(
            "hang ignore-int",
            &within(Duration::from_millis(200), OnTimeout::Interrupt),
        )
        .await
        .unwrap();
    assert_eq!((r.status, r.shell_restarted), (Status::TimedOut, false));
    assert_eq!(host.world().signals, [Signal::Int, Signal::Quit]);
}

/// A program that ignores both, on a link that answers, is ended with its
/// shell: the tree is ended on the host and a fresh shell started; the
/// next command runs there.
#[tokio::test]
async fn nothing_back_on_a_live_link_restarts_the_shell() {
    let host = FakeHost::default();
    let mut s = start(&host).await;
    let r = s
        .run(
            "hang ignore-all",
            &within(Duration::from_millis(200), OnTimeout::Interrupt),
        )
        .await
        .unwrap();
    assert_eq!(
        (r.status, r.shell_restarted),
        (Status::TimedOut, true),
        "{r:?}"
    );
    assert_eq!(host.world().terminals, 2);
    assert!(host.world().tree_ends >= 1);
    let r = s.run("print fresh", &RunOptions::default()).await.unwrap();
    assert_eq!((r.status, r.output.as_str()), (Status::Exited, "fresh\n"));
}

/// Nothing back on a hung link is `connection_lost` (no restart over it);
/// the next `run` starts a fresh shell.
#[tokio::test]
async fn nothing_back_on_a_hung_link_is_connection_lost() {
    let host = FakeHost::default();
    let mut s = start(&host).await;
    host.world().link_hung = true;
    let r = s
        .run(
            "hang ignore-all",
            &within(Duration::from_millis(200), OnTimeout::Interrupt),
        )
        .await
        .unwrap();
    assert_eq!(r.status, Status::ConnectionLost, "{r:?}");
    let link = r.link.unwrap();
    assert_eq!(link.failure, LinkFailure::Unanswered);
    assert!(link.command_started);
    assert_eq!(host.world().terminals, 1, "no restart over a hung link");
    // Said again until a command starts a fresh shell.
    let r = s.read(Duration::from_millis(10)).await.unwrap();
    assert_eq!(r.status, Status::ConnectionLost);
    host.world().link_hung = false;
    let r = s.run("print back", &RunOptions::default()).await.unwrap();
    assert_eq!((r.status, r.shell_restarted), (Status::Exited, true));
    assert_eq!(host.world().terminals, 2);
}

/// A shell that exits is `shell_exited` with its code, and the next call
/// gets a fresh one; a terminal that ends without a status is
/// `connection_lost`, never an exit code the host did not send.
#[tokio::test]
async fn a_shell_that_ends_is_told_apart_from_a_link_that_ends() {
    let host = FakeHost::default();
    let mut s = start(&host).await;
    let r = s.run("quit-shell 4", &RunOptions::default()).await.unwrap();
    assert_eq!(
        (r.status, r.exit_code),
        (Status::ShellExited, Some(4)),
        "{r:?}"
    );
    let r = s.run("print again", &RunOptions::default()).await.unwrap();
    assert_eq!((r.status, r.shell_restarted), (Status::Exited, true));
    let r = s.run("lose-link", &RunOptions::default()).await.unwrap();
    assert_eq!(
        (r.status, r.exit_code),
        (Status::ConnectionLost, None),
        "{r:?}"
    );
    assert_eq!(r.link.map(|l| l.failure), Some(LinkFailure::Lost));
}

/// A reset asked through the control handle ends the call waiting on the
/// session at once (`reset`), and the next call gets a fresh shell.
#[tokio::test]
async fn a_reset_ends_the_call_in_flight() {
    let host = FakeHost::default();
    let mut s = start(&host).await;
    let control = s.control();
    let typed = host.clone();
    let asked = tokio::spawn(async move {
        // Once the command is typed.
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        while !typed.world().typed.windows(4).any(|w| w == b"run ") {
            assert!(tokio::time::Instant::now() < deadline, "never typed");
            tokio::task::yield_now().await;
        }
        control.request(crate::control::Pending::Reset);
    });
    let r = s
        .run(
            "hang",
            &within(Duration::from_secs(30), OnTimeout::Interrupt),
        )
        .await
        .unwrap();
    asked.await.unwrap();
    assert_eq!(r.status, Status::Reset, "{r:?}");
    let r = s.run("print after", &RunOptions::default()).await.unwrap();
    assert_eq!((r.status, r.shell_restarted), (Status::Exited, true));
    assert_eq!(host.world().terminals, 2);
}

/// Locally one look at the kernel's view decides: a program blocked
/// reading the terminal is waiting for input at once, with no probe.
#[tokio::test]
async fn locally_the_kernel_s_word_decides_waiting() {
    let host = FakeHost::default();
    let mut s = start_here(&host).await;
    let r = s
        .run(
            "read name? \nprint done",
            &within(Duration::from_secs(10), OnTimeout::Interrupt),
        )
        .await
        .unwrap();
    assert_eq!(
        (r.status, r.output.as_str()),
        (Status::WaitingForInput, "name? ")
    );
    assert_eq!(r.foreground.map(|f| f.pid), Some(40));
    assert_eq!(host.world().probes, 0);
    let r = s
        .send(Some("x\n"), &[], Duration::from_secs(10))
        .await
        .unwrap();
    assert_eq!(
        (r.status, r.output.as_str()),
        (Status::Exited, "got x\ndone\n")
    );
}

/// A silent local program that is not reading is `running` at its kept
/// deadline, named as the foreground.
#[tokio::test]
async fn locally_a_silent_program_is_running() {
    let host = FakeHost::default();
    let mut s = start_here(&host).await;
    let r = s
        .run("hang", &within(Duration::from_millis(300), OnTimeout::Keep))
        .await
        .unwrap();
    assert_eq!(r.status, Status::Running, "{r:?}");
    assert_eq!(r.foreground.map(|f| f.command).as_deref(), Some("prog"));
    assert!(host.world().signals.is_empty());
}

/// Locally the interrupt escalates INT, TERM, KILL to the verified
/// foreground, stopping at the first that brings the prompt back; the
/// shell is kept.
#[tokio::test]
async fn locally_an_interrupt_escalates_until_the_prompt_comes_back() {
    for (script, signals) in [
        ("hang", vec![Signal::Int]),
        ("hang ignore-int", vec![Signal::Int, Signal::Term]),
        (
            "hang ignore-all",
            vec![Signal::Int, Signal::Term, Signal::Kill],
        ),
    ] {
        let host = FakeHost::default();
        let mut s = start_here(&host).await;
        let r = s
            .run(
                script,
                &within(Duration::from_millis(200), OnTimeout::Interrupt),
            )
            .await
            .unwrap();
        assert_eq!(
            (r.status, r.shell_restarted),
            (Status::TimedOut, false),
            "{script}: {r:?}"
        );
        assert_eq!(host.world().signals, signals, "{script}");
        assert_eq!(host.world().terminals, 1, "{script}");
    }
}

/// Input typed only into a program that waits for it: refused, with
/// nothing typed, when no command runs, when the program does not read
/// the terminal (the kernel's word here, the host's `/proc` there), and
/// typed when it does.
#[tokio::test]
async fn send_if_waiting_types_only_into_a_reader() {
    use crate::error::{NotWaiting, ShellError};
    let wait = Duration::from_secs(5);
    for local in [true, false] {
        let host = FakeHost::default();
        let mut s = if local {
            start_here(&host).await
        } else {
            start(&host).await
        };
        let refused = s.send_if_waiting(Some("no\n"), &[], wait).await;
        assert!(
            matches!(refused, Err(ShellError::NotWaiting(NotWaiting::NoCommand))),
            "{refused:?}"
        );
        let r = s
            .run("hang", &within(Duration::from_millis(300), OnTimeout::Keep))
            .await
            .unwrap();
        assert_eq!(r.status, Status::Running);
        let typed = host.world().typed.len();
        let refused = s.send_if_waiting(Some("no\n"), &[], wait).await;
        let told = if local { "prog" } else { "" };
        assert!(
            matches!(&refused, Err(ShellError::NotWaiting(NotWaiting::NotReading(p))) if p == told),
            "local {local}: {refused:?}"
        );
        assert_eq!(host.world().typed.len(), typed, "nothing typed");
        s.signal(Signal::Int).unwrap();
        let r = s.read(wait).await.unwrap();
        assert_eq!(r.exit_code, Some(130));
        let r = s
            .run("read ? \nprint done", &within(wait, OnTimeout::Interrupt))
            .await
            .unwrap();
        assert_eq!(r.status, Status::WaitingForInput, "local {local}: {r:?}");
        let r = s.send_if_waiting(Some("yes\n"), &[], wait).await.unwrap();
        assert_eq!(
            (r.status, r.output.as_str()),
            (Status::Exited, "got yes\ndone\n"),
            "local {local}"
        );
    }
}
