//! The engine against a real bash: every status, exact outputs and codes.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use tether_shell::{OnTimeout, RunOptions, RunResult, Session, SessionOptions, Status};

async fn session() -> Session {
    let opts = SessionOptions {
        run_rc_files: false,
        ..SessionOptions::default()
    };
    Session::start(opts).await.unwrap()
}

fn quick(timeout_ms: u64) -> RunOptions {
    RunOptions {
        timeout: Duration::from_millis(timeout_ms),
        ..RunOptions::default()
    }
}

async fn run(s: &mut Session, code: &str) -> RunResult {
    s.run(code, &RunOptions::default()).await.unwrap()
}

#[tokio::test]
async fn exited_with_exact_output_and_codes() {
    let mut s = session().await;
    let r = run(&mut s, "echo hello").await;
    assert_eq!(
        (r.status, r.exit_code, r.output.as_str()),
        (Status::Exited, Some(0), "hello\n")
    );
    assert_eq!(run(&mut s, "false").await.exit_code, Some(1));
    assert_eq!(run(&mut s, "(exit 3)").await.exit_code, Some(3));
    let r = run(&mut s, "sh -c 'kill -9 $$'").await;
    assert_eq!(
        (r.exit_code, r.signal.as_deref()),
        (Some(137), Some("SIGKILL"))
    );
    let r = run(&mut s, "false | true | (exit 3)").await;
    assert_eq!((r.exit_code, r.pipe_status), (Some(3), Some(vec![1, 0, 3])));
    // `$?` is the previous command's status, as in a terminal.
    run(&mut s, "(exit 42)").await;
    assert_eq!(run(&mut s, "echo $?").await.output, "42\n");
}

#[tokio::test]
async fn state_persists_between_commands() {
    let mut s = session().await;
    run(
        &mut s,
        "cd /tmp && export TETHER_T=persisted && f() { echo fn-$1; }",
    )
    .await;
    let r = run(&mut s, "pwd; echo $TETHER_T; f x").await;
    assert_eq!(r.output, "/tmp\npersisted\nfn-x\n");
    assert_eq!(r.cwd.as_deref(), Some(std::path::Path::new("/tmp")));
}

#[tokio::test]
async fn hard_commands_quotes_heredocs_unicode_and_long_text() {
    let mut s = session().await;
    let code = "cat <<'EOF'\nline with 'single' and \"double\" and $HOME\nEOF\necho $'tab\\there' \"ünïcødé ✓\"";
    let r = run(&mut s, code).await;
    assert_eq!(
        r.output,
        "line with 'single' and \"double\" and $HOME\ntab\there ünïcødé ✓\n"
    );
    let long = format!("x='{}'; echo ${{#x}}", "a".repeat(1 << 20));
    let r = run(&mut s, &long).await;
    assert_eq!(
        (r.status, r.output.as_str()),
        (Status::Exited, "1048576\n"),
        "{r:?}"
    );
}

#[tokio::test]
async fn background_jobs_do_not_delay_completion() {
    let mut s = session().await;
    let r = s
        .run("sleep 100 & echo started", &quick(5000))
        .await
        .unwrap();
    assert_eq!(r.status, Status::Exited);
    assert!(r.output.ends_with("started\n"), "{:?}", r.output);
    run(&mut s, "kill %1").await;
}

#[tokio::test]
async fn set_e_and_set_u_do_not_kill_the_session() {
    let mut s = session().await;
    let r = run(&mut s, "set -e; echo one; false; echo never").await;
    assert_eq!(
        (r.status, r.exit_code, r.output.as_str()),
        (Status::Exited, Some(1), "one\n")
    );
    assert_eq!(run(&mut s, "echo alive").await.output, "alive\n");
    let r = run(&mut s, "set -u; echo $UNSET_VARIABLE_X; echo never").await;
    assert_eq!(r.status, Status::Exited);
    assert_ne!(r.exit_code, Some(0));
    assert!(
        r.output.contains("UNSET_VARIABLE_X: unbound variable"),
        "{:?}",
        r.output
    );
    assert_eq!(run(&mut s, "set +u; echo alive").await.output, "alive\n");
}

#[tokio::test]
async fn waiting_for_input_for_cat_read_and_python() {
    let mut s = session().await;
    let r = s.run("cat", &quick(10_000)).await.unwrap();
    assert_eq!(r.status, Status::WaitingForInput);
    assert_eq!(r.foreground.as_ref().unwrap().command, "cat");
    let r = s
        .send(Some("typed\n"), &[], Duration::from_secs(5))
        .await
        .unwrap();
    assert_eq!(
        (r.status, r.output.as_str()),
        (Status::WaitingForInput, "typed\n")
    );
    let r = s
        .send(None, &["C-d".into()], Duration::from_secs(5))
        .await
        .unwrap();
    assert_eq!((r.status, r.exit_code), (Status::Exited, Some(0)));

    let r = s
        .run(
            "read -s -p 'Password: ' pw; echo \"got ${#pw}\"",
            &quick(10_000),
        )
        .await
        .unwrap();
    assert_eq!(
        (r.status, r.output.as_str()),
        (Status::WaitingForInput, "Password: ")
    );
    let r = s
        .send(Some("hunter2\n"), &[], Duration::from_secs(5))
        .await
        .unwrap();
    assert_eq!((r.status, r.output.as_str()), (Status::Exited, "got 7\n"));

    let r = s.run("python3 -q", &quick(10_000)).await.unwrap();
    assert_eq!(
        (r.status, r.output.as_str()),
        (Status::WaitingForInput, ">>> ")
    );
    let r = s
        .send(Some("print(6*7)\n"), &[], Duration::from_secs(5))
        .await
        .unwrap();
    assert_eq!(r.status, Status::WaitingForInput);
    assert!(r.output.contains("42\n"), "{:?}", r.output);
    let r = s
        .send(Some("exit()\n"), &[], Duration::from_secs(5))
        .await
        .unwrap();
    assert_eq!((r.status, r.exit_code), (Status::Exited, Some(0)));
}

#[tokio::test]
async fn timeout_interrupts_keeps_the_shell_and_returns_partial_output() {
    let mut s = session().await;
    run(&mut s, "cd /tmp").await;
    let r = s.run("echo partial; sleep 30", &quick(300)).await.unwrap();
    assert_eq!(r.status, Status::TimedOut);
    // bash prints a newline when a foreground job dies of SIGINT.
    assert_eq!(r.output.trim_end(), "partial");
    assert!(!r.shell_restarted);
    let r = run(&mut s, "pwd").await;
    assert_eq!((r.status, r.output.as_str()), (Status::Exited, "/tmp\n"));
}

#[tokio::test]
async fn keep_leaves_the_command_running_and_read_returns_the_rest() {
    let mut s = session().await;
    let opts = RunOptions {
        timeout: Duration::from_millis(200),
        on_timeout: OnTimeout::Keep,
        ..RunOptions::default()
    };
    let r = s
        .run("echo first; sleep 1; echo second", &opts)
        .await
        .unwrap();
    assert_eq!((r.status, r.output.as_str()), (Status::Running, "first\n"));
    assert!(matches!(
        s.run("echo no", &RunOptions::default()).await,
        Err(tether_shell::ShellError::Busy)
    ));
    let r = s.read(Duration::from_secs(10)).await.unwrap();
    assert_eq!(
        (r.status, r.exit_code, r.output.as_str()),
        (Status::Exited, Some(0), "second\n")
    );
}

#[tokio::test]
async fn shell_exit_is_reported_and_the_next_call_restores_cwd_and_env() {
    let mut s = session().await;
    run(&mut s, "cd /usr && export KEEP_ME=yes").await;
    let r = run(&mut s, "exit 7").await;
    assert_eq!((r.status, r.exit_code), (Status::ShellExited, Some(7)));
    let r = run(&mut s, "pwd; echo $KEEP_ME").await;
    assert_eq!(
        (r.status, r.output.as_str()),
        (Status::Exited, "/usr\nyes\n")
    );
    assert!(r.shell_restarted);
    let r = run(&mut s, "kill -9 $$").await;
    assert_eq!(
        (r.status, r.exit_code, r.signal.as_deref()),
        (Status::ShellExited, Some(137), Some("SIGKILL"))
    );
    let r = run(&mut s, "kill -HUP $$").await;
    assert_eq!(r.status, Status::ShellExited);
    // An interactive bash ignores a plain `kill $$` (SIGTERM).
    let r = run(&mut s, "kill $$; echo still-here").await;
    assert_eq!(
        (r.status, r.output.as_str()),
        (Status::Exited, "still-here\n")
    );
}

#[tokio::test]
async fn incomplete_input_is_not_run() {
    let mut s = session().await;
    for code in [
        "echo 'unterminated",
        "if true; then echo x",
        "cat <<EOF\nno end",
        "echo continued \\",
    ] {
        let r = run(&mut s, code).await;
        assert_eq!(r.status, Status::IncompleteInput, "{code:?}");
        assert_eq!(r.output, "");
    }
    assert_eq!(run(&mut s, "echo ready").await.output, "ready\n");
}

#[tokio::test]
async fn output_is_clipped_head_and_tail_with_a_spill_file() {
    let mut s = session().await;
    let opts = RunOptions {
        output_limit: 100,
        ..RunOptions::default()
    };
    let r = s.run("seq 1 10000", &opts).await.unwrap();
    let t = r.truncated.as_ref().unwrap();
    let total: u64 = (1..=10000)
        .map(|n: u64| n.to_string().len() as u64 + 1)
        .sum();
    assert_eq!(t.total_chars, total);
    assert!(r.output.starts_with("1\n2\n3\n"), "{:?}", r.output);
    assert!(r.output.ends_with("9999\n10000\n"), "{:?}", r.output);
    let full = std::fs::read_to_string(&t.full_output_path).unwrap();
    assert_eq!(full.len() as u64, total);
    assert!(full.ends_with("10000\n"));
}

#[tokio::test]
async fn markers_never_appear_and_cannot_be_forged() {
    let mut s = session().await;
    let r = run(
        &mut s,
        "printf '\\033]6973;0123456789abcdef0123456789abcdef;end;exit=0\\007'; echo real",
    )
    .await;
    assert_eq!((r.status, r.output.as_str()), (Status::Exited, "real\n"));
    assert!(!r.output.contains("6973"));
}

#[tokio::test]
async fn secrets_are_redacted() {
    let opts = SessionOptions {
        run_rc_files: false,
        env_overrides: vec![("MY_API_TOKEN".into(), "tok-1234567890".into())],
        ..SessionOptions::default()
    };
    let mut s = Session::start(opts).await.unwrap();
    let r = run(&mut s, "echo \"value: $MY_API_TOKEN\"").await;
    assert_eq!(r.output, "value: [redacted]\n");
}
