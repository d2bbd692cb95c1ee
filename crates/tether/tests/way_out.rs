//! The person's way out under every keyboard encoding a remote program can
//! turn on, and a terminal without mode 47, in the outer-terminal harness
//! (`common::outer`: tether in a PTY whose other end plays the person's
//! terminal, answering the capture from a model).
//!
//! - `~.` typed as kitty sends it under Kitty keyboard flags 15, 1 and 31
//!   (`CSI 13 u`, `CSI 96:126;2 u`, `CSI 46 u`, releases between) and as
//!   xterm sends it under modifyOtherKeys 2 and 1 (`CSI 27;2;126 ~`):
//!   `tether ssh` disconnects, `tether attach` detaches, and the keys of
//!   the escape never reach the session.
//! - A terminal that answers DECRQM `?47` with 0 (kitty 0.26, which homes
//!   the cursor on `47h`/`47l` and so wrote over the person's first rows):
//!   no mode-47 byte at the start or in any teardown (normal exit, `~.`,
//!   a lost link, SIGTERM), and its keyboard comes back.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::keyboard::Keyboard;
use common::outer::{ACTIVE_QUERY, Model, Outer, assert_keyboard_back, show};
use common::remote::{Remote, start};
use common::{Daemon, wait_for};
use tether_transport::{ExitInfo, Terminal};

/// The encodings of the issue's checks.
const KEYBOARDS: [Keyboard; 5] = [
    Keyboard::Kitty(15),
    Keyboard::Kitty(1),
    Keyboard::Kitty(31),
    Keyboard::Xterm(2),
    Keyboard::Xterm(1),
];

/// `tether ssh ARGS` on a terminal like `model`.
fn ssh(r: &Remote, args: &[&str], model: &Model) -> Outer {
    let mut all = vec!["ssh"];
    all.extend_from_slice(args);
    Outer::spawn(
        &all,
        &r.daemon,
        &[("HOME", r.home.0.display().to_string())],
        model.clone(),
        true,
    )
}

fn contains(bytes: &[u8], what: &[u8]) -> bool {
    bytes.windows(what.len()).any(|w| w == what)
}

/// A mode-47 (or 1047) switch among `bytes` (the capture's DECRQM
/// question about it is not one).
fn switches_with_47(bytes: &[u8]) -> bool {
    [
        &b"\x1b[?47h"[..],
        b"\x1b[?47l",
        b"\x1b[?1047h",
        b"\x1b[?1047l",
    ]
    .iter()
    .any(|s| contains(bytes, s))
}

#[test]
fn tilde_dot_disconnects_tether_ssh_in_every_keyboard_encoding() {
    let Some(r) = start("way-out-ssh") else {
        return;
    };
    for kb in KEYBOARDS {
        let m = Model::new(0, 0, 0, 0);
        // The issue's state: an alternate screen with the encoding on.
        let remote = format!(r"printf '\033[?1049h{}READY'; exec cat", kb.turn_on());
        let o = ssh(&r, &["-t", "web01", &remote], &m);
        o.sees(b"READY");
        o.write(&kb.typed("\r~.").bytes());
        let (exit, bytes, after) = o.finish();
        assert_eq!(exit, ExitInfo::Code(255), "{kb:?}: {}", show(&bytes));
        assert!(
            contains(&bytes, b"Connection to web01 closed."),
            "{kb:?}: {}",
            show(&bytes)
        );
        assert_keyboard_back(&after, &m);
    }
}

#[test]
fn tilde_dot_detaches_tether_attach_in_every_keyboard_encoding_and_nothing_of_it_arrives() {
    let d = Daemon::new("way-out-attach");
    let dir = tether_testkit::Scratch::new("way-out-keys");
    for (i, kb) in KEYBOARDS.into_iter().enumerate() {
        let session = format!("s{i}");
        let file = dir.0.join(format!("keys{i}"));
        let out = d.run(&["run", "-s", &session, "--norc", "--", "echo up"]);
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        let m = Model::new(0, 0, 0, 0);
        let o = Outer::spawn(&["attach", &session], &d, &[], m.clone(), true);
        o.sees(b"up");
        // The session keeps every byte it is given, as it came.
        let program = format!(
            r"stty raw -echo; printf '{}RE''ADY'; cat > {}",
            kb.turn_on(),
            file.display()
        );
        o.write(format!("{program}\r").as_bytes());
        o.sees(b"READY");
        let keys = kb.typed("\r~.");
        o.write(&keys.bytes());
        let (exit, bytes, after) = o.finish();
        assert_eq!(exit, ExitInfo::Code(0), "{kb:?}: {}", show(&bytes));
        assert!(
            contains(&bytes, format!("[detached: {session}]").as_bytes()),
            "{kb:?}: {}",
            show(&bytes)
        );
        assert_keyboard_back(&after, &m);
        // What reached the session: the Return (and whatever came before
        // the `~` key, a Shift press), then what is sent after, never the
        // escape's `~` or `.`.
        let sent = d.run(&["send", "-s", &session, "--wait", "0", "Z"]);
        assert!(sent.status.code().is_some(), "{sent:?}");
        let got = wait_for(20, "the session to get Z", || {
            let got = std::fs::read(&file).ok()?;
            got.ends_with(b"Z").then_some(got)
        });
        let got = &got[..got.len() - 1];
        assert!(
            got.starts_with(&keys.before(1)) && keys.before(2).starts_with(got),
            "{kb:?}: the session got {} (the keys were {})",
            show(got),
            show(&keys.bytes())
        );
    }
}

/// A terminal that lacks mode 47, on its main screen: tether ssh under
/// each way out. `act` ends the session; `code` is tether's exit code.
fn without_47(r: &Remote, remote: &str, act: impl FnOnce(&Outer), code: i32) {
    let m = Model::new(0, 0, 3, 0).lacking_47();
    let o = ssh(r, &["-t", "web01", remote], &m);
    act(&o);
    let (exit, bytes, after) = o.finish();
    assert_eq!(exit, ExitInfo::Code(code), "{}", show(&bytes));
    // The hidden screen is visited with 1049, which keeps the cursor.
    assert!(
        bytes.starts_with(&[ACTIVE_QUERY, b"\x1b[?1049h\x1b[?u\x1b[c\x1b[?1049l"].concat()),
        "{}",
        show(&bytes)
    );
    assert!(
        !switches_with_47(&bytes),
        "a mode-47 switch was written: {}",
        show(&bytes)
    );
    assert_eq!(after.mode_47_written, 0);
    assert_keyboard_back(&after, &m);
}

/// The remote program sets modes on its own 1049 screen, prints its
/// shell's parent (the sshd serving it) and waits.
const BUSY: &str = r"printf '\033[?1049h\033[>15u\033[?2004hPID=%s.' $PPID; exec cat";

fn remote_pid(o: &Outer) -> i32 {
    o.sees(b".");
    let text = String::from_utf8_lossy(&o.bytes()).into_owned();
    let after = text.split("PID=").nth(1).expect("PID= in the output");
    after.split('.').next().unwrap().parse().unwrap()
}

#[test]
fn no_mode_47_byte_on_a_terminal_without_it_in_any_teardown() {
    let Some(r) = start("way-out-no-47") else {
        return;
    };
    // Normal exit, flags left on.
    without_47(&r, r"printf '\033[?1049h\033[>15u'", |_| {}, 0);
    // ~.
    without_47(
        &r,
        BUSY,
        |o| {
            remote_pid(o);
            o.write(b"\r~.");
        },
        255,
    );
    // A lost link.
    without_47(&r, BUSY, |o| common::sigkill(remote_pid(o)), 255);
    // SIGTERM.
    without_47(
        &r,
        BUSY,
        |o| {
            remote_pid(o);
            o.signal("TERM");
        },
        143,
    );
}

/// Inside an outer full-screen program on a terminal without mode 47: its
/// hidden main screen is never visited (1049 back would clear the outer
/// screen), and the rest of its keyboard comes back.
#[test]
fn no_mode_47_byte_inside_an_outer_alternate_screen() {
    let Some(r) = start("way-out-no-47-tui") else {
        return;
    };
    let m = Model::new(1049, 1, 5, 2).lacking_47();
    let o = ssh(&r, &["-t", "web01", r"printf '\033[=31u'"], &m);
    let (exit, bytes, after) = o.finish();
    assert_eq!(exit, ExitInfo::Code(0), "{}", show(&bytes));
    assert_eq!(
        show(&bytes),
        show(
            &[
                ACTIVE_QUERY,
                b"\x1b[=0;1u\x1b[>4;0m",
                b"\x1b[=31u",
                b"\x1b[=5;1u\x1b[>4;2m",
            ]
            .concat()
        )
    );
    assert_eq!(after.mode_47_written, 0);
    assert_keyboard_back(&after, &m);
}

/// `tether attach` on a terminal without mode 47: neither at the start
/// nor when it detaches.
#[test]
fn attach_writes_no_mode_47_byte_on_a_terminal_without_it() {
    let d = Daemon::new("way-out-attach-no-47");
    let out = d.run(&["run", "-s", "s", "--norc", "--", "echo up"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let m = Model::new(0, 0, 3, 0).lacking_47();
    let o = Outer::spawn(&["attach", "s"], &d, &[], m.clone(), true);
    o.sees(b"up");
    o.write(b"printf '\\033[?1049h\\033[>15uRE''ADY'; cat\r");
    o.sees(b"READY");
    o.write(b"\r~.");
    let (exit, bytes, after) = o.finish();
    assert_eq!(exit, ExitInfo::Code(0), "{}", show(&bytes));
    assert!(!switches_with_47(&bytes), "{}", show(&bytes));
    assert_eq!(after.mode_47_written, 0);
    assert_keyboard_back(&after, &m);
}

/// What the remote program received, line by line, from `got:` lines.
fn remote_lines(bytes: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(bytes)
        .split("got:")
        .skip(1)
        .map(|l| l.split(['\r', '\n']).next().unwrap_or_default().to_owned())
        .collect()
}

/// `~C` opens ssh's `ssh> ` prompt read by tether itself (echo, Backspace,
/// Enter runs the line, Ctrl-C drops it), `~#` answers, `~?` lists them
/// with `~&`: none of it reaches the remote program, which goes on.
#[test]
fn tilde_c_and_tilde_hash_on_tether_ssh_reach_no_remote_program() {
    let Some(r) = start("way-out-letters") else {
        return;
    };
    let m = Model::new(0, 0, 0, 0);
    let o = ssh(
        &r,
        &[
            "-t",
            "web01",
            r"stty -echo; echo RE''ADY; exec sed -u 's/^/got:/'",
        ],
        &m,
    );
    o.sees(b"READY");
    o.write(b"\r~C");
    o.sees(b"\r\nssh> ");
    o.write(b"-L 8080:x:801\x7f\r");
    o.sees(b"-L 8080:x:801\x08 \x08\r\n");
    o.write(b"one\r~Cxyz\x03two\r~#");
    o.sees(b"got:two");
    o.write(b"\r~?");
    o.sees(b"this help");
    o.write(b"three\r");
    o.sees(b"got:three");
    o.write(b"~.");
    let (exit, bytes, after) = o.finish();
    assert_eq!(exit, ExitInfo::Code(255), "{}", show(&bytes));
    assert_eq!(
        remote_lines(&bytes),
        ["", "one", "two", "", "three"],
        "{}",
        show(&bytes)
    );
    let text = String::from_utf8_lossy(&bytes);
    for line in [
        " ~C  open a command line",
        " ~#  list forwarded",
        " ~&  background",
    ] {
        assert!(text.contains(line), "{line:?} in {text:?}");
    }
    assert_keyboard_back(&after, &m);
}

/// `!attach` in `tether shell` is the same bridge: `~.` typed as kitty
/// sends it under flags 15 comes back to the prompt.
#[test]
fn tilde_dot_leaves_bang_attach_under_kitty_flags() {
    let Some(r) = common::remote::start_n("way-out-bang-attach", 1) else {
        return;
    };
    let p = common::multi::shell(&r, &["-H", "node1"]);
    p.sees("[● node1]");
    common::multi::line(&p, "!attach node1");
    p.sees("~. comes back here");
    p.pty
        .write(b"printf '\\033[>15uRE''ADY'; cat\r".to_vec())
        .unwrap();
    p.sees("\x1b[>15uREADY");
    p.pty
        .write(Keyboard::Kitty(15).typed("\r~.").bytes())
        .unwrap();
    p.sees("[detached");
    common::multi::line(&p, "!exit");
    assert_eq!(p.exit(), ExitInfo::Code(0));
}
