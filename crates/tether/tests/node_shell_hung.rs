//! `tether shell` with one node's link hung under a line (issue 36): the
//! sshd processes serving it SIGSTOPped (no FIN, no answer) while the
//! line runs. The wait for that node ends within a bound and says the
//! link hung; the other nodes' results are unaffected; once the sshd is
//! resumed (SIGCONT), the hung node's output for that line is shown, each
//! byte once. Against 3 real sshd; skips with a message when sshd is
//! missing.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::multi::{Shared, line, shell};
use common::remote::{Remote, resume, start_n, stop_connections_of};
use tether_transport::ExitInfo;

/// The run: node1's link hangs once every node printed its first line;
/// the line then goes on (a file the test makes); node1's wait ends
/// saying the link hung while node2 and node3 end with 0; resumed, node1's
/// second line comes, once.
fn hung_under_a_line(r: &Remote, name: &str, kept: bool) {
    let shared = Shared::new(name);
    let p = shell(r, &["-H", "node[1-3]"]);
    p.sees("[● node1 ● node2 ● node3]");
    let go = shared.path("go");
    line(
        &p,
        &format!(
            "echo first-$((40+1)); while [ ! -e {go} ]; do sleep 0.1; done; echo second-$((40+2))"
        ),
    );
    for i in 1..=3 {
        p.sees(&format!("node{i}: first-41"));
    }
    let stopped = stop_connections_of(&r.sshd[0]);
    std::fs::write(&go, "").unwrap();
    for i in 2..=3 {
        p.sees(&format!("node{i}: second-42"));
    }
    // (`sees` waits 20 s at most: the keepalive's 1 × 2 s, or the relay's
    // 2 s of silence and a 3 s round trip, are well within it.)
    p.sees("node1: the link hung");
    p.sees("node[2-3]: 0");
    resume(&stopped);
    // Kept there, the rest comes with the node's next line; else the
    // node's next line runs in a fresh shell over a fresh connection.
    let back = if kept {
        "node1: second-42"
    } else {
        "node1: next-43"
    };
    common::wait_for(60, "node1 once its link is back", || {
        line(&p, "echo next-$((40+3))");
        std::thread::sleep(std::time::Duration::from_millis(500));
        p.text().contains(back).then_some(())
    });
    let text = p.text();
    for i in 1..=3 {
        for what in ["first-41", "second-42"] {
            if i == 1 && what == "second-42" && !kept {
                continue;
            }
            let shown = format!("node{i}: {what}\r\n");
            assert_eq!(
                text.matches(&shown).count(),
                1,
                "{shown:?} once in {text:?}"
            );
        }
    }
    line(&p, "!exit");
    assert_eq!(p.exit(), ExitInfo::Code(0));
}

/// A short keepalive for every node, in the user's ssh_config.
fn short_keepalive(r: &Remote) {
    let config = r.home.0.join(".ssh/config");
    let mut text = std::fs::read_to_string(&config).unwrap();
    text.push_str("Host *\n  ServerAliveInterval 1\n  ServerAliveCountMax 2\n");
    std::fs::write(&config, text).unwrap();
}

/// The nodes' shells driven over the link (agentless).
#[test]
fn a_hung_node_says_so_and_its_output_comes_once_it_is_back() {
    let Some(r) = start_n("nshell-hung", 3) else {
        return;
    };
    short_keepalive(&r);
    hung_under_a_line(&r, "nshell-hung-go", false);
}

/// The nodes' shells living in tether on each node.
#[test]
fn a_hung_node_with_tether_there_says_so_and_its_output_comes_back() {
    let Some(r) = start_n("nshell-hung-far", 3).map(|r| r.deployed()) else {
        return;
    };
    short_keepalive(&r);
    hung_under_a_line(&r, "nshell-hung-far-go", true);
}

/// A node's link hangs under a line and comes back within the keepalive
/// bound (the default one): its output for that line is shown once, with
/// its code (issue 36: the code came back, the output never did).
fn hung_briefly(r: &Remote, name: &str) {
    let shared = Shared::new(name);
    let p = shell(r, &["-H", "node[1-3]"]);
    p.sees("[● node1 ● node2 ● node3]");
    let go = shared.path("go");
    line(
        &p,
        &format!(
            "echo first-$((40+1)); while [ ! -e {go} ]; do sleep 0.1; done; echo second-$((40+2))"
        ),
    );
    for i in 1..=3 {
        p.sees(&format!("node{i}: first-41"));
    }
    let stopped = stop_connections_of(&r.sshd[0]);
    std::fs::write(&go, "").unwrap();
    for i in 2..=3 {
        p.sees(&format!("node{i}: second-42"));
    }
    resume(&stopped);
    p.sees("node1: second-42");
    p.sees("node[1-3]: 0");
    let text = p.text();
    for i in 1..=3 {
        for what in ["first-41", "second-42"] {
            let shown = format!("node{i}: {what}\r\n");
            assert_eq!(
                text.matches(&shown).count(),
                1,
                "{shown:?} once in {text:?}"
            );
        }
    }
    line(&p, "!exit");
    assert_eq!(p.exit(), ExitInfo::Code(0));
}

#[test]
fn a_node_hung_briefly_shows_its_output_once() {
    let Some(r) = start_n("nshell-brief", 3) else {
        return;
    };
    hung_briefly(&r, "nshell-brief-go");
}

#[test]
fn a_node_hung_briefly_with_tether_there_shows_its_output_once() {
    let Some(r) = start_n("nshell-brief-far", 3).map(|r| r.deployed()) else {
        return;
    };
    hung_briefly(&r, "nshell-brief-far-go");
}
