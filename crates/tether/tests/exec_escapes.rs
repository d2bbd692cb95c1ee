//! A host's control sequences never reach the person's terminal raw
//! (issue 36): a host that retitles the terminal (OSC 0) and writes its
//! clipboard (OSC 52) has them shown escaped by `tether exec` on a
//! terminal, as the live view shows them, in every mode that prints the
//! hosts' bytes (stream, after `--tui`, gather, `--diff`); `--raw` passes
//! them; a pipe gets the bytes exact. tether runs in a PTY whose other
//! end plays the person's terminal (`common::outer`), against real sshd.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::outer::{Model, Outer, show};
use common::remote::{Remote, start_n};

/// What the host prints: a new title, then a clipboard write.
const HOSTILE: &str = r"printf '\033]0;pwned\007\033]52;c;aGk=\007'";
/// The same, as a terminal shows it escaped.
const VISIBLE: &str = r"\x1b]0;pwned\x07\x1b]52;c;aGk=\x07";

fn exec_on_terminal(r: &Remote, args: &[&str]) -> Vec<u8> {
    let mut all = vec!["exec"];
    all.extend_from_slice(args);
    let o = Outer::spawn(
        &all,
        &r.daemon,
        &[("HOME", r.home.0.display().to_string())],
        Model::new(0, 0, 0, 0),
        true,
    );
    let (_, bytes, _) = o.finish();
    bytes
}

fn has(bytes: &[u8], what: &[u8]) -> bool {
    bytes.windows(what.len()).any(|w| w == what)
}

/// No raw OSC of the host's in `bytes`; its escaped form in them.
fn assert_escaped(bytes: &[u8], what: &str) {
    assert!(
        !has(bytes, b"\x1b]0;pwned") && !has(bytes, b"\x1b]52;"),
        "{what}: the host's sequences reached the terminal raw: {}",
        show(bytes)
    );
    assert!(
        has(bytes, VISIBLE.as_bytes()),
        "{what}: the host's bytes are not shown escaped: {}",
        show(bytes)
    );
}

#[test]
fn a_hosts_title_and_clipboard_writes_are_shown_escaped_on_a_terminal() {
    let Some(r) = start_n("exec-escapes", 2) else {
        return;
    };
    // Stream, the default: `host: line`.
    let bytes = exec_on_terminal(&r, &["-H", "node1", "--", HOSTILE]);
    assert_escaped(&bytes, "stream");
    assert!(has(&bytes, format!("node1: {VISIBLE}").as_bytes()));
    // The output kept by the live view, printed once the terminal is back.
    let bytes = exec_on_terminal(&r, &["--tui", "-H", "node1", "--", HOSTILE]);
    let back = bytes
        .windows(8)
        .rposition(|w| w == b"\x1b[?1049l")
        .expect("the view left the alternate screen");
    assert_escaped(&bytes[back..], "after --tui");
    assert!(has(&bytes, b"\x1b[?1049h"), "the view ran");
    // Gathered, and diffed (node2 prints something else too).
    let bytes = exec_on_terminal(
        &r,
        &["--output", "gather", "-H", "node[1-2]", "--", HOSTILE],
    );
    assert_escaped(&bytes, "gather");
    let two =
        format!("{HOSTILE}; echo; set -- $SSH_CONNECTION; [ $3 = 127.0.0.3 ] && {HOSTILE}; echo");
    let bytes = exec_on_terminal(&r, &["--diff", "-H", "node[1-2]", "--", &two]);
    assert_escaped(&bytes, "--diff");
    // A host's stderr, on a terminal too.
    let bytes = exec_on_terminal(&r, &["-H", "node1", "--", &format!("{HOSTILE} >&2")]);
    assert_escaped(&bytes, "stderr");
}

#[test]
fn raw_passes_the_hosts_bytes_and_a_pipe_gets_them_exact() {
    let Some(r) = start_n("exec-escapes-raw", 1) else {
        return;
    };
    let raw = b"\x1b]0;pwned\x07\x1b]52;c;aGk=\x07";
    let bytes = exec_on_terminal(&r, &["--raw", "-H", "node1", "--", HOSTILE]);
    assert!(has(&bytes, raw), "--raw: {}", show(&bytes));
    let bytes = exec_on_terminal(&r, &["--raw", "--tui", "-H", "node1", "--", HOSTILE]);
    let back = bytes
        .windows(8)
        .rposition(|w| w == b"\x1b[?1049l")
        .expect("the view left the alternate screen");
    assert!(has(&bytes[back..], raw), "--raw --tui: {}", show(&bytes));

    // Stdout a pipe: exact, in every mode that prints the bytes.
    let tab_cr = r"printf '\033]0;pwned\007\033]52;c;aGk=\007\ta\rb\r\n\377\n'";
    let exact = b"\x1b]0;pwned\x07\x1b]52;c;aGk=\x07\ta\rb\r\n\xff\n";
    for mode in ["stream", "gather"] {
        let out = r
            .daemon
            .cmd(&["exec", "--output", mode, "-H", "node1", "--", tab_cr])
            .env("HOME", &r.home.0)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{mode}: {out:?}");
        let want: Vec<u8> = match mode {
            "stream" => {
                b"node1: \x1b]0;pwned\x07\x1b]52;c;aGk=\x07\ta\rb\r\nnode1: \xff\n".to_vec()
            }
            _ => exact.to_vec(),
        };
        assert!(
            has(&out.stdout, &want),
            "{mode}: not exact: {}",
            show(&out.stdout)
        );
    }
}
