//! `tether mcp` on stdin that breaks the rules: a line that is not UTF-8
//! and a line over the request bound each get a JSON-RPC error (id null),
//! and the server keeps serving, its sessions alive; a request between
//! the SDK's own 16 MiB and the bound is answered.
//!
//! The client here is this test process, writing raw bytes to the
//! server's stdin (no SDK would send them).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// The most bytes a request line may have (the README's limits).
const MAX_REQUEST: usize = 64 << 20;

/// `tether mcp`, its stdin, and its stdout lines as they come.
struct Server {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
}

impl Server {
    fn start(d: &common::Daemon) -> Server {
        let mut child = Command::new(common::TETHER)
            .args(["mcp", "--norc"])
            .env("TETHER_DIR", &d.dir)
            .env("TETHER_IDLE_EXIT", "30")
            .env_remove("XDG_RUNTIME_DIR")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let (tx, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in stdout.lines() {
                if tx.send(line.unwrap()).is_err() {
                    break;
                }
            }
        });
        Server {
            child,
            stdin,
            lines,
        }
    }

    fn send_raw(&mut self, bytes: &[u8]) {
        self.stdin.write_all(bytes).unwrap();
        self.stdin.flush().unwrap();
    }

    fn send(&mut self, v: Value) {
        self.send_raw(format!("{v}\n").as_bytes());
    }

    /// The next message whose id is `id` (others are dropped); panics
    /// when stdout ends or nothing comes for a minute.
    fn reply(&mut self, id: &Value) -> Value {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = match self.lines.recv_timeout(left) {
                Ok(line) => line,
                Err(RecvTimeoutError::Timeout) => panic!("no reply with id {id}"),
                Err(RecvTimeoutError::Disconnected) => {
                    let status = self.child.try_wait();
                    panic!("tether mcp closed its stdout ({status:?}) before replying to id {id}")
                }
            };
            let msg: Value = serde_json::from_str(&line).unwrap();
            if &msg["id"] == id {
                return msg;
            }
        }
    }

    /// `shell_run` of `command` in session `s`; the result's text.
    fn run(&mut self, id: u64, command: &str) -> String {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "shell_run", "arguments": {"session": "s", "command": command}}}));
        let r = self.reply(&json!(id));
        assert!(r["result"]["isError"] != json!(true), "{r}");
        r["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_else(|| panic!("{r}"))
            .to_owned()
    }
}

/// The error code of `msg`, which must be an error with id null.
fn anonymous_error(msg: &Value) -> (i64, String) {
    assert_eq!(msg["id"], Value::Null, "{msg}");
    let code = msg["error"]["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("{msg}"));
    let text = msg["error"]["message"].as_str().unwrap().to_owned();
    (code, text)
}

#[test]
fn bad_bytes_and_oversized_lines_get_errors_and_serving_goes_on() {
    let d = common::Daemon::new("mcp-bounds");
    let mut s = Server::start(&d);
    s.send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "raw bytes", "version": "0"}}}),
    );
    assert_eq!(s.reply(&json!(1))["result"]["serverInfo"]["name"], "tether");
    s.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let pid = s.run(2, "echo pid=$$");
    let pid = pid.lines().next().unwrap().to_owned();
    assert!(pid.starts_with("pid="), "{pid}");

    // A request with a byte that is not UTF-8.
    s.send_raw(b"{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/list\",\"x\":\"\xff\xfe\"}\n");
    let (code, text) = anonymous_error(&s.reply(&Value::Null));
    assert_eq!(code, -32700, "{text}");
    assert!(text.contains("UTF-8"), "{text}");
    assert!(s.run(4, "echo after-utf8").contains("after-utf8"));

    // A line over the bound: answered without waiting for its end, the
    // rest of it dropped.
    let max = MAX_REQUEST;
    let head = br#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"shell_run","arguments":{"session":"s","command":"echo big #"#;
    s.send_raw(head);
    let filler = vec![b'x'; 1 << 20];
    for _ in 0..=(max >> 20) {
        s.send_raw(&filler);
    }
    let (code, text) = anonymous_error(&s.reply(&Value::Null));
    assert_eq!(code, -32600, "{text}");
    assert!(text.contains("64 MiB"), "{text}");
    s.send_raw(b"xxx\"}}}\n");
    assert!(s.run(6, "echo after-oversized").contains("after-oversized"));

    // Between the SDK's own limit (16 MiB) and the bound: answered.
    let comment = "x".repeat(20 << 20);
    let out = s.run(7, &format!("echo big-ok # {comment}"));
    assert!(
        out.starts_with("big-ok\n"),
        "{}",
        &out[..out.len().min(200)]
    );

    // The same shell all along.
    let again = s.run(8, "echo pid=$$");
    assert_eq!(again.lines().next().unwrap(), pid);
    drop(s.stdin);
    let status = s.child.wait().unwrap();
    assert!(status.success(), "{status}");
}
