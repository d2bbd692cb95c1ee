//! Deadlines hold at every step to a host (issue 37): with a session open
//! on a host, the sshd processes serving its connection are SIGSTOPped
//! (the listener stays up: no FIN, no answer), then a call is made. A
//! `run` with `--timeout 5` ends while they are still stopped (it took
//! 60 s, the default keepalive's bound, saying `n1: n1: cannot open a
//! channel: Disconnected`), and a `run` whose deadline is far off ends by
//! the keepalive's bound; either says the link hung, naming the host once.
//! Both for a shell driven over the link (agentless) and for one living
//! in the host's own tether (the relay). Against real sshd on 127.0.0.2;
//! skips with a message when sshd is missing.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::process::{Child, Output, Stdio};
use std::time::{Duration, Instant};

use common::remote::{Remote, start, start_deployed};

/// Longer than a deadline of 5 s and the grace after it, shorter than the
/// default keepalive's bound (15 × 3 + 15 = 60 s): a call still running
/// then waits on the keepalive, not on its deadline.
const BOUND: Duration = Duration::from_secs(40);

/// `tether ARGS` against `r`'s daemon, started in the background.
fn spawn(r: &Remote, args: &[&str]) -> Child {
    r.daemon
        .cmd(args)
        .env("HOME", &r.home.0)
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("SSH_AUTH_SOCK")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// The sshd processes serving the host's connections, stopped until the
/// guard is dropped (the listener runs on: the host can be reached anew).
struct Stopped(Vec<i32>);

impl Stopped {
    fn connections_of(r: &Remote) -> Stopped {
        Stopped(common::remote::stop_connections_of(&r.sshd[0]))
    }

    /// True while every one of them is still stopped (state `T`).
    fn still(&self) -> bool {
        self.0.iter().all(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .ok()
                .and_then(|s| {
                    s.rsplit(')')
                        .next()
                        .map(|t| t.trim_start().starts_with('T'))
                })
                .unwrap_or(false)
        })
    }
}

impl Drop for Stopped {
    fn drop(&mut self) {
        common::remote::resume(&self.0);
    }
}

/// `call`'s output once it ended; it must end within [`BOUND`] (a bound
/// that fails a hang, not a timing assertion) and while `stopped` still
/// holds (nothing but its own deadline ended it).
fn ends(mut call: Child, stopped: &Stopped, what: &str) -> Output {
    let t0 = Instant::now();
    while call.try_wait().unwrap().is_none() {
        if t0.elapsed() > BOUND {
            let _ = call.kill();
            let out = call.wait_with_output().unwrap();
            panic!(
                "{what}: still waiting on the hung link after {BOUND:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(
        stopped.still(),
        "{what}: the host was resumed under the call"
    );
    call.wait_with_output().unwrap()
}

/// A session `name` on web01 with its shell started.
fn open_session(r: &Remote, name: &str) {
    let (code, v) = r.json(&["run", "-s", name, "--host", "web01", "--", "echo $$"]);
    assert_eq!(code, 0, "{v}");
}

/// The call's result says the link hung (`connection_lost`, exit 120,
/// `unanswered`, the host named), or its error does (exit 255, the host
/// named once, "the link hung").
fn says_the_link_hung(out: &Output, what: &str) {
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    eprintln!("{what}: exit {:?}: {stdout} {stderr}", out.status.code());
    assert!(
        !stderr.contains("web01: web01"),
        "{what}: the host named twice: {stderr}"
    );
    match out.status.code() {
        Some(120) => {
            let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
            assert_eq!(v["status"], "connection_lost", "{what}: {v}");
            assert_eq!(v["link"]["failure"], "unanswered", "{what}: {v}");
            assert_eq!(v["host"], "web01", "{what}: {v}");
        }
        code => panic!("{what}: exit {code:?}, not a hung link: {stdout} {stderr}"),
    }
}

/// A short keepalive (1 × 2) for every host, in the user's ssh_config:
/// sessions made after it get it with their route.
fn short_keepalive(r: &Remote) {
    let config = r.home.0.join(".ssh/config");
    let mut text = std::fs::read_to_string(&config).unwrap();
    text.insert_str(
        0,
        "Host *\n  ServerAliveInterval 1\n  ServerAliveCountMax 2\n",
    );
    std::fs::write(&config, text).unwrap();
}

/// The call on a hung link, `args` after `run -s NAME --json`.
fn run_hung(r: &Remote, name: &str, args: &[&str], what: &str) {
    open_session(r, name);
    let stopped = Stopped::connections_of(r);
    let mut all = vec!["run", "-s", name, "--json"];
    all.extend(args);
    let out = ends(spawn(r, &all), &stopped, what);
    drop(stopped);
    says_the_link_hung(&out, what);
    // Resumed, the session works again.
    let (code, v) = r.json(&["run", "-s", name, "--", "echo back"]);
    assert_eq!(
        (code, v["output"].as_str()),
        (0, Some("back\n")),
        "{what}: {v}"
    );
}

#[test]
fn a_run_on_a_hung_link_ends_by_its_deadline() {
    let Some(r) = start("dl-run") else { return };
    run_hung(&r, "a", &["--timeout", "5", "--", "true"], "agentless run");
}

#[test]
fn a_run_with_a_far_deadline_ends_by_the_keepalive() {
    let Some(r) = start("dl-alive") else { return };
    short_keepalive(&r);
    run_hung(
        &r,
        "b",
        &["--timeout", "600", "--", "true"],
        "agentless run",
    );
}

#[test]
fn a_run_in_the_hosts_tether_on_a_hung_link_ends_by_its_deadline() {
    let Some(r) = start_deployed("dl-relay") else {
        return;
    };
    run_hung(&r, "c", &["--timeout", "5", "--", "true"], "relayed run");
}

#[test]
fn a_run_in_the_hosts_tether_with_a_far_deadline_ends_by_the_keepalive() {
    let Some(r) = start_deployed("dl-relay-alive") else {
        return;
    };
    short_keepalive(&r);
    run_hung(&r, "d", &["--timeout", "600", "--", "true"], "relayed run");
}
