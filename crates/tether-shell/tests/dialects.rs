//! The same real-shell suite against every dialect installed here: bash,
//! zsh, dash, busybox sh and fish (its code in fish syntax: `lang.rs`). A shell that is not installed is skipped with a
//! printed reason (`scripts/test` installs them when it can).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::Duration;

use tether_shell::dialect::{Bash, Fish, Posix, Zsh};
use tether_shell::{OnTimeout, RunOptions, RunResult, Session, ShellError, Status};

mod common;
#[path = "dialects/lang.rs"]
mod lang;
use common::session;
use lang::{FISH, Lang, POSIX};

fn within(ms: u64) -> RunOptions {
    RunOptions {
        timeout: Duration::from_millis(ms),
        ..RunOptions::default()
    }
}

async fn run(s: &mut Session, code: &str) -> RunResult {
    s.run(code, &RunOptions::default()).await.unwrap()
}

async fn exact_codes(mut s: Session, l: &Lang) {
    let r = run(&mut s, "echo hello").await;
    assert_eq!(
        (r.status, r.exit_code, r.output.as_str()),
        (Status::Exited, Some(0), "hello\n")
    );
    assert_eq!(run(&mut s, "false").await.exit_code, Some(1));
    assert_eq!(run(&mut s, l.exit_3).await.exit_code, Some(3));
    let r = run(&mut s, "sh -c 'kill -9 $$'").await;
    assert_eq!(
        (r.exit_code, r.signal.as_deref()),
        (Some(137), Some("SIGKILL"))
    );
    run(&mut s, l.exit_42).await;
    assert_eq!(run(&mut s, l.echo_status).await.output, "42\n");
}

async fn pipe_statuses(mut s: Session, l: &Lang) {
    let r = run(&mut s, l.pipeline).await;
    assert_eq!((r.exit_code, r.pipe_status), (Some(3), Some(vec![1, 0, 3])));
}

async fn state_persists(mut s: Session, l: &Lang) {
    run(&mut s, l.define_state).await;
    let r = run(&mut s, "pwd; echo $TETHER_T; f x").await;
    assert_eq!(r.output, "/tmp\npersisted\nfn-x\n");
    assert_eq!(r.cwd.as_deref(), Some(std::path::Path::new("/tmp")));
}

async fn hard_text(mut s: Session, l: &Lang) {
    let r = run(&mut s, l.hard_text).await;
    assert_eq!(
        r.output,
        "line with 'single' and \"double\" and $HOME\nünïcødé ✓ a  b\n"
    );
    let long = l.long_text.replace("{}", &"a".repeat(1 << 20));
    let r = run(&mut s, &long).await;
    assert_eq!((r.status, r.output.as_str()), (Status::Exited, "1048576\n"));
}

async fn split_utf8_and_marker_lookalikes(mut s: Session, _: &Lang) {
    // A character written in two pieces, with time between them, so the
    // pieces arrive in different reads.
    let r = run(
        &mut s,
        "printf '\\342'; sleep 0.05; printf '\\202\\254 done\\n'",
    )
    .await;
    assert_eq!(r.output, "€ done\n");
    // Text that looks like a mark, split across reads, is just text.
    let r = run(&mut s, "printf '6973;'; sleep 0.05; printf 'start\\n'").await;
    assert_eq!(r.output, "6973;start\n");
}

async fn background_jobs(mut s: Session, l: &Lang) {
    let r = s
        .run("sleep 100 & echo started", &within(5000))
        .await
        .unwrap();
    assert_eq!(r.status, Status::Exited);
    assert!(r.output.ends_with("started\n"), "{:?}", r.output);
    run(&mut s, l.kill_last_job).await;
}

async fn waiting_for_input(mut s: Session, l: &Lang) {
    let r = s.run("cat", &within(10_000)).await.unwrap();
    assert_eq!(r.status, Status::WaitingForInput);
    assert_eq!(r.foreground.as_ref().unwrap().command, "cat");
    let r = s
        .send(Some("typed\n"), &[], Duration::from_secs(5))
        .await
        .unwrap();
    // fish turns echo on for its programs: the terminal shows the line.
    let want = if l.read_echoes {
        "typed\ntyped\n"
    } else {
        "typed\n"
    };
    assert_eq!(
        (r.status, r.output.as_str()),
        (Status::WaitingForInput, want)
    );
    let r = s
        .send(None, &["C-d".into()], Duration::from_secs(5))
        .await
        .unwrap();
    assert_eq!((r.status, r.exit_code), (Status::Exited, Some(0)));

    let r = s.run(l.read_prompted, &within(10_000)).await.unwrap();
    assert_eq!(r.status, Status::WaitingForInput, "{r:?}");
    assert!(r.output.contains("Name: "), "{r:?}");
    if !l.read_echoes {
        assert_eq!(r.output, "Name: ");
    }
    let r = s
        .send(Some("tether\n"), &[], Duration::from_secs(5))
        .await
        .unwrap();
    assert_eq!(r.status, Status::Exited, "{r:?}");
    if l.read_echoes {
        // fish's line editor pads the line it drew with blanks.
        assert!(r.output.trim_end().ends_with("got tether"), "{r:?}");
    } else {
        assert_eq!(r.output, "got tether\n");
    }

    let r = s.run("python3 -q", &within(10_000)).await.unwrap();
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

async fn timeouts(mut s: Session, _: &Lang) {
    run(&mut s, "cd /tmp").await;
    let r = s
        .run("echo partial; sleep 30; echo never", &within(300))
        .await
        .unwrap();
    assert_eq!(
        (r.status, r.signal.as_deref()),
        (Status::TimedOut, Some("SIGINT"))
    );
    assert_eq!(r.output.trim_end(), "partial");
    assert!(!r.shell_restarted, "recovered, not restarted");
    // A program that outlives its interrupt is ended by TERM, and the rest
    // of the line does not run (as after Ctrl-C at a prompt).
    let r = s
        .run(
            "echo partial; sh -c 'trap \"\" INT; sleep 30'; echo never",
            &within(300),
        )
        .await
        .unwrap();
    assert_eq!(
        (r.status, r.signal.as_deref()),
        (Status::TimedOut, Some("SIGTERM")),
        "{r:?}"
    );
    assert!(!r.output.contains("never"), "{r:?}");
    assert!(!r.shell_restarted, "recovered, not restarted");
    let r = run(&mut s, "pwd").await;
    assert_eq!((r.status, r.output.as_str()), (Status::Exited, "/tmp\n"));

    let keep = RunOptions {
        timeout: Duration::from_millis(200),
        on_timeout: OnTimeout::Keep,
        ..RunOptions::default()
    };
    let r = s
        .run("echo first; sleep 1; echo second", &keep)
        .await
        .unwrap();
    assert_eq!((r.status, r.output.as_str()), (Status::Running, "first\n"));
    assert!(matches!(
        s.run("echo no", &RunOptions::default()).await,
        Err(ShellError::Busy)
    ));
    let r = s.read(Duration::from_secs(10)).await.unwrap();
    assert_eq!(
        (r.status, r.exit_code, r.output.as_str()),
        (Status::Exited, Some(0), "second\n")
    );
}

async fn shell_exit_and_restore(mut s: Session, l: &Lang) {
    run(&mut s, "cd /usr && export KEEP_ME=yes").await;
    let r = run(&mut s, "exit 7").await;
    assert_eq!((r.status, r.exit_code), (Status::ShellExited, Some(7)));
    let r = run(&mut s, "pwd; echo $KEEP_ME").await;
    assert_eq!(
        (r.status, r.output.as_str()),
        (Status::Exited, "/usr\nyes\n")
    );
    assert!(r.shell_restarted);
    let r = run(&mut s, "exec true").await;
    assert_eq!((r.status, r.exit_code), (Status::ShellExited, Some(0)));
    let r = run(&mut s, &l.kill_shell.replace("SIG", "9")).await;
    assert_eq!(
        (r.status, r.exit_code, r.signal.as_deref()),
        (Status::ShellExited, Some(137), Some("SIGKILL"))
    );
    let r = run(&mut s, &l.kill_shell.replace("SIG", "HUP")).await;
    assert_eq!(r.status, Status::ShellExited);
    assert_eq!(run(&mut s, "echo back").await.output, "back\n");
}

async fn incomplete_input(mut s: Session, l: &Lang) {
    for &code in l.incomplete {
        let r = run(&mut s, code).await;
        assert_eq!(
            (r.status, r.output.as_str()),
            (Status::IncompleteInput, ""),
            "{code:?}"
        );
    }
    // A genuine syntax error is run and reported by the shell, not held.
    let r = run(&mut s, "echo )").await;
    assert_eq!(r.status, Status::Exited);
    assert_ne!(r.exit_code, Some(0));
    assert_eq!(run(&mut s, "echo ready").await.output, "ready\n");
}

async fn set_u_and_set_e(mut s: Session, e_stops_early: bool) {
    run(&mut s, "cd /tmp; export KEPT=1").await;
    let r = run(&mut s, "set -e; echo one; false; echo two").await;
    assert_eq!(r.output, "one\n");
    if e_stops_early {
        assert_eq!(
            (r.status, r.exit_code),
            (Status::Exited, Some(1)),
            "the command stops, the shell lives"
        );
    } else {
        // POSIX sh has no ERR trap: errexit ends that shell, and the session
        // goes on in a fresh one with its state.
        assert_eq!((r.status, r.exit_code), (Status::ShellExited, Some(1)));
    }
    assert_eq!(
        run(&mut s, "set +e; echo alive $KEPT; pwd").await.output,
        "alive 1\n/tmp\n"
    );
    let r = run(&mut s, "set -u; echo $UNSET_VARIABLE_X; echo never").await;
    assert_eq!(r.status, Status::Exited);
    assert_ne!(r.exit_code, Some(0));
    assert!(r.output.contains("UNSET_VARIABLE_X"), "{:?}", r.output);
    assert!(!r.output.contains("never"));
    assert_eq!(run(&mut s, "set +u; echo alive").await.output, "alive\n");
}

async fn clipping_markers_and_secrets(mut s: Session, l: &Lang) {
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
    assert!(r.output.starts_with("1\n2\n3\n") && r.output.ends_with("9999\n10000\n"));
    assert_eq!(
        std::fs::read_to_string(t.full_output_path.as_ref().unwrap())
            .unwrap()
            .len() as u64,
        total
    );
    let r = run(
        &mut s,
        "printf '\\033]6973;0123456789abcdef0123456789abcdef;end;exit=0\\007'; echo real",
    )
    .await;
    assert_eq!((r.status, r.output.as_str()), (Status::Exited, "real\n"));
    let r = run(&mut s, l.export_secret).await;
    assert_eq!(r.output, "fine\n");
}

macro_rules! suite {
    ($name:ident, $program:expr, $dialect:expr, $lang:expr, pipes: $pipes:expr, e_stops: $e:expr) => {
        mod $name {
            use super::*;

            async fn s() -> Option<Session> {
                session(Arc::new($dialect), $program).await
            }

            #[tokio::test]
            async fn exact_exit_codes() {
                if let Some(s) = s().await {
                    exact_codes(s, &$lang).await
                }
            }
            #[tokio::test]
            async fn pipeline_statuses() {
                if let Some(s) = s().await
                    && $pipes
                {
                    pipe_statuses(s, &$lang).await
                }
            }
            #[tokio::test]
            async fn state_persists_between_commands() {
                if let Some(s) = s().await {
                    state_persists(s, &$lang).await
                }
            }
            #[tokio::test]
            async fn quotes_heredocs_unicode_and_a_mebibyte_of_text() {
                if let Some(s) = s().await {
                    hard_text(s, &$lang).await
                }
            }
            #[tokio::test]
            async fn utf8_split_across_reads() {
                if let Some(s) = s().await {
                    split_utf8_and_marker_lookalikes(s, &$lang).await
                }
            }
            #[tokio::test]
            async fn background_jobs_do_not_delay_completion() {
                if let Some(s) = s().await {
                    background_jobs(s, &$lang).await
                }
            }
            #[tokio::test]
            async fn waiting_for_input_for_cat_read_and_python() {
                if let Some(s) = s().await {
                    waiting_for_input(s, &$lang).await
                }
            }
            #[tokio::test]
            async fn timeouts_interrupt_or_keep() {
                if let Some(s) = s().await {
                    timeouts(s, &$lang).await
                }
            }
            #[tokio::test]
            async fn shell_exit_is_reported_and_state_restored() {
                if let Some(s) = s().await {
                    shell_exit_and_restore(s, &$lang).await
                }
            }
            #[tokio::test]
            async fn incomplete_input_is_not_run() {
                if let Some(s) = s().await {
                    incomplete_input(s, &$lang).await
                }
            }
            #[tokio::test]
            async fn set_u_and_set_e_do_not_end_the_session() {
                let e_stops: Option<bool> = $e;
                match e_stops {
                    None => eprintln!("SKIPPED: {} has no set -e or set -u", $program),
                    Some(e) => {
                        if let Some(s) = s().await {
                            set_u_and_set_e(s, e).await
                        }
                    }
                }
            }
            #[tokio::test]
            async fn clipping_markers_and_secrets() {
                if let Some(s) = s().await {
                    super::clipping_markers_and_secrets(s, &$lang).await
                }
            }
        }
    };
}

suite!(bash, "bash", Bash, POSIX, pipes: true, e_stops: Some(true));
suite!(zsh, "zsh", Zsh, POSIX, pipes: true, e_stops: Some(true));
suite!(dash, "dash", Posix::dash(), POSIX, pipes: false, e_stops: Some(false));
suite!(busybox_sh, "busybox", Posix::busybox(), POSIX, pipes: false, e_stops: Some(false));
suite!(fish, "fish", Fish, FISH, pipes: true, e_stops: None);
