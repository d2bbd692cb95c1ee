//! No call waits for ever on a hung link (issue 36): with the sshd
//! processes serving a connection SIGSTOPped (no FIN, no answer), `tether
//! exec`, `ssh`, `cp` and `ping` end within the keepalive budget and say
//! "the link hung"; and a remote program killed by signal N gives 128+N,
//! the number of the signal the host named. A short keepalive (`-o
//! ServerAliveInterval=1 -o ServerAliveCountMax=2`) keeps them fast; the
//! default's 15 × 3 is checked in `exec::resolve`'s unit tests. Against
//! real sshd on 127.0.0.2.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
mod cp_kit;
mod exec_kit;

use std::path::Path;
use std::process::{Child, Output, Stdio};
use std::time::{Duration, Instant};

use exec_kit::{logins, start, token, wait};

/// The short keepalive the tests use.
const ALIVE: [&str; 4] = ["-o", "ServerAliveInterval=1", "-o", "ServerAliveCountMax=2"];

/// Far more than the keepalive budget (3 s): a call still running then
/// waits for ever.
const GENEROUS: Duration = Duration::from_secs(90);

/// Waits for `child` to end, within [`GENEROUS`]; else kills it and fails.
fn ends(mut child: Child, what: &str) -> Output {
    let deadline = Instant::now() + GENEROUS;
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!(
                "{what}: still waiting on the hung link after {GENEROUS:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.wait_with_output().unwrap()
}

/// The pid a remote shell wrote to `file`, once it is there.
fn pid_in(file: &Path) -> i32 {
    let read = || {
        std::fs::read_to_string(file)
            .ok()
            .and_then(|s| s.trim().parse::<i32>().ok())
    };
    wait(|| read().is_some(), "the remote shell's pid");
    read().unwrap()
}

/// SIGSTOP to the sshd processes serving the connection above
/// `shell_pid` (the listener stays up); the pids, to resume.
fn hang_link_above(shell_pid: i32) -> Vec<i32> {
    let (chain, _) = common::remote::sshd_above(shell_pid);
    assert!(!chain.is_empty(), "no sshd above {shell_pid}");
    for pid in &chain {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(*pid),
            nix::sys::signal::Signal::SIGSTOP,
        );
    }
    chain
}

/// Lets the stopped processes go, and ends the remote shell.
fn release(stopped: &[i32], shell_pid: i32) {
    common::remote::resume(stopped);
    common::sigkill(shell_pid);
}

#[test]
fn exec_on_a_hung_link_ends_and_says_the_link_hung() {
    let Some(f) = start() else { return };
    for output in ["stream", "json"] {
        let t = token("hung");
        let pid_file = f.marks.join(format!("pid_{t}"));
        let command = format!(
            "echo $$ > {}; echo started; sleep 120 # {t}",
            pid_file.display()
        );
        let mut extra = ALIVE.to_vec();
        extra.extend(["--output", output]);
        let child = f
            .command(None, "127.0.0.2", &extra, &command)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let shell = pid_in(&pid_file);
        let stopped = hang_link_above(shell);
        let out = ends(child, "tether exec");
        release(&stopped, shell);
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(255), "{output}: {stdout} {stderr}");
        if output == "json" {
            let row: serde_json::Value = serde_json::from_str(stdout.trim()).unwrap();
            assert_eq!(row["error_kind"], "connection_lost", "{row}");
            assert_eq!(row["host_failure"], "hung", "{row}");
            assert!(
                row["exit_code"].is_null() && row["signal"].is_null(),
                "{row}"
            );
            assert!(
                row["error"].as_str().unwrap().contains("the link hung"),
                "{row}"
            );
            assert_eq!(row["stdout"], "started\n", "{row}");
        } else {
            assert!(stdout.contains("127.0.0.2: started"), "{stdout}");
            assert!(
                stderr.contains("127.0.0.2: the link hung before the command's end"),
                "{stderr}"
            );
        }
    }
}

#[test]
fn ssh_on_a_hung_link_ends_and_says_the_link_hung() {
    let Some(f) = start() else { return };
    let t = token("sshhung");
    let pid_file = f.marks.join(format!("pid_{t}"));
    let command = format!("echo $$ > {}; sleep 120 # {t}", pid_file.display());
    let mut c = f.ssh("127.0.0.2", &[]);
    let child = c
        .args(ALIVE)
        .arg(&command)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let shell = pid_in(&pid_file);
    let stopped = hang_link_above(shell);
    let out = ends(child, "tether ssh");
    release(&stopped, shell);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(255), "{stderr}");
    assert!(stderr.contains("tether: the link hung"), "{stderr}");
}

#[test]
fn a_signal_gives_128_plus_its_number_also_for_root() {
    let Some(f) = start() else { return };
    for login in logins() {
        for (sig, want) in [("KILL", 137), ("SEGV", 139), ("TERM", 143), ("USR2", 140)] {
            let command = format!("kill -{sig} $$");
            let out = f.exec(login, "127.0.0.2", &[], &command);
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(
                out.status.code(),
                Some(want),
                "exec {login:?} {sig}: {stderr}"
            );
            let out = f.exec(login, "127.0.0.2", &["--output", "json"], &command);
            let row: serde_json::Value =
                serde_json::from_str(String::from_utf8_lossy(&out.stdout).trim()).unwrap();
            assert_eq!(row["signal"], sig, "{row}");
            let mut ssh = f.ssh("127.0.0.2", &[]);
            if let Some(user) = login {
                ssh.args(["-l", user]);
            }
            let out = ssh.arg(&command).stdin(Stdio::null()).output().unwrap();
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(
                out.status.code(),
                Some(want),
                "ssh {login:?} {sig}: {stderr}"
            );
        }
    }
}

#[test]
fn cp_on_a_hung_link_ends_and_says_the_link_hung() {
    // The host's SFTP server writes its pid, then waits for a file that
    // never comes: the link is stopped while the copy waits on it.
    let scratch_marks = std::env::temp_dir().join(format!("tether-cp-hung-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch_marks);
    std::fs::create_dir_all(&scratch_marks).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&scratch_marks, std::fs::Permissions::from_mode(0o777)).unwrap();
    let pid_file = scratch_marks.join("sftp.pid");
    let never = scratch_marks.join("never");
    let prefix = format!(
        "echo $$ > {}; while [ ! -e {} ]; do sleep 0.1; done;",
        pid_file.display(),
        never.display()
    );
    let Some(h) = cp_kit::Hosts::start("hung", 1, &|_, root| {
        tether_testkit::sftp_subsystem(root, "", &prefix).unwrap()
    }) else {
        return;
    };
    let src = h.scratch.0.join("payload");
    std::fs::write(&src, b"payload\n").unwrap();
    let child = h
        .command(&ALIVE, &[src.as_os_str(), "node1:payload".as_ref()])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let shell = pid_in(&pid_file);
    let stopped = hang_link_above(shell);
    let out = ends(child, "tether cp");
    release(&stopped, shell);
    let _ = std::fs::remove_dir_all(&scratch_marks);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("node1: the link hung"), "{stderr}");
}

/// ping runs nothing after logging in, so a hung host is met before
/// that: bounded by `ConnectTimeout` (10 s unless set), which says so.
#[test]
fn ping_to_a_hung_host_ends_at_the_connect_timeout() {
    let Some(f) = start() else { return };
    // The listener stopped: the kernel takes the connection, nobody
    // answers it.
    let listener: i32 = std::fs::read_to_string(f.sshd(0).dir().join("sshd.pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let stopped = [listener];
    let _ = nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(listener),
        nix::sys::signal::Signal::SIGSTOP,
    );
    let child = f
        .tether_with(&["ping", "-H", "127.0.0.2"])
        .args(ALIVE)
        .args(["-o", "ConnectTimeout=3"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let out = ends(child, "tether ping");
    common::remote::resume(&stopped);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(255), "{stdout}");
    assert!(
        stdout.contains("127.0.0.2: failed after") && stdout.contains("(connect timeout)"),
        "{stdout}"
    );
}

/// `tether exec -u 5` on a hung link, with the default keepalive (15 ×
/// 3): the command's deadline holds (the stop's confirmation is waited
/// for a bounded grace), well before the keepalive would end it; the host
/// named once, the command not confirmed ended (issue 37).
#[test]
fn exec_with_a_deadline_on_a_hung_link_ends_by_it() {
    let Some(f) = start() else { return };
    let t = token("hungdl");
    let pid_file = f.marks.join(format!("pid_{t}"));
    let command = format!("echo $$ > {}; sleep 120 # {t}", pid_file.display());
    let child = f
        .command(None, "127.0.0.2", &["-u", "5"], &command)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let shell = pid_in(&pid_file);
    let stopped = hang_link_above(shell);
    // Longer than the deadline and the stop's grace, shorter than the
    // keepalive's 60 s: a bound that fails a wait on the keepalive.
    let deadline = Instant::now() + Duration::from_secs(40);
    let mut child = child;
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            release(&stopped, shell);
            panic!("tether exec -u 5: still waiting on the hung link");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = child.wait_with_output().unwrap();
    release(&stopped, shell);
    let stderr = String::from_utf8_lossy(&out.stderr);
    eprintln!("exec -u 5: exit {:?}: {stderr}", out.status.code());
    assert_eq!(out.status.code(), Some(255), "{stderr}");
    assert!(stderr.contains("127.0.0.2: "), "{stderr}");
    assert!(!stderr.contains("127.0.0.2: 127.0.0.2"), "{stderr}");
}
