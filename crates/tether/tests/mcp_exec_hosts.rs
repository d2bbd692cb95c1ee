//! MCP `exec_hosts` against three real sshd and a host that is down,
//! through `tether mcp` spoken to line by line: identical answers fold
//! into one group, exit codes and errors are per group, output is clipped
//! per group. Then `shell_run` with `host`: a persistent remote shell.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use serde_json::{Value, json};
use tether_testkit::{Scratch, fleet, keygen};

#[test]
fn exec_hosts_groups_identical_results() {
    if let Some(why) = tether_testkit::unavailable() {
        eprintln!("SKIPPED: {why}");
        return;
    }
    let home = Scratch::new("mcp-exec-home");
    let ssh = home.0.join(".ssh");
    std::fs::create_dir_all(&ssh).unwrap();
    let key = keygen(&ssh.join("id_ed25519"), "").unwrap();
    let (port, _sshd, known) = fleet(
        &["127.0.0.2", "127.0.0.3", "127.0.0.4"],
        &[&key.with_extension("pub")],
    )
    .unwrap();
    std::fs::write(ssh.join("known_hosts"), known).unwrap();
    std::fs::write(
        ssh.join("config"),
        format!(
            "Host *\n  Port {port}\n  User {}\n  IdentityAgent none\n",
            tether_testkit::user()
        ),
    )
    .unwrap();
    let tether_dir = home.0.join("tether");
    let mut child = Command::new(env!("CARGO_BIN_EXE_tether"))
        .args(["mcp", "--norc"])
        .env("HOME", &home.0)
        .env("TETHER_DIR", &tether_dir)
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
    let tools = call(2, "tools/list", json!({}));
    let exec = tools["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "exec_hosts")
        .cloned()
        .unwrap();
    assert_eq!(exec["inputSchema"]["required"], json!(["hosts", "command"]));
    assert!(exec["outputSchema"]["properties"]["groups"].is_object());

    let cmd = "set -- $SSH_CONNECTION; [ $3 = 127.0.0.4 ] && { echo odd; exit 2; }; echo same";
    let r = call(
        3,
        "tools/call",
        json!({"name": "exec_hosts", "arguments": {"hosts": "127.0.0.[2-5]", "command": cmd, "timeout_s": 30}}),
    );
    let s = &r["result"]["structuredContent"];
    assert_eq!(
        (
            s["hosts_total"].as_u64(),
            s["succeeded"].as_u64(),
            s["failed"].as_u64()
        ),
        (Some(4), Some(2), Some(2)),
        "{r}"
    );
    let groups = s["groups"].as_array().unwrap();
    assert_eq!(groups.len(), 3, "{groups:?}");
    assert_eq!(
        (
            groups[0]["hosts"].as_str(),
            groups[0]["exit_code"].as_u64(),
            groups[0]["output"].as_str()
        ),
        (Some("127.0.0.[2-3]"), Some(0), Some("same\n"))
    );
    assert_eq!(
        (groups[1]["hosts"].as_str(), groups[1]["exit_code"].as_u64()),
        (Some("127.0.0.4"), Some(2))
    );
    assert_eq!(groups[2]["hosts"], "127.0.0.5");
    assert!(
        groups[2]["error"]
            .as_str()
            .unwrap()
            .contains("cannot connect"),
        "{groups:?}"
    );
    assert_eq!(groups[2]["error_kind"], "ssh", "{groups:?}");
    assert!(groups[0]["error_kind"].is_null(), "{groups:?}");

    let r = call(
        4,
        "tools/call",
        json!({"name": "exec_hosts", "arguments": {"hosts": "127.0.0.[2-4]", "command": "seq 1 1000", "output_limit": 20}}),
    );
    let g = &r["result"]["structuredContent"]["groups"][0];
    assert_eq!(g["hosts"], "127.0.0.[2-4]");
    assert_eq!(g["truncated"]["total_chars"], 3893);
    let r = call(
        5,
        "tools/call",
        json!({"name": "exec_hosts", "arguments": {"hosts": "n[3-1]", "command": "true"}}),
    );
    assert_eq!(r["result"]["isError"], json!(true), "{r}");

    // shell_run with a host: a persistent shell there, named after it.
    let mut run = |id: u64, args: Value| {
        let r = call(
            id,
            "tools/call",
            json!({"name": "shell_run", "arguments": args}),
        );
        r["result"]["structuredContent"].clone()
    };
    let s = run(
        6,
        json!({"host": "127.0.0.2", "command": "cd /tmp; set -- $SSH_CONNECTION; echo $3"}),
    );
    assert_eq!(
        (
            s["session"].as_str(),
            s["host"].as_str(),
            s["output"].as_str()
        ),
        (Some("127.0.0.2"), Some("127.0.0.2"), Some("127.0.0.2\n")),
        "{s}"
    );
    let s = run(
        7,
        json!({"session": "127.0.0.2", "command": "pwd; exit_with() { return $1; }; exit_with 4"}),
    );
    assert_eq!(
        (s["output"].as_str(), s["exit_code"].as_i64()),
        (Some("/tmp\n"), Some(4)),
        "{s}"
    );
    let s = run(
        8,
        json!({"host": "127.0.0.2", "command": "sleep 30", "timeout_s": 1}),
    );
    assert_eq!(s["status"], "timed_out", "{s}");
    let s = run(
        9,
        json!({"host": "127.0.0.2", "command": "read -p 'go? ' a; echo got $a"}),
    );
    assert_eq!(s["status"], "waiting_for_input", "{s}");
    let r = call(
        10,
        "tools/call",
        json!({"name": "shell_send", "arguments": {"session": "127.0.0.2", "input": "yes\n"}}),
    );
    let s = &r["result"]["structuredContent"];
    assert_eq!(
        (s["status"].as_str(), s["output"].as_str()),
        (Some("exited"), Some("got yes\n")),
        "{r}"
    );
    drop(stdin);
    child.wait().unwrap();
    let _ = Command::new(env!("CARGO_BIN_EXE_tether"))
        .args(["daemon", "stop"])
        .env("TETHER_DIR", &tether_dir)
        .output();
}
