//! Readiness of remote sessions however they are polled, against real
//! sshd on 127.0.0.2 (issue 23): a silent command kept past a short
//! deadline and polled by short reads (CLI, MCP) is `running` on bash, zsh,
//! dash and busybox, and only a real read of the terminal is
//! `waiting_for_input`. Skips with a message when sshd is not installed.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::{Duration, Instant};

use common::remote::{Remote, start};
use common::wait_for;

/// The shells a host may have, as `--shell` names them.
const SHELLS: [&str; 4] = ["bash", "zsh", "dash", "busybox"];

/// `tether read -s NAME --wait SECS --json`: (exit code, result).
fn read(r: &Remote, name: &str, wait: &str) -> (i32, serde_json::Value) {
    r.json(&["read", "-s", name, "--wait", wait])
}

/// A silent command kept past a short deadline and polled by reads
/// shorter than the silence rule (as `tether shell` and agents poll) stays
/// `running` until it ends, with its output and exit code, on each shell.
/// Before the fix, the probe's verdict lived for one wait: every read began
/// without it and, 3 s into the silence, answered `waiting_for_input`.
#[test]
fn a_silent_remote_command_is_running_however_it_is_polled() {
    let Some(r) = start("truth-silent") else {
        return;
    };
    for sh in SHELLS {
        let (code, v) = r.json(&[
            "run",
            "-s",
            &format!("silent-{sh}"),
            "--host",
            "web01",
            "--shell",
            sh,
            "--timeout",
            "0.5",
            "--keep",
            "--",
            "sleep 6; echo x; (exit 3)",
        ]);
        assert_eq!(
            (code, v["status"].as_str()),
            (123, Some("running")),
            "{sh}: {v}"
        );
    }
    let mut open: Vec<&str> = SHELLS.to_vec();
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut output: std::collections::HashMap<&str, String> = Default::default();
    while !open.is_empty() {
        assert!(Instant::now() < deadline, "never ended: {open:?}");
        open.retain(|sh| {
            let (code, v) = read(&r, &format!("silent-{sh}"), "0.5");
            let out = output.entry(sh).or_default();
            out.push_str(v["output"].as_str().unwrap_or_default());
            match v["status"].as_str() {
                Some("running") => {
                    assert_eq!(code, 123, "{sh}: {v}");
                    true
                }
                Some("exited") => {
                    assert_eq!((code, out.as_str()), (3, "x\n"), "{sh}: {v}");
                    false
                }
                _ => panic!("{sh}: a silent command reported {v}"),
            }
        });
    }
}

/// A real read of the terminal is still `waiting_for_input` when polled by
/// short reads (each shell's own `read`), and the answer reaches it.
#[test]
fn a_remote_read_of_the_terminal_is_waiting_however_it_is_polled() {
    let Some(r) = start("truth-reading") else {
        return;
    };
    for sh in SHELLS {
        let s = format!("reading-{sh}");
        let (code, v) = r.json(&[
            "run",
            "-s",
            &s,
            "--host",
            "web01",
            "--shell",
            sh,
            "--timeout",
            "0.2",
            "--keep",
            "--",
            "printf 'name? '; read n; echo hi $n",
        ]);
        assert!(
            code == 123 || code == 125,
            "{sh}: {code} {v} (running or already waiting)"
        );
        wait_for(30, &format!("{sh}: waiting for input"), || {
            let (code, v) = read(&r, &s, "0.5");
            match v["status"].as_str() {
                Some("running") => None,
                Some("waiting_for_input") => {
                    assert_eq!(code, 125, "{sh}: {v}");
                    Some(())
                }
                _ => panic!("{sh}: {v}"),
            }
        });
        let out = r.tether(&["send", "-s", &s, "-k", "Enter", "--json", "bob"]);
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(
            (v["status"].as_str(), v["output"].as_str()),
            (Some("exited"), Some("hi bob\n")),
            "{sh}: {v}"
        );
    }
}

/// `tether mcp` against `r`'s daemon: a raw JSON-RPC client.
struct Mcp {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    lines: std::sync::mpsc::Receiver<String>,
}

impl Mcp {
    fn start(r: &Remote) -> Mcp {
        use std::io::BufRead;
        let mut child = r
            .daemon
            .cmd(&["mcp", "--norc"])
            .env("HOME", &r.home.0)
            .env_remove("XDG_CONFIG_HOME")
            .env_remove("SSH_AUTH_SOCK")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = std::io::BufReader::new(child.stdout.take().unwrap());
        let (tx, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in stdout.lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut m = Mcp {
            child,
            stdin,
            lines,
        };
        m.send(
            serde_json::json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "remote-truth", "version": "0"}}}),
        );
        m.reply(0);
        m.send(serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        m
    }

    fn send(&mut self, v: serde_json::Value) {
        use std::io::Write;
        self.stdin.write_all(format!("{v}\n").as_bytes()).unwrap();
        self.stdin.flush().unwrap();
    }

    fn reply(&mut self, id: u64) -> serde_json::Value {
        loop {
            let line = self
                .lines
                .recv_timeout(Duration::from_secs(60))
                .unwrap_or_else(|e| panic!("no reply with id {id}: {e}"));
            let msg: serde_json::Value = serde_json::from_str(&line).unwrap();
            if msg["id"] == id {
                return msg;
            }
        }
    }

    /// Calls `tool` with `args`; its structured result.
    fn call(&mut self, id: u64, tool: &str, args: serde_json::Value) -> serde_json::Value {
        self.send(
            serde_json::json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": tool, "arguments": args}}),
        );
        let r = self.reply(id);
        r["result"]["structuredContent"].clone()
    }
}

impl Drop for Mcp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The same through MCP: `shell_run` kept past a short deadline, then
/// `shell_read` with short waits, is `running` until it ends.
#[test]
fn a_silent_remote_command_is_running_through_mcp_reads() {
    let Some(r) = start("truth-mcp") else {
        return;
    };
    let mut m = Mcp::start(&r);
    let v = m.call(
        1,
        "shell_run",
        serde_json::json!({"session": "m", "host": "web01", "command": "sleep 5; echo x",
            "timeout_s": 0.5, "on_timeout": "keep"}),
    );
    assert_eq!(v["status"], "running", "{v}");
    let mut id = 2;
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut output = String::new();
    loop {
        assert!(Instant::now() < deadline, "never ended");
        let v = m.call(
            id,
            "shell_read",
            serde_json::json!({"session": "m", "wait_s": 0.5}),
        );
        id += 1;
        output.push_str(v["output"].as_str().unwrap_or_default());
        match v["status"].as_str() {
            Some("running") => {}
            Some("exited") => break,
            _ => panic!("a silent command reported {v}"),
        }
    }
    assert_eq!(output, "x\n");
}
