//! Remote links that fail under a call, against real sshd on 127.0.0.2
//! (issue 23): a connection that dies is `connection_lost` (never an exit
//! code or signal the host did not send); a host that hangs is said so by
//! the call's deadline plus a bounded grace (and by a kept command's
//! reads); a session's files on the host are swept after its daemon was
//! killed. Skips with a message when sshd is not installed.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::{Duration, Instant};

use common::remote::{Remote, start};
use common::wait_for;

/// `tether read -s NAME --wait SECS --json`: (exit code, result).
fn read(r: &Remote, name: &str, wait: &str) -> (i32, serde_json::Value) {
    r.json(&["read", "-s", name, "--wait", wait])
}

/// `tether ARGS` against `r`'s daemon, started in the background.
fn spawn(r: &Remote, args: &[&str]) -> std::process::Child {
    r.daemon
        .cmd(args)
        .env("HOME", &r.home.0)
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("SSH_AUTH_SOCK")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

/// The pid of session `name`'s remote shell (a fresh session on web01).
fn shell_pid(r: &Remote, name: &str) -> i32 {
    let (code, v) = r.json(&["run", "-s", name, "--host", "web01", "--", "echo $$"]);
    assert_eq!(code, 0, "{v}");
    v["output"].as_str().unwrap().trim().parse().unwrap()
}

/// Waits until the command in flight on `name` has printed `what`.
fn wait_output(r: &Remote, name: &str, what: &str) {
    wait_for(30, what, || {
        let (_, v) = read(r, name, "0.2");
        v["output"]
            .as_str()
            .unwrap_or_default()
            .contains(what)
            .then_some(())
    });
}

/// The SSH connection under a call dies (its sshd processes killed): the
/// call returns `connection_lost` (exit 120) with the output so far and
/// the command seen started; no exit code and no signal (the host sent
/// none). Before, it was `shell_exited`, 129, SIGHUP.
#[test]
fn a_lost_link_is_connection_lost_not_a_signal() {
    let Some(r) = start("truth-lost") else {
        return;
    };
    let shell = shell_pid(&r, "lost");
    let call = spawn(
        &r,
        &[
            "run",
            "-s",
            "lost",
            "--json",
            "--",
            "echo started; sleep 30",
        ],
    );
    wait_output(&r, "lost", "started");
    common::remote::kill_connection_above(shell);
    let out = common::bounded::wait(call, "the call whose link died", &r.daemon.dir);
    let v = connection_lost(&out);
    assert_eq!(v["exit_code"], serde_json::Value::Null, "{v}");
    assert_eq!(v["signal"], serde_json::Value::Null, "{v}");
    assert_eq!(v["host"], "web01", "{v}");
    assert_eq!(v["link"]["failure"], "lost", "{v}");
    assert_eq!(v["link"]["command_started"], true, "{v}");
    assert_eq!(v["output"], "started\n", "{v}");
    // The next command gets a fresh shell over a fresh connection.
    let (code, v) = r.json(&["run", "-s", "lost", "--", "echo again"]);
    assert_eq!((code, v["output"].as_str()), (0, Some("again\n")), "{v}");
    assert_eq!(v["shell_restarted"], true, "{v}");
}

/// The `--json` result in `out`, asserted to be `connection_lost` (exit
/// 120).
fn connection_lost(out: &std::process::Output) -> serde_json::Value {
    let v: serde_json::Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {out:?}"));
    assert_eq!(
        (out.status.code(), v["status"].as_str()),
        (Some(120), Some("connection_lost")),
        "{v}"
    );
    v
}

/// The sshd processes serving `shell_pid`'s connection and their
/// listener, stopped (SIGSTOP) until the guard is dropped (SIGCONT): the
/// host hangs, as a host or link that stopped answering does.
struct Stopped(Vec<i32>);

impl Stopped {
    fn above(shell_pid: i32) -> Stopped {
        let (mut chain, listener) = common::remote::sshd_above(shell_pid);
        chain.extend(listener);
        assert!(chain.len() >= 2, "no sshd above the shell {shell_pid}");
        for pid in &chain {
            signal(*pid, nix::sys::signal::Signal::SIGSTOP);
        }
        Stopped(chain)
    }
}

impl Drop for Stopped {
    fn drop(&mut self) {
        for pid in &self.0 {
            signal(*pid, nix::sys::signal::Signal::SIGCONT);
        }
    }
}

fn signal(pid: i32, sig: nix::sys::signal::Signal) {
    let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), sig);
}

/// `call`'s output once it returned, within `bound` of `t0` (a bound that
/// fails a hang, not a timing assertion); the host resumed either way.
fn returned_within(
    mut call: std::process::Child,
    t0: Instant,
    bound: Duration,
    stopped: Stopped,
) -> std::process::Output {
    while call.try_wait().unwrap().is_none() {
        if t0.elapsed() > bound {
            let _ = call.kill();
            drop(stopped);
            panic!("the call did not return within {bound:?} of a hung link");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = call.wait_with_output().unwrap();
    drop(stopped);
    out
}

/// The host's sshd stopped (SIGSTOP) under a session: a call with a 5 s
/// deadline returns within a bound (not 60 s), `connection_lost` with the
/// link `unanswered`, the command not seen to start, and the session's
/// host named (it was null). Once the host resumes, the session works
/// again in a fresh shell. Before: `timed_out`, "interrupted, shell
/// kept", after 60.6 s, `host: null`.
#[test]
fn a_hung_link_is_said_by_the_deadline_plus_a_grace() {
    let Some(r) = start("truth-hung") else {
        return;
    };
    let shell = shell_pid(&r, "h9");
    let marker = format!("/tmp/tether-h9ran-{}", std::process::id());
    let stopped = Stopped::above(shell);
    let t0 = Instant::now();
    let call = spawn(
        &r,
        &[
            "run",
            "-s",
            "h9",
            "--timeout",
            "5",
            "--json",
            "--",
            &format!("touch {marker}"),
        ],
    );
    // A bound that fails a hang (the deadline, plus the interrupt's and
    // the link check's graces, plus slack), not a timing assertion.
    let out = returned_within(call, t0, Duration::from_secs(5 + 20), stopped);
    let v = connection_lost(&out);
    assert_eq!(v["host"], "web01", "{v}");
    assert_eq!(v["link"]["failure"], "unanswered", "{v}");
    assert_eq!(v["link"]["command_started"], false, "{v}");
    assert_eq!(v["exit_code"], serde_json::Value::Null, "{v}");
    // A read says the same until a command starts a fresh shell.
    let (code, v) = read(&r, "h9", "0.2");
    assert_eq!(
        (code, v["status"].as_str()),
        (120, Some("connection_lost")),
        "{v}"
    );
    // Resumed, the session works again, in a fresh shell, honestly said.
    let (code, v) = r.json(&["run", "-s", "h9", "--", "echo back"]);
    assert_eq!((code, v["output"].as_str()), (0, Some("back\n")), "{v}");
    assert_eq!(v["shell_restarted"], true, "{v}");
    let _ = std::fs::remove_file(&marker);
}

/// A command that printed 4 lines, then its host hangs (the sshd above
/// it SIGSTOPped): the call returns by its deadline plus a grace,
/// `connection_lost`, with the 4 lines and the command seen started
/// (issue 36).
#[test]
fn a_hung_link_after_output_keeps_it_and_says_the_command_started() {
    let Some(r) = start("truth-hung-out") else {
        return;
    };
    let shell = shell_pid(&r, "h4");
    let call = spawn(
        &r,
        &[
            "run",
            "-s",
            "h4",
            "--timeout",
            "5",
            "--json",
            "--",
            "for i in 1 2 3 4; do echo L$i; done; sleep 60",
        ],
    );
    wait_output(&r, "h4", "L4");
    let stopped = Stopped::above(shell);
    let t0 = Instant::now();
    let out = returned_within(call, t0, Duration::from_secs(5 + 20), stopped);
    let v = connection_lost(&out);
    assert_eq!(v["link"]["failure"], "unanswered", "{v}");
    assert_eq!(v["link"]["command_started"], true, "{v}");
    assert_eq!(v["output"], "L1\nL2\nL3\nL4\n", "{v}");
    let (code, v) = r.json(&["run", "-s", "h4", "--", "echo back"]);
    assert_eq!((code, v["output"].as_str()), (0, Some("back\n")), "{v}");
}

/// A command kept past its deadline on a host that hangs: the reads that
/// follow say the link stopped answering (within a bound), not `running`
/// for ever.
#[test]
fn reads_of_a_kept_command_say_when_the_link_hung() {
    let Some(r) = start("truth-hung-keep") else {
        return;
    };
    let shell = shell_pid(&r, "k9");
    let stopped = Stopped::above(shell);
    let (code, v) = r.json(&[
        "run",
        "-s",
        "k9",
        "--timeout",
        "1",
        "--keep",
        "--",
        "echo hi",
    ]);
    assert_eq!((code, v["status"].as_str()), (123, Some("running")), "{v}");
    let t0 = Instant::now();
    let v = loop {
        assert!(
            t0.elapsed() < Duration::from_secs(40),
            "reads never said the link hung"
        );
        let (code, v) = read(&r, "k9", "1");
        match v["status"].as_str() {
            Some("running") => continue,
            Some("connection_lost") => {
                assert_eq!(code, 120, "{v}");
                break v;
            }
            _ => panic!("{v}"),
        }
    };
    drop(stopped);
    assert_eq!(v["link"]["failure"], "unanswered", "{v}");
    assert_eq!(v["link"]["command_started"], false, "{v}");
    let (code, v) = r.json(&["run", "-s", "k9", "--", "echo back"]);
    assert_eq!((code, v["output"].as_str()), (0, Some("back\n")), "{v}");
}

/// The daemon SIGKILLed with remote sessions open: their directories on
/// the host (command files, the exports snapshot) are swept when each
/// session is continued, or closed without being continued. Before, they
/// stayed in the host's /dev/shm.
#[test]
fn a_killed_daemons_remote_directories_are_swept() {
    let Some(r) = start("truth-sweep") else {
        return;
    };
    let dir_of = |name: &str| -> std::path::PathBuf {
        let (code, v) = r.json(&[
            "run",
            "-s",
            name,
            "--host",
            "web01",
            "--",
            "export SECRET_TOKEN=s3; echo $__tether_dir",
        ]);
        assert_eq!(code, 0, "{v}");
        std::path::PathBuf::from(v["output"].as_str().unwrap().trim())
    };
    // (The host is this machine: its directories are seen directly.)
    let continued = dir_of("continued");
    let closed = dir_of("closed");
    assert!(continued.is_dir() && closed.is_dir());
    let pid = r.daemon.pid();
    common::sigkill(pid);
    wait_for(10, "the daemon to die", || {
        (!common::alive(pid)).then_some(())
    });

    let (code, v) = r.json(&["run", "-s", "continued", "--", "echo on"]);
    assert_eq!(
        (code, v["shell_restarted"].as_bool()),
        (0, Some(true)),
        "{v}"
    );
    assert!(
        !continued.exists(),
        "{} left on the host",
        continued.display()
    );

    let out = r.tether(&["close", "-s", "closed"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(!closed.exists(), "{} left on the host", closed.display());
}

/// A command too long to be typed goes to the host over a channel of its
/// own before the line is typed: with the host hung, that step too gives up
/// by the call's deadline plus the link check's grace (it waited 60 s), as
/// `connection_lost`, `unanswered`, the command not started.
#[test]
fn a_hung_link_before_the_command_is_typed_is_said_by_the_deadline() {
    let Some(r) = start("truth-hung-long") else {
        return;
    };
    let shell = shell_pid(&r, "h10");
    let long = format!("true {}", "x".repeat(5000));
    let stopped = Stopped::above(shell);
    let t0 = Instant::now();
    let call = spawn(
        &r,
        &["run", "-s", "h10", "--timeout", "3", "--json", "--", &long],
    );
    let out = returned_within(call, t0, Duration::from_secs(3 + 20), stopped);
    let v = connection_lost(&out);
    assert_eq!(v["link"]["failure"], "unanswered", "{v}");
    assert_eq!(v["link"]["command_started"], false, "{v}");
    // Resumed, the session works again in a fresh shell.
    let (code, v) = r.json(&["run", "-s", "h10", "--", "echo back"]);
    assert_eq!((code, v["output"].as_str()), (0, Some("back\n")), "{v}");
}
