//! A closed stdout ends `tether exec` and `tether ssh` as it ends ssh
//! (issue 23, item 4): the remote command is stopped, tether exits 255
//! with one line on stderr (`tether ssh`: the command's own exit code
//! when it ended by itself, as ssh, issue 24); finite output cut short is said, not dropped
//! in silence. And flags before `--` are tether's or an error, never the
//! remote command (item 8). Against real sshd on 127.0.0.2–3.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod exec_kit;

use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use exec_kit::{start, token, wait};

/// Starts `c` with its stdout and stderr piped; reads `lines` lines of
/// stdout, then closes it (as `| head -N` does); returns the exit code
/// (within 30 s, else the test fails) and stderr.
fn head(c: Command, lines: usize) -> (Option<i32>, String) {
    head_when(c, lines, || true)
}

/// [`head`], closing stdout only once `ready` holds.
fn head_when(mut c: Command, lines: usize, ready: impl FnMut() -> bool) -> (Option<i32>, String) {
    let mut child = c
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = child.stderr.take().unwrap();
    let err = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err.read_to_string(&mut s);
        s
    });
    {
        let mut out = BufReader::new(child.stdout.take().unwrap());
        for _ in 0..lines {
            let mut l = String::new();
            out.read_line(&mut l).unwrap();
        }
        wait(ready, "the moment to close stdout");
    } // closed here
    let code = wait_exit(&mut child);
    (code, err.join().unwrap())
}

fn wait_exit(child: &mut Child) -> Option<i32> {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Some(s) = child.try_wait().unwrap() {
            return s.code();
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("tether did not end within 30 s of its stdout closing");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// True while the remote `yes TOKEN` runs (not tether, whose own
/// arguments name the token too).
fn remote_yes(token: &str) -> bool {
    std::fs::read_dir("/proc").unwrap().flatten().any(|e| {
        std::fs::read(e.path().join("cmdline")).is_ok_and(|c| {
            let mut args = c.split(|b| *b == 0);
            args.next() == Some(b"yes") && args.next() == Some(token.as_bytes())
        })
    })
}

fn gone(token: &str, what: &str) {
    wait(
        || !exec_kit::running_with(token),
        &format!("{what}: the remote `yes` to end"),
    );
}

#[test]
fn exec_ends_when_its_stdout_closes_and_stops_the_remote_command() {
    let Some(f) = start() else { return };
    let t = token("yesx");
    let (code, err) = head(f.command(None, "127.0.0.2", &[], &format!("yes {t}")), 1);
    assert_eq!(code, Some(255), "{err}");
    assert_eq!(
        err.lines().filter(|l| l.contains("stdout closed")).count(),
        1,
        "one line: {err}"
    );
    assert!(
        err.contains("asked every host still running the command to stop; each confirmed its end"),
        "{err}"
    );
    gone(&t, "exec");

    // gather prints only at the end: its reader gone, it stops all the same.
    let t = token("yesg");
    let (code, err) = head_when(
        f.command(
            None,
            "127.0.0.2",
            &["--output", "gather"],
            &format!("yes {t}"),
        ),
        0,
        || remote_yes(&t),
    );
    assert_eq!(code, Some(255), "{err}");
    assert!(err.contains("stdout closed"), "{err}");
    gone(&t, "exec --output gather");

    // Finite output cut short: said, with 255.
    let (code, err) = head(f.command(None, "127.0.0.[2-3]", &[], "seq 1 200000"), 1);
    assert_eq!(code, Some(255), "{err}");
    assert!(err.contains("stdout closed"), "{err}");
}

#[test]
fn ssh_ends_when_its_stdout_closes_and_stops_the_remote_command() {
    let Some(f) = start() else { return };
    let t = token("yess");
    let (code, err) = head(f.ssh("127.0.0.2", &["yes", &t]), 2);
    assert_eq!(code, Some(255), "{err}");
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    assert!(
        err.contains("stdout closed; asked the remote command to stop; the host confirmed its end"),
        "{err}"
    );
    gone(&t, "ssh");

    // Finite output cut short: said; 255 when the stop ended it, seq's own
    // 0 when it had finished by itself (as ssh returns the status).
    let (code, err) = head(f.ssh("127.0.0.2", &["seq", "1", "200000"]), 1);
    assert!(matches!(code, Some(0 | 255)), "{code:?} {err}");
    assert!(err.contains("stdout closed"), "{err}");

    // A command that ended by itself with a plain exit code (before the
    // stop, or despite it: it ignores TERM): that code, as ssh returns it.
    let (code, err) = head(f.ssh("127.0.0.2", &["trap '' TERM; printf x; exit 3"]), 0);
    assert_eq!(code, Some(3), "{err}");
    assert!(err.contains("stdout closed"), "{err}");
}

/// Flags tether does not know before `--` (`-Y n2`, `-Q`; `-x` and `-v`
/// were such flags until they became exec's own) were sent to the hosts
/// as the command; now they are bad usage and nothing runs. Words after
/// the command's first word stay the command's, with or without `--`.
#[test]
fn unknown_flags_before_the_command_are_refused_and_run_nothing() {
    let Some(f) = start() else { return };
    let t = token("flag");
    let touch = format!("touch {}/ran_{t}", f.marks.display());
    for bad in [&["-Y", "127.0.0.3"][..], &["-Q"], &["--no-such-flag"]] {
        let mut args = bad.to_vec();
        args.extend(["--", touch.as_str()]);
        let out = f.exec_args("127.0.0.[2-3]", &args).output().unwrap();
        // (A remote dash also exits 2 on `-x …`: tether's own refusal is
        // told by its message.)
        assert_eq!(out.status.code(), Some(2), "exec {bad:?}: {out:?}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("unexpected argument"),
            "exec {bad:?}: {out:?}"
        );
    }
    let out = f
        .ssh("127.0.0.2", &["-Z", touch.as_str()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "ssh -Z: {out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("unexpected argument"),
        "ssh -Z: {out:?}"
    );
    // `tether run` the same way (here without a daemon: --once).
    let dir = tether_testkit::Scratch::new("exec-pipes-run");
    let out = Command::new(exec_kit::TETHER)
        .env("TETHER_DIR", &dir.0)
        .args(["run", "--once", "-x", touch.as_str()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "run -x: {out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("unexpected argument"),
        "run -x: {out:?}"
    );
    assert!(
        std::fs::read_dir(&f.marks).unwrap().next().is_none(),
        "a flag became a command"
    );
    // The command's own flags still reach it.
    let out = f
        .exec_args("127.0.0.2", &["echo", "-n", "hi", "-x"])
        .output()
        .unwrap();
    assert_eq!(
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).as_ref()
        ),
        (Some(0), "127.0.0.2: hi -x\n"),
        "{out:?}"
    );
    let out = f
        .exec_args("127.0.0.2", &["--", "echo", "-n", "hi"])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "127.0.0.2: hi\n");
    let out = f.ssh("127.0.0.2", &["echo", "-n", "hi"]).output().unwrap();
    assert_eq!(
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).as_ref()
        ),
        (Some(0), "hi"),
        "{out:?}"
    );
}
