//! `tether ssh`'s forwarding modes against real sshd: ExitOnForwardFailure
//! (255 before the session) and ClearAllForwardings, forwards closed when
//! the session ends, a forward beside an interactive session, `-W`,
//! LocalForward and SessionType in ssh_config, and `-f` (ready, then
//! ended by its pid; a failing copy's code).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
mod forward_kit;

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::Stdio;

use common::Person;
use common::remote::start;
use common::wait_for;
use forward_kit::*;
use tether_transport::{ExitInfo, Terminal};

#[test]
fn exit_on_forward_failure_with_a_taken_port_exits_255_before_the_session() {
    let Some(r) = start("fwd-eoff") else {
        return;
    };
    let taken = TcpListener::bind("127.0.0.1:0").unwrap();
    let p = taken.local_addr().unwrap().port();
    let spec = format!("{p}:127.0.0.1:80");
    let out = run(
        &r,
        &[
            "-o",
            "ExitOnForwardFailure=yes",
            "-L",
            &spec,
            "web01",
            "echo SESSION",
        ],
        b"",
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(255), "{err} {out:?}");
    assert!(!String::from_utf8_lossy(&out.stdout).contains("SESSION"));
    assert!(err.contains("cannot listen on 127.0.0.1"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    // Without it: one warning, and the session runs.
    let out = run(&r, &["-L", &spec, "web01", "echo SESSION"], b"");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "SESSION\n");
    assert!(err.contains("warning") && err.lines().count() == 1, "{err}");
    // ClearAllForwardings: nothing is bound, so nothing fails.
    let out = run(
        &r,
        &[
            "-o",
            "ExitOnForwardFailure=yes",
            "-o",
            "ClearAllForwardings=yes",
            "-L",
            &spec,
            "web01",
            "echo SESSION",
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    drop(taken);
    // A remote forward the server refuses (a privileged port, for a user
    // who is not root): 255 before the session, or a warning without.
    if tether_testkit::user() != "root" {
        let out = run(
            &r,
            &[
                "-o",
                "ExitOnForwardFailure=yes",
                "-R",
                "1:127.0.0.1:80",
                "web01",
                "echo SESSION",
            ],
            b"",
        );
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(255), "{err}");
        assert!(err.contains("refused the remote forward"), "{err}");
        assert!(out.stdout.is_empty());
        let out = run(&r, &["-R", "1:127.0.0.1:80", "web01", "echo SESSION"], b"");
        assert_eq!(
            (
                out.status.code(),
                String::from_utf8_lossy(&out.stdout).as_ref()
            ),
            (Some(0), "SESSION\n"),
            "{out:?}"
        );
    }
}

#[test]
fn forwarded_connections_close_when_the_session_ends() {
    let Some(r) = start("fwd-end") else {
        return;
    };
    let echo = echo_server();
    let p = port();
    let flag = r.home.0.join("session-may-end");
    let script = format!(
        "while [ ! -e {} ]; do sleep 0.05; done; echo ENDED",
        flag.display()
    );
    let c = spawn(
        &r,
        &["-L", &format!("{p}:127.0.0.1:{echo}"), "web01", &script],
    );
    listening(p);
    let mut s = TcpStream::connect(("127.0.0.1", p)).unwrap();
    s.set_read_timeout(Some(std::time::Duration::from_secs(30)))
        .unwrap();
    s.write_all(b"ping\n").unwrap();
    let mut buf = [0u8; 5];
    s.read_exact(&mut buf).unwrap();
    assert_eq!(&buf, b"ping\n");
    // The session's command ends: tether exits, and the open forwarded
    // connection is closed rather than kept.
    std::fs::write(&flag, "").unwrap();
    let out = c.wait_with_output().unwrap();
    assert_eq!(
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).as_ref()
        ),
        (Some(0), "ENDED\n")
    );
    let mut rest = Vec::new();
    assert_eq!(s.read_to_end(&mut rest).unwrap_or(0), 0);
    assert!(!tether_testkit::accepts("127.0.0.1", p));
}

#[test]
fn a_forward_beside_an_interactive_session() {
    let Some(r) = start("fwd-tty") else {
        return;
    };
    let http = http_server();
    let p = port();
    let spec = format!("{p}:127.0.0.1:{http}");
    let person = Person::spawn(
        &["ssh", "-L", &spec, "web01"],
        &r.daemon,
        &[("HOME", r.home.0.display().to_string())],
    );
    person.pty.write(b"echo typed-$((6*7))\r".to_vec()).unwrap();
    person.sees("typed-42");
    assert_eq!(get(p), BODY);
    person.pty.write(b"exit 3\r".to_vec()).unwrap();
    assert_eq!(person.exit(), ExitInfo::Code(3));
}

#[test]
fn stdio_forward_carries_stdin_and_stdout() {
    let Some(r) = start("fwd-stdio") else {
        return;
    };
    let echo = echo_server();
    let out = run(
        &r,
        &["-W", &format!("127.0.0.1:{echo}"), "web01"],
        b"through -W\n",
    );
    assert_eq!(
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).as_ref()
        ),
        (Some(0), "through -W\n"),
        "{out:?}"
    );
    let out = run(
        &r,
        &["-W", &format!("127.0.0.1:{}", closed_port()), "web01"],
        b"",
    );
    assert_eq!(out.status.code(), Some(255), "{out:?}");
}

#[test]
fn local_forward_and_session_type_from_ssh_config() {
    let Some(r) = start("fwd-config") else {
        return;
    };
    let http = http_server();
    let p = port();
    let config = r.home.0.join(".ssh/config");
    let text = std::fs::read_to_string(&config).unwrap();
    std::fs::write(
        &config,
        text.replace(
            "Host web01\n",
            &format!("Host web01\n  LocalForward {p} 127.0.0.1:{http}\n  SessionType none\n"),
        ),
    )
    .unwrap();
    // SessionType none: as -N, no command and no shell.
    let c = spawn(&r, &["web01"]);
    listening(p);
    assert_eq!(get(p), BODY);
    stop(c);
}

#[test]
fn background_after_forwarding_then_ended_by_its_pid() {
    let Some(r) = start("fwd-bg") else {
        return;
    };
    let http = http_server();
    let p = port();
    // An address of this test's own: once the forward is gone, no other
    // test's listener can have taken the port there.
    let spec = format!("127.0.0.213:{p}:127.0.0.1:{http}");
    let status = r
        .daemon
        .cmd(&[
            "ssh",
            "-o",
            "ForkAfterAuthentication=yes",
            "-N",
            "-L",
            &spec,
            "web01",
        ])
        .env("HOME", &r.home.0)
        .env_remove("SSH_AUTH_SOCK")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert_eq!(status.code(), Some(0));
    // Returned once forwarding: the port answers now, without waiting.
    assert_eq!(get_at("127.0.0.213", p), BODY);
    let pids = pids_with(&["ssh", "ForkAfterAuthentication=yes", &spec]);
    assert_eq!(pids.len(), 1, "{pids:?}");
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pids[0]),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    wait_for(30, "the background tether to end", || {
        (!common::alive(pids[0])).then_some(())
    });
    // A process whose first thread shows as ended may still have other
    // threads closing its files: the listener goes with the last of them.
    wait_for(30, "the background forward's port to close", || {
        (!tether_testkit::accepts("127.0.0.213", p)).then_some(())
    });

    // A background copy that fails (ExitOnForwardFailure, a taken port):
    // the foreground one exits with its 255, and its line is on stderr.
    let taken = TcpListener::bind("127.0.0.1:0").unwrap();
    let t = taken.local_addr().unwrap().port();
    let out = r
        .daemon
        .cmd(&[
            "ssh",
            "-f",
            "-N",
            "-o",
            "ExitOnForwardFailure=yes",
            "-L",
            &format!("{t}:127.0.0.1:{http}"),
            "web01",
        ])
        .env("HOME", &r.home.0)
        .env_remove("SSH_AUTH_SOCK")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(255), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot listen"));
    // The background copy of -f -N keeps no pipe of ours open: the
    // reader of its stdout and stderr sees them end.
    let piped = format!("{}:127.0.0.1:{http}", port());
    let mut child = r
        .daemon
        .cmd(&["ssh", "-f", "-N", "-L", &piped, "web01"])
        .env("HOME", &r.home.0)
        .env_remove("SSH_AUTH_SOCK")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let (mut out, mut err) = (child.stdout.take().unwrap(), child.stderr.take().unwrap());
    std::thread::spawn(move || {
        let mut all = Vec::new();
        let _ = out.read_to_end(&mut all);
        let _ = err.read_to_end(&mut all);
        let _ = tx.send(all);
    });
    let ended = rx.recv_timeout(std::time::Duration::from_secs(30));
    assert_eq!(child.wait().unwrap().code(), Some(0));
    assert!(
        ended.is_ok(),
        "stdout or stderr kept open by the background copy"
    );
    for pid in pids_with(&["ssh", &piped]) {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(pid),
            nix::sys::signal::Signal::SIGTERM,
        );
    }
    // -f with nothing to run in the background is refused at once.
    let out = run(&r, &["-f", "web01"], b"");
    assert_eq!(out.status.code(), Some(255), "{out:?}");
}
