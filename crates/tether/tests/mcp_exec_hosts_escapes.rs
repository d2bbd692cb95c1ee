//! MCP `exec_hosts` gives an agent the text of the hosts' output as
//! `shell_run` gives it (issue 23, item 11): a host's escape sequences
//! (an OSC 52 clipboard write, a colour, a title) never reach the agent.
//! A timeout says whether the host confirmed the command's end (item 3).
//! Against a real sshd on 127.0.0.2.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use serde_json::{Value, json};
use tether_testkit::{Scratch, fleet, keygen};

#[test]
fn exec_hosts_strips_the_hosts_escape_sequences() {
    if let Some(why) = tether_testkit::unavailable() {
        eprintln!("SKIPPED: {why}");
        return;
    }
    let home = Scratch::new("mcp-exec-esc");
    let ssh = home.0.join(".ssh");
    std::fs::create_dir_all(&ssh).unwrap();
    let key = keygen(&ssh.join("id_ed25519"), "").unwrap();
    let (port, _sshd, known) = fleet(&["127.0.0.2"], &[&key.with_extension("pub")]).unwrap();
    std::fs::write(ssh.join("known_hosts"), known).unwrap();
    std::fs::write(
        ssh.join("config"),
        format!(
            "Host *\n  Port {port}\n  User {}\n  IdentityAgent none\n",
            tether_testkit::user()
        ),
    )
    .unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_tether"))
        .args(["mcp", "--norc"])
        .env("HOME", &home.0)
        .env("TETHER_DIR", home.0.join("tether"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut call = |id: u64, method: &str, params: Value| -> Value {
        writeln!(
            stdin,
            "{}",
            json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
        )
        .unwrap();
        stdin.flush().unwrap();
        loop {
            let mut line = String::new();
            assert!(stdout.read_line(&mut line).unwrap() > 0);
            let v: Value = serde_json::from_str(&line).unwrap();
            if v["id"] == json!(id) {
                return v;
            }
        }
    };
    call(
        1,
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}),
    );
    // An OSC 52 clipboard write, a title, a colour, on stdout and stderr.
    let cmd = r"printf '\033]52;c;aGVsbG8=\007\033]0;title\007\033[31mred\033[0m plain\n'; printf '\033]52;c;ZXZpbA==\033\\err\n' >&2";
    let r = call(
        2,
        "tools/call",
        json!({"name": "exec_hosts", "arguments": {"hosts": "127.0.0.2", "command": cmd, "timeout_s": 30}}),
    );
    let g = &r["result"]["structuredContent"]["groups"][0];
    assert_eq!(g["exit_code"], 0, "{r}");
    assert_eq!(g["output"], "red plain\nerr\n", "{r}");
    let whole = r.to_string();
    assert!(
        !whole.contains("\\u001b") && !whole.contains("]52;"),
        "an escape reached the agent: {whole}"
    );
    // A timeout says whether the host confirmed the command's end.
    let r = call(
        3,
        "tools/call",
        json!({"name": "exec_hosts", "arguments": {"hosts": "127.0.0.2", "command": "sleep 30", "timeout_s": 1}}),
    );
    let g = &r["result"]["structuredContent"]["groups"][0];
    assert_eq!(
        (g["error_kind"].as_str(), g["halt"].as_str()),
        (Some("timeout"), Some("ended")),
        "{r}"
    );
    drop(stdin);
    let _ = child.wait();
}
