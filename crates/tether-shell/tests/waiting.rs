//! `waiting_for_input` from one look at the kernel: never before the
//! program's last output, its echo of what was sent, or the answer to a
//! query it waits for; and never for a program that is only quiet. Each
//! case runs many times, since a wrong verdict would be a race.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use common::{within, xterm_session};
use tether_shell::{Session, SessionOptions, Status};

const WAIT: Duration = Duration::from_secs(10);

/// What is sent reaches the program before it is judged waiting again:
/// each result holds `cat`'s echo of its line, whole.
#[tokio::test]
async fn each_line_sent_is_echoed_before_waiting_again() {
    let mut s = xterm_session().await;
    let r = s.run("cat", &within(10)).await.unwrap();
    assert_eq!(r.status, Status::WaitingForInput, "{r:?}");
    for n in 0..40 {
        let line = format!("line {n}\n");
        let r = s.send(Some(&line), &[], WAIT).await.unwrap();
        assert_eq!(
            (r.status, r.output.as_str()),
            (Status::WaitingForInput, line.as_str())
        );
    }
    let r = s.send(None, &["C-d".into()], WAIT).await.unwrap();
    assert_eq!((r.status, r.exit_code), (Status::Exited, Some(0)));
}

/// Input sent is seen on its way: a program that takes it and then works
/// in silence is not waiting (python reads its line, then takes a while
/// to exit without a word).
#[tokio::test]
async fn input_taken_then_silence_is_not_waiting() {
    let mut s = xterm_session().await;
    for _ in 0..5 {
        let r = s.run("python3 -q", &within(10)).await.unwrap();
        assert_eq!(
            (r.status, r.output.as_str()),
            (Status::WaitingForInput, ">>> ")
        );
        let r = s
            .send(Some("import time; time.sleep(0.05); exit()\n"), &[], WAIT)
            .await
            .unwrap();
        assert_eq!((r.status, r.exit_code), (Status::Exited, Some(0)), "{r:?}");
    }
    for _ in 0..10 {
        let r = s
            .run("read x; sleep 0.05; echo \"got $x\"", &within(10))
            .await
            .unwrap();
        assert_eq!(r.status, Status::WaitingForInput, "{r:?}");
        let r = s.send(Some("a\n"), &[], WAIT).await.unwrap();
        assert_eq!(
            (r.status, r.output.as_str()),
            (Status::Exited, "got a\n"),
            "{r:?}"
        );
    }
}

/// A program that waits for the session's answer to its query is not
/// waiting for input: the answer is on its way when it blocks.
#[tokio::test]
async fn a_query_the_session_answers_is_not_waiting_for_input() {
    let mut s = xterm_session().await;
    let code = r#"printf '\033[6n'; IFS= read -rsd R reply; echo "got ${reply#*[}""#;
    for _ in 0..30 {
        let r = s.run(code, &within(10)).await.unwrap();
        assert_eq!(r.status, Status::Exited, "{r:?}");
        assert!(r.output.starts_with("got "), "{:?}", r.output);
    }
}

/// Output written just before a blocking read is all in the result.
#[tokio::test]
async fn a_prompt_after_output_is_waiting_with_all_the_output() {
    let mut s = xterm_session().await;
    for _ in 0..20 {
        let code = "seq 300; printf 'Name: '; read x; echo \"got $x\"";
        let r = s.run(code, &within(10)).await.unwrap();
        assert_eq!(r.status, Status::WaitingForInput, "{r:?}");
        assert!(r.output.ends_with("299\n300\nName: "), "{:?}", r.output);
        let r = s.send(Some("you\n"), &[], WAIT).await.unwrap();
        assert_eq!((r.status, r.output.as_str()), (Status::Exited, "got you\n"));
    }
}

/// Quiet is not waiting: a sleeping program, and a shell between commands.
#[tokio::test]
async fn quiet_programs_are_not_waiting() {
    let mut s = xterm_session().await;
    for code in [
        "sleep 0.05",
        "echo a; sleep 0.1; echo b",
        "sleep 0.02; true",
    ] {
        let r = s.run(code, &within(10)).await.unwrap();
        assert_eq!((r.status, r.exit_code), (Status::Exited, Some(0)), "{r:?}");
    }
}

#[tokio::test]
async fn without_kernel_evidence_silence_is_the_fallback() {
    let opts = SessionOptions {
        run_rc_files: false,
        kernel_evidence: false,
        silence_fallback: Duration::from_millis(300),
        ..SessionOptions::default()
    };
    let mut s = Session::start(opts).await.unwrap();
    let r = s
        .run("printf 'Name: '; read x; echo \"got $x\"", &within(10))
        .await
        .unwrap();
    assert_eq!(
        (r.status, r.output.as_str()),
        (Status::WaitingForInput, "Name: ")
    );
    assert!(
        r.duration_ms >= 300,
        "silence, not kernel evidence, decided: {r:?}"
    );
    let r = s
        .send(Some("x\n"), &[], Duration::from_secs(5))
        .await
        .unwrap();
    assert_eq!((r.status, r.output.as_str()), (Status::Exited, "got x\n"));
}
