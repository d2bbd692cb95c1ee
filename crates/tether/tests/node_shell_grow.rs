//! `tether shell`'s node set changed live and narrowed at the start,
//! against real sshd nodes, driven in a PTY as a person drives it:
//! `!add` (a node set, one already in, one that cannot be reached),
//! `!drop` (its shell closed in the daemon), `!drop --keep` (kept running
//! apart, outside the session, taken back by `!add` with its variables),
//! `!detach` then `--attach` coming back to the grown and shrunk set, the
//! last node not dropped; `-x` and `--filter`; `-b` (one Ctrl-C cancels a
//! line that ignores INT); `-v` (each node's resolution and start); `-4`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::multi::{line, shell, since};
use common::remote::{Remote, start_n};
use tether_transport::{ExitInfo, Terminal};

/// The addresses of the daemon's sessions (`tether ls --json`).
fn sessions(r: &Remote) -> Vec<String> {
    let (code, v) = r.json(&["ls"]);
    assert_eq!(code, 0, "{v}");
    v["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["address"].as_str().unwrap().to_owned())
        .collect()
}

/// Waits until the daemon's sessions are `want` among `of`.
fn daemon_has(r: &Remote, of: &[&str], want: &[&str]) {
    common::wait_for(
        20,
        &format!("the daemon to hold {want:?} of {of:?}"),
        || {
            let now = sessions(r);
            of.iter()
                .all(|a| now.iter().any(|s| s == a) == want.contains(a))
                .then_some(())
        },
    );
}

#[test]
fn add_and_drop_change_a_live_session_and_attach_comes_back_to_it() {
    let Some(r) = start_n("nshell-grow", 4) else {
        return;
    };
    let all = [
        "shell-grow/node1",
        "shell-grow/node2",
        "shell-grow/node3",
        "shell-grow/node4",
    ];
    let p = shell(&r, &["-H", "node[1-2]", "--name", "grow"]);
    p.sees("[● node1 ● node2]");
    line(&p, "export MARK=m-$((6*7))");
    p.sees("node[1-2]: 0");
    // Two more, as a node set: their shells start as the others' did.
    line(&p, "!add node[3-4]");
    p.sees("added node[3-4] (4 nodes now)");
    p.sees("[● node1 ● node2 ● node3 ● node4]");
    line(&p, "export MARK=m-$((6*7)); echo hi-$((6*7))");
    for n in 1..=4 {
        p.sees(&format!("node{n}: hi-42"));
    }
    p.sees("node[1-4]: 0");
    daemon_has(&r, &all, &all);
    line(&p, "!help");
    p.sees("!drop [--keep] EXPR");
    // One already in: said, nothing else happens.
    line(&p, "!add node2");
    p.sees("node2 already in this session: not added again");
    // `!use` of a node outside points at `!add`.
    line(&p, "!use node9");
    p.sees("node9 not in this session (its nodes: node[1-4]); !add node9 adds it");

    // Dropped: its shell is closed, and lines no longer go there.
    line(&p, "!drop node1");
    p.sees("dropped node1: its shell closed (3 nodes now)");
    p.sees("[● node2 ● node3 ● node4]");
    daemon_has(&r, &all, &all[1..]);
    line(&p, "echo after-$((2+3))");
    p.sees("node4: after-5");
    p.sees("node[2-4]: 0");
    assert!(
        !since(&p, "echo after-").contains("node1"),
        "{:?}",
        p.text()
    );

    // Dropped with --keep: out of the session, its shell still running.
    line(&p, "!drop --keep node4");
    p.sees("dropped node4: kept running apart");
    p.sees("tether attach shell-grow/node4");
    p.sees("[● node2 ● node3]");
    line(&p, "echo later-$((1+1))");
    p.sees("node[2-3]: 0");
    assert!(
        !since(&p, "echo later-").contains("node4"),
        "{:?}",
        p.text()
    );
    daemon_has(&r, &all, &all[1..]);
    // Not the last ones.
    line(&p, "!drop node[2-3]");
    p.sees("that would leave the session without nodes");
    p.sees("[● node2 ● node3]");
    line(&p, "!detach");
    assert_eq!(p.exit(), ExitInfo::Code(0));

    // Back: the shrunk set, the kept node named apart.
    let p = shell(&r, &["--attach", "grow"]);
    p.sees("kept running apart (!drop --keep), not in the session: node4");
    p.sees("[● node2 ● node3]");
    // Kept apart, it still runs: `!attach` reaches it.
    line(&p, "!attach node4");
    p.sees("~. comes back here");
    p.pty.write(b"echo apart-$MARK.\r".to_vec()).unwrap();
    p.sees("apart-m-42.");
    p.pty.write(b"~.".to_vec()).unwrap();
    p.sees("[detached");
    // Taken back: the same shell, its variable kept.
    line(&p, "!add node4");
    p.sees("added node4 (3 nodes now)");
    line(&p, "echo mark-$MARK");
    p.sees("node4: mark-m-42");
    p.sees("node[2-4]: 0");
    // `!exit` closes the session's shells, not one kept apart.
    line(&p, "!drop --keep node4");
    p.sees("dropped node4: kept running apart");
    line(&p, "!exit");
    assert_eq!(p.exit(), ExitInfo::Code(0));
    p.sees("kept running apart (!drop --keep), not in the session: node4");
    daemon_has(&r, &all, &all[3..]);
    let out = r.tether(&["shell", "--attach", "grow"]);
    assert_eq!(out.status.code(), Some(255));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no tether shell named"), "{err}");
    assert!(
        err.contains("kept apart by !drop --keep: shell-grow/node4"),
        "{err}"
    );
    // Closed by hand, it is forgotten.
    let out = r.tether(&["close", "-s", "shell-grow/node4"]);
    assert!(out.status.success(), "{out:?}");
    daemon_has(&r, &all, &[]);
    let p = shell(&r, &["-H", "node2", "--name", "grow"]);
    p.sees("[● node2]");
    line(&p, "!status");
    p.sees("apart:   none");
    line(&p, "!exit");
    assert_eq!(p.exit(), ExitInfo::Code(0));
    assert!(!p.text().contains("kept running apart"), "{:?}", p.text());
}

#[test]
fn an_unreachable_node_added_is_named_and_narrowing_flags_and_v_at_the_start() {
    let Some(r) = start_n("nshell-grow-ghost", 3) else {
        return;
    };
    let config = r.home.0.join(".ssh/config");
    let mut text = std::fs::read_to_string(&config).unwrap();
    text.push_str("Host ghost\n  HostName 127.0.0.9\n  Port 1\n  ConnectTimeout 5\n");
    std::fs::write(&config, text).unwrap();

    // -x takes node2 away; -v says how each node resolved and when its
    // shell answered.
    let p = shell(&r, &["-H", "node[1-3]", "-x", "node2", "-v"]);
    p.sees("[● node1 ● node3]");
    p.sees("node1: resolved to ");
    // The steps of the connection the daemon made, then the shell's answer.
    p.sees("node3: connected to 127.0.0.4:");
    p.sees("node3: authenticated as ");
    p.sees("node3: its shell answered");
    assert!(!p.text().contains("node2"), "{:?}", p.text());
    // A node that cannot be reached: named, shown down; the session goes on.
    line(&p, "!add ghost");
    p.sees("cannot reach ghost: ");
    p.sees("ghost could not be reached: shown down");
    p.sees("[✗ ghost ● node1 ● node3]");
    line(&p, "echo one-$((1+2))");
    p.sees("node1: one-3");
    p.sees("node3: one-3");
    // An explicit `!add` is not narrowed by -x.
    line(&p, "!add node2");
    p.sees("added node2");
    line(&p, "!drop ghost");
    p.sees("dropped ghost");
    line(&p, "echo two-$((2+2))");
    p.sees("node2: two-4");
    p.sees("node[1-3]: 0");
    line(&p, "!exit");
    assert_eq!(p.exit(), ExitInfo::Code(0));

    // --filter keeps the nodes a pattern matches; -4 goes into each
    // node's route (as -v shows).
    let p = shell(
        &r,
        &["-H", "node[1-3]", "--filter", "node[2-3]", "-4", "-v"],
    );
    p.sees("[● node2 ● node3]");
    p.sees("node2: resolved to ");
    p.sees(", IPv4 only; the daemon connects");
    line(&p, "echo kept-$((3*3))");
    p.sees("node[2-3]: 0");
    assert!(!p.text().contains("node1"), "{:?}", p.text());
    line(&p, "!exit");
    assert_eq!(p.exit(), ExitInfo::Code(0));
}

#[test]
fn with_b_one_ctrl_c_cancels_a_line_that_ignores_int() {
    let Some(r) = start_n("nshell-grow-b", 2) else {
        return;
    };
    let p = shell(&r, &["-H", "node[1-2]", "-b"]);
    p.sees("[● node1 ● node2]");
    // INT is ignored (by the subshell and the sleep it starts): without
    // -b, one Ctrl-C leaves it running.
    line(&p, "(trap '' INT; echo start; sleep 100; echo never)");
    p.sees("node1: start");
    p.sees("node2: start");
    p.pty.write(b"\x03".to_vec()).unwrap();
    p.sees("cancelling the line on every node");
    // (QUIT, the terminal's Ctrl-\, ends it: it is not ignored.)
    p.sees("node[1-2]: signal QUIT");
    line(&p, "echo after-$((4+4))");
    p.sees("node2: after-8");
    p.sees("node[1-2]: 0");
    let text = p.text();
    assert!(!text.contains(": never"), "{text:?}");
    assert!(!text.contains("left running"), "{text:?}");
    line(&p, "!exit");
    assert_eq!(p.exit(), ExitInfo::Code(0));
}

/// `-v` where the node's shell lives in tether on the node (the request
/// relayed there): the steps of the link the daemon made are shown too.
#[test]
fn v_shows_the_link_steps_of_a_node_whose_shell_lives_there() {
    let Some(r) = start_n("nshell-grow-far", 1).map(|r| r.deployed()) else {
        return;
    };
    let p = shell(&r, &["-H", "node1", "-v"]);
    // (tether is copied to the node first: on a loaded machine that takes
    // a while.)
    common::wait_for(120, "the prompt", || {
        p.text().contains("[● node1]").then_some(())
    });
    let text = p.text();
    for step in [
        "node1: resolved to ",
        "node1: connected to 127.0.0.2:",
        "node1: authenticated as ",
        "node1: its shell answered",
    ] {
        assert!(text.contains(step), "{step:?} in {text:?}");
    }
    line(&p, "!exit");
    assert_eq!(p.exit(), ExitInfo::Code(0));
}
