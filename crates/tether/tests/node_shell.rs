//! `tether shell` against 5 real sshd nodes, driven as a person drives it:
//! tether in a PTY, lines typed, the screen read. Per-node output and exit
//! codes, choosing nodes, broadcast, gather, Ctrl-C on every node, a node
//! waiting for input answered through `!attach`, a node whose link dies,
//! and `!detach` then `--attach` with cwd and history kept.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::multi::{line, shell, since, wait_lines};
use common::remote::start_n;
use tether_transport::{ExitInfo, Terminal};

#[test]
fn lines_run_on_the_active_nodes_with_their_output_and_codes() {
    let Some(r) = start_n("nshell-basic", 5) else {
        return;
    };
    let p = shell(&r, &["-H", "node[1-5]"]);
    p.sees("[● node1 ● node2 ● node3 ● node4 ● node5]");
    line(&p, "echo hi-$((6*7))");
    for n in 1..=5 {
        p.sees(&format!("node{n}: hi-42"));
    }
    p.sees("node[1-5]: 0");
    // Choose two, move them elsewhere; the others stay.
    line(&p, "!use node[1-2]");
    p.sees("[● node1 ● node2 ○ node3 ○ node4 ○ node5]");
    line(&p, "cd /tmp && pwd");
    p.sees("node2: /tmp");
    p.sees("node[1-2]: 0");
    line(&p, "!all");
    // Tab completes the commands (and node names).
    line(&p, "!li\t");
    p.sees("CWD");
    wait_lines(&p, "!list", &["node1 ", "/tmp"]);
    // A failure on one node: the summary folds, the prompt says so.
    line(&p, "!node3");
    p.sees("[○ node1 ○ node2 ● node3 ○ node4 ○ node5]");
    line(&p, "exit_with() { return $1; }; exit_with 3");
    p.sees("node3: 3");
    p.sees("(1 failed)$ ");
    // Broadcast goes everywhere, whatever is active.
    line(&p, "!broadcast pwd");
    p.sees("node1: /tmp");
    p.sees("node5: /");
    p.sees("node[1-5]: 0");
    // Gathered: one block for identical outputs.
    line(&p, "!gather on");
    line(&p, "!all");
    line(&p, "echo same");
    p.sees("node[1-5] (5)");
    line(&p, "!gather off");
    // Mistakes are explained, not run.
    line(&p, "!frobnicate now");
    p.sees("!frobnicate is not a command");
    line(&p, "!use node9");
    p.sees("node9 not in this session");
    line(&p, "!exit");
    assert_eq!(p.exit(), ExitInfo::Code(0));
}

#[test]
fn ctrl_c_interrupts_every_node_and_the_next_line_runs() {
    let Some(r) = start_n("nshell-int", 5) else {
        return;
    };
    let p = shell(&r, &["-H", "node[1-5]"]);
    p.sees("node[1-5]");
    p.sees("]");
    line(&p, "echo start; sleep 100");
    for n in 1..=5 {
        p.sees(&format!("node{n}: start"));
    }
    p.pty.write(b"\x03".to_vec()).unwrap();
    p.sees("interrupting");
    p.sees("node[1-5]: signal INT");
    line(&p, "echo after-$((1+1))");
    p.sees("node5: after-2");
    // Ctrl-D on an empty line of the prompt leaves (nothing runs: no
    // question).
    common::wait_for(20, "the prompt", || {
        let after = since(&p, "after-2");
        (after.contains("node[1-5]: 0") && after.ends_with("\x1b[?2026l")).then_some(())
    });
    p.pty.write(b"\x04".to_vec()).unwrap();
    assert_eq!(p.exit(), ExitInfo::Code(0));
}

#[test]
fn a_node_waiting_for_input_is_answered_through_attach() {
    let Some(r) = start_n("nshell-wait", 3) else {
        return;
    };
    let p = shell(&r, &["-H", "node[1-3]"]);
    p.sees("[● node1 ● node2 ● node3]");
    line(&p, "!node2");
    line(&p, "read -r answer; echo got-$answer");
    p.sees("node2 waits for input");
    line(&p, "!attach node2");
    p.sees("~. comes back here");
    p.pty.write(b"yes\r".to_vec()).unwrap();
    p.sees("got-yes");
    p.pty.write(b"~.".to_vec()).unwrap();
    p.sees("[detached");
    // Back at the prompt; the node's finished command is collected.
    line(&p, "echo next");
    p.sees("node2: next");
    // Or answered from the prompt: `!send` types a line into the nodes
    // waiting for input.
    line(&p, "!all");
    line(&p, "read -r a; echo got-$a-here");
    p.sees("node[1-3] wait for input");
    line(&p, "!send yes");
    p.sees("node1: got-yes-here");
    p.sees("node3: got-yes-here");
    p.sees("node[1-3]: 0");
    line(&p, "!exit");
    assert_eq!(p.exit(), ExitInfo::Code(0));
}

#[test]
fn detach_then_attach_keeps_every_shell_and_the_history() {
    let Some(r) = start_n("nshell-detach", 3) else {
        return;
    };
    let p = shell(&r, &["-H", "node[1-3]", "--name", "ops"]);
    p.sees("[● node1 ● node2 ● node3]");
    line(&p, "cd /tmp; export MARK=kept-1");
    p.sees("node[1-3]: 0");
    line(&p, "!detach");
    assert_eq!(p.exit(), ExitInfo::Code(0));
    p.sees("tether shell --attach ops");

    let p = shell(&r, &["--attach", "ops"]);
    p.sees("[● node1 ● node2 ● node3] /tmp$ ");
    line(&p, "echo $MARK");
    p.sees("node3: kept-1");
    // The history came back: Up three times is the first line typed
    // before detaching.
    p.pty.write(b"\x1b[A\x1b[A\x1b[A".to_vec()).unwrap();
    p.sees("cd /tmp; export MARK=kept-1");
    p.pty.write(b"\x15!exit\r".to_vec()).unwrap();
    assert_eq!(p.exit(), ExitInfo::Code(0));
    // Closed: nothing to come back to.
    let out = r.tether(&["shell", "--attach", "ops"]);
    assert_eq!(out.status.code(), Some(255));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no tether shell named"));
}

/// One node's connection dies under the session (its sshd process
/// killed): the others go on, and the node comes back on the next line
/// with its shell restored (the cwd it had).
#[test]
fn a_node_whose_link_dies_comes_back_and_the_others_go_on() {
    let Some(r) = start_n("nshell-drop", 3) else {
        return;
    };
    let p = shell(&r, &["-H", "node[1-3]"]);
    p.sees("[● node1 ● node2 ● node3]");
    line(&p, "cd /tmp");
    p.sees("node[1-3]: 0");
    line(&p, "!node3");
    line(&p, "echo PID=$$.");
    p.sees("node3: PID=");
    let text = p.text();
    let shell_pid: i32 = text
        .rsplit("node3: PID=")
        .next()
        .and_then(|s| s.split('.').next())
        .and_then(|s| s.parse().ok())
        .expect("the pid");
    common::remote::kill_connection_above(shell_pid);
    line(&p, "!all");
    line(&p, "echo alive-$((2+3))");
    p.sees("node1: alive-5");
    p.sees("node2: alive-5");
    // The others go on. node3's line either met the dying shell (it says
    // its shell exited: the line may not have run) or a fresh one; either
    // way the next line runs in a fresh shell where the old one was.
    p.sees("node1: alive-5");
    p.sees("node2: alive-5");
    wait_lines(&p, "echo alive", &["node[1-", ": 0"]);
    line(&p, "echo back-$(pwd)-$$.");
    p.sees("node3: back-/tmp-");
    let text = p.text();
    let now: i32 = text
        .rsplit("node3: back-/tmp-")
        .next()
        .and_then(|s| s.split('.').next())
        .and_then(|s| s.parse().ok())
        .expect("the new pid");
    assert_ne!(now, shell_pid, "the same shell: {text:?}");
    line(&p, "!exit");
    assert_eq!(p.exit(), ExitInfo::Code(0));
}

/// A node that cannot be reached is reported once with the reason, shown
/// down, and not retried at every line; the others work.
#[test]
fn a_node_that_never_connects_is_reported_once() {
    let Some(r) = start_n("nshell-ghost", 2) else {
        return;
    };
    let config = r.home.0.join(".ssh/config");
    let mut text = std::fs::read_to_string(&config).unwrap();
    text.push_str("Host ghost\n  HostName 127.0.0.9\n  Port 1\n  ConnectTimeout 5\n");
    std::fs::write(&config, text).unwrap();
    let p = shell(&r, &["-H", "node[1-2],ghost"]);
    p.sees("cannot reach ghost: ");
    p.sees("[✗ ghost ● node1 ● node2]");
    line(&p, "echo one");
    p.sees("node2: one");
    line(&p, "echo two");
    p.sees("node2: two");
    line(&p, "!list");
    wait_lines(&p, "!list", &["ghost", "down"]);
    assert_eq!(
        p.text().matches("cannot reach ghost").count(),
        1,
        "reported once: {:?}",
        p.text()
    );
    line(&p, "!exit");
    assert_eq!(p.exit(), ExitInfo::Code(0));
}

/// The config's `[shell]` settings (per cluster over the top ones) shape
/// the prompt, the prefix and the output lines; a bad one is an error
/// with its place.
#[test]
fn settings_from_the_config_and_their_errors() {
    let Some(r) = start_n("nshell-settings", 2) else {
        return;
    };
    let file = r.home.0.join("tether.toml");
    std::fs::write(
        &file,
        "[shell]\nprefix = \"%\"\ntimestamps = true\n[clusters.pair]\nnodes = \"node[1-2]\"\n[clusters.pair.shell]\nprompt = \"{name} {nodes}{failed}> \"\n",
    )
    .unwrap();
    let config = file.display().to_string();
    let p = shell(&r, &["-C", "pair", "--config", &config]);
    p.sees("pair [● node1 ● node2]> ");
    line(&p, "echo stamped");
    p.sees("s] node2: stamped");
    assert!(p.text().contains("[+0."), "{:?}", p.text());
    // `!` is the shell's now; `%` is tether's.
    line(&p, "%node2");
    p.sees("pair [○ node1 ● node2]> ");
    line(&p, "%exit");
    assert_eq!(p.exit(), ExitInfo::Code(0));

    std::fs::write(&file, "[shell]\ncolor = \"blue\"\n").unwrap();
    let out = r.tether(&["shell", "-H", "node1", "--config", &config]);
    assert_eq!(out.status.code(), Some(255));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("tether.toml:2:9"), "{err}");
}

/// A command left running by a second Ctrl-C is collected by the next
/// line given to its node, and only by it: every line it prints is shown
/// once (none twice, none lost), in the line that collects it, before that
/// line's own output and summary.
#[test]
fn a_command_left_running_is_collected_once_by_its_nodes_next_line() {
    let Some(r) = start_n("nshell-left", 2) else {
        return;
    };
    let p = shell(&r, &["-H", "node[1-2]"]);
    p.sees("[● node1 ● node2]");
    // It ignores INT, so both Ctrl-C find it running.
    line(
        &p,
        "(trap '' INT; for i in 1 2 3 4 5 6 7 8 9 10; do echo tick-$i.; sleep 0.5; done)",
    );
    p.sees("node1: tick-1.");
    p.sees("node2: tick-1.");
    p.pty.write(b"\x03".to_vec()).unwrap();
    p.sees("interrupting");
    p.pty.write(b"\x03".to_vec()).unwrap();
    p.sees("left running");
    // node2's next line collects node2's command; node1's waits.
    line(&p, "!node2");
    p.sees("[○ node1 ● node2]");
    line(&p, "echo next-$((6*7))");
    let prompt = |mark: &str, summary: &str| {
        common::wait_for(30, &format!("the summary after {mark}"), || {
            let after = since(&p, mark);
            (after.contains(summary) && after.ends_with("\x1b[?2026l")).then_some(())
        })
    };
    prompt("next-42", "node2: 0");
    line(&p, "!all");
    line(&p, "echo last-$((2*4))");
    prompt("last-8", "node[1-2]: 0");
    let text = p.text();
    let second = &text[text.find("echo next-").unwrap()..text.find("!all").unwrap()];
    assert!(!second.contains("node1:"), "{second:?}");
    for (node, next) in [("node1", "last-8"), ("node2", "next-42")] {
        for i in 1..=10 {
            let tick = format!("{node}: tick-{i}.");
            assert_eq!(text.matches(&tick).count(), 1, "{tick}: {text:?}");
        }
        let (Some(last_tick), Some(next)) = (
            text.find(&format!("{node}: tick-10.")),
            text.find(&format!("{node}: {next}")),
        ) else {
            panic!("{node}: {text:?}");
        };
        assert!(last_tick < next, "{node}: {text:?}");
    }
    line(&p, "!exit");
    assert_eq!(p.exit(), ExitInfo::Code(0));
}
