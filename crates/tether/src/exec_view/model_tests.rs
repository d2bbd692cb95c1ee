#![allow(clippy::unwrap_used)]

use std::time::{Duration, Instant};

use tether_cluster::exec::{Halt, HostError, HostResult, Kept, Progress, StopReason, Stream};

use super::*;
use crate::exec_view::tail::TAIL_BYTES;

fn hosts(n: usize) -> Vec<String> {
    (1..=n).map(|i| format!("n{i}")).collect()
}

fn done(host: &str, code: u32, out: &str) -> Progress {
    Progress::Done(HostResult {
        host: host.into(),
        exit_code: Some(code),
        stdout: Kept::from_bytes(out.as_bytes()),
        ..HostResult::default()
    })
}

fn line(host: &str, text: &str) -> Progress {
    Progress::Line(host.into(), Stream::Stdout, text.as_bytes().to_vec())
}

fn folded(m: &mut Model) -> Vec<(State, String)> {
    m.prepare();
    m.summary()
        .iter()
        .filter(|(_, n, _)| *n > 0)
        .map(|(st, _, s)| (*st, s.clone()))
        .collect()
}

#[test]
fn hosts_move_through_the_states_folded_as_node_sets() {
    let mut m = Model::new("uptime", &hosts(20));
    assert_eq!(folded(&mut m), [(State::Waiting, "n[1-20]".to_owned())]);
    for i in 1..=12 {
        m.feed(&Progress::Started(format!("n{i}")));
    }
    for i in 1..=10 {
        m.feed(&Progress::Connected(format!("n{i}")));
    }
    for i in 1..=8 {
        m.feed(&done(&format!("n{i}"), 0, "up\n"));
    }
    m.feed(&done("n9", 2, ""));
    assert_eq!(
        folded(&mut m),
        [
            (State::Waiting, "n[13-20]".to_owned()),
            (State::Connecting, "n[11-12]".to_owned()),
            (State::Running, "n10".to_owned()),
            (State::Done, "n[1-8]".to_owned()),
            (State::Failed, "n9".to_owned()),
        ]
    );
    assert_eq!(m.count(&[State::Done, State::Failed, State::Cancelled]), 9);
    // Groups as they formed: eight alike, one apart.
    let groups: Vec<(String, String)> = m
        .groups
        .iter()
        .map(|g| (g.hosts.fold(), g.status.clone()))
        .collect();
    assert_eq!(
        groups,
        [
            ("n[1-8]".to_owned(), "exit 0".to_owned()),
            ("n9".to_owned(), "exit 2".to_owned())
        ]
    );
}

#[test]
fn a_cancelled_host_is_its_own_state_and_says_why() {
    let mut m = Model::new("sleep 9", &hosts(2));
    m.feed(&Progress::Started("n1".into()));
    m.feed(&Progress::Done(HostResult {
        host: "n1".into(),
        error: Some(HostError::Cancelled {
            why: StopReason::ThisHost,
            halt: Halt::Ended,
        }),
        ..HostResult::default()
    }));
    assert_eq!(m.hosts[0].state, State::Cancelled);
    let status = m.hosts[0].status.clone().unwrap();
    assert!(status.starts_with("cancelled (this host)"), "{status}");
}

#[test]
fn the_selection_follows_its_output_and_scrolls_back() {
    let mut m = Model::new("x", &hosts(3));
    let now = Instant::now();
    m.feed(&line("n2", "hello"));
    assert_eq!(m.shown(), Some(0));
    assert_eq!(m.key(Key::Down, now), None);
    assert_eq!(m.shown(), Some(1));
    assert_eq!(m.hosts[1].tail.lines()[0].bytes, b"hello");
    m.key(Key::PageUp, now);
    assert_eq!(m.scroll, 10);
    m.key(Key::Enter, now);
    assert_eq!(m.scroll, 0, "Enter follows the end again");
    m.key(Key::Char('j'), now);
    m.key(Key::Char('j'), now);
    assert_eq!(m.host_row, 2, "the last host is as far as it goes");
    m.key(Key::Char('k'), now);
    assert_eq!(m.host_row, 1);
    // The groups list shows its first host's output.
    m.feed(&done("n3", 0, "x\n"));
    m.key(Key::Tab, now);
    assert_eq!(m.pane, Pane::Groups);
    assert_eq!(m.shown(), Some(2));
    assert_eq!(m.shown_title(), "n3 (1)");
}

#[test]
fn cancels_are_asked_first_and_ctrl_c_twice_cancels_all() {
    let mut m = Model::new("x", &hosts(3));
    let now = Instant::now();
    m.feed(&Progress::Started("n2".into()));
    m.key(Key::Down, now);
    assert_eq!(m.key(Key::Char('c'), now), None);
    assert_eq!(m.ask, Some(Ask::CancelHost("n2".into())));
    assert_eq!(m.key(Key::Char('n'), now), None, "anything but y keeps it");
    assert_eq!(m.ask, None);
    m.key(Key::Char('c'), now);
    assert_eq!(
        m.key(Key::Char('y'), now),
        Some(Action::CancelHost("n2".into()))
    );
    m.key(Key::Char('q'), now);
    assert_eq!(m.key(Key::Char('y'), now), Some(Action::CancelAll));
    assert_eq!(m.key(Key::CtrlC, now), None);
    assert!(m.note.as_deref().unwrap().contains("Ctrl-C again"));
    let later = now + Duration::from_secs(3);
    assert_eq!(
        m.key(Key::CtrlC, later),
        None,
        "too late: a first one again"
    );
    assert_eq!(
        m.key(Key::CtrlC, later + Duration::from_millis(300)),
        Some(Action::CancelAll)
    );
    // A host over is not asked about.
    m.feed(&done("n1", 0, ""));
    m.key(Key::Up, now);
    m.key(Key::Char('c'), now);
    assert_eq!(m.ask, None);
    assert!(m.note.as_deref().unwrap().contains("over already"));
}

#[test]
fn the_tail_keeps_the_latest_lines_within_its_bound() {
    let mut m = Model::new("x", &hosts(1));
    let big = "y".repeat(1000);
    for i in 0..200 {
        m.feed(&line("n1", &format!("{i} {big}")));
    }
    let tail = &m.hosts[0].tail;
    let kept: usize = tail.lines().iter().map(|l| l.bytes.len()).sum();
    assert!(kept <= TAIL_BYTES, "{kept}");
    assert_eq!(tail.dropped as usize + tail.lines().len(), 200);
    assert!(tail.lines().back().unwrap().bytes.starts_with(b"199 "));
}

#[test]
fn the_diff_pairs_the_selection_with_the_largest_group() {
    let mut m = Model::new("x", &hosts(3));
    let now = Instant::now();
    m.feed(&done("n1", 0, "a\n"));
    m.feed(&done("n2", 0, "b\n"));
    m.feed(&done("n3", 0, "b\n"));
    m.key(Key::Char('d'), now);
    assert!(m.diff);
    let (base, sel) = m.diff_pair().unwrap();
    assert_eq!(
        (base.hosts.fold(), sel.hosts.fold()),
        ("n[2-3]".into(), "n1".into())
    );
    assert!(m.take_dirty());
    assert!(!m.take_dirty(), "drawn once per change");
}

#[test]
fn with_batch_one_ctrl_c_cancels_all() {
    let mut m = Model::new("x", &hosts(1));
    m.batch = true;
    assert_eq!(m.key(Key::CtrlC, Instant::now()), Some(Action::CancelAll));
}

#[test]
fn a_line_of_a_host_not_shown_draws_nothing_again() {
    let mut m = Model::new("x", &hosts(2));
    assert!(m.take_dirty());
    m.feed(&line("n2", "elsewhere"));
    assert!(!m.take_dirty(), "n1 is shown, not n2");
    m.feed(&line("n1", "here"));
    assert!(m.take_dirty());
}
