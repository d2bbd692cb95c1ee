//! Host names and users are data, never shell (issue 36): with an
//! ssh_config whose `ProxyCommand` takes `%h %p %r` for every host (as
//! people have one), a destination holding shell text is refused before
//! anything runs, with OpenSSH's reason on one line, through every door:
//! `tether ssh`, `tether run --host`, `tether exec -H`, a host file, and
//! MCP's `shell_run` `host` and `exec_hosts` `hosts`. The injected
//! commands would create marker files; none appears, and the
//! ProxyCommand never runs for a refused name. A plain name still goes
//! through the same ProxyCommand to a real sshd (the test can fail).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::{McpFleet, TETHER};
use serde_json::json;

const HOST: &str = "127.0.0.2";

/// The fleet (one sshd on [`HOST`]), with a ProxyCommand for every host
/// that logs each run and carries the connection with `nc`.
fn world(name: &str) -> Option<(McpFleet, PathBuf)> {
    if common::nc_missing() {
        return None;
    }
    let m = McpFleet::start(name, &[HOST])?;
    let log = m.home.0.join("proxy.log");
    let config = m.home.0.join(".ssh/config");
    let mut text = std::fs::read_to_string(&config).unwrap();
    text.push_str(&format!(
        "  ProxyCommand sh -c 'echo \"$0 $2\" >> {}; exec nc \"$0\" \"$1\"' %h %p %r\n  BatchMode yes\n",
        log.display()
    ));
    std::fs::write(&config, text).unwrap();
    Some((m, log))
}

/// How a test name wraps the injected command.
type Form = fn(&str) -> String;

/// Destinations each of which would run `touch MARK` through the
/// ProxyCommand if its text reached the shell; `u` puts the text in the
/// user instead of the host.
fn attacks(dir: &Path) -> Vec<(String, PathBuf)> {
    let mut out = Vec::new();
    let forms: [(&str, Form); 11] = [
        ("semicolon", |t| format!("h;{t}")),
        ("subst", |t| format!("h$({t})")),
        ("backquote", |t| format!("h`{t}`")),
        ("newline", |t| format!("h\n{t}")),
        ("pipe", |t| format!("h|{t}")),
        ("amp", |t| format!("h&{t}")),
        ("single", |t| format!("h';{t};'")),
        ("double", |t| format!("h\";{t};\"")),
        ("dash", |t| format!("-oProxyCommand={t}")),
        ("user-semicolon", |t| format!("u;{t}@{HOST}")),
        ("user-subst", |t| format!("u$({t})@{HOST}")),
    ];
    for (what, form) in forms {
        let mark = dir.join(format!("pwned-{what}"));
        let touch = format!("touch {}", mark.display());
        out.push((form(&touch), mark));
    }
    out.push((format!("-u@{HOST}"), dir.join("pwned-user-dash")));
    out
}

fn tether(m: &McpFleet, args: &[&str]) -> Output {
    Command::new(TETHER)
        .args(args)
        .env("HOME", &m.home.0)
        .env("TETHER_DIR", m.home.0.join("cli-dir"))
        .env("TETHER_IDLE_EXIT", "30")
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("SSH_AUTH_SOCK")
        .output()
        .unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Refused: exit 255, one line on stderr giving OpenSSH's reason, nothing
/// on stdout, and no ProxyCommand run.
fn assert_refused(out: &Output, name: &str, log: &Path) {
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(255), "{name:?}: {out:?}");
    assert!(
        err.contains("contains invalid characters"),
        "{name:?}: {err}"
    );
    assert_eq!(err.lines().count(), 1, "{name:?}: one line: {err}");
    assert!(out.stdout.is_empty(), "{name:?}: {out:?}");
    assert!(!log.exists(), "{name:?}: the ProxyCommand ran");
}

/// Whether `name` keeps its shell text in one host of a node set: a
/// newline separates hosts there and `&` intersects sets (as in
/// ClusterShell), and `-` starts a flag on the command line.
fn node_set_form(name: &str) -> bool {
    !name.contains(['\n', '&']) && !name.starts_with('-')
}

fn assert_no_marks(marks: &[(String, PathBuf)]) {
    for (name, mark) in marks {
        assert!(!mark.exists(), "{name:?} ran its injected command");
    }
}

#[test]
fn shell_text_in_a_destination_runs_nowhere() {
    let Some((m, log)) = world("names-cli") else {
        return;
    };
    let marks = attacks(&m.home.0);
    for (name, _) in &marks {
        let out = tether(&m, &["ssh", "--", name, "true"]);
        assert_refused(&out, name, &log);
        let out = tether(
            &m,
            &["run", "--norc", &format!("--host={name}"), "--", "true"],
        );
        assert_refused(&out, name, &log);
    }
    // `-l` on the command line is checked as a user.
    let out = tether(
        &m,
        &[
            "ssh",
            "-l",
            &format!("u;touch {}", m.home.0.join("pwned-l").display()),
            HOST,
            "true",
        ],
    );
    assert_refused(&out, "-l", &log);
    // exec: each name typed, and each in a host file. The node-set
    // grammar splits a name at blanks and newlines (as ClusterShell's);
    // every piece with shell text is refused as a host, before any host is
    // reached.
    for (name, _) in marks.iter().filter(|(n, _)| node_set_form(n)) {
        let out = tether(&m, &["exec", "-H", name, "--", "true"]);
        assert_refused(&out, name, &log);
    }
    let file = m.home.0.join("hosts.txt");
    for (name, _) in marks.iter().filter(|(n, _)| node_set_form(n)) {
        std::fs::write(&file, format!("{HOST}\n{name}\n")).unwrap();
        let out = tether(
            &m,
            &["exec", "-H", &format!("^{}", file.display()), "--", "true"],
        );
        assert_refused(&out, name, &log);
    }
    assert_no_marks(&marks);
    assert!(!m.home.0.join("pwned-l").exists());

    // The same ProxyCommand carries a plain name to the real sshd.
    let out = tether(&m, &["ssh", HOST, "echo reached"]);
    assert_eq!(
        (out.status.code(), text(&out.stdout).as_str()),
        (Some(0), "reached\n"),
        "{out:?}"
    );
    let out = tether(&m, &["exec", "-H", HOST, "--", "echo reached"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let logged = std::fs::read_to_string(&log).unwrap();
    assert_eq!(logged.lines().count(), 2, "{logged}");
    assert!(
        logged.lines().all(|l| l.starts_with(&format!("{HOST} "))),
        "{logged}"
    );
    m.finish();
}

#[test]
fn an_agent_cannot_inject_through_host_or_hosts() {
    let Some((mut m, log)) = world("names-mcp") else {
        return;
    };
    let marks = attacks(&m.home.0);
    let mut id = 10;
    for (name, _) in &marks {
        id += 1;
        let r = m.call(
            id,
            "tools/call",
            json!({"name": "shell_run", "arguments": {"host": name, "command": "echo no"}}),
        );
        let said = r.to_string();
        assert!(
            said.contains("contains invalid characters"),
            "{name:?}: {r}"
        );
        assert!(!said.contains("\"no\\n\""), "{name:?}: {r}");
        if name.contains(['\n', '&']) {
            // A node set's separator and operator: the pieces are hosts
            // (or sets) of their own.
            continue;
        }
        id += 1;
        let r = m.call(
            id,
            "tools/call",
            json!({"name": "exec_hosts", "arguments": {"hosts": name, "command": "echo no"}}),
        );
        let said = r.to_string();
        assert!(
            said.contains("contains invalid characters"),
            "{name:?}: {r}"
        );
        assert!(!log.exists(), "{name:?}: the ProxyCommand ran");
    }
    assert_no_marks(&marks);
    // A plain name is served through the same ProxyCommand.
    let r = m.call(
        99,
        "tools/call",
        json!({"name": "exec_hosts", "arguments": {"hosts": HOST, "command": "echo yes"}}),
    );
    assert_eq!(
        r["result"]["structuredContent"]["groups"][0]["output"].as_str(),
        Some("yes\n"),
        "{r}"
    );
    assert!(log.exists());
    m.finish();
}
