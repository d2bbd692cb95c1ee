//! `tether ssh` against real sshd: a command without a terminal keeps
//! stdin, stdout, stderr and the exit status apart; the login shell on a
//! terminal (tether itself in a PTY, as a person runs it) runs what is
//! typed, ends with the shell's status, and `~.` disconnects with 255;
//! `-q` keeps only errors.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::io::Write;
use std::process::Stdio;

use common::Person;
use common::remote::{Remote, start};
use tether_transport::{ExitInfo, Terminal};

fn ssh(r: &Remote, args: &[&str], stdin: &[u8]) -> std::process::Output {
    let mut all = vec!["ssh"];
    all.extend_from_slice(args);
    let mut child = r
        .daemon
        .cmd(&all)
        .env("HOME", &r.home.0)
        .env_remove("SSH_AUTH_SOCK")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    child.wait_with_output().unwrap()
}

#[test]
fn a_command_keeps_its_streams_and_status_apart() {
    let Some(r) = start("ssh-cmd") else {
        return;
    };
    let out = ssh(&r, &["web01", "echo out; echo err >&2; exit 3"], b"");
    assert_eq!(
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).as_ref(),
            String::from_utf8_lossy(&out.stderr).as_ref()
        ),
        (Some(3), "out\n", "err\n")
    );
    // Several words are one command line, and stdin reaches the command.
    let out = ssh(&r, &["web01", "tr", "a-z", "A-Z"], b"piped data\n");
    assert_eq!(
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).as_ref()
        ),
        (Some(0), "PIPED DATA\n"),
        "{out:?}"
    );
    // No terminal here: ssh's warning, and the login shell runs without
    // one, reading its commands from stdin (`ssh HOST < script`); -T: no
    // warning.
    let out = ssh(&r, &["web01"], b"echo from-shell; exit 4\n");
    assert_eq!(
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).as_ref(),
            String::from_utf8_lossy(&out.stderr).as_ref()
        ),
        (
            Some(4),
            "from-shell\n",
            "Pseudo-terminal will not be allocated because stdin is not a terminal.\n"
        ),
        "{out:?}"
    );
    let out = ssh(&r, &["-T", "web01"], b"echo quiet-shell\n");
    assert_eq!(
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).as_ref(),
            String::from_utf8_lossy(&out.stderr).as_ref()
        ),
        (Some(0), "quiet-shell\n", ""),
        "{out:?}"
    );
}

/// `tether ssh ARGS` in a PTY of its own, as a person runs it.
fn person(r: &Remote, args: &[&str]) -> Person {
    let mut all = vec!["ssh"];
    all.extend_from_slice(args);
    Person::spawn(&all, &r.daemon, &[("HOME", r.home.0.display().to_string())])
}

#[test]
fn the_login_shell_on_a_terminal_ends_with_its_status_or_on_tilde_dot() {
    let Some(r) = start("ssh-tty") else {
        return;
    };
    let p = person(&r, &["web01"]);
    // The remote shell runs what is typed; its environment has the
    // terminal's TERM (and COLORTERM, if the server accepts it).
    p.pty
        .write(b"echo typed-$((6*7)) $TERM\r".to_vec())
        .unwrap();
    p.sees("typed-42 xterm-256color");
    p.pty.write(b"exit 7\r".to_vec()).unwrap();
    assert_eq!(p.exit(), ExitInfo::Code(7));
    // The reader may still be behind the exit: wait for the restore.
    p.sees("\x1b[?25h");

    let p = person(&r, &["web01"]);
    p.pty.write(b"echo ready\r".to_vec()).unwrap();
    p.sees("ready\r\n");
    p.pty.write(b"\r~.".to_vec()).unwrap();
    assert_eq!(p.exit(), ExitInfo::Code(255));
    p.sees("Connection to web01 closed.");

    // The connection lost under the session (its sshd process killed):
    // 255, the terminal restored, and a line saying so.
    let p = person(&r, &["web01"]);
    p.pty.write(b"echo ready\r".to_vec()).unwrap();
    p.sees("ready\r\n");
    p.pty.write(b"kill -9 $PPID\r".to_vec()).unwrap();
    assert_eq!(p.exit(), ExitInfo::Code(255));
    p.sees("the connection was lost");
    // The reader may still be behind the exit: wait for the restore.
    p.sees("\x1b[?25h");

    // Another escape character (`-e %`), or none (`-e none`: `~.` is
    // typed into the remote shell like any text).
    let p = person(&r, &["-e", "%", "web01"]);
    p.pty.write(b"echo ready\r".to_vec()).unwrap();
    p.sees("ready\r\n");
    p.pty.write(b"\r%.".to_vec()).unwrap();
    assert_eq!(p.exit(), ExitInfo::Code(255));
    let p = person(&r, &["-e", "none", "web01"]);
    p.pty.write(b"echo ~.-sent\r".to_vec()).unwrap();
    p.sees("~.-sent\r\n");
    p.pty.write(b"~.\rexit 4\r".to_vec()).unwrap();
    assert_eq!(p.exit(), ExitInfo::Code(4));
}

#[test]
fn quiet_says_nothing_but_errors() {
    let Some(r) = start("ssh-quiet") else {
        return;
    };
    // `~.` and a remote program ended by a signal: no closing line.
    let p = person(&r, &["-q", "web01"]);
    p.pty.write(b"echo ready\r".to_vec()).unwrap();
    p.sees("ready\r\n");
    p.pty.write(b"\r~.".to_vec()).unwrap();
    assert_eq!(p.exit(), ExitInfo::Code(255));
    p.sees("\x1b[?25h");
    assert!(!p.text().contains("Connection to"), "{:?}", p.text());
    let p = person(&r, &["-q", "web01"]);
    p.pty.write(b"kill -KILL $$\r".to_vec()).unwrap();
    assert_eq!(p.exit(), ExitInfo::Code(137));
    // The reader may still be behind the exit: wait for the restore.
    p.sees("\x1b[?25h");
    assert!(!p.text().contains("tether:"), "{:?}", p.text());

    // Without a terminal: the signal is reported, but not under -q.
    let out = ssh(&r, &["web01", "kill -KILL $$"], b"");
    assert_eq!(out.status.code(), Some(137), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("killed by signal KILL"));
    let out = ssh(&r, &["-q", "web01", "kill -KILL $$"], b"");
    assert_eq!(
        (out.status.code(), out.stderr.as_slice()),
        (Some(137), &b""[..])
    );

    // An error is still said: nothing listens on port 1.
    let out = ssh(&r, &["-q", "-p", "1", "web01", "true"], b"");
    assert_eq!(out.status.code(), Some(255), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).starts_with("tether: "),
        "{out:?}"
    );
}
