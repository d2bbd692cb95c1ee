//! What fish does its own way, on a real fish (skipped with a printed
//! reason when none is installed): `$pipestatus`, state kept by `set -gx`,
//! functions and `cd`, unfinished blocks and quotes refused by fish's own
//! parser, fish's `read` waiting for input, a timeout that stops the rest
//! of the line, and a `config.fish` with a banner, its own prompt and a
//! prompt event handler that leaves results alone and gets `$status`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tether_shell::dialect::Fish;
use tether_shell::{RunOptions, RunResult, Session, SessionOptions, Status};

mod common;

async fn fish() -> Option<Session> {
    common::session(Arc::new(Fish), "fish").await
}

async fn run(s: &mut Session, code: &str) -> RunResult {
    s.run(code, &RunOptions::default()).await.unwrap()
}

#[tokio::test]
async fn pipestatus_is_exact() {
    let Some(mut s) = fish().await else { return };
    let r = run(&mut s, "false | true | sh -c 'exit 3'").await;
    assert_eq!((r.exit_code, r.pipe_status), (Some(3), Some(vec![1, 0, 3])));
    let r = run(&mut s, "true | false").await;
    assert_eq!((r.exit_code, r.pipe_status), (Some(1), Some(vec![0, 1])));
    let r = run(&mut s, "echo one | string upper").await;
    assert_eq!(
        (r.exit_code, r.pipe_status, r.output.as_str()),
        (Some(0), Some(vec![0, 0]), "ONE\n")
    );
    // The next command's `$status` and `$pipestatus` are the last one's.
    run(&mut s, "sh -c 'exit 4' | sh -c 'exit 5'").await;
    assert_eq!(run(&mut s, "echo $status").await.output, "5\n");
}

#[tokio::test]
async fn state_persists_set_functions_and_cd() {
    let Some(mut s) = fish().await else { return };
    let r = run(
        &mut s,
        "set -gx TETHER_FX 'a b'\nset -g tether_list x y z\nfunction greet\n  echo hi $argv\nend\ncd /usr",
    )
    .await;
    assert_eq!((r.status, r.exit_code), (Status::Exited, Some(0)), "{r:?}");
    let r = run(
        &mut s,
        "echo $TETHER_FX; count $tether_list; greet you; pwd; sh -c 'echo $TETHER_FX'",
    )
    .await;
    assert_eq!(r.output, "a b\n3\nhi you\n/usr\na b\n");
    assert_eq!(r.cwd.as_deref(), Some(Path::new("/usr")));
    // A plain `set` in the code is the shell's, not the file's.
    run(&mut s, "set tether_plain kept").await;
    assert_eq!(run(&mut s, "echo $tether_plain").await.output, "kept\n");
}

#[tokio::test]
async fn unfinished_input_is_refused_by_fish_and_the_session_goes_on() {
    let Some(mut s) = fish().await else { return };
    for code in ["if true", "echo 'open", "while true\n  echo x", "switch a"] {
        let r = run(&mut s, code).await;
        assert_eq!(
            (r.status, r.output.as_str()),
            (Status::IncompleteInput, ""),
            "{code:?}"
        );
    }
    // Wrong, not unfinished: fish reports it, with the user's line.
    let r = run(&mut s, "echo ok\nend").await;
    assert_eq!(r.status, Status::Exited, "{r:?}");
    assert_ne!(r.exit_code, Some(0));
    assert!(r.output.contains("'end' outside of a block"), "{r:?}");
    assert!(!r.output.contains("cmd-"), "no command file named: {r:?}");
    let r = run(&mut s, "if true\n  echo done\nend").await;
    assert_eq!((r.status, r.output.as_str()), (Status::Exited, "done\n"));
}

#[tokio::test]
async fn read_waits_for_input() {
    let Some(mut s) = fish().await else { return };
    let r = s.run("read x", &common::within(10)).await.unwrap();
    assert_eq!(r.status, Status::WaitingForInput, "{r:?}");
    let r = s
        .send(Some("answer\n"), &[], Duration::from_secs(5))
        .await
        .unwrap();
    assert_eq!((r.status, r.exit_code), (Status::Exited, Some(0)), "{r:?}");
    assert_eq!(run(&mut s, "echo $x").await.output, "answer\n");
}

#[tokio::test]
async fn a_timeout_stops_the_rest_of_the_line() {
    let Some(mut s) = fish().await else { return };
    let r = s
        .run("echo a; sleep 5; echo never", &common::within(1))
        .await
        .unwrap();
    assert_eq!(r.status, Status::TimedOut, "{r:?}");
    assert_eq!(r.output.trim_end(), "a");
    assert!(!r.shell_restarted);
    let r = run(&mut s, "echo after").await;
    assert_eq!((r.status, r.output.as_str()), (Status::Exited, "after\n"));
    assert!(!r.output.contains("never"));
}

/// A HOME whose `config.fish` prints a banner, defines a prompt and a
/// prompt event handler that logs `$status` to `log`.
fn home_with_config() -> (PathBuf, PathBuf) {
    let home = std::env::temp_dir().join(format!("tether-fish-home-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&home);
    let conf = home.join(".config/fish");
    std::fs::create_dir_all(&conf).unwrap();
    let log = home.join("status.log");
    std::fs::write(
        conf.join("config.fish"),
        format!(
            "echo 'Welcome to the banner'\n\
             function fish_prompt; echo -n (whoami)'@prompt> '; end\n\
             function fish_right_prompt; echo -n RIGHT; end\n\
             function log_status --on-event fish_prompt; echo $status >> '{}'; end\n\
             set -gx FROM_CONFIG yes\n",
            log.display()
        ),
    )
    .unwrap();
    (home, log)
}

/// Waits (at most 10 s) until `log`'s last line is `want`.
async fn last_line_becomes(log: &Path, want: &str) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let text = std::fs::read_to_string(log).unwrap_or_default();
        if text.lines().last() == Some(want) {
            return;
        }
        assert!(Instant::now() < deadline, "log {text:?}, wanted {want}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn a_config_with_a_banner_and_a_prompt_does_not_disturb_results() {
    if common::session(Arc::new(Fish), "fish").await.is_none() {
        return;
    }
    let (home, log) = home_with_config();
    let mut env: Vec<(String, String)> = std::env::vars()
        .filter(|(k, _)| k != "HOME" && !k.starts_with("XDG_"))
        .collect();
    env.push(("HOME".into(), home.display().to_string()));
    let opts = SessionOptions {
        dialect: Arc::new(Fish),
        run_rc_files: true,
        base_env: env,
        start_timeout: Duration::from_secs(20),
        ..SessionOptions::default()
    };
    let mut s = Session::start(opts).await.unwrap();
    for _ in 0..3 {
        let r = run(&mut s, "echo hello").await;
        assert_eq!(
            (r.status, r.exit_code, r.output.as_str()),
            (Status::Exited, Some(0), "hello\n"),
            "{r:?}"
        );
        // fish's first prompt starts no man-page scan holding the terminal.
        assert!(r.terminal_holders.is_empty(), "{r:?}");
        last_line_becomes(&log, "0").await;
    }
    let r = run(&mut s, "echo $FROM_CONFIG; sh -c 'exit 6'").await;
    assert_eq!((r.exit_code, r.output.as_str()), (Some(6), "yes\n"));
    // The user's prompt handler got the command's `$status`.
    last_line_becomes(&log, "6").await;
    let r = run(&mut s, "false").await;
    assert_eq!((r.exit_code, r.output.as_str()), (Some(1), ""));
    last_line_becomes(&log, "1").await;
    drop(s);
    let _ = std::fs::remove_dir_all(&home);
}

#[tokio::test]
async fn exports_with_any_quoting_come_back_after_a_restart_and_secrets_are_redacted() {
    let Some(mut s) = fish().await else { return };
    let r = run(
        &mut s,
        "set -gx TETHER_ODD \"it's a \\\\ back\"\\n\"slash\"; cd /usr; set -gx MY_API_TOKEN own-7f3a9c1d5e2b; echo $MY_API_TOKEN",
    )
    .await;
    assert_eq!(
        (r.status, r.output.as_str()),
        (Status::Exited, "[redacted]\n")
    );
    let r = run(&mut s, "exit 3").await;
    assert_eq!((r.status, r.exit_code), (Status::ShellExited, Some(3)));
    let r = run(&mut s, "printf '%s|' $TETHER_ODD; pwd").await;
    assert!(r.shell_restarted);
    assert_eq!(r.output, "it's a \\ back\nslash|/usr\n");
    let r = run(&mut s, "echo x$MY_API_TOKEN").await;
    assert_eq!(r.output, "x[redacted]\n");
}
