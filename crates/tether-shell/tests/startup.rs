//! Start-up: the user's rc files run, a hostile rc cannot break detection,
//! `--norc` starts clean, and a shell that never becomes ready is a start
//! failure with its output.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::time::Duration;

use tether_shell::{RunOptions, Session, SessionOptions, ShellError, Status};

/// A fresh HOME holding `bashrc` as `.bashrc`.
fn home_with_rc(name: &str, bashrc: &str) -> PathBuf {
    let home = std::env::temp_dir().join(format!("tether-home-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(home.join(".bashrc"), bashrc).unwrap();
    home
}

fn with_home(home: &std::path::Path, run_rc_files: bool) -> SessionOptions {
    let mut env: Vec<(String, String)> = std::env::vars().filter(|(k, _)| k != "HOME").collect();
    env.push(("HOME".into(), home.display().to_string()));
    SessionOptions {
        run_rc_files,
        base_env: env,
        start_timeout: Duration::from_secs(5),
        ..SessionOptions::default()
    }
}

const HOSTILE_RC: &str = r#"
echo "noise printed by .bashrc"
PS1='custom-prompt> '
PS2='more> '
PROMPT_COMMAND='echo noise-from-prompt-command; false'
set -u
set -e
set -o noclobber
trap 'echo debug-trap-noise' DEBUG
trap 'echo err-trap-noise' ERR
trap 'echo exit-trap-noise' EXIT
alias ls='ls --color=always'
export FROM_RC=rc-value
export PATH="$HOME/bin:$PATH"
"#;

#[tokio::test]
async fn rc_files_run_by_default_and_a_hostile_rc_cannot_break_detection() {
    let home = home_with_rc("hostile", HOSTILE_RC);
    let mut s = Session::start(with_home(&home, true)).await.unwrap();
    let opts = RunOptions::default();
    let r = s.run("echo hi", &opts).await.unwrap();
    assert_eq!(
        (r.status, r.exit_code, r.output.as_str()),
        (Status::Exited, Some(0), "hi\n")
    );
    let r = s
        .run(
            "echo $FROM_RC; case :$PATH: in *:$HOME/bin:*) echo path-ok;; esac",
            &opts,
        )
        .await
        .unwrap();
    assert_eq!(r.output, "rc-value\npath-ok\n");
    let r = s.run("false", &opts).await.unwrap();
    assert_eq!(
        (r.status, r.exit_code, r.output.as_str()),
        (Status::Exited, Some(1), "")
    );
    let r = s.run("echo still alive > /tmp/tether-noclobber-$$; cat /tmp/tether-noclobber-$$; rm -f /tmp/tether-noclobber-$$", &opts).await.unwrap();
    assert_eq!(r.output, "still alive\n");
    let _ = std::fs::remove_dir_all(home);
}

#[tokio::test]
async fn norc_starts_clean() {
    let home = home_with_rc("norc", "export FROM_RC=should-not-be-set\n");
    let mut s = Session::start(with_home(&home, false)).await.unwrap();
    let r = s
        .run("echo \"[${FROM_RC-unset}]\"", &RunOptions::default())
        .await
        .unwrap();
    assert_eq!(r.output, "[unset]\n");
    let _ = std::fs::remove_dir_all(home);
}

#[tokio::test]
async fn non_interactive_defaults_are_in_force() {
    let home = home_with_rc("defaults", "");
    let mut s = Session::start(with_home(&home, false)).await.unwrap();
    let r = s
        .run("echo $PAGER $GIT_PAGER $MANPAGER $GIT_EDITOR $GIT_TERMINAL_PROMPT $DEBIAN_FRONTEND $PIP_NO_INPUT $NO_COLOR $TERM", &RunOptions::default())
        .await
        .unwrap();
    assert_eq!(r.output, "cat cat cat true 0 noninteractive 1 1 dumb\n");
    let _ = std::fs::remove_dir_all(home);
}

#[tokio::test]
async fn an_rc_that_exits_is_a_start_failure_with_its_output() {
    let home = home_with_rc("exits", "echo 'rc says goodbye'\nexit 3\n");
    let err = Session::start(with_home(&home, true)).await.unwrap_err();
    match err {
        ShellError::StartFailed { exited, output, .. } => {
            assert!(exited);
            assert!(output.contains("rc says goodbye"), "{output:?}");
        }
        other => panic!("expected a start failure, got {other:?}"),
    }
    let _ = std::fs::remove_dir_all(home);
}

#[tokio::test]
async fn an_rc_that_hangs_is_a_start_failure_at_the_deadline() {
    let home = home_with_rc("hangs", "echo 'rc is stuck'\nsleep 60\n");
    let mut opts = with_home(&home, true);
    opts.start_timeout = Duration::from_millis(500);
    let err = Session::start(opts).await.unwrap_err();
    match err {
        ShellError::StartFailed {
            exited,
            output,
            waited_ms,
            ..
        } => {
            assert!(!exited);
            assert!(waited_ms >= 500);
            assert!(output.contains("rc is stuck"), "{output:?}");
        }
        other => panic!("expected a start failure, got {other:?}"),
    }
    let _ = std::fs::remove_dir_all(home);
}

#[tokio::test]
async fn the_users_shell_history_is_left_alone() {
    let home = home_with_rc("history", "HISTFILE=~/.bash_history\nset -o history\n");
    let mut s = Session::start(with_home(&home, true)).await.unwrap();
    s.run("echo one; echo two", &RunOptions::default())
        .await
        .unwrap();
    let r = s.run("exit 0", &RunOptions::default()).await.unwrap();
    assert_eq!(r.status, Status::ShellExited);
    drop(s);
    assert!(
        !home.join(".bash_history").exists(),
        "tether's wrapper lines must not reach the history"
    );
    let _ = std::fs::remove_dir_all(home);
}
