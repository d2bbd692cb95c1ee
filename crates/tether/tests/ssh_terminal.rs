//! `tether ssh web01` on a terminal, end to end against real sshd, as a
//! person uses it (tether in a PTY of its own, or started by a shell with
//! job control in one): `~^Z` with `fg`, and a dead link noticed by
//! keepalive while nothing is typed.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::{Duration, Instant};

use common::remote::{Remote, start};
use common::{Person, TETHER, wait_for};
use tether_transport::{ExitInfo, TermSize, Terminal};

/// `tether ssh ARGS` in a PTY of its own, as a person runs it.
fn person(r: &Remote, args: &[&str]) -> Person {
    let mut all = vec!["ssh"];
    all.extend_from_slice(args);
    Person::spawn(&all, &r.daemon, &[("HOME", r.home.0.display().to_string())])
}

/// How much the person has seen so far (an offset for [`since`]).
fn mark(p: &Person) -> usize {
    p.seen.lock().unwrap().len()
}

/// What the person saw after offset `from`.
fn since(p: &Person, from: usize) -> String {
    let seen = p.seen.lock().unwrap();
    String::from_utf8_lossy(&seen[from.min(seen.len())..]).into_owned()
}

/// Waits (at most `secs`) until the person saw `what` after `from`;
/// returns what they saw after `from`.
fn sees_after(p: &Person, from: usize, what: &str, secs: u64) -> String {
    let deadline = Instant::now() + Duration::from_secs(secs);
    loop {
        let t = since(p, from);
        if t.contains(what) {
            return t;
        }
        assert!(
            Instant::now() < deadline,
            "never saw {what:?}; exit {:?}; saw {t:?}",
            *p.pty.exit().borrow()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn typed(p: &Person, keys: &str) {
    p.pty.write(keys.as_bytes().to_vec()).unwrap();
}

/// The remote shell runs what is typed (its answer is computed, so the
/// typed line's echo does not count).
fn ready(p: &Person) {
    let from = mark(p);
    typed(p, "echo ready-$((40+2))\r");
    sees_after(p, from, "ready-42", 20);
}

/// The remote terminal's size as `stty size` prints it (`n` tells this
/// question's answer from others').
fn remote_size(p: &Person, n: u32) -> String {
    let from = mark(p);
    typed(p, &format!("echo s{n}:$(stty size):\r"));
    let key = format!("s{n}:");
    wait_for(20, "the answer of stty size", || {
        let t = since(p, from);
        t.match_indices(&key).find_map(|(i, _)| {
            let rest = &t[i + key.len()..];
            let end = rest.find(':')?;
            rest.starts_with(|c: char| c.is_ascii_digit())
                .then(|| rest[..end].to_owned())
        })
    })
}

/// Asks for the remote size until it is `want` (a resize and the keys
/// typed after it travel apart to tether, so the first answer may be
/// older).
fn remote_size_becomes(p: &Person, want: &str) {
    let mut last = String::new();
    for n in 1..=20 {
        last = remote_size(p, n);
        if last == want {
            return;
        }
    }
    panic!("the remote size stayed {last:?}, wanted {want:?}");
}

/// A shell with job control (`shell ARGS`) in the person's PTY, with HOME
/// (and so ~/.ssh/config) set for `r` and its own prompt.
fn outer_shell(r: &Remote, shell: &[&str]) -> Person {
    let p = Person::spawn_program(
        shell[0],
        &shell[1..],
        &r.daemon,
        &[
            ("HOME", r.home.0.display().to_string()),
            ("PS1", "outer> ".to_owned()),
        ],
    );
    p.sees("outer> ");
    p
}

/// In `shell`: `tether ssh web01`, `~^Z` (the shell's prompt, its terminal
/// cooked), a resize while stopped, `fg` (the remote has the new size),
/// and the remote's exit status is tether's.
fn suspend_and_resume(name: &str, shell: &[&str]) {
    let Some(r) = start(name) else {
        return;
    };
    let p = outer_shell(&r, shell);
    let from = mark(&p);
    typed(&p, &format!("{TETHER} ssh web01\r"));
    // tether has the terminal once it asks its capture questions.
    let query = String::from_utf8_lossy(tether_term::capture::ACTIVE_SCREEN_QUERY).into_owned();
    sees_after(&p, from, &query, 20);
    ready(&p);

    let from = mark(&p);
    typed(&p, "\r~\x1a");
    let stopped = sees_after(&p, from, "Stopped", 20);
    assert!(stopped.contains("[suspend tether]"), "{stopped:?}");
    assert!(stopped.contains("\x1b[?25h"), "restored: {stopped:?}");
    // The shell has the terminal back, cooked: line mode and echo.
    let from = mark(&p);
    typed(&p, "stty -a; echo mark-$((3*3))\r");
    let settings = sees_after(&p, from, "mark-9", 20);
    let words: Vec<&str> = settings.split_whitespace().collect();
    for off in ["-icanon", "-echo", "-isig", "-icrnl"] {
        assert!(!words.contains(&off), "{off} after ~^Z: {settings:?}");
    }
    assert!(words.contains(&"icanon"), "{settings:?}");

    // Resized while tether is stopped (the shell gets SIGWINCH, not it):
    // the remote learns the size when tether resumes.
    p.pty
        .resize(TermSize {
            rows: 33,
            cols: 101,
        })
        .unwrap();
    typed(&p, "fg\r");
    remote_size_becomes(&p, "33 101");
    let from = mark(&p);
    typed(&p, "exit 5\r");
    sees_after(&p, from, "outer> ", 20);
    typed(&p, "echo st=$?\r");
    sees_after(&p, from, "st=5", 20);
    typed(&p, "exit\r");
    assert_eq!(p.exit(), ExitInfo::Code(0));
}

#[test]
fn tilde_ctrl_z_suspends_and_fg_resumes_at_the_new_size() {
    suspend_and_resume("ssh-term-suspend", &["bash", "--norc", "--noprofile", "-i"]);
}

/// bash puts its own terminal settings back when a job stops, which
/// would hide tether leaving the terminal raw; dash does not.
#[test]
fn tilde_ctrl_z_leaves_the_terminal_cooked_under_dash() {
    if which("dash").is_none() {
        eprintln!("SKIPPED: dash is not installed");
        return;
    }
    suspend_and_resume("ssh-term-suspend-dash", &["dash", "-i"]);
}

/// `program` on PATH.
fn which(program: &str) -> Option<std::path::PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|d| d.join(program))
        .find(|p| p.is_file())
}

/// A process stopped for a test, killed when the test ends however it
/// ends.
struct Stopped(nix::unistd::Pid);

impl Drop for Stopped {
    fn drop(&mut self) {
        let _ = nix::sys::signal::kill(self.0, nix::sys::signal::Signal::SIGKILL);
    }
}

#[test]
fn a_dead_link_is_noticed_by_keepalive_with_nothing_typed() {
    let Some(r) = start("ssh-term-keepalive") else {
        return;
    };
    let p = person(
        &r,
        &[
            "-o",
            "ServerAliveInterval=1",
            "-o",
            "ServerAliveCountMax=2",
            "web01",
        ],
    );
    ready(&p);
    // The remote shell's parent is the sshd process serving this
    // connection: stopped, it answers nothing, as over a dead link.
    let from = mark(&p);
    typed(&p, "echo pid=$((PPID+0))=\r");
    let pid: i32 = wait_for(20, "the sshd pid", || {
        let t = since(&p, from);
        t.match_indices("pid=").find_map(|(i, _)| {
            let rest = &t[i + 4..];
            rest[..rest.find('=')?].parse().ok()
        })
    });
    let sshd = Stopped(nix::unistd::Pid::from_raw(pid));
    nix::sys::signal::kill(sshd.0, nix::sys::signal::Signal::SIGSTOP).unwrap();
    assert_eq!(p.exit(), ExitInfo::Code(255), "{:?}", p.text());
    p.sees("tether: the connection was lost (web01)");
    assert!(p.text().contains("\x1b[?25h"), "restored: {:?}", p.text());
}
