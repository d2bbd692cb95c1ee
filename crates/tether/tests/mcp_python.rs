//! `tether mcp` driven by the official MCP Python SDK (`tests/mcp/*.py`):
//! every tool, every status, bad input, malformed JSON-RPC, secrets in the
//! server's environment, and faults (a cancelled call, the daemon or the
//! server killed mid-call).
//!
//! `scripts/test` creates the virtualenv with the `mcp` package
//! (`target/mcp-venv`, or `$TETHER_MCP_PYTHON`); without it these tests say
//! so and skip.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::PathBuf;
use std::process::Command;

/// Runs `tests/mcp/SCRIPT tether EXTRA…` against a daemon of its own and
/// returns its stdout once it succeeded; `None` (printed) without the SDK.
fn python_client(script: &str, name: &str, extra: &[&std::path::Path]) -> Option<String> {
    let python = common::mcp_python()?;
    let client = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/mcp")
        .join(script);
    let daemon = common::Daemon::new(name);
    let out = Command::new(&python)
        .env("TETHER_DIR", &daemon.dir)
        .env_remove("XDG_RUNTIME_DIR")
        .arg(&client)
        .arg(env!("CARGO_BIN_EXE_tether"))
        .args(extra)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "client failed:\n{stdout}\n{stderr}");
    Some(stdout)
}

#[test]
fn the_python_mcp_client_passes_every_check() {
    let Some(stdout) = python_client("client.py", "mcp-python", &[]) else {
        return;
    };
    assert!(stdout.contains("mcp client: all checks passed"), "{stdout}");
    assert!(
        stdout.contains("mcp raw: malformed input answered with an error"),
        "{stdout}"
    );
}

#[test]
fn with_a_secret_in_the_servers_environment_nothing_is_withheld_or_shown() {
    let Some(stdout) = python_client("redaction_client.py", "mcp-secrets", &[]) else {
        return;
    };
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
    let work = std::env::temp_dir().join(format!("tether-mcp-faults-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).unwrap();
    let out = python_client("faults_client.py", "mcp-faults", &[&work]);
    let _ = std::fs::remove_dir_all(&work);
    let Some(stdout) = out else {
        return;
    };
    assert!(stdout.contains("mcp faults: all checks passed"), "{stdout}");
}

/// `tether mcp --confine workspace` through the official SDK: the server's
/// confinement is the agent's, which a call may tighten, never loosen.
#[test]
fn an_mcp_servers_confinement_holds_for_its_agents_calls() {
    if std::process::Command::new("bwrap")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("SKIPPED: bubblewrap (bwrap) is not installed (scripts/test installs it)");
        return;
    }
    let s = tether_testkit::Scratch::new("mcp-confine");
    let (ws, out) = (s.0.join("ws"), s.0.join("out"));
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::create_dir_all(&out).unwrap();
    let Some(stdout) = python_client("confine_client.py", "mcp-confine", &[&ws, &out]) else {
        return;
    };
    assert!(
        stdout.contains("mcp confine: all checks passed"),
        "{stdout}"
    );
}

/// Start-up files as people have them (a prompt hook that forks and
/// prints), through the Python SDK: a timeout stops the rest of the line
/// on a session started a moment before and under CPU load, a program that
/// outlives SIGINT is ended with its line, C-c reaches a kept program, and
/// no holder is named (`tests/mcp/rc_client.py`).
#[test]
fn with_the_users_rc_a_timeout_stops_the_whole_line() {
    let home = std::env::temp_dir().join(format!("tether-mcp-rc-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&home);
    std::fs::create_dir_all(&home).unwrap();
    let out = python_client("rc_client.py", "mcp-rc", &[&home]);
    let _ = std::fs::remove_dir_all(&home);
    let Some(stdout) = out else {
        return;
    };
    assert!(stdout.contains("mcp rc: all checks passed"), "{stdout}");
}

/// Shells started inside a session through the Python SDK: `bash --norc`
/// and `sudo -i` (as root with sudo) are armed, `(exit 4)`, `cd /tmp` and
/// `whoami` are exact inside, and `exit` comes back, each result's
/// `nested` and `nest_change` saying so (`tests/mcp/nested_client.py`).
#[test]
fn nested_shells_are_armed_and_exit_comes_back() {
    let Some(stdout) = python_client("nested_client.py", "mcp-nested", &[]) else {
        return;
    };
    assert!(stdout.contains("mcp nested: all checks passed"), "{stdout}");
    assert!(stdout.contains("mcp nested: bash --norc armed"), "{stdout}");
    let sudo = Command::new("sudo").arg("-V").output().is_ok();
    if sudo && nix::unistd::getuid().is_root() {
        assert!(stdout.contains("mcp nested: sudo -i armed"), "{stdout}");
    }
}
