//! `tether attach` to a session an agent created through `tether mcp`: the
//! person's side runs in a real PTY, the agent's side speaks JSON-RPC to
//! `tether mcp`. The person sees the screen, the agent's commands as they
//! run, types, resizes, detaches with `~.`, and the terminal is restored;
//! the agent's session keeps working throughout.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Stdio};

use common::{Daemon, Person, wait_for};
use serde_json::{Value, json};
use tether_transport::{ExitInfo, TermSize, Terminal};

/// `tether mcp`, driven line by line.
struct Agent {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    id: u64,
}

impl Agent {
    fn start(d: &Daemon) -> Agent {
        let mut child = d
            .cmd(&["mcp", "--norc"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut agent = Agent {
            stdin: child.stdin.take().unwrap(),
            stdout: BufReader::new(child.stdout.take().unwrap()),
            child,
            id: 0,
        };
        agent.request(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "attach-test", "version": "0"}}),
        );
        agent.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        agent
    }

    fn send(&mut self, v: Value) {
        writeln!(self.stdin, "{v}").unwrap();
        self.stdin.flush().unwrap();
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        self.id += 1;
        let id = self.id;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let mut line = String::new();
            assert!(
                self.stdout.read_line(&mut line).unwrap() > 0,
                "tether mcp closed stdout"
            );
            let v: Value = serde_json::from_str(&line).unwrap();
            if v["id"] == json!(id) {
                return v;
            }
        }
    }

    /// `shell_run` in session "agent"; its structured result.
    fn run(&mut self, command: &str) -> Value {
        let r = self.request(
            "tools/call",
            json!({"name": "shell_run", "arguments": {"session": "agent", "command": command}}),
        );
        let result = &r["result"];
        assert_ne!(result["isError"], json!(true), "{r}");
        result["structuredContent"].clone()
    }
}

fn session_entry(d: &Daemon, name: &str) -> Value {
    let v: Value = serde_json::from_str(&d.stdout(&["ls", "--json"])).unwrap();
    v["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == json!(name))
        .cloned()
        .unwrap_or(Value::Null)
}

#[test]
fn a_person_attaches_to_an_agents_session_and_detaches() {
    let d = Daemon::new("attach");
    let mut agent = Agent::start(&d);
    let r = agent.run("cd /tmp; echo before-attach");
    assert_eq!(r["output"], json!("before-attach\n"));
    let entry = session_entry(&d, "agent");
    let address = entry["address"].as_str().unwrap().to_owned();
    assert!(
        address.starts_with("mcp-") && address.ends_with("/agent"),
        "{entry}"
    );

    // A bare name finds the agent's session; the person sees its screen.
    let person = Person::attach(&d, "agent");
    person.sees("before-attach");
    wait_for(20, "the attachment to be listed", || {
        (session_entry(&d, "agent")["attached"] == json!(1)).then_some(())
    });

    // The agent keeps working, and the person sees it happen.
    let r = agent.run("echo live-from-agent");
    assert_eq!(
        (r["status"].as_str(), r["output"].as_str()),
        (Some("exited"), Some("live-from-agent\n"))
    );
    person.sees("$ echo live-from-agent");
    person.sees("live-from-agent\r\n");

    // The person types a command at the shell, with echo.
    person
        .pty
        .write(b"echo typed-by-$((6*7))\r".to_vec())
        .unwrap();
    person.sees("echo typed-by-$((6*7))");
    person.sees("typed-by-42\r\n");

    // A resize reaches the session.
    person
        .pty
        .resize(TermSize {
            rows: 30,
            cols: 100,
        })
        .unwrap();
    wait_for(20, "the session to take the new size", || {
        (agent.run("stty size")["output"] == json!("30 100\n")).then_some(())
    });

    // `~.` after Enter detaches; the terminal is restored.
    person.pty.write(b"\r~.".to_vec()).unwrap();
    assert_eq!(person.exit(), ExitInfo::Code(0));
    // The last output can reach us after the exit is seen.
    person.sees(&format!("[detached: {address}]"));
    let seen = person.text();
    assert!(seen.contains(&format!("[detached: {address}]")), "{seen:?}");
    assert!(
        seen.contains("\x1b[c"),
        "the terminal's state was queried first"
    );
    let restore = &seen[seen.rfind("typed-by-42").unwrap()..];
    assert!(
        restore.contains("\x1b[>4;0m") && restore.contains("\x1b[?25h"),
        "{restore:?}"
    );

    // The session lives on with its own size and state back.
    let r = agent.run("stty size; pwd");
    assert_eq!(r["output"], json!("24 80\n/tmp\n"));
    assert_eq!(session_entry(&d, "agent")["attached"], json!(0));

    // The agent's sessions end with the agent.
    drop(agent.stdin);
    agent.child.wait().unwrap();
    wait_for(20, "the agent's sessions to end", || {
        session_entry(&d, "agent").is_null().then_some(())
    });
}

#[test]
fn attach_ends_cleanly_when_the_session_ends_or_on_a_signal() {
    let d = Daemon::new("attach-end");
    assert_eq!(
        d.run(&["run", "-s", "s", "--norc", "--", "echo up"])
            .status
            .code(),
        Some(0)
    );
    let person = Person::attach(&d, "s");
    person.sees("up");
    assert_eq!(d.run(&["close", "-s", "s"]).status.code(), Some(0));
    assert_eq!(person.exit(), ExitInfo::Code(1));
    person.sees("[the session ended: s]");

    // Attached while a command runs: echo comes on once the shell is back
    // at its prompt.
    let out = d.run(&[
        "run",
        "-s",
        "t",
        "--norc",
        "--timeout",
        "0.1",
        "--keep",
        "--",
        "echo again; sleep 0.5",
    ]);
    assert_eq!(out.status.code(), Some(123));
    let person = Person::attach(&d, "t");
    person.sees("again");
    wait_for(20, "the attachment", || {
        (session_entry(&d, "t")["attached"] == json!(1)).then_some(())
    });
    let pid = person.pty.pid();
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    assert_eq!(person.exit(), ExitInfo::Code(143));
    person.sees("[terminated; detached: t]");
    assert!(person.text().contains("\x1b[?25h"), "restored on a signal");
    // Unknown sessions are refused before the terminal is touched.
    let out = d.run(&["attach", "nope"]);
    assert_eq!(out.status.code(), Some(255));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no session named \"nope\""));
}

/// A session `s` that printed `up`, and a person attached to it.
fn attached_to_a_fresh_session(d: &Daemon) -> Person {
    assert_eq!(
        d.run(&["run", "-s", "s", "--norc", "--", "echo up"])
            .status
            .code(),
        Some(0)
    );
    let person = Person::attach(d, "s");
    person.sees("up");
    wait_for(20, "the attachment", || {
        (session_entry(d, "s")["attached"] == json!(1)).then_some(())
    });
    person
}

/// The seed's manual step: the person types `exit` (after leaving a Kitty
/// keyboard mode on) in the attached shell. Attach ends with the shell's
/// status and restores the terminal; it does not wait for `~.`.
#[test]
fn attach_ends_with_the_shell_when_the_person_types_exit() {
    let d = Daemon::new("attach-exit");
    let person = attached_to_a_fresh_session(&d);
    person
        .pty
        .write(b"printf '\\033[>15u'; exit 7\r".to_vec())
        .unwrap();
    assert_eq!(person.exit(), ExitInfo::Code(7));
    person.sees("exited with status 7");
    let seen = person.text();
    // The Kitty flags pushed by the shell are popped on the way out.
    let pushed = seen.find("\x1b[>15u").expect("the push reached the person");
    assert!(
        seen[pushed..].contains("\x1b[<"),
        "Kitty not popped: {seen:?}"
    );
    // The next command in that session gets a fresh shell, as after any exit.
    let out = d.run(&["run", "-s", "s", "--json", "--", "echo back"]);
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (r["output"].as_str(), r["shell_restarted"].as_bool()),
        (Some("back\n"), Some(true)),
        "{r}"
    );
}

/// What a person types reaches the program whole, even keys shaped like
/// terminal replies (Shift-F3 `CSI 1;2R` and Ctrl-F3 `CSI 1;5R` look like
/// cursor position reports), and the session's queries and tether's marks
/// never reach the person's terminal (the daemon's emulator answers them).
#[test]
fn keys_shaped_like_replies_reach_the_program_and_queries_stay_away() {
    let d = Daemon::new("attach-keys");
    let person = attached_to_a_fresh_session(&d);
    // An agent command asks the terminal things while the person watches.
    let out = d.run(&[
        "run",
        "-s",
        "s",
        "--",
        "printf 'ask\\033[6n\\033[c\\033[?u\\033]11;?\\007asked\\n'",
    ]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    person.sees("askasked");
    // (printf does not read the emulator's answers: they wait as typed-ahead
    // input, which the engine's next line discards, as a shell would after
    // the same printf in a terminal.)
    assert_eq!(
        d.run(&["run", "-s", "s", "--", "true"]).status.code(),
        Some(0)
    );
    // Keys go to a program reading them.
    person.pty.write(b"cat -v\r".to_vec()).unwrap();
    person.sees("cat -v");
    wait_for(20, "cat to read", || {
        (session_entry(&d, "s")["foreground"]["command"] == json!("cat")).then_some(())
    });
    person
        .pty
        .write(b"\x1b[1;2R\x1b[1;5R-end\r".to_vec())
        .unwrap();
    person.sees("^[[1;2R^[[1;5R-end");
    person.pty.write(b"\x04".to_vec()).unwrap();
    // (After the capture's own queries, which tether asks when it starts.)
    let text = person.text();
    let seen = &text[text.find("up").unwrap()..];
    for leaked in ["\x1b[6n", "\x1b[c", "\x1b[?u", "\x1b]11;?", "\x1b]6973"] {
        assert!(
            !seen.contains(leaked),
            "{leaked:?} reached the person: {seen:?}"
        );
    }
    person.pty.write(b"~.".to_vec()).unwrap();
    let _ = person.pty.write(b"\r~.".to_vec());
    assert_eq!(person.exit(), ExitInfo::Code(0));
}

/// A person at the session's prompt gets the terminal's own line (the
/// README's choice: no prompt, no readline, no history in the agent's
/// shell): what they type is echoed, and Backspace, Ctrl-W and Ctrl-U
/// edit it before Enter runs it.
#[test]
fn a_person_at_the_prompt_edits_the_line_with_the_terminals_keys() {
    let d = Daemon::new("attach-line");
    let person = attached_to_a_fresh_session(&d);
    person
        .pty
        .write(b"echo wrong\x15echo a bbb\x17right-X\x7f$((6*7))\r".to_vec())
        .unwrap();
    person.sees("a right-42\r\n");
    // What was typed is echoed as typed (the erased text included, then
    // erased on screen).
    assert!(person.text().contains("echo wrong"), "{:?}", person.text());
    person.pty.write(b"~.".to_vec()).unwrap();
    assert_eq!(person.exit(), ExitInfo::Code(0));
}

/// A person who detaches while a command runs (the shell is not in the
/// foreground, so echo cannot be turned off then) leaves the terminal
/// echoing no more once it ended. Before, echo stayed on for good.
#[test]
fn a_person_leaving_while_a_command_runs_leaves_echo_off() {
    let d = Daemon::new("attach-leave-busy");
    let out = d.run(&["run", "-s", "lb", "--norc", "--", "cd /tmp"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let person = Person::attach(&d, "lb");
    common::echo::off_after_leaving_busy(person, "lb", |args| d.run(args));
}
