//! `tether mcp` driven by the official MCP Python SDK (`tests/mcp/client.py`):
//! every tool, every status, bad input, and malformed JSON-RPC.
//!
//! `scripts/test` creates the virtualenv with the `mcp` package
//! (`target/mcp-venv`, or `$TETHER_MCP_PYTHON`); without it this test says
//! so and skips.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::PathBuf;
use std::process::Command;

#[test]
fn the_python_mcp_client_passes_every_check() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let python = std::env::var_os("TETHER_MCP_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target/mcp-venv/bin/python"));
    if !python.exists() {
        eprintln!(
            "SKIPPED: no Python with the `mcp` package at {} (scripts/test creates it)",
            python.display()
        );
        return;
    }
    let client = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/client.py");
    let daemon = common::Daemon::new("mcp-python");
    let out = Command::new(&python)
        .env("TETHER_DIR", &daemon.dir)
        .env_remove("XDG_RUNTIME_DIR")
        .arg(&client)
        .arg(env!("CARGO_BIN_EXE_tether"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "client failed:\n{stdout}\n{stderr}");
    assert!(stdout.contains("mcp client: all checks passed"), "{stdout}");
    assert!(
        stdout.contains("mcp raw: malformed input answered with an error"),
        "{stdout}"
    );
}

#[test]
fn with_a_secret_in_the_servers_environment_nothing_is_withheld_or_shown() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let python = std::env::var_os("TETHER_MCP_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target/mcp-venv/bin/python"));
    if !python.exists() {
        eprintln!(
            "SKIPPED: no Python with the `mcp` package at {} (scripts/test creates it)",
            python.display()
        );
        return;
    }
    let client = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/redaction_client.py");
    let daemon = common::Daemon::new("mcp-secrets");
    let out = Command::new(&python)
        .env("TETHER_DIR", &daemon.dir)
        .env_remove("XDG_RUNTIME_DIR")
        .arg(&client)
        .arg(env!("CARGO_BIN_EXE_tether"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "client failed:\n{stdout}\n{stderr}");
    assert!(
        stdout.contains("mcp secrets: all checks passed"),
        "{stdout}"
    );
}

/// Faults through the Python SDK: a cancelled call, the daemon SIGKILLed
/// during a call, the server SIGKILLed or its stdin closed with a call in
/// flight (`tests/mcp/faults_client.py`).
#[test]
fn cancels_and_crashes_lose_nothing_and_run_nothing_twice() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let python = std::env::var_os("TETHER_MCP_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target/mcp-venv/bin/python"));
    if !python.exists() {
        eprintln!(
            "SKIPPED: no Python with the `mcp` package at {} (scripts/test creates it)",
            python.display()
        );
        return;
    }
    let client = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/faults_client.py");
    let daemon = common::Daemon::new("mcp-faults");
    let work = daemon.dir.with_extension("work");
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).unwrap();
    let out = Command::new(&python)
        .env("TETHER_DIR", &daemon.dir)
        .env_remove("XDG_RUNTIME_DIR")
        .arg(&client)
        .arg(env!("CARGO_BIN_EXE_tether"))
        .arg(&work)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "client failed:\n{stdout}\n{stderr}");
    assert!(stdout.contains("mcp faults: all checks passed"), "{stdout}");
    let _ = std::fs::remove_dir_all(&work);
}
