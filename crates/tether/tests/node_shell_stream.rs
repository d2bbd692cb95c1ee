//! `tether shell` shows each node's output as the node writes it, on one
//! subscription per node and line (issue 25): no polling, so with
//! `timestamps = true` each line is stamped with when the node wrote it
//! (not with half-second batches), and the daemon is asked once per node,
//! however long the line runs.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::Person;
use common::multi::{Shared, line, prompt_after, since};
use common::remote::start_n;
use tether_transport::ExitInfo;

/// The requests the daemon's trace logged for the session `ns`.
fn requests(dir: &std::path::Path, ns: &str) -> Vec<String> {
    let log = std::fs::read_to_string(dir.join("daemon.log")).unwrap_or_default();
    log.lines()
        .filter(|l| l.contains("trace: ") && l.ends_with(&format!("in {ns:?}")))
        .map(str::to_owned)
        .collect()
}

/// Each node's stamps of its lines `tag-N`, in the order shown.
fn stamps(text: &str, node: &str, tag: &str) -> Vec<f64> {
    text.split('\n')
        .filter_map(|l| {
            let l = l.trim_end_matches('\r');
            let rest = l.get(l.find("[+")? + 2..)?;
            let (stamp, shown) = rest.split_once("s] ")?;
            shown
                .starts_with(&format!("{node}: {tag}-"))
                .then(|| stamp.parse().unwrap())
        })
        .collect()
}

#[test]
fn each_line_is_shown_as_the_node_writes_it_on_one_subscription_per_node() {
    // The nodes' shells live in tether on each node (the default).
    let Some(r) = start_n("nshell-stream", 5).map(|r| r.deployed()) else {
        return;
    };
    let config = r.home.0.join("tether.toml");
    std::fs::write(&config, "[shell]\ntimestamps = true\n").unwrap();
    let config = config.display().to_string();
    let p = Person::spawn(
        &[
            "shell",
            "-H",
            "node[1-5]",
            "--name",
            "stream",
            "--config",
            &config,
        ],
        &r.daemon,
        &[
            ("HOME", r.home.0.display().to_string()),
            ("NO_COLOR", "1".into()),
            ("TETHER_DAEMON_TRACE", "1".into()),
        ],
    );
    p.sees("[● node1 ● node2 ● node3 ● node4 ● node5]");
    let ns = "shell-stream";
    let before = requests(&r.daemon.dir, ns).len();
    assert!(before >= 5, "the trace is on: {before}");

    // A line every 100 ms for 3 s on 5 nodes.
    line(&p, "for i in $(seq 1 30); do echo t-$i; sleep 0.1; done");
    prompt_after(&p, 60, "seq 1 30", "node[1-5]: 0");
    let text = p.text();
    for n in 1..=5 {
        let node = format!("node{n}");
        let at = stamps(&text, &node, "t");
        assert_eq!(at.len(), 30, "{node}: {text:?}");
        assert!(at.windows(2).all(|w| w[0] <= w[1]), "{node}: {at:?}");
        // Stamped as written, 100 ms apart: not half-second batches
        // (which would give about 6 distinct stamps).
        let mut distinct = at.clone();
        distinct.dedup();
        assert!(distinct.len() >= 25, "{node}: {at:?}");
    }
    // One request per node for the whole line: no polling.
    let asked = requests(&r.daemon.dir, ns);
    let line_requests = &asked[before..];
    assert_eq!(line_requests.len(), 5, "{line_requests:#?}");
    assert!(
        line_requests
            .iter()
            .all(|l| l.contains("trace: run+follow ")),
        "{line_requests:#?}"
    );

    // Each line is on screen before the node writes the next one: the
    // next waits for a file made only once every node's line is seen.
    let d = Shared::new("nshell-stream");
    line(
        &p,
        &format!(
            "echo w-1; while [ ! -e {go} ]; do sleep 0.01; done; echo w-2",
            go = d.path("go")
        ),
    );
    common::wait_for(30, "w-1 on every node", || {
        let after = since(&p, "echo w-1");
        (1..=5)
            .all(|n| after.contains(&format!("node{n}: w-1")))
            .then_some(())
    });
    assert!(!since(&p, "echo w-1").contains(": w-2"), "{:?}", p.text());
    std::fs::write(d.0.join("go"), "").unwrap();
    prompt_after(&p, 30, "echo w-1", "node[1-5]: 0");
    line(&p, "!exit");
    assert_eq!(p.exit(), ExitInfo::Code(0));
}
