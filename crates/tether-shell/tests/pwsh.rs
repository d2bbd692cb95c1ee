//! The real-shell suite for pwsh. pwsh cannot be installed on the
//! development machine, so this runs only where a `pwsh` binary is on PATH
//! and prints why it skips otherwise.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::Duration;

use tether_shell::dialect::Pwsh;
use tether_shell::{RunOptions, Session, SessionOptions, Status};

async fn session() -> Option<Session> {
    let found = std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join("pwsh").is_file()));
    if !found {
        eprintln!("SKIPPED: pwsh is not installed; the pwsh dialect is covered by its unit tests");
        return None;
    }
    let opts = SessionOptions {
        dialect: Arc::new(Pwsh),
        run_rc_files: false,
        start_timeout: Duration::from_secs(30),
        ..SessionOptions::default()
    };
    Some(Session::start(opts).await.unwrap())
}

#[tokio::test]
async fn pwsh_exit_codes_state_and_input() {
    let Some(mut s) = session().await else { return };
    let opts = RunOptions::default();
    let r = s.run("Write-Output 'hello'", &opts).await.unwrap();
    assert_eq!(
        (r.status, r.exit_code, r.output.as_str()),
        (Status::Exited, Some(0), "hello\n")
    );
    let r = s.run("bash -c 'exit 3'", &opts).await.unwrap();
    assert_eq!(r.exit_code, Some(3), "the native exit code");
    let r = s.run("throw 'boom'", &opts).await.unwrap();
    assert_eq!(r.exit_code, Some(1), "a terminating error");
    s.run("Set-Location /tmp; $env:TETHER_T = 'kept'", &opts)
        .await
        .unwrap();
    let r = s
        .run("(Get-Location).Path; $env:TETHER_T", &opts)
        .await
        .unwrap();
    assert_eq!(r.output, "/tmp\nkept\n");
    let long = format!("$x = '{}'; $x.Length", "a".repeat(100_000));
    assert_eq!(s.run(&long, &opts).await.unwrap().output, "100000\n");
    let r = s
        .run(
            "Read-Host 'Name'",
            &RunOptions {
                timeout: Duration::from_secs(20),
                ..opts.clone()
            },
        )
        .await
        .unwrap();
    assert_eq!(r.status, Status::WaitingForInput);
    let r = s
        .send(Some("tether\r"), &[], Duration::from_secs(10))
        .await
        .unwrap();
    assert_eq!((r.status, r.output.trim_end()), (Status::Exited, "tether"));
    let r = s.run("if ($true) {", &opts).await.unwrap();
    assert_eq!(r.status, Status::IncompleteInput);
}
