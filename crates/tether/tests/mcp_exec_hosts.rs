//! MCP `exec_hosts` against three real sshd and a host that is down,
//! through `tether mcp` spoken to line by line: identical answers fold
//! into one group, exit codes and errors are per group, output is clipped
//! per group. Then `shell_run` with `host`: a persistent remote shell.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::process::Command;

use common::McpFleet;
use serde_json::{Value, json};

#[test]
fn exec_hosts_groups_identical_results() {
    let Some(mut m) = McpFleet::start("mcp-exec-home", &["127.0.0.2", "127.0.0.3", "127.0.0.4"])
    else {
        return;
    };
    let tools = m.call(2, "tools/list", json!({}));
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
    let r = m.call(
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

    let r = m.call(
        4,
        "tools/call",
        json!({"name": "exec_hosts", "arguments": {"hosts": "127.0.0.[2-4]", "command": "seq 1 1000", "output_limit": 20}}),
    );
    let g = &r["result"]["structuredContent"]["groups"][0];
    assert_eq!(g["hosts"], "127.0.0.[2-4]");
    assert_eq!(g["truncated"]["total_chars"], 3893);
    let r = m.call(
        5,
        "tools/call",
        json!({"name": "exec_hosts", "arguments": {"hosts": "n[3-1]", "command": "true"}}),
    );
    assert_eq!(r["result"]["isError"], json!(true), "{r}");

    // shell_run with a host: a persistent shell there, named after it.
    let mut run = |id: u64, args: Value| {
        let r = m.call(
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
    let r = m.call(
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
    let tether_dir = m.tether_dir.clone();
    m.finish();
    let _ = Command::new(env!("CARGO_BIN_EXE_tether"))
        .args(["daemon", "stop"])
        .env("TETHER_DIR", &tether_dir)
        .output();
}
