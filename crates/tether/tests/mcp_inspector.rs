//! `tether mcp` driven by a second, non-Python client: the MCP Inspector
//! CLI (the official TypeScript SDK, which validates every tool's
//! `outputSchema` with ajv and each structured result against it).
//!
//! `scripts/test` installs it from the npm registry into
//! `target/mcp-inspector` (or `$TETHER_MCP_INSPECTOR` names its launcher);
//! without it this test says so and skips. Nothing is fetched here.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::PathBuf;
use std::process::Output;

use common::{Daemon, TETHER};

fn inspector() -> Option<PathBuf> {
    let path = std::env::var_os("TETHER_MCP_INSPECTOR")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("../../target/mcp-inspector/node_modules/.bin/mcp-inspector")
        });
    path.exists().then_some(path)
}

/// The inspector's stderr lines that are about tether (not node's own
/// notices about its version).
fn complaints(out: &Output) -> Vec<String> {
    String::from_utf8_lossy(&out.stderr)
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(str::to_owned)
        .collect()
}

fn inspect(inspector: &PathBuf, d: &Daemon, method_args: &[&str]) -> (serde_json::Value, Output) {
    let out = std::process::Command::new(inspector)
        .args(["--cli", TETHER, "mcp", "--norc", "--method"])
        .args(method_args)
        .env("TETHER_DIR", &d.dir)
        .env("TETHER_IDLE_EXIT", "30")
        .env_remove("XDG_RUNTIME_DIR")
        .output()
        .unwrap();
    assert!(out.status.success(), "the inspector failed: {out:?}");
    let v = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)));
    (v, out)
}

#[test]
fn the_typescript_sdk_accepts_every_schema_and_result() {
    let Some(inspector) = inspector() else {
        eprintln!(
            "SKIPPED: no MCP Inspector at target/mcp-inspector (scripts/test installs it from npm)"
        );
        return;
    };
    let d = Daemon::new("mcp-inspector");
    let (list, out) = inspect(&inspector, &d, &["tools/list"]);
    assert_eq!(complaints(&out), Vec::<String>::new(), "schema warnings");
    let tools = list["tools"].as_array().unwrap();
    assert!(tools.iter().any(|t| t["name"] == "shell_run"), "{list}");
    let (r, out) = inspect(
        &inspector,
        &d,
        &[
            "tools/call",
            "--tool-name",
            "shell_run",
            "--tool-arg",
            "command=echo hi; true | false | (exit 3)",
        ],
    );
    assert_eq!(
        complaints(&out),
        Vec::<String>::new(),
        "warnings on the call"
    );
    assert_ne!(r["isError"], true, "{r}");
    let sc = &r["structuredContent"];
    assert_eq!(
        (&sc["status"], &sc["exit_code"], &sc["output"]),
        (&"exited".into(), &3.into(), &"hi\n".into()),
        "{r}"
    );
    assert_eq!(sc["pipe_status"], serde_json::json!([0, 1, 3]), "{r}");
}
