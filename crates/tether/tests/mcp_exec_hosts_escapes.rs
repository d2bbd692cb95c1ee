//! MCP `exec_hosts` gives an agent the text of the hosts' output as
//! `shell_run` gives it (issue 23, item 11): a host's escape sequences
//! (an OSC 52 clipboard write, a colour, a title) never reach the agent.
//! A timeout says whether the host confirmed the command's end (item 3).
//! Against a real sshd on 127.0.0.2.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::McpFleet;
use serde_json::json;

#[test]
fn exec_hosts_strips_the_hosts_escape_sequences() {
    let Some(mut m) = McpFleet::start("mcp-exec-esc", &["127.0.0.2"]) else {
        return;
    };
    // An OSC 52 clipboard write, a title, a colour, on stdout and stderr.
    let cmd = r"printf '\033]52;c;aGVsbG8=\007\033]0;title\007\033[31mred\033[0m plain\n'; printf '\033]52;c;ZXZpbA==\033\\err\n' >&2";
    let r = m.call(
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
    let r = m.call(
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
    m.finish();
}
