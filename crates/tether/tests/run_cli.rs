//! `tether run` and the session commands end to end, through a daemon of
//! the test's own: output, exit codes, persistence, and what they say when
//! a command cannot complete.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::Daemon;
use tether_daemon::protocol::PROTOCOL_VERSION;

fn code(out: &std::process::Output) -> Option<i32> {
    out.status.code()
}

/// `scripts/test` reruns this suite with every session confined
/// (`TETHER_SUITE_CONFINED` names the mode its config asks): each result
/// must then say so, and must not otherwise.
#[test]
fn results_say_whether_the_suite_runs_confined() {
    let d = Daemon::new("suite-confined");
    let out = d.run(&["run", "-s", "c", "--norc", "--json", "--", "true"]);
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    match std::env::var("TETHER_SUITE_CONFINED") {
        Ok(mode) => assert_eq!(r["confinement"]["mode"], mode.as_str(), "{r}"),
        Err(_) => assert!(r["confinement"].is_null(), "{r}"),
    }
}

#[test]
fn sessions_persist_between_invocations() {
    let d = Daemon::new("persist");
    let out = d.run(&["run", "-s", "a", "--norc", "--", "cd", "/tmp"]);
    assert_eq!(code(&out), Some(0), "{out:?}");
    assert_eq!(d.stdout(&["run", "-s", "a", "--", "pwd"]), "/tmp\n");
    d.run(&["run", "-s", "a", "--", "export", "K=v1"]);
    assert_eq!(d.stdout(&["run", "-s", "a", "--", "echo $K"]), "v1\n");
    // Another session is another shell.
    assert_eq!(
        d.stdout(&["run", "-s", "b", "--norc", "--", "echo ${K:-unset}"]),
        "unset\n"
    );
    let ls = d.stdout(&["ls", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&ls).unwrap();
    let names: Vec<&str> = v["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["address"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["a", "b"]);
    assert_eq!(code(&d.run(&["close", "-s", "b"])), Some(0));
    let out = d.run(&["read", "-s", "b"]);
    assert_eq!(code(&out), Some(255));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no session named \"b\""));
}

#[test]
fn exit_codes_tell_every_status_apart() {
    let d = Daemon::new("codes");
    let out = d.run(&["run", "--norc", "--", "echo hello; (exit 3)"]);
    assert_eq!(
        (String::from_utf8_lossy(&out.stdout).as_ref(), code(&out)),
        ("hello\n", Some(3))
    );
    let out = d.run(&["run", "--", "echo 'open"]);
    assert_eq!(code(&out), Some(121));
    assert!(String::from_utf8_lossy(&out.stderr).contains("incomplete"));
    let out = d.run(&["run", "--timeout", "0.3", "--", "echo started; sleep 30"]);
    assert_eq!(code(&out), Some(124));
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("started\n"));
    assert!(String::from_utf8_lossy(&out.stderr).contains("timed out"));
    let out = d.run(&[
        "run",
        "--timeout",
        "10",
        "--",
        "read -r line; echo got $line",
    ]);
    assert_eq!(code(&out), Some(125));
    assert!(String::from_utf8_lossy(&out.stderr).contains("waiting for input"));
    let out = d.run(&["send", "answer", "-k", "Enter"]);
    assert_eq!(
        (String::from_utf8_lossy(&out.stdout).as_ref(), code(&out)),
        ("got answer\n", Some(0))
    );
    let out = d.run(&[
        "run",
        "--timeout",
        "0.2",
        "--keep",
        "--",
        "sleep 0.5; echo late",
    ]);
    assert_eq!(code(&out), Some(123));
    let out = d.run(&["read", "--wait", "10", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (v["status"].as_str(), v["output"].as_str()),
        (Some("exited"), Some("late\n"))
    );
    let out = d.run(&["run", "--", "exit 4"]);
    assert_eq!(code(&out), Some(122));
    assert!(String::from_utf8_lossy(&out.stderr).contains("the shell exited with code 4"));
    let out = d.run(&["run", "--timeout=-1", "--", "true"]);
    assert_eq!(code(&out), Some(255));
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("--timeout must be more than 0 and at most 3600 seconds")
    );
    let out = d.run(&["run", "--host", "@web01", "--", "true"]);
    assert_eq!(code(&out), Some(255));
    assert!(String::from_utf8_lossy(&out.stderr).contains("the user before '@' is empty"));
}

#[test]
fn signal_screen_and_reset() {
    let d = Daemon::new("signal");
    d.run(&["run", "--norc", "--", "cd /usr"]);
    let out = d.run(&["run", "--timeout", "0.2", "--keep", "--", "sleep 30"]);
    assert_eq!(code(&out), Some(123));
    let out = d.run(&["signal", "INT", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (v["exit_code"].as_i64(), v["signal"].as_str()),
        (Some(130), Some("SIGINT"))
    );
    d.run(&["run", "--", "printf 'on the screen\\n'"]);
    assert!(d.stdout(&["screen"]).contains("on the screen"));
    assert_eq!(code(&d.run(&["reset"])), Some(0));
    assert_eq!(d.stdout(&["run", "--", "pwd"]), "/usr\n");
}

#[test]
fn once_runs_without_a_daemon_in_every_shell() {
    let d = Daemon::new("once");
    for shell in ["bash", "zsh", "dash", "busybox"] {
        let out = d.run(&["run", "--once", "--norc", "--shell", shell, "--", "echo ok"]);
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            "ok\n",
            "{shell}: {out:?}"
        );
    }
    assert!(
        !d.dir.join("daemon.sock").exists(),
        "--once started no daemon"
    );
}

#[test]
fn clipped_output_names_the_spill_file() {
    let d = Daemon::new("clip");
    let out = d.run(&[
        "run",
        "--once",
        "--norc",
        "--output-limit",
        "40",
        "--",
        "seq 1 500",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    let path = err.trim_end().rsplit(' ').next().unwrap();
    let full = std::fs::read_to_string(path).unwrap();
    assert!(full.starts_with("1\n2\n") && full.ends_with("499\n500\n"));
    let _ = std::fs::remove_file(path);
}

#[test]
fn help_version_and_completions() {
    let d = Daemon::new("help");
    let out = d.run(&["--version"]);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        format!("tether {}", env!("CARGO_PKG_VERSION"))
    );
    let help = d.stdout(&["run", "--help"]);
    assert!(
        help.contains("Exit codes:") && help.contains("124 timed out"),
        "{help}"
    );
    for shell in ["bash", "zsh", "fish"] {
        let script = d.stdout(&["completions", shell]);
        assert!(
            script.contains("attach"),
            "{shell} completions name the subcommands"
        );
    }
}

#[test]
fn a_client_of_another_protocol_is_told_what_to_do() {
    use std::io::{BufRead, BufReader, Write};
    let d = Daemon::new("version");
    assert_eq!(code(&d.run(&["daemon", "start"])), Some(0));
    let socket = d.dir.join("daemon.sock");
    let mut s = common::wait_for(10, "the socket", || {
        std::os::unix::net::UnixStream::connect(&socket).ok()
    });
    s.write_all(b"{\"protocol\":999,\"client\":\"tether 9.0\"}\n")
        .unwrap();
    let mut line = String::new();
    BufReader::new(&s).read_line(&mut line).unwrap();
    let v: serde_json::Value = serde_json::from_str(&line).unwrap();
    assert_eq!(v["error"]["kind"], "version", "{v}");
    let msg = v["error"]["message"].as_str().unwrap();
    assert!(
        msg.contains(&format!("speaks protocol {PROTOCOL_VERSION}"))
            && msg.contains("tether 9.0 speaks protocol 999")
            && msg.contains("kill"),
        "{msg}"
    );
    // A malformed request gets an error, and the connection keeps serving.
    let mut s = std::os::unix::net::UnixStream::connect(&socket).unwrap();
    let hello = format!("{{\"protocol\":{PROTOCOL_VERSION},\"client\":\"t\"}}\n");
    s.write_all(format!("{hello}{{\"op\":\"fly\"}}\n{{\"op\":\"list\"}}\n").as_bytes())
        .unwrap();
    let mut r = BufReader::new(&s);
    let mut lines = vec![String::new(), String::new(), String::new()];
    for l in &mut lines {
        r.read_line(l).unwrap();
    }
    assert!(lines[0].contains("\"ok\""), "{lines:?}");
    assert!(lines[1].contains("bad_request"), "{lines:?}");
    assert!(lines[2].contains("\"sessions\""), "{lines:?}");
}

#[test]
fn an_idle_daemon_with_no_sessions_exits_on_its_own() {
    let d = Daemon::new("idle");
    let out = d
        .cmd(&["daemon", "start"])
        .env("TETHER_IDLE_EXIT", "0.2")
        .output()
        .unwrap();
    assert_eq!(code(&out), Some(0));
    let socket = d.dir.join("daemon.sock");
    common::wait_for(10, "the daemon to listen", || socket.exists().then_some(()));
    common::wait_for(20, "the idle daemon to exit", || {
        (!socket.exists()).then_some(())
    });
    let log = std::fs::read_to_string(d.dir.join("daemon.log")).unwrap();
    assert!(log.contains("idle for"), "{log}");
}

#[test]
fn clients_racing_to_start_the_daemon_share_one() {
    let d = Daemon::new("race");
    let children: Vec<_> = (0..4)
        .map(|i| {
            d.cmd(&[
                "run",
                "-s",
                &format!("r{i}"),
                "--norc",
                "--",
                &format!("echo {i}"),
            ])
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
        })
        .collect();
    for (i, c) in children.into_iter().enumerate() {
        let out = c.wait_with_output().unwrap();
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            format!("{i}\n"),
            "{out:?}"
        );
    }
    let v: serde_json::Value = serde_json::from_str(&d.stdout(&["ls", "--json"])).unwrap();
    assert_eq!(
        v["sessions"].as_array().unwrap().len(),
        4,
        "all four sessions are in one daemon"
    );
}

#[test]
fn once_reports_what_a_one_shot_shell_did() {
    let d = Daemon::new("once-truth");
    // The shell's exit is the command's: its status, and no word of a next
    // command.
    let out = d.run(&["run", "--once", "--norc", "--", "echo bye; exit 3"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        (String::from_utf8_lossy(&out.stdout).as_ref(), code(&out)),
        ("bye\n", Some(3)),
        "{out:?}"
    );
    assert!(!err.contains("next command"), "{err}");
    let out = d.run(&["run", "--once", "--norc", "--json", "--", "exit 4"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (code(&out), v["status"].as_str(), v["exit_code"].as_i64()),
        (Some(4), Some("exited"), Some(4)),
        "{v}"
    );
    // A command that waits for input on its terminal: nothing can answer
    // it, and the note says so instead of suggesting `tether send`.
    let out = d.run(&["run", "--once", "--norc", "--timeout", "10", "--", "read x"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(code(&out), Some(125), "{out:?}");
    assert!(
        err.contains("waited for input") && err.contains("--once") && !err.contains("tether send"),
        "{err}"
    );
}

/// `tether ARGS` with `input` on its stdin (a pipe, written by a thread).
fn piped(d: &Daemon, args: &[&str], input: Vec<u8>) -> std::process::Output {
    use std::io::Write;
    let mut child = d
        .cmd(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        // tether may stop reading (over the bound): a broken pipe is fine.
        let _ = stdin.write_all(&input);
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    out
}

#[test]
fn piped_stdin_is_the_commands_stdin() {
    let d = Daemon::new("stdin-pipe");
    for shell in ["bash", "zsh", "dash", "busybox"] {
        let s = format!("in-{shell}");
        let args = ["run", "-s", &s, "--norc", "--shell", shell, "--", "cat"];
        let out = piped(&d, &args, b"data\n".to_vec());
        assert_eq!(
            (String::from_utf8_lossy(&out.stdout).as_ref(), code(&out)),
            ("data\n", Some(0)),
            "{shell}: {out:?}"
        );
        // The session's own state is untouched by the redirection.
        let args = ["run", "-s", &s, "--", "read a; read b; X=$a$b; echo $X"];
        let out = piped(&d, &args, b"one\ntwo\n".to_vec());
        assert_eq!(String::from_utf8_lossy(&out.stdout), "onetwo\n", "{shell}");
        assert_eq!(
            d.stdout(&["run", "-s", &s, "--", "echo ${X-unset}"]),
            "onetwo\n"
        );
    }
    // Empty input is end of file, not waiting for input.
    let out = piped(&d, &["run", "--", "cat; echo rc=$?"], Vec::new());
    assert_eq!(
        (String::from_utf8_lossy(&out.stdout).as_ref(), code(&out)),
        ("rc=0\n", Some(0)),
        "{out:?}"
    );
    // Every byte value arrives as it was.
    let bytes: Vec<u8> = (0..=255u8).chain((0..=255u8).rev()).collect();
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    let out = piped(&d, &["run", "--", "od -An -v -tx1 | tr -d ' \\n'"], bytes);
    assert_eq!(String::from_utf8_lossy(&out.stdout), hex, "{out:?}");
    // Its file was removed when the command ended.
    let left = d.stdout(&["run", "--", "ls $__tether_dir | grep -c '^in-'"]);
    assert_eq!(left, "0\n");
    // And with --once.
    let out = piped(
        &d,
        &["run", "--once", "--norc", "--", "wc -c"],
        vec![b'x'; 100_000],
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "100000",
        "{out:?}"
    );
}

#[test]
fn a_file_on_stdin_is_the_commands_stdin() {
    let d = Daemon::new("stdin-file");
    let file = std::env::temp_dir().join(format!("tether-stdin-{}", std::process::id()));
    std::fs::write(&file, "a\nb\nc\n").unwrap();
    let out = d
        .cmd(&["run", "--norc", "--", "wc -l"])
        .stdin(std::fs::File::open(&file).unwrap())
        .output()
        .unwrap();
    let _ = std::fs::remove_file(&file);
    assert_eq!(
        (String::from_utf8_lossy(&out.stdout).trim(), code(&out)),
        ("3", Some(0)),
        "{out:?}"
    );
    // No stdin (/dev/null) leaves the command the session's terminal.
    let out = d.run(&["run", "--timeout", "10", "--", "read x"]);
    assert_eq!(code(&out), Some(125), "{out:?}");
    let out = d.run(&["send", "typed", "-k", "Enter"]);
    assert_eq!(code(&out), Some(0), "{out:?}");
    // As does --no-stdin, with a pipe.
    let args = ["run", "--no-stdin", "--timeout", "10", "--", "read x"];
    let out = piped(&d, &args, b"ignored\n".to_vec());
    assert_eq!(code(&out), Some(125), "{out:?}");
}

#[test]
fn stdin_over_the_bound_is_refused_and_nothing_runs() {
    let d = Daemon::new("stdin-bound");
    let marker = d.dir.with_extension("ran");
    let touch = format!("touch {}", marker.display());
    let out = piped(
        &d,
        &["run", "--norc", "--", &touch],
        vec![b'x'; (64 << 20) + 1],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(code(&out), Some(255), "{err}");
    assert!(
        err.contains("64 MiB") && err.contains("nothing was run"),
        "{err}"
    );
    assert!(!marker.exists(), "the command ran");
    let out = piped(
        &d,
        &["run", "--once", "--norc", "--", &touch],
        vec![b'x'; (64 << 20) + 1],
    );
    assert_eq!(code(&out), Some(255), "{out:?}");
    assert!(!marker.exists(), "the --once command ran");
}
