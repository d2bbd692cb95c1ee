//! What the front-ends report, checked against the one source of each
//! fact: pipeline statuses in `--json`, a `--shell` that disagrees with an
//! existing session, and the key, signal and environment lists in the
//! help, the MCP descriptions and the README.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::Daemon;
use tether_transport::Signal;

fn json(out: &std::process::Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {out:?}"))
}

#[test]
fn json_results_carry_each_pipeline_stage_status() {
    let d = Daemon::new("pipe-status");
    let pipeline = "true | false | (exit 3)";
    let out = d.run(&["run", "--norc", "--json", "--", pipeline]);
    let v = json(&out);
    assert_eq!(v["pipe_status"], serde_json::json!([0, 1, 3]), "{v}");
    assert_eq!(v["exit_code"], 3, "{v}");
    assert_eq!(out.status.code(), Some(3));
    let v = json(&d.run(&["run", "--once", "--norc", "--json", "--", pipeline]));
    assert_eq!(
        v["pipe_status"],
        serde_json::json!([0, 1, 3]),
        "--once: {v}"
    );
    // zsh reports them too; POSIX sh has no PIPESTATUS: null, not a guess.
    let v = json(&d.run(&[
        "run", "-s", "z", "--shell", "zsh", "--norc", "--json", "--", pipeline,
    ]));
    assert_eq!(v["pipe_status"], serde_json::json!([0, 1, 3]), "zsh: {v}");
    let v = json(&d.run(&[
        "run", "-s", "p", "--shell", "dash", "--norc", "--json", "--", pipeline,
    ]));
    assert!(v["pipe_status"].is_null(), "dash: {v}");
    assert_eq!(v["exit_code"], 3, "dash: {v}");
}

#[test]
fn a_shell_that_disagrees_with_the_existing_session_is_an_error() {
    let d = Daemon::new("shell-mismatch");
    let out = d.run(&["run", "--norc", "--", "echo $0"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let out = d.run(&["run", "--shell", "dash", "--", "echo ran"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(255), "{out:?}");
    assert!(
        err.contains(
            "session \"main\" runs bash; --shell dash applies only when a session is created; close it first or use another -s"
        ),
        "{err}"
    );
    assert!(out.stdout.is_empty(), "nothing ran: {out:?}");
    // The same shell, or none, is fine; and a new session takes any shell.
    assert_eq!(
        d.stdout(&["run", "--shell", "bash", "--", "echo same"]),
        "same\n"
    );
    assert_eq!(d.stdout(&["run", "--", "echo none"]), "none\n");
    let out = d.run(&[
        "run", "-s", "d", "--shell", "dash", "--norc", "--json", "--", "echo $0",
    ]);
    assert_eq!(json(&out)["output"], "dash\n", "{out:?}");
    // A session made with another shell is not refused for a default.
    assert_eq!(d.stdout(&["run", "-s", "d", "--", "echo again"]), "again\n");
}

#[test]
fn help_lists_every_key_signal_and_environment_default() {
    let d = Daemon::new("help-lists");
    let send = d.stdout(&["send", "--help"]);
    for key in tether_shell::keys::names() {
        assert!(send.contains(key), "send --help lacks {key}: {send}");
    }
    let run = d.stdout(&["run", "--help"]);
    for (k, v) in tether_shell::defaults::NON_INTERACTIVE_DEFAULTS {
        assert!(
            run.contains(&format!("{k}={v}")),
            "run --help lacks {k}: {run}"
        );
    }
    let signal = d.stdout(&["signal", "--help"]);
    for s in Signal::ALL {
        assert!(
            signal.contains(s.name()),
            "signal --help lacks {s}: {signal}"
        );
    }
    // Every listed key is accepted by the CLI (C-l and C-u included); an
    // unknown one is refused before anything is sent.
    let out = d.run(&["run", "--norc", "--timeout", "10", "--", "cat"]);
    assert_eq!(out.status.code(), Some(125), "{out:?}");
    let out = d.run(&["send", "-k", "C-u,C-l"]);
    assert_eq!(out.status.code(), Some(125), "{out:?}");
    let out = d.run(&["send", "-k", "F13"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("C-u"),
        "{out:?}"
    );
    let out = d.run(&["signal", "sigint", "--json"]);
    assert_eq!(json(&out)["status"], "exited", "{out:?}");
    let out = d.run(&["signal", "USR9"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains(&Signal::names_list()),
        "{out:?}"
    );
}

/// The rows of the README table that follows `heading`: first cells.
fn readme_column(readme: &str, heading: &str) -> Vec<String> {
    let start = readme
        .find(heading)
        .unwrap_or_else(|| panic!("the README has no {heading:?}"));
    readme[start..]
        .lines()
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .skip(2)
        .map(|l| {
            let cell = l.split('|').nth(1).unwrap().trim();
            cell.trim_matches('`').replace("\\|", "|")
        })
        .collect()
}

#[test]
fn the_readme_lists_match_the_sources() {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../README.md")).unwrap();
    let keys: Vec<String> = tether_shell::keys::names().map(str::to_owned).collect();
    assert_eq!(readme_column(&readme, "| key | bytes |"), keys);
    let signals: Vec<String> = Signal::ALL.iter().map(|s| s.name().to_owned()).collect();
    assert_eq!(readme_column(&readme, "| signal | effect |"), signals);
    let env: Vec<String> = tether_shell::defaults::NON_INTERACTIVE_DEFAULTS
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    assert_eq!(readme_column(&readme, "| variable | why |"), env);
}
