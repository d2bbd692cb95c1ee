//! `tether shell` whose nodes' shells live in tether on each node (issue
//! 26), against 5 real sshd: the multi-node session survives `!detach`
//! and a SIGKILLed local daemon, and `tether shell --attach` from a fresh
//! daemon finds every node's same shell (its pid, cwd and a variable that
//! was never exported).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::multi::{line, shell};
use common::remote::start_n;
use tether_transport::ExitInfo;

/// Each node's `tag=VALUE.` in `text`, in node order.
fn per_node(text: &str, tag: &str, n: usize) -> Vec<String> {
    (1..=n)
        .map(|i| {
            let key = format!("node{i}: {tag}=");
            text.rsplit(&key)
                .next()
                .filter(|_| text.contains(&key))
                .and_then(|s| s.split('.').next())
                .unwrap_or_else(|| panic!("no {key:?} in {text:?}"))
                .to_owned()
        })
        .collect()
}

#[test]
fn detach_kill_the_local_daemon_and_attach_again_finds_every_shell() {
    let Some(r) = start_n("nshell-far", 5).map(|r| r.deployed()) else {
        return;
    };
    let p = shell(&r, &["-H", "node[1-5]", "--name", "far"]);
    p.sees("[● node1 ● node2 ● node3 ● node4 ● node5]");
    // A different cwd on each node, a variable never exported.
    line(
        &p,
        "mkdir -p /tmp/ns-far-$(hostname)-$$ && cd /tmp/ns-far-$(hostname)-$$; V=unexported",
    );
    p.sees("node[1-5]: 0");
    line(&p, "echo ID=$$-$(pwd)-$V.");
    for i in 1..=5 {
        p.sees(&format!("node{i}: ID="));
    }
    let before = per_node(&p.text(), "ID", 5);
    line(&p, "!detach");
    assert_eq!(p.exit(), ExitInfo::Code(0));

    common::sigkill(r.daemon.pid());
    let p = shell(&r, &["--attach", "far"]);
    p.sees("[● node1 ● node2 ● node3 ● node4 ● node5]");
    line(&p, "echo AGAIN=$$-$(pwd)-$V.");
    for i in 1..=5 {
        p.sees(&format!("node{i}: AGAIN="));
    }
    let after = per_node(&p.text(), "AGAIN", 5);
    assert_eq!(after, before, "every node's same shell, cwd and variable");
    for id in &after {
        assert!(id.ends_with("-unexported"), "{id}");
    }
    line(&p, "!exit");
    assert_eq!(p.exit(), ExitInfo::Code(0));
}

/// The links to the nodes are cut (the sshd processes serving them
/// killed) while a line runs there: a node whose link was in use is
/// marked away, not failed; its command runs on in tether there, and the
/// next line first collects its rest and its end: every output line of
/// every node shown once.
#[test]
fn nodes_whose_link_drops_mid_line_are_marked_away_and_come_back() {
    let Some(r) = start_n("nshell-away", 3).map(|r| r.deployed()) else {
        return;
    };
    let p = shell(&r, &["-H", "node[1-3]"]);
    p.sees("[● node1 ● node2 ● node3]");
    line(&p, "for i in $(seq 1 30); do echo L$i; sleep 0.1; done");
    for i in 1..=3 {
        p.sees(&format!("node{i}: L2\r\n"));
    }
    common::remote::kill_connections_of(&r.sshd[0]);
    p.sees("link lost, runs on there");
    p.sees("◌ node");
    // The next line collects each node's rest first, then runs.
    common::wait_for(60, "every node back with its rest", || {
        line(&p, "echo next-$((40+2))");
        std::thread::sleep(std::time::Duration::from_millis(500));
        (1..=3)
            .all(|i| p.text().contains(&format!("node{i}: next-42")))
            .then_some(())
    });
    let text = p.text();
    for i in 1..=3 {
        for n in 1..=30 {
            let shown = format!("node{i}: L{n}\r\n");
            assert_eq!(
                text.matches(&shown).count(),
                1,
                "{shown:?} once in {text:?}"
            );
        }
    }
    assert!(text.contains("earlier line `for i"), "{text:?}");
    line(&p, "!exit");
    assert_eq!(p.exit(), ExitInfo::Code(0));
}

/// Another controller (a daemon of its own, nothing of the first one's
/// state) comes back to the session by its name and nodes: the shells
/// live in tether on the nodes.
#[test]
fn attach_from_another_controller_finds_every_shell() {
    let Some(r) = start_n("nshell-other", 3).map(|r| r.deployed()) else {
        return;
    };
    let p = shell(&r, &["-H", "node[1-3]", "--name", "ops"]);
    p.sees("[● node1 ● node2 ● node3]");
    line(&p, "cd /usr/share; V=there-$$");
    p.sees("node[1-3]: 0");
    line(&p, "echo ID=$V-$(pwd).");
    for i in 1..=3 {
        p.sees(&format!("node{i}: ID="));
    }
    let before = per_node(&p.text(), "ID", 3);
    line(&p, "!detach");
    assert_eq!(p.exit(), ExitInfo::Code(0));

    let other = common::Daemon::new("nshell-other-controller");
    let env = [
        ("HOME", r.home.0.display().to_string()),
        ("NO_COLOR", "1".into()),
    ];
    let q = common::Person::spawn(
        &["shell", "--attach", "ops", "-H", "node[1-3]"],
        &other,
        &env,
    );
    q.sees("[● node1 ● node2 ● node3] /usr/share$ ");
    line(&q, "echo AGAIN=$V-$(pwd).");
    for i in 1..=3 {
        q.sees(&format!("node{i}: AGAIN="));
    }
    assert_eq!(per_node(&q.text(), "AGAIN", 3), before);
    line(&q, "!exit");
    assert_eq!(q.exit(), ExitInfo::Code(0));
    let _ = other.run(&["daemon", "stop"]);
}
