//! The daemon SIGKILLed during a command: the waiting client is told the
//! command may have run and is not re-sent (a ledger line written once,
//! never twice); the next daemon ends what the dead one's sessions left
//! running (a `setsid` escape included), and the next call on the session
//! continues it with its cwd and exports, saying so (`shell_restarted`,
//! and a note).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{Daemon, alive, wait_for};
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

fn sigkill(pid: i32) {
    kill(Pid::from_raw(pid), Signal::SIGKILL).unwrap();
    wait_for(10, "the daemon to die", || (!alive(pid)).then_some(()));
}

#[test]
fn a_command_in_flight_when_the_daemon_dies_runs_once_and_the_session_continues() {
    let d = Daemon::new("crash");
    let work = d.dir.with_extension("work");
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).unwrap();
    let w = work.display().to_string();
    let out = d.run(&[
        "run",
        "-s",
        "s",
        "--norc",
        "--",
        &format!("cd '{w}' && export LEDGER_OWNER=alice"),
    ]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");

    // In flight: a ledger line, then an escape and a long sleep.
    let code = "echo charge-card >> ledger.txt; (setsid sh -c 'echo $$ > escape.pid; exec sleep 300' </dev/null >/dev/null 2>&1 &); sh -c 'echo $$ > sleep.pid; exec sleep 300'";
    let run = d.spawn(&["run", "-s", "s", "--timeout", "120", "--", code]);
    let pids: Vec<i32> = wait_for(30, "the command to start", || {
        let read = |f: &str| -> Option<i32> {
            std::fs::read_to_string(work.join(f))
                .ok()?
                .trim()
                .parse()
                .ok()
        };
        Some(vec![read("escape.pid")?, read("sleep.pid")?])
    });
    sigkill(d.pid());

    // The waiting client: an error that says what is known, not a status.
    let out = run.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(255), "{err}");
    assert!(
        err.contains("stopped during this request") && err.contains("may have run"),
        "{err}"
    );
    assert!(!err.contains("exited"), "{err}");

    // The next daemon (started by `ls`) lists the session as lost, with
    // its last cwd; a read on it says it was lost.
    let ls: serde_json::Value = serde_json::from_slice(&d.run(&["ls", "--json"]).stdout).unwrap();
    assert_eq!(
        (
            ls["sessions"][0]["state"].as_str(),
            ls["sessions"][0]["cwd"].as_str()
        ),
        (Some("lost"), Some(w.as_str())),
        "{ls}"
    );
    let out = d.run(&["read", "-s", "s"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(255), "{out:?}");
    assert!(err.contains("was lost"), "{err}");
    for p in &pids {
        wait_for(10, "the dead daemon's processes to end", || {
            (!alive(*p)).then_some(())
        });
    }

    // The next command continues the session: same cwd and exports, the
    // ledger written once, and the result says the shell is new.
    let out = d.run(&[
        "run",
        "-s",
        "s",
        "--json",
        "--",
        "pwd; echo $LEDGER_OWNER; wc -l < ledger.txt",
    ]);
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["status"], "exited", "{r}");
    assert_eq!(r["shell_restarted"], true, "{r}");
    let output = r["output"].as_str().unwrap();
    assert!(
        output.contains("stopped without closing it"),
        "the note: {output}"
    );
    assert!(
        output.ends_with(&format!("{w}\nalice\n1\n")),
        "cwd, exports, one ledger line: {output}"
    );
    // Later results are plain again.
    let r: serde_json::Value =
        serde_json::from_slice(&d.run(&["run", "-s", "s", "--json", "--", "true"]).stdout).unwrap();
    assert_eq!(
        (r["shell_restarted"].as_bool(), r["output"].as_str()),
        (Some(false), Some(""))
    );
    let _ = std::fs::remove_dir_all(&work);
}

/// A daemon stopped with SIGSTOP still takes connections (the kernel's
/// backlog) and answers nothing: a client says so, once its hello's
/// deadline passes, instead of waiting forever; nothing but the hello was
/// sent, and once the daemon goes on the same commands work.
#[test]
fn a_stopped_daemon_is_reported_not_waited_for() {
    let d = Daemon::new("stopped");
    assert!(d.run(&["run", "--norc", "--", "true"]).status.success());
    let pid = d.pid();
    kill(Pid::from_raw(pid), Signal::SIGSTOP).unwrap();
    let clients: Vec<_> = [
        vec!["run", "--norc", "--", "echo ran >> ledger"],
        vec!["daemon", "stop"],
    ]
    .into_iter()
    .map(|args| d.spawn(&args))
    .collect();
    for mut c in clients {
        let status = wait_for(60, "the client to give up", || c.try_wait().unwrap());
        let out = c.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!status.success(), "{err}");
        assert!(
            err.contains("took the connection but did not answer within 10 s"),
            "{err}"
        );
    }
    kill(Pid::from_raw(pid), Signal::SIGCONT).unwrap();
    let out = d.run(&["run", "--norc", "--", "echo fine"]);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "fine",
        "{out:?}"
    );
    assert!(d.run(&["daemon", "stop"]).status.success());
}
