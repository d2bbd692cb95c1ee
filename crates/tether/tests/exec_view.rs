//! The live view of `tether exec` (`--tui`) against real sshd, in the
//! outer-terminal harness (`common::outer`: tether in a PTY whose other
//! end plays the person's terminal, answering the capture), its screen
//! read through a vt100 emulator as text:
//!
//! - the first frames: the tally, each state's count and hosts folded;
//!   a host selected and its output followed; one host cancelled (its
//!   state and final line say so, the others go on); `q` then `y`
//!   cancels the rest; the output printed on the main screen after; the
//!   terminal's screen, cursor and keyboard exactly as before;
//!   a resize draws the view anew at the new size;
//! - SIGTERM and SIGHUP mid-run: every host cancelled, the terminal put
//!   back exactly, 143 and 129;
//! - a run that ends by itself inside an outer full-screen program: its
//!   alternate screen, Kitty flags and modifyOtherKeys back;
//! - a key's passphrase asked mid-run: the view lends the terminal (put
//!   back, asked without echo, taken again);
//! - `--tui` without a terminal on stdout: an error, nothing runs;
//! - `NO_COLOR`: not one colour written.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::num::NonZeroU16;

use common::outer::{
    ACTIVE_QUERY, HIDDEN_QUERY_FROM_ALT, HIDDEN_QUERY_FROM_MAIN, Model, Outer,
    assert_keyboard_back, show,
};
use common::remote::{Remote, start_n};
use tether_transport::{ExitInfo, Terminal};

/// Prints which node it runs on (its sshd's address); node1 ends at once,
/// the others run for a minute unless stopped.
const COMMAND: &str =
    r#"set -- $SSH_CONNECTION; echo "on $3"; [ "$3" = 127.0.0.2 ] && exit 0; sleep 60; echo late"#;

fn exec_tui(r: &Remote, hosts: &str, env: &[(&str, String)], command: &str) -> Outer {
    let mut all = vec![("HOME", r.home.0.display().to_string())];
    all.extend(env.iter().cloned());
    Outer::spawn(
        &["exec", "--tui", "-H", hosts, "--", command],
        &r.daemon,
        &all,
        Model::new(0, 0, 0, 0),
        true,
    )
}

/// The screen after `bytes`, as an 80x24 terminal shows it.
fn screen(bytes: &[u8]) -> vt100::Parser {
    sized(bytes, 24, 80)
}

/// The screen after `bytes` on a terminal of `rows` x `cols`.
fn sized(bytes: &[u8], rows: u16, cols: u16) -> vt100::Parser {
    let mut p = vt100::Parser::new(
        NonZeroU16::new(rows).unwrap(),
        NonZeroU16::new(cols).unwrap(),
        0,
    );
    p.process(bytes);
    p
}

/// Waits until the screen shows every one of `what`; returns its text.
fn shows(o: &Outer, what: &[&str]) -> String {
    let mut last = String::new();
    let found = (0..2000).find_map(|_| {
        last = screen(&o.bytes()).screen().contents();
        if what.iter().all(|w| last.contains(w)) {
            return Some(last.clone());
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
        None
    });
    found.unwrap_or_else(|| panic!("the screen never showed {what:?}; it shows:\n{last}"))
}

/// The terminal's modes after tether, as the emulator has them: the main
/// screen, the cursor shown, no keypad or cursor-key mode, no mouse, no
/// bracketed paste.
fn assert_modes_back(bytes: &[u8]) {
    let p = screen(bytes);
    let s = p.screen();
    assert!(!s.alternate_screen(), "left on the alternate screen");
    assert!(!s.hide_cursor(), "the cursor left hidden");
    assert!(!s.application_keypad() && !s.application_cursor());
    assert!(!s.bracketed_paste());
    assert_eq!(s.mouse_protocol_mode(), vt100::MouseProtocolMode::None);
}

/// The bytes from the capture to the view's alternate screen: the
/// capture's two transactions first, nothing before.
fn assert_capture_first(bytes: &[u8]) {
    assert!(
        bytes.starts_with(&[ACTIVE_QUERY, HIDDEN_QUERY_FROM_MAIN].concat()),
        "{}",
        show(&bytes[..bytes.len().min(200)])
    );
}

/// Asserts the view's way out is exactly the restore: ratatui's last
/// bytes show the cursor, the restore plan leaves the alternate screen
/// (the only mode the view changed that its frames did not put back), and
/// nothing else comes before the printed output, which begins `first`.
fn assert_exact_restore(bytes: &[u8], first: &str) {
    let entered = bytes.windows(8).filter(|w| w == b"\x1b[?1049h").count();
    let left = bytes.windows(8).filter(|w| w == b"\x1b[?1049l").count();
    assert_eq!((entered, left), (1, 1), "{}", show(bytes));
    let at = bytes
        .windows(8)
        .position(|w| w == b"\x1b[?1049l")
        .expect("the alternate screen left");
    let want = [b"\x1b[?25h\x1b[?1049l".as_slice(), first.as_bytes()].concat();
    let from = at + 8 - 14;
    assert_eq!(
        show(&bytes[from..(from + want.len()).min(bytes.len())]),
        show(&want),
        "the restore and the output after it"
    );
}

#[test]
fn first_frames_select_follow_cancel_one_and_quit() {
    let Some(r) = start_n("exec-view", 4) else {
        return;
    };
    let o = exec_tui(&r, "node[1-4]", &[], COMMAND);
    let first = shows(
        &o,
        &[
            "[1/4 done] 0 failed, 3 running",
            "running        3  node[2-4]",
            "done           1  node1",
        ],
    );
    eprintln!("first frame:\n{first}");
    let lines: Vec<&str> = first.lines().collect();
    assert!(
        lines[0].starts_with("[1/4 done] 0 failed, 3 running  tether exec: set -- "),
        "{first}"
    );
    assert_eq!(lines[1].trim_end(), "waiting        0");
    assert_eq!(lines[4].trim_end(), "done           1  node1");
    assert!(first.contains("> node1 done"), "{first}");
    assert!(
        first.contains("on 127.0.0.2"),
        "node1's output, selected first: {first}"
    );
    assert_eq!(
        lines.last().map(|l| l.trim_end()),
        Some("↑↓ select  Tab groups  Enter follow  PgUp/Dn  d diff  c cancel host  C/q cancel"),
        "the keys in the footer, whole"
    );
    // Colours on, as NO_COLOR is not set.
    assert!(o.bytes().windows(5).any(|w| w == b"\x1b[38;"), "a colour");

    // A larger terminal: the view drawn anew to its size (the bytes since
    // the resize, on a 30x100 screen: the box reaches its last column, the
    // footer its last row).
    let from = o.bytes().len();
    o.pty
        .resize(tether_transport::TermSize {
            rows: 30,
            cols: 100,
        })
        .unwrap();
    let redrawn = (0..2000)
        .find_map(|_| {
            let b = o.bytes();
            let p = sized(&b[from..], 30, 100);
            let rows: Vec<String> = p.screen().rows(0, 100).collect();
            if rows[29].starts_with("↑↓ select") && rows[7].ends_with('┐') {
                return Some(rows);
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
            None
        })
        .expect("the view redrawn at 30x100");
    assert_eq!(redrawn[7].chars().count(), 100, "{redrawn:?}");
    o.pty
        .resize(tether_transport::TermSize { rows: 24, cols: 80 })
        .unwrap();

    // Down to node2: its output, followed.
    o.write(b"\x1b[B");
    let second = shows(
        &o,
        &["node2 (following)", "on 127.0.0.3", "> node2 running"],
    );
    eprintln!("node2 selected:\n{second}");

    // Cancel node2 alone.
    o.write(b"c");
    shows(&o, &["cancel node2? y/n"]);
    o.write(b"y");
    let cancelled = shows(
        &o,
        &["cancelled      1  node2", "running        2  node[3-4]"],
    );
    eprintln!("node2 cancelled:\n{cancelled}");
    assert!(cancelled.contains("[cancelled (this host)"), "{cancelled}");

    // Groups: node1's and node2's results apart.
    o.write(b"\t");
    shows(
        &o,
        &[
            "groups (Tab: hosts)",
            "node1 (1) exit 0",
            "node2 (1) cancelled",
        ],
    );

    // q asks, y cancels the rest; the run ends as a double Ctrl-C ends it.
    o.write(b"q");
    shows(
        &o,
        &["cancel every host still running or waiting, and quit? y/n"],
    );
    o.write(b"y");
    let (exit, bytes, after) = o.finish();
    assert_eq!(exit, ExitInfo::Code(130), "{}", show(&bytes));
    assert_capture_first(&bytes);
    assert_keyboard_back(&after, &Model::new(0, 0, 0, 0));
    assert_modes_back(&bytes);
    // The restore, then the output as stream prints it, host by host.
    assert_exact_restore(&bytes, "node1: on 127.0.0.2\r\n");
    let printed = screen(&bytes).screen().contents();
    eprintln!("after:\n{printed}");
    for want in [
        "node1: on 127.0.0.2",
        "node2: on 127.0.0.3",
        "tether: node2: cancelled (this host)",
        "tether: node3: cancelled (interrupted)",
    ] {
        assert!(printed.contains(want), "{want:?} not in:\n{printed}");
    }
    assert!(!printed.contains("late"), "a cancelled command ran on");
}

#[test]
fn sighup_mid_run_cancels_and_puts_the_terminal_back() {
    let Some(r) = start_n("exec-view-hup", 2) else {
        return;
    };
    let o = exec_tui(&r, "node[1-2]", &[], "echo started; sleep 60");
    shows(&o, &["running        2  node[1-2]", "│started"]);
    o.signal("HUP");
    let (exit, bytes, after) = o.finish();
    assert_eq!(exit, ExitInfo::Code(129), "{}", show(&bytes));
    assert_keyboard_back(&after, &Model::new(0, 0, 0, 0));
    assert_modes_back(&bytes);
    assert_exact_restore(&bytes, "node1: started\r\n");
}

/// A run that ends by itself, started inside an outer full-screen
/// program (its alternate screen, its Kitty flags on both screens,
/// modifyOtherKeys 2): the view leaves, and that program's screen and
/// keyboard are as they were; `--output gather` prints after.
#[test]
fn a_run_over_gives_an_outer_program_its_screen_and_keyboard_back() {
    let Some(r) = start_n("exec-view-outer", 3) else {
        return;
    };
    let before = Model::new(1049, 1, 5, 2);
    let o = Outer::spawn(
        &[
            "exec",
            "--tui",
            "--output",
            "gather",
            "-H",
            "node[1-3]",
            "--",
            "echo same",
        ],
        &r.daemon,
        &[("HOME", r.home.0.display().to_string())],
        before.clone(),
        true,
    );
    let (exit, bytes, after) = o.finish();
    assert_eq!(exit, ExitInfo::Code(0), "{}", show(&bytes));
    assert!(bytes.starts_with(&[ACTIVE_QUERY, HIDDEN_QUERY_FROM_ALT].concat()));
    assert!(after.alt, "the outer program's alternate screen");
    assert_keyboard_back(&after, &before);
    let text = String::from_utf8_lossy(&bytes);
    let at = text.rfind("node[1-3] (3)").expect("the gathered output");
    assert!(text[at..].contains("same"), "{text}");
}

#[test]
fn sigterm_mid_run_cancels_and_puts_the_terminal_back() {
    let Some(r) = start_n("exec-view-term", 2) else {
        return;
    };
    let o = exec_tui(&r, "node[1-2]", &[], "echo started; sleep 60");
    // Both running, node1's first line on screen (it is selected).
    shows(&o, &["running        2  node[1-2]", "│started"]);
    o.signal("TERM");
    let (exit, bytes, after) = o.finish();
    assert_eq!(exit, ExitInfo::Code(143), "{}", show(&bytes));
    assert_capture_first(&bytes);
    assert_keyboard_back(&after, &Model::new(0, 0, 0, 0));
    assert_modes_back(&bytes);
    assert_exact_restore(&bytes, "node1: started\r\n");
    let printed = screen(&bytes).screen().contents();
    assert!(
        printed.contains("tether: node1: cancelled (interrupted)"),
        "{printed}"
    );
    assert!(
        printed.contains("tether: node2: cancelled (interrupted)"),
        "{printed}"
    );
}

#[test]
fn no_color_writes_no_colour() {
    let Some(r) = start_n("exec-view-nocolor", 2) else {
        return;
    };
    let o = exec_tui(&r, "node[1-2]", &[("NO_COLOR", "1".into())], COMMAND);
    shows(&o, &["done           1  node1", "running        1  node2"]);
    o.write(b"C");
    shows(&o, &["y/n"]);
    o.write(b"y");
    let (exit, bytes, after) = o.finish();
    assert_eq!(exit, ExitInfo::Code(130));
    assert!(
        !bytes
            .windows(5)
            .any(|w| w == b"\x1b[38;" || w == b"\x1b[48;"),
        "a colour written: {}",
        show(&bytes)
    );
    assert_keyboard_back(&after, &Model::new(0, 0, 0, 0));
    assert_modes_back(&bytes);
    assert_exact_restore(&bytes, "node1: on 127.0.0.2\r\n");
}

#[test]
fn tui_without_a_terminal_is_an_error_and_runs_nothing() {
    let d = common::Daemon::new("exec-view-pipe");
    let out = d
        .cmd(&["exec", "--tui", "-H", "node[1-3]", "--", "touch /tmp/never"])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--tui needs a terminal on stdin and stdout"),
        "{err}"
    );
    assert!(out.stdout.is_empty());
    // --tui and --no-tui together: clap's usage error.
    let out = d
        .cmd(&["exec", "--tui", "--no-tui", "-H", "n1", "--", "true"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn a_passphrase_asked_mid_run_borrows_the_terminal_and_gives_it_back() {
    if let Some(why) = tether_testkit::unavailable() {
        eprintln!("SKIPPED: {why}");
        return;
    }
    let scratch = tether_testkit::Scratch::new("exec-view-passphrase");
    let key = tether_testkit::keygen(&scratch.0.join("id_ed25519"), "open sesame").unwrap();
    let (port, _sshd, known) =
        tether_testkit::fleet(&["127.0.0.32", "127.0.0.33"], &[&key.with_extension("pub")])
            .unwrap();
    let kh = scratch.0.join("known_hosts");
    std::fs::write(&kh, known).unwrap();
    let d = common::Daemon::new("exec-view-passphrase");
    let (port, key, kh) = (
        port.to_string(),
        key.display().to_string(),
        format!("UserKnownHostsFile={}", kh.display()),
    );
    let o = Outer::spawn(
        &[
            "exec",
            "--tui",
            "-F",
            "none",
            "-H",
            "127.0.0.[32-33]",
            "-p",
            &port,
            "-i",
            &key,
            "-o",
            &kh,
            "-o",
            "IdentityAgent=none",
            "--",
            "echo unlocked",
        ],
        &d,
        &[("USER", tether_testkit::user())],
        Model::new(0, 0, 0, 0),
        true,
    );
    o.sees(b"Enter passphrase for key");
    // Asked on the person's own screen: the view gave the terminal back.
    let during = o.bytes();
    assert!(
        !screen(&during).screen().alternate_screen(),
        "{}",
        show(&during)
    );
    assert_modes_back(&during);
    o.write(b"open sesame\r");
    let (exit, bytes, after) = o.finish();
    assert_eq!(exit, ExitInfo::Code(0), "{}", show(&bytes));
    assert_capture_first(&bytes);
    let count = |what: &[u8]| bytes.windows(what.len()).filter(|w| *w == what).count();
    // Entered, lent for the question, taken again, left.
    assert_eq!((count(b"\x1b[?1049h"), count(b"\x1b[?1049l")), (2, 2));
    assert_eq!(count(b"Enter passphrase"), 1, "asked once for both hosts");
    assert_eq!(count(b"open sesame"), 0, "the passphrase echoed");
    assert_keyboard_back(&after, &Model::new(0, 0, 0, 0));
    assert_modes_back(&bytes);
    let printed = screen(&bytes).screen().contents();
    assert!(
        printed.contains("127.0.0.32: unlocked") && printed.contains("127.0.0.33: unlocked"),
        "{printed}"
    );
}
