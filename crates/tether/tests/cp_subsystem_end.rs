//! `tether cp` to hosts whose SFTP subsystem ends at once: a `Subsystem
//! sftp` program that is missing, and a login that runs `nologin` instead
//! (sshd's `ForceCommand`, as a nologin shell does). Each fails at once,
//! alone, saying the subsystem ended and why (never "no answer within
//! 60 s; the host or its link may be down"); the healthy host gets its
//! copy. Real sshd and OpenSSH's sftp-server.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod cp_kit;

use std::path::Path;
use std::time::{Duration, Instant};

use cp_kit::Hosts;

#[test]
fn a_subsystem_that_ends_at_once_is_reported_at_once_with_its_reason() {
    let Some(nologin) = ["/usr/sbin/nologin", "/sbin/nologin"]
        .into_iter()
        .find(|p| Path::new(p).exists())
    else {
        eprintln!("SKIPPED: no nologin program");
        return;
    };
    let special = |i: usize, root: &Path| match i {
        0 => "Subsystem sftp /nonexistent/tether/sftp-server\n".to_owned(),
        1 => format!(
            "ForceCommand {nologin}\n{}",
            tether_testkit::sftp_subsystem(root, "", "").unwrap()
        ),
        _ => tether_testkit::sftp_subsystem(root, "", "").unwrap(),
    };
    let Some(h) = Hosts::start("ended", 3, &special) else {
        return;
    };
    let src = h.scratch.0.join("f");
    std::fs::write(&src, "data\n").unwrap();
    let started = Instant::now();
    let out = h.cp(
        &["--output", "json"],
        &[src.to_str().unwrap(), "node[1-3]:f"],
    );
    // A bound that fails the old minute-long wait, not a timing claim.
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(out.status.code(), Some(255), "{out:?}");
    let v: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let error = |host: &str| {
        let r = v.iter().find(|r| r["host"] == host).unwrap();
        r["error"].as_str().unwrap_or("").to_owned()
    };
    let e = error("node1");
    assert!(
        e.contains("the SFTP subsystem ended") && e.contains("status 127"),
        "{e}"
    );
    let e = error("node2");
    assert!(
        e.contains("the SFTP subsystem ended")
            && e.contains("status 1")
            && e.contains("This account is currently not available"),
        "{e}"
    );
    for e in [error("node1"), error("node2")] {
        assert!(!e.contains("no answer within"), "{e}");
    }
    assert_eq!(error("node3"), "");
    assert_eq!(std::fs::read(h.root(2).join("f")).unwrap(), b"data\n");
}
