//! OpenSSH's client regress tests with `tether ssh` standing in for `ssh`,
//! against this machine's real sshd: one test here per upstream script, so
//! a failure is named. The scripts are vendored (openssh-portable's
//! `regress/` at V_9_2_P1, public domain) in `tests/openssh-regress/`, with
//! every change to them in its `adapt.patch`; `tests/openssh-regress/run.sh`
//! runs them (nothing is fetched), and `run.sh --real-ssh` shows the harness
//! itself passes with OpenSSH's own client.
//!
//! Each test runs the runner for its script and asserts it passed; the
//! failure message is the script's first failing line and the step it was
//! in. A test whose tools are missing (sshd, nc, ...) skips with the reason.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::process::Command;

const TETHER: &str = env!("CARGO_BIN_EXE_tether");

fn runner() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/openssh-regress/run.sh")
}

/// Runs upstream's `NAME.sh` with `tether ssh` as the client and asserts
/// it passed (a skip prints its reason and returns).
fn regress(name: &str) {
    let tmp = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("openssh-regress");
    let work = tmp.join(name);
    let out = match Command::new("bash")
        .arg(runner())
        .args(["--tether", TETHER, "--jobs", "1"])
        .arg("--work")
        .arg(&work)
        .arg("--key-cache")
        .arg(tmp.join("keys"))
        .arg(name)
        .output()
    {
        Ok(out) => out,
        Err(e) => {
            eprintln!("SKIP openssh regress {name}: cannot run bash: {e}");
            return;
        }
    };
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let line = stdout
        .lines()
        .find(|l| {
            l.split_whitespace().nth(1).map(|n| n.trim_end_matches(':')) == Some(name)
                && ["PASS ", "FAIL ", "SKIP "].iter().any(|p| l.starts_with(p))
        })
        .unwrap_or_else(|| panic!("the runner said nothing of {name}:\n{stdout}\n{stderr}"));
    if line.starts_with("SKIP ") {
        eprintln!("{line}");
        return;
    }
    assert!(
        line.starts_with("PASS ") && out.status.success(),
        "OpenSSH regress test {name} with tether ssh:\n  {line}\ntether said:\n{}\n{stderr}",
        client_errors(&work.join("obj").join(name))
    );
}

/// The first distinct error lines of the client in a test's `$OBJ`: its
/// output (the client's stderr goes there unless the script redirects it)
/// and failed-ssh.log (ssh.log as it was at each failure: a few scripts
/// send the client's stderr there), for the failure message.
fn client_errors(obj: &std::path::Path) -> String {
    let read = |f: &str| std::fs::read_to_string(obj.join(f)).unwrap_or_default();
    let text = read("output") + &read("failed-ssh.log");
    let mut seen: Vec<&str> = Vec::new();
    for l in text.lines() {
        let l = l.trim();
        let ours = l.starts_with("tether:") || l.starts_with("error:");
        if ours && !seen.contains(&l) && seen.len() < 8 {
            seen.push(l);
        }
    }
    if seen.is_empty() {
        return "  (nothing on stderr)".to_owned();
    }
    seen.iter()
        .map(|l| format!("  {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

macro_rules! regress_tests {
    ($($test:ident => $name:literal),* $(,)?) => {
        $(
            #[test]
            fn $test() {
                regress($name);
            }
        )*

        /// Every script the runner knows has its test here.
        #[test]
        fn every_runner_script_has_a_test() {
            let out = Command::new("bash").arg(runner()).arg("--list").output();
            let Ok(out) = out else {
                eprintln!("SKIP: cannot run bash");
                return;
            };
            let listed: Vec<String> =
                String::from_utf8_lossy(&out.stdout).lines().map(str::to_owned).collect();
            let mut ours = vec![$($name),*];
            ours.sort_unstable();
            let mut theirs: Vec<&str> = listed.iter().map(String::as_str).collect();
            theirs.sort_unstable();
            assert_eq!(ours, theirs, "run.sh --list and this file's tests differ");
        }
    };
}

regress_tests! {
    connect => "connect",
    proxy_connect => "proxy-connect",
    connect_uri => "connect-uri",
    exit_status => "exit-status",
    envpass => "envpass",
    transfer => "transfer",
    banner => "banner",
    stderr_data => "stderr-data",
    stderr_after_eof => "stderr-after-eof",
    broken_pipe => "broken-pipe",
    yes_head => "yes-head",
    try_ciphers => "try-ciphers",
    kextype => "kextype",
    agent => "agent",
    dynamic_forward => "dynamic-forward",
    forwarding => "forwarding",
    sshcfgparse => "sshcfgparse",
    cfginclude => "cfginclude",
    percent => "percent",
    localcommand => "localcommand",
    host_expand => "host-expand",
    portnum => "portnum",
    knownhosts => "knownhosts",
    knownhosts_command => "knownhosts-command",
    proxyjump => "proxyjump",
}
