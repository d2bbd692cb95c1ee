//! An MCP server's sessions on a host where tether runs end with the
//! server (issue 36), against real sshd and the host's own daemon: the
//! server SIGKILLed, SIGTERMed, or its stdin closed, with one session's
//! command in flight (`sleep 300; touch MARK`) and another's `setsid`
//! child that would write a file later. The host's processes are gone
//! (each checked by pid), the files they would have written never appear,
//! and neither the host's daemon nor this machine's lists a session of
//! the server's namespace. `tether mcp` is spoken to line by line, as an
//! MCP client does. Skips with a message when sshd is missing.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Stdio};

use common::remote::{Remote, resume, start_deployed, stop_connections_of};
use common::{alive, wait_for};
use serde_json::{Value, json};
use tether_testkit::{Scratch, give_to_login_user};

/// How the server ends.
#[derive(Clone, Copy, Debug)]
enum End {
    Kill,
    Term,
    StdinClosed,
}

/// What else happens to the link or the daemon as the server ends.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Meanwhile {
    Nothing,
    /// The link to the host hangs (its sshd processes stopped) before the
    /// server ends, and comes back once this daemon has failed to close.
    LinkHung,
    /// This machine's daemon is SIGKILLed before the server ends; a new
    /// one is started after.
    DaemonKilled,
}

/// `tether mcp` against `r`'s daemon, initialized.
struct Server {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: std::io::BufReader<ChildStdout>,
}

impl Server {
    fn start(r: &Remote) -> Server {
        let mut child = r
            .daemon
            .cmd(&["mcp", "--norc"])
            .env("HOME", &r.home.0)
            .env_remove("XDG_CONFIG_HOME")
            .env_remove("SSH_AUTH_SOCK")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take();
        let stdout = std::io::BufReader::new(child.stdout.take().unwrap());
        let mut s = Server {
            child,
            stdin,
            stdout,
        };
        let init = s.call(
            1,
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}),
        );
        assert!(init["result"].is_object(), "{init}");
        s.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        s
    }

    fn send(&mut self, v: &Value) {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{v}").unwrap();
        stdin.flush().unwrap();
    }

    /// Sends request `id` (not waiting for its answer).
    fn ask(&mut self, id: u64, method: &str, params: Value) {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
    }

    /// Request `id` and its answer (other lines passed over).
    fn call(&mut self, id: u64, method: &str, params: Value) -> Value {
        self.ask(id, method, params);
        loop {
            let mut line = String::new();
            assert!(
                self.stdout.read_line(&mut line).unwrap() > 0,
                "the server ended"
            );
            let v: Value = serde_json::from_str(&line).unwrap();
            if v["id"] == json!(id) {
                return v;
            }
        }
    }

    /// `shell_run` on web01 in `session`, answered: its structured result.
    fn run(&mut self, id: u64, session: &str, command: &str) -> Value {
        let r = self.call(
            id,
            "tools/call",
            json!({"name": "shell_run", "arguments": {"command": command, "session": session, "host": "web01", "timeout_s": 120}}),
        );
        let s = r["result"]["structuredContent"].clone();
        assert_eq!(s["status"], "exited", "{r}");
        assert!(s["agentless"].is_null(), "tether runs on the host: {r}");
        s
    }

    fn end(mut self, how: End) {
        let pid = nix::unistd::Pid::from_raw(i32::try_from(self.child.id()).unwrap());
        match how {
            End::Kill => nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGKILL).unwrap(),
            End::Term => nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap(),
            End::StdinClosed => drop(self.stdin.take()),
        }
        self.child.wait().unwrap();
    }
}

fn read_pid(path: &Path) -> Option<i32> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

/// The addresses of namespace `ns` that `tether ls [--host web01]` lists.
fn listed(r: &Remote, on_host: bool, ns: &str) -> Vec<String> {
    let args: &[&str] = if on_host {
        &["ls", "--host", "web01"]
    } else {
        &["ls"]
    };
    let (code, v) = r.json(args);
    assert_eq!(code, 0, "{v}");
    v["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s["address"].as_str())
        .filter(|a| a.starts_with(&format!("{ns}/")))
        .map(str::to_owned)
        .collect()
}

fn sessions_end_with_the_server(name: &str, how: End, meanwhile: Meanwhile) {
    let Some(r) = start_deployed(name) else {
        return;
    };
    let dir = Scratch::new("mcp-host-end");
    give_to_login_user(&dir.0).unwrap();
    let file = |n: &str| -> PathBuf { dir.0.join(n) };
    let mut server = Server::start(&r);
    let ns = format!("mcp-{}", server.child.id());

    let shell_a: i32 = server.run(2, "a", "echo $$")["output"]
        .as_str()
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let escape = format!(
        "(setsid sh -c 'echo $$ > {pid}; sleep 300; touch {mark}' </dev/null >/dev/null 2>&1 &); echo $$",
        pid = file("escape.pid").display(),
        mark = file("ESCAPE_MARK").display()
    );
    let shell_b: i32 = server.run(3, "b", &escape)["output"]
        .as_str()
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let busy = format!(
        "sh -c 'echo $$ > {pid}; exec sleep 300'; touch {mark}",
        pid = file("busy.pid").display(),
        mark = file("MARK").display()
    );
    server.ask(
        4,
        "tools/call",
        json!({"name": "shell_run", "arguments": {"command": busy, "session": "a", "host": "web01", "timeout_s": 600}}),
    );
    let sleep = wait_for(60, "the command in flight to start", || {
        read_pid(&file("busy.pid"))
    });
    let escaped = wait_for(60, "the setsid child to start", || {
        read_pid(&file("escape.pid"))
    });
    let mut on_host = listed(&r, true, &ns);
    on_host.sort();
    assert_eq!(on_host, [format!("{ns}/a"), format!("{ns}/b")]);

    let mut stopped = Vec::new();
    match meanwhile {
        Meanwhile::Nothing => {}
        Meanwhile::LinkHung => stopped = stop_connections_of(&r.sshd[0]),
        Meanwhile::DaemonKilled => common::sigkill(r.daemon.pid()),
    }
    server.end(how);
    match meanwhile {
        Meanwhile::Nothing => {}
        Meanwhile::LinkHung => {
            let log = r.daemon.dir.join("daemon.log");
            wait_for(120, "the daemon to say the close must wait", || {
                std::fs::read_to_string(&log)
                    .unwrap_or_default()
                    .contains("trying again later")
                    .then_some(())
            });
            assert!(alive(sleep), "the close reached the host over a hung link");
            resume(&stopped);
        }
        // A new daemon: its book says where the server's sessions live.
        Meanwhile::DaemonKilled => {
            let out = r.tether(&["daemon", "ensure"]);
            assert!(out.status.success(), "{out:?}");
        }
    }

    for (what, pid) in [
        ("session a's shell", shell_a),
        ("the command in flight", sleep),
        ("session b's shell", shell_b),
        ("the setsid child", escaped),
    ] {
        wait_for(
            60,
            &format!("{how:?}: {what} ({pid}) to end on the host"),
            || (!alive(pid)).then_some(()),
        );
    }
    assert!(!file("MARK").exists(), "{how:?}: the command ran on");
    assert!(
        !file("ESCAPE_MARK").exists(),
        "{how:?}: the setsid child ran on"
    );
    wait_for(
        60,
        &format!("{how:?}: the host's daemon to forget {ns}"),
        || listed(&r, true, &ns).is_empty().then_some(()),
    );
    // The host answers its close before this daemon forgets the session.
    wait_for(
        60,
        &format!("{how:?}: this machine to forget {ns}'s sessions on the host"),
        || listed(&r, false, &ns).is_empty().then_some(()),
    );
}

#[test]
fn a_killed_mcp_servers_host_sessions_end() {
    sessions_end_with_the_server("mcp-host-kill", End::Kill, Meanwhile::Nothing);
}

#[test]
fn a_terminated_mcp_servers_host_sessions_end() {
    sessions_end_with_the_server("mcp-host-term", End::Term, Meanwhile::Nothing);
}

#[test]
fn an_mcp_server_whose_stdin_closes_ends_its_host_sessions() {
    sessions_end_with_the_server("mcp-host-stdin", End::StdinClosed, Meanwhile::Nothing);
}

/// The link hangs as the server ends: the close waits for it, and is
/// made once the host answers again.
#[test]
fn host_sessions_end_once_a_hung_link_is_back() {
    sessions_end_with_the_server("mcp-host-hung", End::Kill, Meanwhile::LinkHung);
}

/// This machine's daemon killed first, the server after: the next daemon
/// finds the sessions in its book and closes them on the host.
#[test]
fn host_sessions_end_when_the_daemon_died_before_the_server() {
    sessions_end_with_the_server("mcp-host-dead", End::Kill, Meanwhile::DaemonKilled);
}
