//! `tether shell` tells each line's fate once and truly, against real sshd
//! nodes (issue 23): a reply (`!send`) goes only to a node still waiting
//! when it is typed, never to a shell that would run it as a command; the
//! end of a line left running (a second Ctrl-C, a `!detach`, a client
//! killed) is shown once, with the output not shown yet, by the next client
//! or line; a heredoc waits at the continuation prompt and runs whole.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::multi::{Shared, line, prompt_after, sees_after, shell, since};
use common::remote::start_n;
use tether_transport::{ExitInfo, Terminal};

/// Each of `lines` shown at most once in `text`, and the last one once.
fn each_once(text: &str, lines: &[String]) {
    for l in lines {
        assert!(text.matches(l.as_str()).count() <= 1, "{l} twice: {text:?}");
    }
    let last = lines.last().unwrap();
    assert_eq!(text.matches(last.as_str()).count(), 1, "{last}: {text:?}");
}

/// `!send` to a node whose program stopped reading (it went on to other
/// work), then to one whose command ended: nothing is typed (the shell
/// would have run the reply as a command line), the person is told, and
/// the command's end is shown.
#[test]
fn a_reply_goes_only_to_a_node_still_waiting() {
    let Some(r) = start_n("nshell-reply", 1) else {
        return;
    };
    let d = Shared::new("nshell-reply");
    let p = shell(&r, &["-H", "node1"]);
    p.sees("[● node1]");
    // It waits for input for 7 s, then works (printing, so it is never
    // taken for waiting), then ends with 6.
    line(
        &p,
        &format!(
            "read -t 7 a; touch {}; for i in 1 2 3 4 5 6; do echo w-$i; sleep 0.5; done; (exit 6)",
            d.path("stopped")
        ),
    );
    p.sees("node1 waits for input");
    common::wait_for(20, "the read to time out", || {
        d.exists("stopped").then_some(())
    });
    line(&p, &format!("!send touch {}", d.path("typed-1")));
    prompt_after(&p, 30, "typed-1", "node1: running");
    assert!(
        since(&p, "typed-1").contains("nothing was typed"),
        "{:?}",
        p.text()
    );
    // The next line there shows its end first.
    line(&p, "echo between");
    prompt_after(&p, 30, "between", "node1: 0");
    assert!(
        since(&p, "typed-1").contains("`: node1: 6\r"),
        "{:?}",
        p.text()
    );
    // A command that ended before the reply.
    line(
        &p,
        &format!("read -t 7 a; touch {}; (exit 7)", d.path("ended")),
    );
    sees_after(&p, "(exit 7)", "node1 waits for input");
    common::wait_for(20, "the read to time out", || {
        d.exists("ended").then_some(())
    });
    line(&p, &format!("!send touch {}", d.path("typed-2")));
    prompt_after(&p, 30, "typed-2", "node1: 7");
    assert!(
        since(&p, "typed-2").contains("nothing was typed"),
        "{:?}",
        p.text()
    );
    // The next line runs after anything the shell could have read.
    line(&p, "echo after-$((1+1))");
    prompt_after(&p, 30, "after-$", "node1: 0");
    assert!(
        !d.exists("typed-1"),
        "the reply ran as a command: {:?}",
        p.text()
    );
    assert!(
        !d.exists("typed-2"),
        "the reply ran as a command: {:?}",
        p.text()
    );
    let text = p.text();
    assert_eq!(text.matches(": node1: 6\r").count(), 1, "{text:?}");
    assert_eq!(text.matches("node1: 7\r").count(), 1, "{text:?}");
    line(&p, "!exit");
    assert_eq!(p.exit(), ExitInfo::Code(0));
}

/// The line a second Ctrl-C left running: its end is shown by the next
/// line sent to its node, once, as the earlier line's.
#[test]
fn the_end_of_a_line_left_running_is_shown_once() {
    let Some(r) = start_n("nshell-left-end", 2) else {
        return;
    };
    let p = shell(&r, &["-H", "node[1-2]"]);
    p.sees("[● node1 ● node2]");
    line(
        &p,
        "(trap '' INT; for i in 1 2 3 4 5 6; do echo t-$i.; sleep 0.5; done; exit 5)",
    );
    p.sees("node1: t-1.");
    p.sees("node2: t-1.");
    p.pty.write(b"\x03".to_vec()).unwrap();
    p.sees("interrupting");
    p.pty.write(b"\x03".to_vec()).unwrap();
    p.sees("left running");
    line(&p, "echo next-$((6*7))");
    prompt_after(&p, 30, "next-42", "node[1-2]: 0");
    let text = p.text();
    let shown = "`: node[1-2]: 5";
    assert_eq!(text.matches(shown).count(), 1, "{text:?}");
    let at = text.find(shown).unwrap();
    assert!(text[..at].contains("earlier line `(trap"), "{text:?}");
    assert!(at < text.find("node1: next-42").unwrap(), "{text:?}");
    line(&p, "!exit");
    assert_eq!(p.exit(), ExitInfo::Code(0));
}

/// A line left running, then `!detach`: the client that comes back shows
/// the output not shown yet, and the end, once.
#[test]
fn detach_then_attach_shows_the_end_of_a_line_left_running() {
    let Some(r) = start_n("nshell-detach-end", 1) else {
        return;
    };
    let p = shell(&r, &["-H", "node1", "--name", "away"]);
    p.sees("[● node1]");
    line(
        &p,
        "(trap '' INT; for i in 1 2 3 4 5 6 7 8; do echo d-$i.; sleep 0.5; done; exit 5)",
    );
    p.sees("node1: d-1.");
    p.pty.write(b"\x03".to_vec()).unwrap();
    p.sees("interrupting");
    p.pty.write(b"\x03".to_vec()).unwrap();
    p.sees("left running");
    line(&p, "!detach");
    assert_eq!(p.exit(), ExitInfo::Code(0));

    let q = shell(&r, &["--attach", "away"]);
    q.sees("[● node1]");
    line(&q, "echo back-$((2+3))");
    prompt_after(&q, 30, "back-5", "node1: 0");
    let both = format!("{}{}", p.text(), q.text());
    let ticks: Vec<String> = (1..=8).map(|i| format!("node1: d-{i}.")).collect();
    for t in &ticks {
        assert_eq!(both.matches(t.as_str()).count(), 1, "{t}: {both:?}");
    }
    assert_eq!(q.text().matches(": node1: 5").count(), 1, "{:?}", q.text());
    line(&q, "!exit");
    assert_eq!(q.exit(), ExitInfo::Code(0));
}

/// A node waiting for input when the client left: the client that comes
/// back answers it with `!send` (checked by the daemon as ever).
#[test]
fn a_node_left_waiting_is_answered_by_the_client_that_comes_back() {
    let Some(r) = start_n("nshell-wait-back", 1) else {
        return;
    };
    let p = shell(&r, &["-H", "node1", "--name", "asks"]);
    p.sees("[● node1]");
    line(&p, "read -r a; echo got-$a.");
    p.sees("node1 waits for input");
    line(&p, "!detach");
    assert_eq!(p.exit(), ExitInfo::Code(0));

    let q = shell(&r, &["--attach", "asks"]);
    q.sees("[● node1]");
    line(&q, "!send yes");
    prompt_after(&q, 30, "!send yes", "node1: 0");
    assert!(
        since(&q, "!send yes").contains("node1: got-yes."),
        "{:?}",
        q.text()
    );
    line(&q, "!exit");
    assert_eq!(q.exit(), ExitInfo::Code(0));
}

/// The client is killed while a line runs: the next `--attach` follows
/// that line from where the dead one stopped and shows its end.
#[test]
fn a_client_killed_mid_line_is_followed_by_the_next_one() {
    let Some(r) = start_n("nshell-killed", 1) else {
        return;
    };
    let p = shell(&r, &["-H", "node1", "--name", "killed"]);
    p.sees("[● node1]");
    line(
        &p,
        "for i in 1 2 3 4 5 6 7 8 9 10; do echo k-$i.; sleep 0.5; done; (exit 4)",
    );
    p.sees("node1: k-2.");
    common::sigkill(p.pty.pid());
    assert!(matches!(p.exit(), ExitInfo::Signal(_)));

    // It comes back to the line still running, and its next line there
    // follows it to its end first.
    let q = shell(&r, &["--attach", "killed"]);
    q.sees("[● node1]");
    line(&q, "echo on-$((3*3))");
    prompt_after(&q, 30, "on-9", "node1: 0");
    let after = since(&q, "on-$");
    let (end, next) = (after.find(": node1: 4"), after.find("node1: on-9"));
    assert!(after.contains("node1: k-10."), "{after:?}");
    assert!(end.is_some() && end < next, "{after:?}");
    let both = format!("{}{}", p.text(), q.text());
    let ticks: Vec<String> = (1..=10).map(|i| format!("node1: k-{i}.")).collect();
    each_once(&both, &ticks);
    assert_eq!(q.text().matches(": node1: 4").count(), 1, "{:?}", q.text());
    line(&q, "!exit");
    assert_eq!(q.exit(), ExitInfo::Code(0));
}

/// A client that comes back with no record of the line (its file gone)
/// finds the node busy: it says so, and the next line there collects that
/// command, its end shown as a command from before's.
#[test]
fn a_command_found_running_without_a_record_is_collected() {
    let Some(r) = start_n("nshell-norecord", 1) else {
        return;
    };
    let p = shell(&r, &["-H", "node1", "--name", "bare"]);
    p.sees("[● node1]");
    line(
        &p,
        "for i in 1 2 3 4 5 6; do echo b-$i.; sleep 0.5; done; (exit 9)",
    );
    p.sees("node1: b-1.");
    common::sigkill(p.pty.pid());
    assert!(matches!(p.exit(), ExitInfo::Signal(_)));
    let record = r.daemon.dir.join("shell-lines").join("shell-bare");
    assert!(record.exists(), "no record at {}", record.display());
    std::fs::remove_file(&record).unwrap();

    let q = shell(&r, &["--attach", "bare"]);
    q.sees("a command from before still runs there");
    line(&q, "echo then-$((4+4))");
    prompt_after(&q, 30, "then-$", "node1: 0");
    let after = since(&q, "then-$");
    assert!(after.contains("node1: b-6."), "{after:?}");
    let end = "earlier line (a command from before): node1: 9";
    assert_eq!(q.text().matches(end).count(), 1, "{:?}", q.text());
    assert!(after.find(end) < after.find("node1: then-8"), "{after:?}");
    line(&q, "!exit");
    assert_eq!(q.exit(), ExitInfo::Code(0));
}

/// A heredoc typed at the prompt: its first line opens the continuation
/// prompt, and the whole is run once complete; its body never runs as
/// commands. An open quote dropped with Ctrl-C, or refused by Ctrl-D, runs
/// nothing.
#[test]
fn a_heredoc_is_sent_whole_and_an_open_quote_dropped_whole() {
    let Some(r) = start_n("nshell-heredoc", 2) else {
        return;
    };
    let d = Shared::new("nshell-heredoc");
    let p = shell(&r, &["-H", "node[1-2]"]);
    p.sees("[● node1 ● node2]");
    line(&p, "cat <<EOF");
    p.sees("\x1b[K> ");
    line(&p, "hello-$((2+3))");
    line(&p, &format!("touch {}", d.path("body")));
    line(&p, "EOF");
    prompt_after(&p, 30, "EOF", "node[1-2]: 0");
    p.sees("node1: hello-5");
    p.sees("node2: hello-5");
    let text = p.text();
    assert!(
        text.contains(&format!("node2: touch {}", d.path("body"))),
        "{text:?}"
    );
    assert!(!d.exists("body"), "a body line ran: {text:?}");
    assert!(!text.contains("incomplete"), "{text:?}");
    // Ctrl-C at the continuation prompt drops the line.
    line(&p, &format!("touch {} 'open", d.path("dropped")));
    common::wait_for(20, "the continuation prompt", || {
        since(&p, "'open").contains("\x1b[K> ").then_some(())
    });
    p.pty.write(b"\x03".to_vec()).unwrap();
    common::wait_for(20, "the prompt again", || {
        since(&p, "'open").contains("\x1b[K[● node1").then_some(())
    });
    line(&p, "echo fine-$((1+2))");
    prompt_after(&p, 30, "fine-3", "node[1-2]: 0");
    // Ctrl-D refuses it.
    line(&p, &format!("touch {} \"open", d.path("refused")));
    common::wait_for(20, "the continuation prompt", || {
        since(&p, "\"open").contains("\x1b[K> ").then_some(())
    });
    p.pty.write(b"\x04".to_vec()).unwrap();
    p.sees("unfinished");
    line(&p, "echo still-$((2+2))");
    prompt_after(&p, 30, "still-4", "node[1-2]: 0");
    assert!(
        !d.exists("dropped") && !d.exists("refused"),
        "{:?}",
        p.text()
    );
    line(&p, "!exit");
    assert_eq!(p.exit(), ExitInfo::Code(0));
}

/// A line silent for seconds then failing: its code is shown once, in its
/// summary, or (where the engine took the silence for waiting) as the
/// earlier line's at the next line; a reply sent meanwhile, as the hint
/// said, is not typed into the `sleep` (bash would run it afterwards).
#[test]
fn the_code_of_a_slow_line_is_shown_once() {
    let Some(r) = start_n("nshell-slow", 1) else {
        return;
    };
    let d = Shared::new("nshell-slow");
    let p = shell(&r, &["-H", "node1"]);
    p.sees("[● node1]");
    line(&p, &format!("sleep 6; touch {}; (exit 3)", d.path("slept")));
    common::wait_for(30, "the line's outcome", || {
        let after = since(&p, "sleep 6");
        (after.contains("node1: 3\r") || after.contains("waits for input")).then_some(())
    });
    // The hint followed (where the engine took the silence for waiting):
    // the reply is not typed while `sleep` runs, so bash never runs it.
    line(&p, &format!("!send touch {}", d.path("typed")));
    common::wait_for(30, "the reply refused", || {
        let after = since(&p, "!send touch");
        let said = after.contains("nothing was typed") || after.contains("no node is waiting");
        (said && after.ends_with("\x1b[?2026l")).then_some(())
    });
    common::wait_for(20, "the sleep to end", || d.exists("slept").then_some(()));
    // (Where the engine still says the node waits, the line is not sent
    // there: typed again, as a person would, until the end mark came.)
    common::wait_for(30, "the next line to run", || {
        line(&p, "echo next-$((5*5))");
        common::wait_for(20, "the prompt", || {
            let after = since(&p, "next-$");
            let done = after.ends_with("\x1b[?2026l");
            (done && after.contains("node1: 0\r"))
                .then_some(Some(()))
                .or_else(|| (done && after.contains("not sent there")).then_some(None))
        })
    });
    let text = p.text();
    assert!(!d.exists("typed"), "the reply ran as a command: {text:?}");
    assert_eq!(text.matches("node1: 3\r").count(), 1, "{text:?}");
    assert!(
        text.find("node1: 3\r") < text.find("node1: next-25"),
        "{text:?}"
    );
    line(&p, "!exit");
    assert_eq!(p.exit(), ExitInfo::Code(0));
}

/// A line that is only silent for longer than the remote readiness rule's
/// old 3 s: shown running, then its exit code; never "waiting for input".
/// (Depends on the engine's remote readiness fix, issue 23 item 1.)
#[test]
fn a_silent_line_is_not_shown_waiting_and_its_code_comes() {
    let Some(r) = start_n("nshell-silent", 1) else {
        return;
    };
    let p = shell(&r, &["-H", "node1"]);
    p.sees("[● node1]");
    line(&p, "sleep 5; (exit 3)");
    prompt_after(&p, 30, "sleep 5", "node1: 3");
    assert!(
        !since(&p, "sleep 5").contains("waiting for input"),
        "{:?}",
        p.text()
    );
    line(&p, "!exit");
    assert_eq!(p.exit(), ExitInfo::Code(0));
}
