//! `tether ssh web01` on a terminal, end to end against real sshd, as a
//! person uses it (tether in a PTY of its own, or started by a shell with
//! job control in one): exit statuses, resizes, a large paste, full-screen
//! programs, function keys, the escapes (`~?`, `~~`, `~^Z` with `fg`), and
//! a dead link noticed by keepalive while nothing is typed.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::io::Write;
use std::process::{Command, Stdio};
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

/// A prompt of our own in the remote shell, so its return after a program
/// can be waited for (computed, so the typed line's echo does not count).
fn own_prompt(p: &Person) {
    let from = mark(p);
    typed(p, "PS1='rp$((1))> '\r");
    sees_after(p, from, PROMPT, 20);
}

const PROMPT: &str = "rp1> ";

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

#[test]
fn exit_status_zero_seven_or_a_signal_is_tethers() {
    let Some(r) = start("ssh-term-exit") else {
        return;
    };
    for (line, code) in [("exit 0", 0), ("exit 7", 7)] {
        let p = person(&r, &["web01"]);
        ready(&p);
        typed(&p, &format!("{line}\r"));
        assert_eq!(p.exit(), ExitInfo::Code(code), "{line}: {:?}", p.text());
        assert!(!p.text().contains("tether:"), "{line}: {:?}", p.text());
    }
    // The remote shell killed: 128 + 9, and a line saying what happened.
    let p = person(&r, &["web01"]);
    ready(&p);
    typed(&p, "kill -KILL $$\r");
    assert_eq!(p.exit(), ExitInfo::Code(137));
    p.sees("tether: the remote program ended by signal 9 (web01)");
    // The reader may still be behind the exit: wait for the restore.
    p.sees("\x1b[?25h");
}

#[test]
fn a_resize_reaches_the_remote_terminal() {
    let Some(r) = start("ssh-term-resize") else {
        return;
    };
    let p = person(&r, &["web01"]);
    ready(&p);
    assert_eq!(remote_size(&p, 0), "24 80");
    p.pty
        .resize(TermSize {
            rows: 40,
            cols: 120,
        })
        .unwrap();
    remote_size_becomes(&p, "40 120");
    typed(&p, "exit\r");
    assert_eq!(p.exit(), ExitInfo::Code(0));
}

/// `lines` lines of 76 base64 characters (pseudo-random, the same each
/// run), each ending in `end`.
fn base64_lines(lines: usize, end: &str) -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    let mut out = String::with_capacity(lines * (77 + end.len()));
    for _ in 0..lines {
        for _ in 0..76 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            out.push(char::from(ALPHABET[(x >> 58) as usize]));
        }
        out.push_str(end);
    }
    out
}

fn sha256(data: &[u8]) -> String {
    let mut child = Command::new("sha256sum")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(data).unwrap();
    let out = child.wait_with_output().unwrap();
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .next()
        .unwrap()
        .to_owned()
}

#[test]
fn a_one_mebibyte_paste_arrives_whole() {
    let Some(r) = start("ssh-term-paste") else {
        return;
    };
    // 13,618 lines of 77 bytes: just over 1 MiB. A terminal pastes a
    // newline as CR; the remote terminal turns it back (ICRNL).
    let lines = (1 << 20) / 77 + 1;
    let paste = base64_lines(lines, "\r");
    let want = sha256(base64_lines(lines, "\n").as_bytes());
    let p = person(&r, &["web01"]);
    ready(&p);
    let from = mark(&p);
    // A file the remote user makes (it may not be us).
    typed(
        &p,
        "f=$(mktemp); stty -echo; echo cat-$((1+1)); cat > \"$f\"\r",
    );
    sees_after(&p, from, "cat-2", 20);
    for chunk in paste.as_bytes().chunks(16 * 1024) {
        p.pty.write(chunk.to_vec()).unwrap();
    }
    // Ctrl-D at the start of a line ends cat's input.
    p.pty.write(b"\x04".to_vec()).unwrap();
    let from = mark(&p);
    typed(&p, "stty echo; sha256sum \"$f\"; rm -f \"$f\"\r");
    let seen = wait_for(120, "the remote checksum", || {
        let t = since(&p, from);
        t.split_whitespace()
            .find(|w| w.len() == 64 && w.bytes().all(|b| b.is_ascii_hexdigit()))
            .map(str::to_owned)
    });
    assert_eq!(seen, want, "the paste arrived changed");
    typed(&p, "exit\r");
    assert_eq!(p.exit(), ExitInfo::Code(0));
}

#[test]
fn less_and_vim_exit_back_to_a_working_prompt() {
    let Some(r) = start("ssh-term-fullscreen") else {
        return;
    };
    let p = person(&r, &["web01"]);
    ready(&p);
    own_prompt(&p);
    let from = mark(&p);
    typed(
        &p,
        "f=$(mktemp); seq -f 'line-%03g' 200 > \"$f\"; less \"$f\"\r",
    );
    sees_after(&p, from, "line-020", 20);
    let from = mark(&p);
    typed(&p, "q");
    sees_after(&p, from, PROMPT, 20);
    typed(&p, "echo after-less-$((2+3))\r");
    sees_after(&p, from, "after-less-5", 20);
    let from = mark(&p);
    typed(&p, "vim -u NONE -N \"$f\"\r");
    sees_after(&p, from, "line-020", 20);
    let from = mark(&p);
    typed(&p, ":q!\r");
    sees_after(&p, from, PROMPT, 20);
    typed(&p, "echo after-vim-$((3+4))\r");
    sees_after(&p, from, "after-vim-7", 20);
    typed(&p, "rm -f \"$f\"; exit 3\r");
    assert_eq!(p.exit(), ExitInfo::Code(3));
}

#[test]
fn shift_and_ctrl_f3_reach_the_remote_program_whole() {
    let Some(r) = start("ssh-term-keys") else {
        return;
    };
    let p = person(&r, &["web01"]);
    ready(&p);
    let from = mark(&p);
    // Echo off: only what cat -v prints is seen, not the terminal's echo.
    typed(&p, "stty -echo; echo cat-$((1+1)); cat -v\r");
    sees_after(&p, from, "cat-2", 20);
    // Shift-F3 is `CSI 1;2R`, shaped like a cursor position report.
    typed(&p, "k1\x1b[1;2Rk\r");
    sees_after(&p, from, "k1^[[1;2Rk", 20);
    typed(&p, "k2\x1b[1;5Rk\r");
    sees_after(&p, from, "k2^[[1;5Rk", 20);
    typed(&p, "\x04stty echo\rexit\r");
    assert_eq!(p.exit(), ExitInfo::Code(0));
}

#[test]
fn tilde_question_shows_the_escapes_and_a_doubled_tilde_sends_one() {
    let Some(r) = start("ssh-term-escapes") else {
        return;
    };
    let p = person(&r, &["web01"]);
    ready(&p);
    let from = mark(&p);
    typed(&p, "\r~?");
    let help = sees_after(&p, from, "~?  this help", 20);
    for line in [
        "Supported escape sequences:",
        "~.  disconnect",
        "~^Z suspend tether",
        "~~  send one ~",
    ] {
        assert!(help.contains(line), "no {line:?} in {help:?}");
    }
    // `~~` at the start of a line: one `~` reaches the remote (typed once
    // `read` reads, or the shell's line editor would take it ahead).
    let from = mark(&p);
    typed(&p, "echo go-$((1+1)); read v\r");
    sees_after(&p, from, "go-2", 20);
    typed(&p, "~~z\recho \"[$v]\"\r");
    let seen = sees_after(&p, from, "]\r\n", 20);
    assert!(seen.contains("[~z]"), "{seen:?}");
    typed(&p, "exit\r");
    assert_eq!(p.exit(), ExitInfo::Code(0));
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
    // Said as what it is (issue 36): the link hung, not a plain loss.
    p.sees("tether: the link hung");
    p.sees("(web01)");
    // The reader may still be behind the exit: wait for the restore.
    p.sees("\x1b[?25h");
}
