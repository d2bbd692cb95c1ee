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

/// Hosts whose results all differ (each refusal names its own address)
/// get a bounded answer (issue 36): the `max_groups` largest groups whole,
/// the rest folded by status with `differing` counting them, every host
/// in exactly one group.
#[test]
fn exec_hosts_answers_within_a_bound_when_every_result_differs() {
    let Some(mut m) = McpFleet::start("mcp-exec-bound", &["127.0.0.2"]) else {
        return;
    };
    // Nothing listens on port 1 of 127.1.0.x: each host is refused at once.
    let config = m.home.0.join(".ssh/config");
    let text = std::fs::read_to_string(&config).unwrap();
    std::fs::write(&config, format!("Host 127.1.*\n  Port 1\n{text}")).unwrap();
    let answer = |m: &mut McpFleet, id: u64, args: Value| {
        let r = m.call(
            id,
            "tools/call",
            json!({"name": "exec_hosts", "arguments": args}),
        );
        r["result"]["structuredContent"].clone()
    };
    let hosts = "127.1.0.[1-250]";
    let s = answer(
        &mut m,
        2,
        json!({"hosts": hosts, "command": "true", "max_groups": 5}),
    );
    assert_eq!(s["hosts_total"].as_u64(), Some(250), "{s}");
    let groups = s["groups"].as_array().unwrap();
    assert!(groups.len() <= 6, "{}", groups.len());
    let whole = groups.iter().filter(|g| g["differing"].is_null()).count();
    assert_eq!(whole, 5, "{s}");
    let folded: Vec<&Value> = groups
        .iter()
        .filter(|g| !g["differing"].is_null())
        .collect();
    assert_eq!(folded.len(), 1, "{s}");
    assert_eq!(folded[0]["differing"].as_u64(), Some(245), "{s}");
    assert_eq!(folded[0]["output"].as_str(), Some(""), "{s}");
    // Every host once (counted by ClusterShell's nodeset, which
    // scripts/test installs): the folded set names the other 245.
    let n: usize = groups
        .iter()
        .map(|g| {
            let o = Command::new("nodeset")
                .args(["-c", g["hosts"].as_str().unwrap()])
                .output()
                .expect("nodeset (clustershell) is installed by scripts/test");
            assert!(o.status.success(), "{o:?}");
            String::from_utf8_lossy(&o.stdout)
                .trim()
                .parse::<usize>()
                .unwrap()
        })
        .sum();
    assert_eq!(n, 250, "{s}");
    // The default bound holds the answer to 20 whole groups and the rest.
    let s = answer(&mut m, 3, json!({"hosts": hosts, "command": "true"}));
    let groups = s["groups"].as_array().unwrap();
    assert!(groups.len() <= 21, "{}", groups.len());
    assert!(s.to_string().len() < 64 * 1024, "{}", s.to_string().len());
    m.finish();
}
