//! Redaction that never withholds and never leaks, with a secret-named
//! variable in the session's environment (as agent hosts have): REPL
//! sends, kept commands, reads and prompts come back whole; secrets the
//! session exports are redacted in the same call and the next; the screen
//! is redacted; spill files hold the program's exact bytes.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::{Duration, Instant};

use common::within;
use tether_shell::dialect::{Bash, Dialect, Posix, Zsh};
use tether_shell::{OnTimeout, RunOptions, RunResult, Session, SessionOptions, Status};

/// A fresh random value for this run, 32 hex digits.
fn random_secret(tag: &str) -> String {
    let mut buf = [0u8; 16];
    getrandom::fill(&mut buf).unwrap();
    let hex: String = buf.iter().map(|b| format!("{b:02x}")).collect();
    format!("{tag}{hex}")
}

async fn session_with(dialect: std::sync::Arc<dyn Dialect>, secret: &str) -> Session {
    let opts = SessionOptions {
        dialect,
        run_rc_files: false,
        env_overrides: vec![("TETHER_TEST_API_TOKEN".to_owned(), secret.to_owned())],
        ..SessionOptions::default()
    };
    Session::start(opts).await.unwrap()
}

async fn session(secret: &str) -> Session {
    session_with(std::sync::Arc::new(Bash), secret).await
}

async fn run(s: &mut Session, code: &str) -> RunResult {
    s.run(code, &within(20)).await.unwrap()
}

#[tokio::test]
async fn a_repl_send_returns_its_output_at_once() {
    let secret = random_secret("tok-");
    let mut s = session(&secret).await;
    let r = run(&mut s, "python3 -q").await;
    assert_eq!(
        (r.status, r.output.as_str()),
        (Status::WaitingForInput, ">>> ")
    );
    let r = s
        .send(Some("print(6*7)\n"), &[], Duration::from_secs(20))
        .await
        .unwrap();
    assert_eq!(
        (r.status, r.output.as_str()),
        (Status::WaitingForInput, "42\n>>> ")
    );
    let r = s
        .send(
            Some("print('the token is ' + __import__('os').environ['TETHER_TEST_API_TOKEN'])\n"),
            &[],
            Duration::from_secs(20),
        )
        .await
        .unwrap();
    assert_eq!(r.output, "the token is [redacted]\n>>> ");
    let r = s
        .send(None, &["C-d".to_owned()], Duration::from_secs(20))
        .await
        .unwrap();
    assert_eq!((r.status, r.output.as_str()), (Status::Exited, "\n"));
}

#[tokio::test]
async fn a_command_waiting_in_read_returns_its_output_whole() {
    let secret = random_secret("tok-");
    let mut s = session(&secret).await;
    let r = run(&mut s, "echo hello; read x; echo \"got $x\"").await;
    assert_eq!(
        (r.status, r.output.as_str()),
        (Status::WaitingForInput, "hello\n")
    );
    let r = s
        .send(Some("yes\n"), &[], Duration::from_secs(20))
        .await
        .unwrap();
    assert_eq!((r.status, r.output.as_str()), (Status::Exited, "got yes\n"));
}

/// Reads until `want` has arrived (each read's output appended), with a
/// deadline; returns the outputs of the reads that had any.
async fn read_until(s: &mut Session, want: &str) -> Vec<String> {
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut got = Vec::new();
    while got.concat() != want {
        assert!(Instant::now() < deadline, "only {got:?} of {want:?}");
        let r = s.read(Duration::from_millis(200)).await.unwrap();
        if !r.output.is_empty() {
            got.push(r.output);
        }
    }
    got
}

#[tokio::test]
async fn a_kept_command_and_its_reads_return_whole_lines() {
    let secret = random_secret("tok-");
    let mut s = session(&secret).await;
    let go = std::env::temp_dir().join(format!("tether-kept-{}", random_secret("")));
    let code = format!(
        "echo tb-tick1; until [ -e {0} ]; do sleep 0.05; done; echo tb-tick2; rm {0}; until [ -e {0} ]; do sleep 0.05; done; echo tb-tick3",
        go.display()
    );
    let keep = RunOptions {
        timeout: Duration::from_secs(3),
        on_timeout: OnTimeout::Keep,
        ..RunOptions::default()
    };
    let r = s.run(&code, &keep).await.unwrap();
    assert_eq!(
        (r.status, r.output.as_str()),
        (Status::Running, "tb-tick1\n")
    );
    std::fs::write(&go, b"").unwrap();
    // Each read while it runs returns whole lines, nothing held back.
    assert_eq!(read_until(&mut s, "tb-tick2\n").await, ["tb-tick2\n"]);
    let deadline = Instant::now() + Duration::from_secs(20);
    while go.exists() {
        assert!(Instant::now() < deadline, "the command never took the file");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    std::fs::write(&go, b"").unwrap();
    let r = s.read(Duration::from_secs(20)).await.unwrap();
    let _ = std::fs::remove_file(&go);
    assert_eq!(
        (r.status, r.output.as_str()),
        (Status::Exited, "tb-tick3\n")
    );
}

#[tokio::test]
async fn a_result_boundary_releases_what_may_begin_a_secret() {
    // A secret over two lines: its first line alone is held until the
    // result is cut, then released (the program is waiting for input).
    let opts = SessionOptions {
        run_rc_files: false,
        secrets: vec!["first-line-abc\nsecond-line-xyz".to_owned()],
        ..SessionOptions::default()
    };
    let mut s = Session::start(opts).await.unwrap();
    let r = run(&mut s, "printf 'first-line-abc\\nName: '; read x").await;
    assert_eq!(
        (r.status, r.output.as_str()),
        (Status::WaitingForInput, "first-line-abc\nName: ")
    );
    let r = s
        .send(Some("x\n"), &[], Duration::from_secs(20))
        .await
        .unwrap();
    assert_eq!((r.status, r.output.as_str()), (Status::Exited, ""));
    let r = run(&mut s, "printf 'first-line-abc\\nsecond-line-xyz\\n'").await;
    assert_eq!(r.output, "[redacted]\n");
}

#[tokio::test]
async fn the_spill_file_holds_the_exact_bytes_with_secrets_redacted() {
    let secret = random_secret("tok-");
    let mut s = session(&secret).await;
    let small = RunOptions {
        output_limit: 10,
        ..within(20)
    };
    let code = "printf '\\xff\\xfe\\x00ok|%s|\\033[1mbold\\033[0m\\r\\n' \"$TETHER_TEST_API_TOKEN\"; head -c 40 /dev/zero | tr '\\0' a";
    let r = s.run(code, &small).await.unwrap();
    assert_eq!(r.status, Status::Exited);
    let t = r.truncated.expect("clipped");
    let bytes = std::fs::read(t.full_output_path.as_ref().unwrap()).unwrap();
    let mut want = b"\xff\xfe\x00ok|[redacted]|\x1b[1mbold\x1b[0m\r\n".to_vec();
    want.extend_from_slice(&[b'a'; 40]);
    assert_eq!(
        String::from_utf8_lossy(&bytes),
        String::from_utf8_lossy(&want)
    );
    assert_eq!(bytes, want);
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(t.full_output_path.as_ref().unwrap())
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
    assert!(!r.output.contains(&secret));
}

/// A secret the session exports is redacted in the call that sets it and
/// in later ones; a short value or an unsecret name is not.
async fn exported_secrets(dialect: std::sync::Arc<dyn Dialect>) {
    let secret = random_secret("tok-");
    let mut s = session_with(dialect, &secret).await;
    let own = random_secret("own-");
    let r = run(
        &mut s,
        &format!("export MY_API_TOKEN={own}; echo \"$MY_API_TOKEN\""),
    )
    .await;
    assert_eq!(
        (r.status, r.output.as_str()),
        (Status::Exited, "[redacted]\n")
    );
    let r = run(&mut s, "echo \"x${MY_API_TOKEN}x\"").await;
    assert_eq!(r.output, "x[redacted]x\n");
    let pw = random_secret("pw-");
    let r = run(&mut s, &format!("export DB_PASSWORD='{pw}'")).await;
    assert_eq!((r.status, r.output.as_str()), (Status::Exited, ""));
    let r = run(
        &mut s,
        "printenv DB_PASSWORD; printenv TETHER_TEST_API_TOKEN",
    )
    .await;
    assert_eq!(r.output, "[redacted]\n[redacted]\n");
    let r = run(
        &mut s,
        "export SHORT_TOKEN=abc PLAIN_NAME=notasecret123; echo $SHORT_TOKEN $PLAIN_NAME",
    )
    .await;
    assert_eq!(r.output, "abc notasecret123\n");
    // A long output spilled to a file: redacted there too, in the same call.
    let spilled = random_secret("spill-");
    let small = RunOptions {
        output_limit: 20,
        ..within(20)
    };
    let r = s
        .run(
            &format!("export SPILL_SECRET={spilled}; printf '%s\\n' \"$SPILL_SECRET\" padding padding padding padding"),
            &small,
        )
        .await
        .unwrap();
    let t = r.truncated.expect("clipped");
    let bytes = std::fs::read(t.full_output_path.as_ref().unwrap()).unwrap();
    assert_eq!(
        String::from_utf8_lossy(&bytes),
        "[redacted]\npadding\npadding\npadding\npadding\n"
    );
    assert!(!r.output.contains(&spilled), "{}", r.output);
}

#[tokio::test]
async fn exported_secrets_bash() {
    exported_secrets(std::sync::Arc::new(Bash)).await;
}

#[tokio::test]
async fn exported_secrets_zsh() {
    exported_secrets(std::sync::Arc::new(Zsh)).await;
}

#[tokio::test]
async fn exported_secrets_dash() {
    exported_secrets(std::sync::Arc::new(Posix::dash())).await;
}

#[tokio::test]
async fn exported_secrets_busybox_sh() {
    exported_secrets(std::sync::Arc::new(Posix::busybox())).await;
}

#[tokio::test]
async fn the_screen_is_redacted_like_every_result() {
    let secret = random_secret("tok-");
    let mut s = session(&secret).await;
    let r = run(&mut s, "echo \"$TETHER_TEST_API_TOKEN\"").await;
    assert_eq!(r.output, "[redacted]\n");
    for screen in [s.screen(), s.live().screen()] {
        assert!(!screen.contains(&secret), "{screen}");
        assert_eq!(screen.matches("[redacted]").count(), 1, "{screen}");
    }
    // A secret the session exports itself: redacted on the screen too.
    let own = random_secret("own-");
    run(
        &mut s,
        &format!("export MY_SECRET={own}; echo \"$MY_SECRET\""),
    )
    .await;
    for screen in [s.screen(), s.live().screen()] {
        assert!(!screen.contains(&own), "{screen}");
        assert_eq!(screen.matches("[redacted]").count(), 2, "{screen}");
    }
}

#[tokio::test]
async fn a_secret_exported_by_a_command_that_times_out_is_redacted() {
    let secret = random_secret("tok-");
    let mut s = session(&secret).await;
    let own = random_secret("own-");
    let r = s
        .run(
            &format!("export MY_TOKEN={own}; echo \"$MY_TOKEN\"; sleep 30"),
            &within(2),
        )
        .await
        .unwrap();
    assert_eq!(r.status, Status::TimedOut);
    assert!(r.output.starts_with("[redacted]\n"), "{}", r.output);
    assert!(!r.output.contains(&own), "{}", r.output);
}

#[tokio::test]
async fn a_secret_split_across_two_results_never_reaches_the_spill_file() {
    let secret = random_secret("tok-");
    let mut s = session(&secret).await;
    let go = std::env::temp_dir().join(format!("tether-split-{}", random_secret("")));
    let code = format!(
        "printf 'padding padding padding\\n%s' \"${{TETHER_TEST_API_TOKEN:0:10}}\"; until [ -e {0} ]; do sleep 0.05; done; rm {0}; printf '%s\\n' \"${{TETHER_TEST_API_TOKEN:10}}\"",
        go.display()
    );
    let keep = RunOptions {
        timeout: Duration::from_secs(2),
        on_timeout: OnTimeout::Keep,
        output_limit: 10,
        ..RunOptions::default()
    };
    let r = s.run(&code, &keep).await.unwrap();
    assert_eq!(r.status, Status::Running);
    std::fs::write(&go, b"").unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    let path = loop {
        let r = s.read(Duration::from_secs(20)).await.unwrap();
        if r.status == Status::Exited {
            break r.truncated.and_then(|t| t.full_output_path);
        }
        assert!(Instant::now() < deadline, "{r:?}");
    };
    let _ = std::fs::remove_file(&go);
    let spilled = std::fs::read(path.expect("spilled")).unwrap();
    assert_eq!(
        String::from_utf8_lossy(&spilled),
        "padding padding padding\n[redacted]\n"
    );
}
