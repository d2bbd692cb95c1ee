//! `tether shell --sudo-password-file` against real sshd nodes and real
//! sudo, driven in a PTY as a person drives it: a line whose sudo asks is
//! answered on every node (the password typed once per line, into sudo's
//! own prompt), the prompt's marker never shown; a wrong password is
//! typed once, then sudo is interrupted and each node says why. Needs
//! root and sudo (see `sudo_kit`); skips with the reason otherwise.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
mod sudo_kit;

use common::multi::{line, shell};
use common::remote::start_n;
use sudo_kit::{USER, password, password_file};

#[test]
fn a_lines_sudo_is_answered_once_on_every_node() {
    let (Some(r), Some(pw)) = (start_n("nshell-sudo", 2), password()) else {
        return;
    };
    let file = password_file(&r.home.0, "pw", pw).display().to_string();
    let p = shell(
        &r,
        &["-H", "node[1-2]", "-l", USER, "--sudo-password-file", &file],
    );
    p.sees("[● node1 ● node2]");
    line(&p, "sudo -k; sudo id -un; echo after-$((6*7))");
    p.sees("node1: root");
    p.sees("node2: root");
    p.sees("node1: after-42");
    p.sees("node2: after-42");
    p.sees("node[1-2]: 0");
    let text = p.text();
    // No blank line where the prompt was.
    assert!(!text.contains("node1: \r\n"), "{text}");
    assert!(
        !text.contains("tether-sudo-"),
        "the marker was shown: {text}"
    );
    assert!(!text.contains(pw), "the password was shown: {text}");
    line(&p, "!exit");
    p.exit();
}

#[test]
fn a_wrong_password_is_typed_once_then_sudo_is_interrupted() {
    let (Some(r), Some(pw)) = (start_n("nshell-sudo-wrong", 2), password()) else {
        return;
    };
    let wrong = format!("{pw}-wrong");
    let file = password_file(&r.home.0, "wrong", &wrong)
        .display()
        .to_string();
    let p = shell(
        &r,
        &["-H", "node[1-2]", "-l", USER, "--sudo-password-file", &file],
    );
    p.sees("[● node1 ● node2]");
    line(&p, "sudo -k; sudo id -un; echo next-$((6*7))");
    p.sees("node1: sudo asked for the password a second time");
    p.sees("node2: sudo asked for the password a second time");
    // sudo ended (the line goes on, as after a refusal typed by hand);
    // the password was typed once on each node, sudo never ran `id`.
    p.sees("node1: next-42");
    p.sees("node2: next-42");
    let text = p.text();
    assert_eq!(text.matches("Sorry, try again").count(), 2, "{text}");
    assert!(!text.contains(": root"), "{text}");
    assert!(
        !text.contains(&wrong) && !text.contains("tether-sudo-"),
        "{text}"
    );
    // The session goes on.
    line(&p, "echo still-$((6*7))");
    p.sees("node1: still-42");
    p.sees("node2: still-42");
    line(&p, "!exit");
    p.exit();
}
