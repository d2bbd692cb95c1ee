//! The seed's teardown cases, each as an exact byte check: `tether ssh`
//! against real sshd runs in a PTY whose other end plays the person's
//! terminal (`common::outer`: it answers the capture's queries from a
//! model, or stays silent), and every byte tether writes is compared with
//! what it must write: the capture's transactions, the setup, the remote
//! program's output, then the restore and the farewell, nothing else. The
//! terminal model's keyboard and screen state after tether left is
//! checked too. The same cases through `tether attach` are in
//! `restore_exact_attach.rs`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::outer::{
    ACTIVE_QUERY, HIDDEN_QUERY_FROM_ALT, HIDDEN_QUERY_FROM_MAIN, Model, Outer,
    assert_keyboard_back, show,
};
use common::remote::{Remote, start};
use tether_transport::ExitInfo;

/// `tether ssh ARGS` on a terminal like `model`.
fn ssh(r: &Remote, args: &[&str], model: &Model, answers: bool) -> Outer {
    let mut all = vec!["ssh"];
    all.extend_from_slice(args);
    Outer::spawn(
        &all,
        &r.daemon,
        &[("HOME", r.home.0.display().to_string())],
        model.clone(),
        answers,
    )
}

/// Asserts how tether ended, every byte it wrote, and that the terminal's
/// keyboard and screen are as before.
fn check(o: &Outer, code: i32, want: &[&[u8]], before: &Model) {
    let (exit, bytes, after) = o.finish();
    let want = want.concat();
    assert_eq!(
        show(&bytes),
        show(&want),
        "every byte tether wrote (left), and what it must write (right)"
    );
    assert_eq!(exit, ExitInfo::Code(code));
    assert_keyboard_back(&after, before);
}

fn main_screen() -> Model {
    Model::new(0, 0, 0, 0)
}

/// Started on the main screen; the remote leaves every Kitty enhancement
/// on as it exits (the seed's `printf '\033[>15u'; exit`): one pop.
#[test]
fn kitty_flags_left_on_at_exit_are_popped() {
    let Some(r) = start("exact-kitty") else {
        return;
    };
    let m = main_screen();
    let o = ssh(&r, &["-t", "web01", r"printf '\033[>15u'"], &m, true);
    check(
        &o,
        0,
        &[
            ACTIVE_QUERY,
            HIDDEN_QUERY_FROM_MAIN,
            b"\x1b[>15u",
            b"\x1b[<1u",
        ],
        &m,
    );
}

/// The seed's step as typed at the login shell: the tail after the
/// remote's last bytes is the pop, and the keyboard is back.
#[test]
fn kitty_flags_left_on_by_the_login_shell() {
    let Some(r) = start("exact-login") else {
        return;
    };
    let m = main_screen();
    let o = ssh(&r, &["web01"], &m, true);
    // (Typed once tether's terminal is raw, or the PTY would echo it.)
    o.sees(HIDDEN_QUERY_FROM_MAIN);
    o.write(b"printf '\\033[>15u'; exit\r");
    let (exit, bytes, after) = o.finish();
    assert_eq!(exit, ExitInfo::Code(0));
    assert!(bytes.starts_with(&[ACTIVE_QUERY, HIDDEN_QUERY_FROM_MAIN].concat()));
    let at = bytes
        .windows(6)
        .rposition(|w| w == b"\x1b[>15u")
        .expect("the remote's push");
    let tail = &bytes[at + 6..];
    assert!(
        tail.ends_with(b"\x1b[<1u"),
        "ends with the pop: {}",
        show(tail)
    );
    assert_eq!(after, m);
}

/// Started inside an outer full-screen program (its alternate screen,
/// its own Kitty flags on both screens and modifyOtherKeys 2): both
/// screens are set to the legacy baseline with mode 47 (never 1049), the
/// remote sets other flags, and each screen's flags and the level come
/// back.
#[test]
fn an_outer_tui_gets_its_keyboard_back() {
    let Some(r) = start("exact-tui") else {
        return;
    };
    let m = Model::new(1049, 1, 5, 2);
    let o = ssh(&r, &["-t", "web01", r"printf '\033[=31u'"], &m, true);
    check(
        &o,
        0,
        &[
            ACTIVE_QUERY,
            HIDDEN_QUERY_FROM_ALT,
            b"\x1b[=0;1u\x1b7\x1b[?47l\x1b[=0;1u\x1b[?47h\x1b8\x1b[>4;0m",
            b"\x1b[=31u",
            b"\x1b[=5;1u\x1b7\x1b[?47l\x1b[=1;1u\x1b[?47h\x1b8\x1b[>4;2m",
        ],
        &m,
    );
}

/// Inside an outer full-screen program the remote leaves the alternate
/// screen with 1049l: mode 47 returns to it, without clearing it.
#[test]
fn a_remote_1049l_inside_an_outer_tui_returns_with_mode_47() {
    let Some(r) = start("exact-1049l") else {
        return;
    };
    let m = Model::new(1049, 0, 0, 0);
    let o = ssh(&r, &["-t", "web01", r"printf '\033[?1049l'"], &m, true);
    check(
        &o,
        0,
        &[
            ACTIVE_QUERY,
            HIDDEN_QUERY_FROM_ALT,
            b"\x1b[?1049l",
            b"\x1b[?47h",
        ],
        &m,
    );
}

/// The remote program's process id, from `PID=N.` in what tether wrote.
fn remote_pid(o: &Outer) -> i32 {
    o.sees(b".");
    let bytes = o.bytes();
    let text = String::from_utf8_lossy(&bytes);
    let after = text.split("PID=").nth(1).expect("PID= in the output");
    after.split('.').next().unwrap().parse().unwrap()
}

/// Started on the main screen, the remote enters a 1049 alternate screen
/// and pushes Kitty flags there, then the transport dies (the sshd
/// serving it killed): 1049l, then the alternate screen's push popped.
#[test]
fn transport_loss_in_a_remote_alternate_screen() {
    let Some(r) = start("exact-loss") else {
        return;
    };
    let m = main_screen();
    let o = ssh(
        &r,
        &[
            "-t",
            "web01",
            r"printf '\033[?1049h\033[>15uPID=%s.' $PPID; exec cat",
        ],
        &m,
        true,
    );
    let pid = remote_pid(&o);
    let remote = format!("\x1b[?1049h\x1b[>15uPID={pid}.");
    common::sigkill(pid);
    check(
        &o,
        255,
        &[
            ACTIVE_QUERY,
            HIDDEN_QUERY_FROM_MAIN,
            remote.as_bytes(),
            b"\x1b[?1049l\x1b7\x1b[?47h\x1b[<1u\x1b[?47l\x1b8",
            b"\r\ntether: the connection was lost (web01)\r\n",
        ],
        &m,
    );
}

/// A terminal that answers nothing: the capture gives up after its
/// deadline, and the restore is the ordinary-shell fallback, every mode
/// reset whether or not the remote changed it.
#[test]
fn capture_timeout_restores_the_ordinary_shell_baseline() {
    let Some(r) = start("exact-silent") else {
        return;
    };
    let m = main_screen();
    let o = ssh(
        &r,
        &["-t", "web01", r"printf '\033[>15u\033[?2004h'"],
        &m,
        false,
    );
    check(
        &o,
        0,
        &[
            ACTIVE_QUERY,
            b"\x1b[>15u\x1b[?2004h",
            b"\x1b[?1;5;9;1000;1002;1003;1004;1005;1006;1015;2004l\x1b[?7h\x1b[4l",
            b"\x1b[0m\x1b(B\x1b)B\x0f\x1b>\x1b[?25h\x1b[0 q",
            b"\x1b[<1u\x1b[=0;1u\x1b7\x1b[?47h\x1b[=0;1u\x1b[?47l\x1b8\x1b[>4;0m",
        ],
        &m,
    );
}

/// The remote program sets modes, prints READY and waits.
const BUSY: &str = r"printf '\033[?1049h\033[?1000h\033[?25lREADY'; exec cat";

#[test]
fn sigterm_restores_and_says_so() {
    let Some(r) = start("exact-term") else {
        return;
    };
    let m = main_screen();
    let o = ssh(&r, &["-t", "web01", BUSY], &m, true);
    o.sees(b"READY");
    o.signal("TERM");
    check(
        &o,
        143,
        &[
            ACTIVE_QUERY,
            HIDDEN_QUERY_FROM_MAIN,
            b"\x1b[?1049h\x1b[?1000h\x1b[?25lREADY",
            b"\x1b[?1000l\x1b[?1049l\x1b[?25h",
            b"\r\ntether: terminated; disconnected (web01)\r\n",
        ],
        &m,
    );
}

#[test]
fn sighup_restores_and_says_so() {
    let Some(r) = start("exact-hup") else {
        return;
    };
    let m = main_screen();
    let o = ssh(
        &r,
        &[
            "-t",
            "web01",
            r"printf '\033[?2004h\033[>1uREADY'; exec cat",
        ],
        &m,
        true,
    );
    o.sees(b"READY");
    o.signal("HUP");
    check(
        &o,
        129,
        &[
            ACTIVE_QUERY,
            HIDDEN_QUERY_FROM_MAIN,
            b"\x1b[?2004h\x1b[>1uREADY",
            b"\x1b[?2004l\x1b[<1u",
            b"\r\ntether: hung up; disconnected (web01)\r\n",
        ],
        &m,
    );
}

/// `~.` as the first thing typed (a line starts at the beginning):
/// nothing reaches the remote, the modes it set are undone.
#[test]
fn tilde_dot_restores_and_disconnects() {
    let Some(r) = start("exact-tilde") else {
        return;
    };
    let m = main_screen();
    let o = ssh(
        &r,
        &[
            "-t",
            "web01",
            r"printf '\033[?1h\033=\033[4hREADY'; exec cat",
        ],
        &m,
        true,
    );
    o.sees(b"READY");
    o.write(b"~.");
    check(
        &o,
        255,
        &[
            ACTIVE_QUERY,
            HIDDEN_QUERY_FROM_MAIN,
            b"\x1b[?1h\x1b=\x1b[4hREADY",
            b"\x1b[?1l\x1b[4l\x1b>",
            b"\r\nConnection to web01 closed.\r\n",
        ],
        &m,
    );
}
