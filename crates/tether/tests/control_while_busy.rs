//! Control never waits behind work: while a `tether run` waits on a long
//! command, `signal`, `read`, `screen`, `ls`, `reset`, `close`, `daemon
//! stop` and Ctrl-C on the waiting client act at once, and the waiting call
//! returns the command's true status (signalled, reset, closed). Each test
//! would hang until the 60 s sleep ended (and then see `exited 0`) if the
//! control waited for the call.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::Path;
use std::process::{Child, Output};

use common::{Daemon, alive, wait_for};
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

/// A `tether run` in the background on session `s`: writes its sleep's pid
/// to `pidfile`, prints `tick`, then sleeps 60 s in the foreground.
fn busy(d: &Daemon, s: &str, pidfile: &Path) -> Child {
    let code = format!(
        "export KEPT=yes; echo tick; sh -c 'echo $$ > {}; exec sleep 60'; echo after=$?",
        pidfile.display()
    );
    running(d, &["-s", s, "--norc", "--json"], &code)
}

/// `tether run ARGS -- CODE` in the background, its output piped.
fn running(d: &Daemon, args: &[&str], code: &str) -> Child {
    let mut all = vec!["run", "--timeout", "120"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--", code]);
    d.spawn(&all)
}

/// The sleep's pid, once it runs.
fn sleeper(pidfile: &Path) -> i32 {
    wait_for(30, "the sleep to start", || {
        std::fs::read_to_string(pidfile).ok()?.trim().parse().ok()
    })
}

/// Waits for a background run whose command SIGINT ended, and checks it
/// says so.
fn interrupted(run: Child) {
    let r = json(&run.wait_with_output().unwrap());
    let got = (
        r["status"].as_str(),
        r["exit_code"].as_i64(),
        r["signal"].as_str(),
    );
    assert_eq!(got, (Some("exited"), Some(130), Some("SIGINT")), "{r}");
}

fn json(out: &Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// A fresh directory for the test's files: one left by an earlier run
/// whose process had the same pid (its sleep's pid file) is removed, never
/// trusted.
fn scratch(d: &Daemon) -> std::path::PathBuf {
    let dir = d.dir.with_extension("scratch");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn signal_read_screen_and_ls_act_while_a_call_waits() {
    let d = Daemon::new("ctl-signal");
    let pidfile = scratch(&d).join("pid");
    let run = busy(&d, "s", &pidfile);
    let pid = sleeper(&pidfile);
    // read: at once, the command still running, its output so far.
    let r = json(&d.run(&["read", "-s", "s", "--json"]));
    assert_eq!(r["status"], "running", "{r}");
    assert!(r["output"].as_str().unwrap().contains("tick"), "{r}");
    assert_eq!(r["foreground"]["command"], "sleep", "{r}");
    // screen and ls answer too.
    assert!(d.stdout(&["screen", "-s", "s"]).contains("tick"));
    let ls = json(&d.run(&["ls", "--json"]));
    assert_eq!(ls["sessions"][0]["state"], "busy", "{ls}");
    // signal: the sleep gets SIGINT now, and the waiting call returns what
    // really happened.
    // (bash abandons the rest of the line when its foreground dies of
    // SIGINT, as at a prompt: the line's status is 130.)
    let out = d.run(&["signal", "-s", "s", "INT"]);
    assert!(matches!(out.status.code(), Some(130 | 123)), "{out:?}");
    interrupted(run);
    assert!(!alive(pid));
}

#[test]
fn reset_while_a_call_waits_ends_it_as_reset() {
    let d = Daemon::new("ctl-reset");
    let pidfile = scratch(&d).join("pid");
    let run = busy(&d, "s", &pidfile);
    let pid = sleeper(&pidfile);
    let out = d.run(&["reset", "-s", "s", "--json"]);
    assert!(out.status.success(), "{out:?}");
    let out = run.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(126), "{out:?}");
    let r = json(&out);
    assert_eq!(
        (r["status"].as_str(), r["exit_code"].as_i64()),
        (Some("reset"), None),
        "{r}"
    );
    assert!(r["output"].as_str().unwrap().contains("tick"), "{r}");
    wait_for(10, "the reset to end the sleep", || {
        (!alive(pid)).then_some(())
    });
    // The fresh shell kept the export and runs the next command.
    let r = json(&d.run(&["run", "-s", "s", "--json", "--", "echo $KEPT"]));
    assert_eq!(
        (r["status"].as_str(), r["output"].as_str()),
        (Some("exited"), Some("yes\n")),
        "{r}"
    );
}

#[test]
fn close_while_a_call_waits_ends_it_as_closed() {
    let d = Daemon::new("ctl-close");
    let pidfile = scratch(&d).join("pid");
    let run = busy(&d, "s", &pidfile);
    let pid = sleeper(&pidfile);
    let out = d.run(&["close", "-s", "s"]);
    assert!(out.status.success(), "{out:?}");
    // Ended with its tree by the time close answers.
    assert!(!alive(pid), "close answered before the sleep ended");
    let out = run.wait_with_output().unwrap();
    let r = json(&out);
    assert_eq!(r["status"], "closed", "{r}");
    assert_eq!(out.status.code(), Some(126), "{out:?}");
    assert_eq!(d.stdout(&["ls"]).trim(), "", "no session is left");
}

#[test]
fn daemon_stop_and_sigterm_while_calls_wait() {
    let d = Daemon::new("ctl-stop");
    let dir = scratch(&d);
    let (a, b) = (dir.join("a"), dir.join("b"));
    let run_a = busy(&d, "a", &a);
    let run_b = busy(&d, "b", &b);
    let (pa, pb) = (sleeper(&a), sleeper(&b));
    let first = d.pid();
    let out = d.run(&["daemon", "stop"]);
    assert!(out.status.success(), "{out:?}");
    // `daemon stop` returns once the daemon is gone, so the next command
    // starts a fresh daemon instead of reaching the one ending its sessions.
    assert!(!alive(first), "the daemon still runs after `daemon stop`");
    for (run, pid) in [(run_a, pa), (run_b, pb)] {
        let r = json(&run.wait_with_output().unwrap());
        assert_eq!(r["status"], "closed", "{r}");
        wait_for(10, "the sleep to end", || (!alive(pid)).then_some(()));
    }
    // SIGTERM to a new daemon does the same.
    let run = busy(&d, "c", &dir.join("c"));
    let pc = sleeper(&dir.join("c"));
    assert_ne!(d.pid(), first, "a fresh daemon serves");
    kill(Pid::from_raw(d.pid()), Signal::SIGTERM).unwrap();
    let r = json(&run.wait_with_output().unwrap());
    assert_eq!(r["status"], "closed", "{r}");
    wait_for(10, "the sleep to end", || (!alive(pc)).then_some(()));
}

#[test]
fn ctrl_c_on_a_waiting_run_interrupts_then_detaches() {
    let d = Daemon::new("ctl-ctrlc");
    let dir = scratch(&d);
    // Once: the command is interrupted, and the call says how it ended.
    let run = busy(&d, "s", &dir.join("one"));
    let pid = sleeper(&dir.join("one"));
    kill(Pid::from_raw(run.id() as i32), Signal::SIGINT).unwrap();
    interrupted(run);
    assert!(!alive(pid));
    // Twice: tether detaches, the command runs on, `read` sees it. This
    // command ignores SIGINT, so the first Ctrl-C leaves it running.
    let pidfile = dir.join("two");
    let code = format!(
        "echo tick; sh -c 'trap \"\" INT; echo $$ > {}; exec sleep 60'",
        pidfile.display()
    );
    let mut run = running(&d, &["-s", "s"], &code);
    let stderr = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
    let mut pipe = run.stderr.take().unwrap();
    let sink = std::sync::Arc::clone(&stderr);
    std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while let Ok(n) = std::io::Read::read(&mut pipe, &mut buf) {
            if n == 0 {
                break;
            }
            sink.lock()
                .unwrap()
                .push_str(&String::from_utf8_lossy(&buf[..n]));
        }
    });
    let pid = sleeper(&pidfile);
    let run_pid = Pid::from_raw(run.id() as i32);
    kill(run_pid, Signal::SIGINT).unwrap();
    wait_for(30, "the first Ctrl-C to be taken", || {
        stderr
            .lock()
            .unwrap()
            .contains("interrupting")
            .then_some(())
    });
    kill(run_pid, Signal::SIGINT).unwrap();
    let status = run.wait().unwrap();
    assert_eq!(status.code(), Some(123), "{}", stderr.lock().unwrap());
    wait_for(10, "the detach note", || {
        stderr.lock().unwrap().contains("detached").then_some(())
    });
    assert!(alive(pid), "the command runs on after a detach");
    let r = json(&d.run(&["read", "-s", "s", "--wait", "0.2", "--json"]));
    assert_eq!(r["status"], "running", "{r}");
    assert_eq!(r["foreground"]["command"], "sleep", "{r}");
}
