//! bash-only behaviour; the suite every dialect shares is in `dialects.rs`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use tether_shell::{RunOptions, RunResult, Session, SessionOptions, Status};

async fn session(overrides: Vec<(String, String)>) -> Session {
    let opts = SessionOptions {
        run_rc_files: false,
        env_overrides: overrides,
        ..SessionOptions::default()
    };
    Session::start(opts).await.unwrap()
}

async fn run(s: &mut Session, code: &str) -> RunResult {
    s.run(code, &RunOptions::default()).await.unwrap()
}

#[tokio::test]
async fn ansi_c_quoting_and_a_silent_password_prompt() {
    let mut s = session(Vec::new()).await;
    assert_eq!(
        run(&mut s, "echo $'tab\\there'").await.output,
        "tab\there\n"
    );
    let within = RunOptions {
        timeout: Duration::from_secs(10),
        ..RunOptions::default()
    };
    let r = s
        .run("read -s -p 'Password: ' pw; echo \"got ${#pw}\"", &within)
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
}

#[tokio::test]
async fn an_interactive_bash_ignores_a_plain_kill() {
    let mut s = session(Vec::new()).await;
    let r = run(&mut s, "kill $$; echo still-here").await;
    assert_eq!(
        (r.status, r.output.as_str()),
        (Status::Exited, "still-here\n")
    );
}

#[tokio::test]
async fn secrets_in_the_environment_are_redacted() {
    let mut s = session(vec![("MY_API_TOKEN".into(), "tok-1234567890".into())]).await;
    let r = run(
        &mut s,
        "echo \"value: $MY_API_TOKEN\"; printf '%s' \"$MY_API_TOKEN\" | rev | rev",
    )
    .await;
    assert_eq!(r.output, "value: [redacted]\n[redacted]");
}
