//! The seed's teardown cases through `tether attach`, each as an exact
//! byte check (the `tether ssh` ones are in `restore_exact.rs`): tether
//! runs in a PTY whose other end plays the person's terminal
//! (`common::outer`), attached to a daemon session where the person types
//! the seed's steps. What tether writes after the session's last bytes
//! must be exactly the restore and the farewell; it starts with the
//! capture's transactions; and the terminal model's keyboard and screen
//! state after tether left is as before.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::outer::{
    ACTIVE_QUERY, HIDDEN_QUERY_FROM_ALT, HIDDEN_QUERY_FROM_MAIN, Model, Outer,
    assert_keyboard_back, show,
};
use common::{Daemon, wait_for};
use tether_transport::ExitInfo;

/// A session `s` that printed `up`, and tether attached to it on a
/// terminal like `model`.
fn attached(d: &Daemon, model: &Model, answers: bool) -> Outer {
    let out = d.run(&["run", "-s", "s", "--norc", "--", "echo up"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let o = Outer::spawn(&["attach", "s"], d, &[], model.clone(), answers);
    o.sees(b"up");
    wait_for(20, "the attachment", || {
        let ls = d.stdout(&["ls", "--json"]);
        ls.contains("\"attached\": 1").then_some(())
    });
    o
}

/// Asserts how tether ended, that it began with `capture` and wrote
/// exactly `restore` after the session's `last` bytes, and that the
/// terminal's keyboard and screen are as before.
fn check(o: &Outer, code: i32, capture: &[&[u8]], last: &[u8], restore: &[&[u8]], before: &Model) {
    let (exit, bytes, after) = o.finish();
    let capture = capture.concat();
    assert!(
        bytes.starts_with(&capture),
        "tether began with {} (wanted {})",
        show(&bytes[..capture.len().min(bytes.len())]),
        show(&capture)
    );
    let at = bytes
        .windows(last.len())
        .rposition(|w| w == last)
        .unwrap_or_else(|| panic!("never wrote {}: {}", show(last), show(&bytes)));
    assert_eq!(
        show(&bytes[at + last.len()..]),
        show(&restore.concat()),
        "what tether wrote after the session's last bytes (left), and what it must write (right)"
    );
    assert_eq!(exit, ExitInfo::Code(code));
    assert_keyboard_back(&after, before);
}

const CAPTURED_MAIN: &[&[u8]] = &[ACTIVE_QUERY, HIDDEN_QUERY_FROM_MAIN];

fn main_screen() -> Model {
    Model::new(0, 0, 0, 0)
}

/// Types `line` and Enter in the attached shell.
fn types(o: &Outer, line: &str) {
    o.write(format!("{line}\r").as_bytes());
}

/// The seed's `printf '\033[>15u'; exit`: the shell ends (its last
/// words are bash's `exit`), attach ends with its status, the push popped.
#[test]
fn kitty_flags_left_on_at_exit_are_popped() {
    let d = Daemon::new("exact-attach-kitty");
    let m = main_screen();
    let o = attached(&d, &m, true);
    types(&o, r"printf '\033[>15u'; exit");
    check(
        &o,
        0,
        CAPTURED_MAIN,
        b"\x1b[>15uexit\r\n",
        &[
            b"\x1b[<1u",
            b"\r\n[the session's shell exited with status 0: s]\r\n",
        ],
        &m,
    );
}

/// Attached from inside an outer full-screen program: its Kitty flags on
/// both screens and modifyOtherKeys come back, the screen returned to
/// with mode 47.
#[test]
fn an_outer_tui_gets_its_keyboard_back() {
    let d = Daemon::new("exact-attach-tui");
    let m = Model::new(1049, 1, 5, 2);
    let o = attached(&d, &m, true);
    assert!(
        o.bytes().starts_with(
            &[
                ACTIVE_QUERY,
                HIDDEN_QUERY_FROM_ALT,
                b"\x1b[=0;1u\x1b7\x1b[?47l\x1b[=0;1u\x1b[?47h\x1b8\x1b[>4;0m"
            ]
            .concat()
        )
    );
    types(&o, r"printf '\033[=31u'; exit 3");
    check(
        &o,
        3,
        &[ACTIVE_QUERY, HIDDEN_QUERY_FROM_ALT],
        b"\x1b[=31uexit\r\n",
        &[
            b"\x1b[=5;1u\x1b7\x1b[?47l\x1b[=1;1u\x1b[?47h\x1b8\x1b[>4;2m",
            b"\r\n[the session's shell exited with status 3: s]\r\n",
        ],
        &m,
    );
}

/// Inside an outer full-screen program the session leaves an alternate
/// screen of its own with 1049l: mode 47 returns to the outer one.
#[test]
fn a_session_1049l_inside_an_outer_tui_returns_with_mode_47() {
    let d = Daemon::new("exact-attach-1049l");
    let m = Model::new(1049, 0, 0, 0);
    let o = attached(&d, &m, true);
    types(&o, r"printf '\033[?1049h\033[?1049lEND'; exit");
    check(
        &o,
        0,
        &[ACTIVE_QUERY, HIDDEN_QUERY_FROM_ALT],
        b"\x1b[?1049lENDexit\r\n",
        &[
            b"\x1b[?47h",
            b"\r\n[the session's shell exited with status 0: s]\r\n",
        ],
        &m,
    );
}

/// The session enters a 1049 alternate screen and pushes Kitty flags
/// there, then the attachment's transport dies (the daemon SIGKILLed).
#[test]
fn transport_loss_in_an_alternate_screen() {
    let d = Daemon::new("exact-attach-loss");
    let m = main_screen();
    let o = attached(&d, &m, true);
    types(&o, r"printf '\033[?1049h\033[>15uREADY'; cat");
    o.sees(b"\x1b[>15uREADY");
    let status = d.stdout(&["daemon", "status"]);
    let pid: i32 = status
        .split("(pid ")
        .nth(1)
        .and_then(|s| s.split(')').next())
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no pid in {status:?}"));
    common::sigkill(pid);
    check(
        &o,
        1,
        CAPTURED_MAIN,
        b"\x1b[>15uREADY",
        &[
            b"\x1b[?1049l\x1b7\x1b[?47h\x1b[<1u\x1b[?47l\x1b8",
            b"\r\n[the daemon went away: s]\r\n",
        ],
        &m,
    );
}

/// A terminal that answers nothing: the ordinary-shell fallback.
#[test]
fn capture_timeout_restores_the_ordinary_shell_baseline() {
    let d = Daemon::new("exact-attach-silent");
    let m = main_screen();
    let o = attached(&d, &m, false);
    types(&o, r"printf '\033[>15u\033[?2004hEND'; exit");
    check(
        &o,
        0,
        &[ACTIVE_QUERY],
        b"\x1b[>15u\x1b[?2004hENDexit\r\n",
        &[
            b"\x1b[?1;5;9;1000;1002;1003;1004;1005;1006;1015;2004l\x1b[?7h\x1b[4l",
            b"\x1b[0m\x1b(B\x1b)B\x0f\x1b>\x1b[?25h\x1b[0 q",
            b"\x1b[<1u\x1b[=0;1u\x1b7\x1b[?47h\x1b[=0;1u\x1b[?47l\x1b8\x1b[>4;0m",
            b"\r\n[the session's shell exited with status 0: s]\r\n",
        ],
        &m,
    );
}

/// The session sets modes, prints READY and waits in `cat`.
const BUSY: &str = r"printf '\033[?1049h\033[?1000h\033[?25lREADY'; cat";
const BUSY_LAST: &[u8] = b"\x1b[?25lREADY";

#[test]
fn sigterm_restores_and_detaches() {
    let d = Daemon::new("exact-attach-term");
    let m = main_screen();
    let o = attached(&d, &m, true);
    types(&o, BUSY);
    o.sees(BUSY_LAST);
    o.signal("TERM");
    check(
        &o,
        143,
        CAPTURED_MAIN,
        BUSY_LAST,
        &[
            b"\x1b[?1000l\x1b[?1049l\x1b[?25h",
            b"\r\n[terminated; detached: s]\r\n",
        ],
        &m,
    );
}

#[test]
fn sighup_restores_and_detaches() {
    let d = Daemon::new("exact-attach-hup");
    let m = main_screen();
    let o = attached(&d, &m, true);
    types(&o, r"printf '\033[?2004h\033[>1uREADY'; cat");
    o.sees(b"\x1b[>1uREADY");
    o.signal("HUP");
    check(
        &o,
        129,
        CAPTURED_MAIN,
        b"\x1b[>1uREADY",
        &[b"\x1b[?2004l\x1b[<1u", b"\r\n[hung up; detached: s]\r\n"],
        &m,
    );
}

#[test]
fn tilde_dot_restores_and_detaches() {
    let d = Daemon::new("exact-attach-tilde");
    let m = main_screen();
    let o = attached(&d, &m, true);
    types(&o, r"printf '\033[?1h\033=\033[4hREADY'; cat");
    o.sees(b"\x1b[4hREADY");
    // The last key typed was Enter: a line starts.
    o.write(b"~.");
    check(
        &o,
        0,
        CAPTURED_MAIN,
        b"\x1b[4hREADY",
        &[b"\x1b[?1l\x1b[4l\x1b>", b"\r\n[detached: s]\r\n"],
        &m,
    );
}
