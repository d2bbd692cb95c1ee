//! Remote persistent shells through the daemon, against real sshd on
//! 127.0.0.2 and 127.0.0.3: state that persists between commands, one SSH
//! connection shared by a host's sessions, and every engine status as it
//! applies remotely (waiting for input from the host's evidence, interrupts
//! through the remote terminal, a lost link as `connection_lost`). The daemon reads a private `~/.ssh/config` (HOME is a
//! scratch directory). Skips with a message when sshd is not installed.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::os::unix::fs::PermissionsExt;
use std::process::Output;

use common::remote::{Remote, start};
use tether_transport::Terminal;

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn state_persists_and_a_hosts_sessions_share_one_connection() {
    let Some(r) = start("remote-state") else {
        return;
    };
    let out = r.tether(&[
        "run",
        "--host",
        "web01",
        "--",
        "mkdir -p ~/srv && cd ~/srv && export DEPLOY=blue",
    ]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let out = r.tether(&["run", "--host", "web01", "--", "pwd; echo $DEPLOY"]);
    let home = format!("/home/{}", tether_testkit::user());
    assert_eq!(stdout(&out), format!("{home}/srv\nblue\n"), "{out:?}");

    // Exact exit codes and pipeline statuses, on the remote shell.
    let (code, v) = r.json(&[
        "run",
        "--host",
        "web01",
        "--",
        "true | (exit 3) | true; (exit 7)",
    ]);
    assert_eq!((code, v["exit_code"].as_i64()), (7, Some(7)), "{v}");
    assert_eq!(v["host"], "web01");
    assert_eq!(v["status"], "exited");

    // Quotes and control characters in a short command (typed, escaped),
    // and a long one (written by its own channel).
    let (code, v) = r.json(&[
        "run",
        "--host",
        "web01",
        "--",
        "printf '%s|' \"a'b\" 'c\"d' $'\\t' '%%'; echo",
    ]);
    assert_eq!(
        (code, v["output"].as_str()),
        (0, Some("a'b|c\"d|\t|%%|\n")),
        "{v}"
    );
    let long = format!(
        "cat <<'EOF' | wc -c\n{}EOF",
        ("z".repeat(99) + "\n").repeat(1000)
    );
    let (code, v) = r.json(&["run", "--host", "web01", "--", &long]);
    assert_eq!(
        (code, v["output"].as_str().map(str::trim)),
        (0, Some("100000")),
        "{v}"
    );

    // A second session on the same host rides the same TCP connection (the
    // same client port in SSH_CONNECTION); another host gets its own.
    let port_of = |args: &[&str]| {
        let out = r.tether(args);
        let conn = stdout(&out);
        let f: Vec<&str> = conn.split_whitespace().collect();
        assert_eq!(f.len(), 4, "{out:?}");
        (f[1].to_owned(), f[2].to_owned())
    };
    let echo = "echo $SSH_CONNECTION";
    let a = port_of(&["run", "--host", "web01", "--", echo]);
    let b = port_of(&["run", "-s", "second", "--host", "web01", "--", echo]);
    let c = port_of(&["run", "--host", "web02", "--", echo]);
    assert_eq!(a, b, "one connection per host");
    assert_eq!(a.1, "127.0.0.2");
    assert_eq!(c.1, "127.0.0.3");

    // A session keeps its host; a name that runs elsewhere is refused.
    let out = r.tether(&["run", "-s", "second", "--host", "web02", "--", "true"]);
    assert_eq!(out.status.code(), Some(255));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("runs on web01, not web02"),
        "{out:?}"
    );
    let out = r.tether(&["ls", "--json"]);
    let list: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let hosts: Vec<(String, String)> = list["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["name"].as_str().unwrap().to_owned(),
                s["host"].as_str().unwrap_or("-").to_owned(),
            )
        })
        .collect();
    assert_eq!(
        hosts,
        [
            ("second".to_owned(), "web01".to_owned()),
            ("web01".to_owned(), "web01".to_owned()),
            ("web02".to_owned(), "web02".to_owned())
        ]
    );

    // Closing a session ends what it started there (a background job and
    // a command kept running), and removes its files.
    let (_, v) = r.json(&["run", "-s", "second", "--", "echo $__tether_dir"]);
    let dir = v["output"].as_str().unwrap().trim().to_owned();
    // In memory when the host has a /dev/shm everybody may write to,
    // sticky (the login has no XDG_RUNTIME_DIR).
    let shm = std::fs::metadata("/dev/shm")
        .is_ok_and(|m| m.is_dir() && m.permissions().mode() & 0o1002 == 0o1002);
    let base = if shm {
        "/dev/shm/tether-"
    } else {
        "/tmp/tether-"
    };
    assert!(dir.starts_with(base), "{v}");
    // (And one that left the session, its terminal and its parent.)
    let kept = "(setsid sleep 4244 </dev/null >/dev/null 2>&1 &); sleep 4242 & sleep 4243";
    let (code, v) = r.json(&[
        "run",
        "-s",
        "second",
        "--timeout",
        "1",
        "--keep",
        "--",
        kept,
    ]);
    assert_eq!(code, 123, "{v}");
    let alive = "pgrep -u $(id -u) -f 'sleep 424[234]' >/dev/null";
    let escaped = "pgrep -u $(id -u) -f 'sleep 4244' >/dev/null";
    let out = r.tether(&[
        "run",
        "--host",
        "web01",
        "--",
        &format!(
            "for i in $(seq 200); do {escaped} && break; sleep 0.05; done; {escaped} && echo alive"
        ),
    ]);
    assert_eq!(stdout(&out), "alive\n", "{out:?}");
    assert_eq!(r.tether(&["close", "-s", "second"]).status.code(), Some(0));
    let check = format!(
        "for i in $(seq 200); do {alive} || [ -e {dir} ] || break; sleep 0.05; done; {alive} && echo running; [ -e {dir} ] && echo present; echo checked"
    );
    let out = r.tether(&["run", "--host", "web01", "--", &check]);
    assert_eq!(stdout(&out), "checked\n", "{out:?}");
}

#[test]
fn every_status_applies_remotely() {
    let Some(r) = start("remote-status") else {
        return;
    };
    let s = ["run", "--host", "web01"];
    let run = |extra: &[&str], code: &str| {
        let mut args = s.to_vec();
        args.extend_from_slice(extra);
        args.extend_from_slice(&["--", code]);
        r.json(&args)
    };
    let (code, _) = run(&[], "cd /tmp && export KEEP=1");
    assert_eq!(code, 0);

    // incomplete_input: the remote bash checks the syntax; nothing runs.
    let (code, v) = run(&[], "echo 'unterminated");
    assert_eq!(
        (code, v["status"].as_str()),
        (121, Some("incomplete_input"))
    );

    // timed_out: C-c through the remote terminal recovers the shell.
    let (code, v) = run(&["--timeout", "1"], "echo before; sleep 30");
    assert_eq!(
        (code, v["status"].as_str()),
        (124, Some("timed_out")),
        "{v}"
    );
    // bash ends the line after a job killed by SIGINT, locally too.
    assert_eq!(
        v["output"].as_str().map(str::trim_end),
        Some("before"),
        "{v}"
    );
    assert_eq!(v["shell_restarted"], false, "{v}");

    // A program that ignores C-c is ended with C-\.
    let (code, v) = run(&["--timeout", "1"], "trap '' INT; sleep 30");
    assert_eq!(
        (code, v["status"].as_str()),
        (124, Some("timed_out")),
        "{v}"
    );
    let (code, v) = run(&[], "trap - INT; echo $KEEP; pwd");
    assert_eq!((code, v["output"].as_str()), (0, Some("1\n/tmp\n")), "{v}");

    // One that ignores both (and the hang-up) is ended with the shell, which is replaced
    // (cwd and exports restored).
    let (code, v) = run(&["--timeout", "1"], "(trap '' INT QUIT HUP; sleep 4444)");
    assert_eq!(
        (code, v["shell_restarted"].as_bool()),
        (124, Some(true)),
        "{v}"
    );
    let (code, v) = run(
        &[],
        "pgrep -f 'sleep 444[4]' || echo ended; echo $KEEP; pwd",
    );
    assert_eq!(
        (code, v["output"].as_str()),
        (0, Some("ended\n1\n/tmp\n")),
        "{v}"
    );

    // A quiet command is not waiting for input: the host's /proc says
    // nothing reads the terminal, so silence does not decide.
    let (code, v) = run(&["--timeout", "60"], "sleep 5; echo slept");
    assert_eq!((code, v["output"].as_str()), (0, Some("slept\n")), "{v}");
    let (code, v) = run(
        &["--timeout", "60"],
        "python3 -c 'import time; time.sleep(4); print(1)'",
    );
    assert_eq!((code, v["output"].as_str()), (0, Some("1\n")), "{v}");

    // waiting_for_input, from the host's evidence: bash's own `read`, then
    // a program in its own process group.
    let (code, v) = run(&["--timeout", "60"], "python3 -c 'input(\"ok? \")'");
    assert_eq!(
        (
            code,
            v["status"].as_str(),
            v["foreground"]["command"].as_str()
        ),
        (125, Some("waiting_for_input"), Some("python3")),
        "{v}"
    );
    let out = r.tether(&["send", "-s", "web01", "-k", "Enter", "--json", "y"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["status"], "exited", "{v}");
    let (code, v) = run(&["--timeout", "60"], "read -p 'name? ' n; echo hi $n");
    assert_eq!(
        (code, v["status"].as_str()),
        (125, Some("waiting_for_input")),
        "{v}"
    );
    assert_eq!(v["output"], "name? ");
    assert_eq!(v["foreground"]["command"], "bash", "{v}");
    let out = r.tether(&["send", "-s", "web01", "-k", "Enter", "--json", "bob"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["status"], "exited", "{v}");
    assert_eq!(v["output"], "hi bob\n");

    // running (kept past the deadline), then read to the end.
    let (code, v) = run(&["--timeout", "1", "--keep"], "sleep 2; echo done");
    assert_eq!((code, v["status"].as_str()), (123, Some("running")), "{v}");
    let out = r.tether(&["read", "-s", "web01", "--wait", "30", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (v["status"].as_str(), v["output"].as_str()),
        (Some("exited"), Some("done\n"))
    );

    // shell_exited, then a fresh shell with the cwd and exports restored.
    let (code, v) = run(&[], "exit 3");
    assert_eq!(
        (code, v["status"].as_str()),
        (122, Some("shell_exited")),
        "{v}"
    );
    assert_eq!(v["exit_code"], 3);
    let (code, v) = run(&[], "echo $KEEP; pwd");
    assert_eq!((code, v["output"].as_str()), (0, Some("1\n/tmp\n")), "{v}");
    assert_eq!(v["shell_restarted"], true, "{v}");
}

#[test]
fn an_unreachable_or_unknown_host_is_one_clear_error() {
    let Some(r) = start("remote-errors") else {
        return;
    };
    let out = r.tether(&["run", "--host", "nosuchhost.invalid", "--", "true"]);
    assert_eq!(out.status.code(), Some(255));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("nosuchhost.invalid"), "{err}");
    assert!(err.contains("resolve"), "{err}");
    // Nothing was left behind: the session does not exist.
    let out = r.tether(&["ls", "--json"]);
    let list: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(list["sessions"].as_array().unwrap().len(), 0, "{list}");
}

#[test]
fn a_dropped_connection_is_made_again_for_the_next_command() {
    let Some(r) = start("remote-reconnect") else {
        return;
    };
    let conn = |r: &Remote| {
        let out = r.tether(&["run", "--host", "web01", "--", "echo $SSH_CONNECTION"]);
        stdout(&out)
    };
    let out = r.tether(&["run", "--host", "web01", "--", "cd /tmp && export KEEP=2"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let before = conn(&r);
    // The shell's parent is sshd's process for this connection: ending it
    // drops the connection under the session: the link is lost (the host
    // sent no exit status), not a shell that exited.
    let (code, v) = r.json(&["run", "--host", "web01", "--", "kill -9 $PPID; sleep 30"]);
    assert_eq!(
        (code, v["status"].as_str()),
        (120, Some("connection_lost")),
        "{v}"
    );
    // (Its start mark may have died with the connection: whether it was
    // seen to start is not asserted.)
    assert_eq!(v["link"]["failure"], "lost", "{v}");
    let (code, v) = r.json(&["run", "--host", "web01", "--", "echo $KEEP; pwd"]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["shell_restarted"], true, "{v}");
    // The cwd comes back; the exports snapshot is on the host and survives,
    // but SSH_CONNECTION is the new login's.
    assert_eq!(v["output"], "2\n/tmp\n", "{v}");
    assert_ne!(conn(&r), before, "a new connection (another client port)");
}

#[test]
fn zsh_and_posix_sh_run_remotely_too() {
    let Some(mut r) = start("remote-dialects") else {
        return;
    };
    // With no shell on this machine's PATH, syntax is checked on the host.
    r.path = Some("/nonexistent".into());
    for shell in ["zsh", "sh"] {
        let s = format!("on-{shell}");
        let out = r.tether(&[
            "run",
            "-s",
            &s,
            "--host",
            "web02",
            "--shell",
            shell,
            "--",
            "cd /tmp; X=$((6*7)); export X",
        ]);
        assert_eq!(out.status.code(), Some(0), "{shell}: {out:?}");
        // A heredoc and an unfinished quote are checked by the remote shell.
        let (code, v) = r.json(&[
            "run",
            "-s",
            &s,
            "--",
            "cat <<EOF\n$X in $PWD\nEOF\n(exit 5)",
        ]);
        assert_eq!(
            (code, v["output"].as_str()),
            (5, Some("42 in /tmp\n")),
            "{shell}: {v}"
        );
        let (code, _) = r.json(&["run", "-s", &s, "--", "echo \"open"]);
        assert_eq!(code, 121, "{shell}");
    }
}

#[test]
fn a_person_attached_to_a_remote_session_sees_their_typing() {
    let Some(r) = start("remote-attach") else {
        return;
    };
    let out = r.tether(&["run", "-s", "ra", "--host", "web01", "--", "cd /tmp"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let person = common::Person::attach(&r.daemon, "ra");
    // Echo is turned on on the host once the shell is at its prompt.
    common::echo::until_on(&person);
    person.pty.write(b"echo typed-$((3*3))\r".to_vec()).unwrap();
    person.sees("echo typed-$((3*3))");
    person.sees("typed-9");
    // Detaching turns it off again.
    person.pty.write(b"\r~.".to_vec()).unwrap();
    person.exit();
    common::echo::until_off("ra", &|args| r.tether(args));
}

/// A person who detaches while a command runs (the host's shell is not in
/// the foreground, so echo cannot be turned off then) leaves the terminal
/// echoing no more once it ended. Before, echo stayed on for good.
#[test]
fn a_person_leaving_a_remote_session_while_it_is_busy_leaves_echo_off() {
    let Some(r) = start("remote-attach-busy") else {
        return;
    };
    let out = r.tether(&["run", "-s", "rb", "--host", "web01", "--", "cd /tmp"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let person = common::Person::attach(&r.daemon, "rb");
    common::echo::off_after_leaving_busy(person, "rb", |args| r.tether(args));
}

#[test]
fn piped_stdin_reaches_a_remote_command() {
    use std::io::Write;
    let Some(r) = start("remote-stdin") else {
        return;
    };
    let bytes: Vec<u8> = (0..=255u8).cycle().take(300_000).collect();
    let hex: String = bytes[..256].iter().map(|b| format!("{b:02x}")).collect();
    let mut child = r
        .daemon
        .cmd(&[
            "run",
            "--host",
            "web01",
            "--",
            "head -c 256 | od -An -v -tx1 | tr -d ' \\n'; echo; ls $__tether_dir | grep -c '^in-'",
        ])
        .env("HOME", &r.home.0)
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("SSH_AUTH_SOCK")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || stdin.write_all(&bytes));
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    assert_eq!(stdout(&out), format!("{hex}\n1\n"), "{out:?}");
    // The input file is gone once the command is done.
    let out = r.tether(&[
        "run",
        "--host",
        "web01",
        "--",
        "ls $__tether_dir | grep -c '^in-'",
    ]);
    assert_eq!(stdout(&out), "0\n", "{out:?}");
}

/// The SSH link under a remote session dies while a person is attached:
/// attach ends by itself (no restart came), with 255 (as `ssh` for a lost
/// connection; no signal was sent) and a line saying so, the terminal
/// restored; it does not wait for `~.`.
#[test]
fn attach_ends_when_the_link_under_a_remote_session_dies() {
    let Some(r) = start("remote-attach-loss") else {
        return;
    };
    let out = r.tether(&["run", "-s", "rl", "--host", "web01", "--", "echo PID=$$."]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let text = stdout(&out);
    let shell: i32 = text
        .trim()
        .trim_start_matches("PID=")
        .trim_end_matches('.')
        .parse()
        .unwrap();
    let person = common::Person::attach(&r.daemon, "rl");
    common::wait_for(20, "the attachment", || {
        let ls = stdout(&r.tether(&["ls", "--json"]));
        ls.contains("\"attached\": 1").then_some(())
    });
    common::remote::kill_connection_above(shell);
    let exit = person.exit();
    person.sees("until the next call ends it): rl]");
    assert_eq!(
        exit,
        tether_transport::ExitInfo::Code(255),
        "{:?}",
        person.text()
    );
    // The restore (the fallback's: this test's terminal answers no
    // capture), then the farewell.
    let text = person.text();
    assert!(
        text.ends_with("\x1b[>4;0m\r\n[the connection to the session's host was lost (its shell may still run there until the next call ends it): rl]\r\n"),
        "{text:?}"
    );
}

/// A shell started inside a session on a host reached without tether
/// there is armed as locally (the host's `/proc` tells it from the
/// session's own shell reading in a builtin): later commands run in it
/// with their codes, cwd and user; its `exit` comes back to the session's
/// shell; `exec bash` is armed in place. Before, each was
/// `waiting_for_input` and every later run refused until a reset.
#[test]
fn a_shell_started_in_an_agentless_remote_session_is_armed() {
    let Some(r) = start("remote-nested") else {
        return;
    };
    let run = |cmd: &str| r.json(&["run", "-s", "rn", "--timeout", "20", "--", cmd]);
    let (code, v) = r.json(&[
        "run",
        "-s",
        "rn",
        "--host",
        "web01",
        "--",
        "cd /tmp; echo $$",
    ]);
    assert_eq!(code, 0, "{v}");
    let outer = v["output"].as_str().unwrap().trim().to_owned();
    // The session's own shell reading is not a shell to arm.
    let (code, v) = run("read x");
    assert_eq!(
        (code, v["status"].as_str()),
        (125, Some("waiting_for_input")),
        "{v}"
    );
    assert!(
        v["nest_change"].is_null() && v["nested"] == serde_json::json!([]),
        "{v}"
    );
    let (_, v) = r.json(&["send", "-s", "rn", "y", "-k", "Enter"]);
    let v = if v["status"] == "exited" {
        v
    } else {
        common::wait_for(20, "read to end", || {
            let (_, v) = r.json(&["read", "-s", "rn", "--wait", "1"]);
            (v["status"] == "exited").then_some(v)
        })
    };
    assert_eq!(v["exit_code"], 0, "{v}");

    let (code, v) = run("bash --norc");
    assert_eq!(
        (code, v["status"].as_str()),
        (0, Some("entered_shell")),
        "{v}"
    );
    assert_eq!(v["nest_change"], "entered", "{v}");
    assert_eq!(v["nested"][0]["program"], "bash", "{v}");
    let inner = v["nested"][0]["pid"].as_i64().unwrap().to_string();
    assert_ne!(inner, outer);
    let (code, v) = run("echo $$ $PWD; (exit 4)");
    assert_eq!(
        (code, v["output"].as_str()),
        (4, Some(format!("{inner} /tmp\n").as_str())),
        "{v}"
    );
    let (code, v) = run("cd / && whoami");
    assert_eq!(
        (code, v["output"].as_str()),
        (0, Some(format!("{}\n", tether_testkit::user()).as_str())),
        "{v}"
    );
    assert_eq!(v["cwd"], "/", "{v}");
    let (code, v) = run("exit 3");
    assert_eq!(
        (code, v["nest_change"].as_str()),
        (3, Some("returned")),
        "{v}"
    );
    assert_eq!(v["nested"], serde_json::json!([]), "{v}");
    let (code, v) = run("echo $$ $PWD");
    assert_eq!(
        (code, v["output"].as_str()),
        (0, Some(format!("{outer} /tmp\n").as_str())),
        "{v}"
    );

    // `exec bash` replaces the session's shell and is armed in place.
    let (code, v) = run("exec bash --norc");
    assert_eq!(
        (code, v["status"].as_str()),
        (0, Some("entered_shell")),
        "{v}"
    );
    assert_eq!(v["nested"][0]["replaced"], true, "{v}");
    let (code, v) = run("echo $$; (exit 5)");
    assert_eq!(
        (code, v["output"].as_str()),
        (5, Some(format!("{outer}\n").as_str())),
        "{v}"
    );
}
