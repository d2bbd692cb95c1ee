//! A starting directory the shell cannot enter: the session starts in
//! `$HOME` instead and its first result says so, rather than failing as if
//! the shell were missing.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use tether_shell::{RunOptions, Session, SessionOptions, Status};

#[tokio::test]
async fn a_cwd_that_cannot_be_entered_starts_the_session_in_home_and_says_so() {
    let home = std::env::temp_dir().join(format!("tether-cwd-home-{}", std::process::id()));
    std::fs::create_dir_all(&home).unwrap();
    let mut env: Vec<(String, String)> = std::env::vars().filter(|(k, _)| k != "HOME").collect();
    env.push(("HOME".into(), home.display().to_string()));
    let opts = SessionOptions {
        run_rc_files: false,
        base_env: env,
        cwd: Some("/nonexistent/tether-cwd".into()),
        start_timeout: Duration::from_secs(10),
        ..SessionOptions::default()
    };
    let mut s = Session::start(opts).await.unwrap();
    let r = s.run("pwd", &RunOptions::default()).await.unwrap();
    assert_eq!(r.status, Status::Exited, "{r:?}");
    let home_text = home.display().to_string();
    assert_eq!(
        r.output,
        format!(
            "tether: cannot enter the working directory /nonexistent/tether-cwd: No such file or directory (os error 2); the session started in {home_text} instead\n{home_text}\n"
        )
    );
    assert_eq!(r.cwd.as_deref(), Some(home.as_path()));
    // Said once.
    let r = s.run("pwd", &RunOptions::default()).await.unwrap();
    assert_eq!(r.output, format!("{home_text}\n"));
    drop(s);
    let _ = std::fs::remove_dir_all(&home);
}
