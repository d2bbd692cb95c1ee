//! Helpers shared by the PTY tests.

#![allow(dead_code, missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use tether_pty::{LocalPty, SpawnSpec};
use tether_transport::{Inspection, OutputStream, Terminal};

pub const DEADLINE: Duration = Duration::from_secs(10);

pub fn spec(program: &str, args: &[&str]) -> SpawnSpec {
    let mut s = SpawnSpec::new(program);
    s.args = args.iter().map(|a| (*a).to_owned()).collect();
    s.env = vec![
        ("PATH".into(), "/usr/local/bin:/usr/bin:/bin".into()),
        ("TERM".into(), "dumb".into()),
        ("HOME".into(), std::env::temp_dir().display().to_string()),
        ("LANG".into(), "C.UTF-8".into()),
    ];
    s
}

pub fn spawn(program: &str, args: &[&str]) -> (LocalPty, OutputStream) {
    let pty = LocalPty::spawn(&spec(program, args)).unwrap();
    let out = pty.take_output().unwrap();
    (pty, out)
}

/// Reads output until `want` appears (or the deadline passes: panics).
pub async fn read_until(out: &mut OutputStream, seen: &mut Vec<u8>, want: &str) {
    let deadline = tokio::time::Instant::now() + DEADLINE;
    while !String::from_utf8_lossy(seen).contains(want) {
        match tokio::time::timeout_at(deadline, out.recv()).await {
            Ok(Some(chunk)) => seen.extend(chunk),
            Ok(None) => panic!(
                "stream ended before {want:?}; got {:?}",
                String::from_utf8_lossy(seen)
            ),
            Err(_) => panic!(
                "no {want:?} within {DEADLINE:?}; got {:?}",
                String::from_utf8_lossy(seen)
            ),
        }
    }
}

/// Reads everything until the stream ends.
pub async fn read_to_end(out: &mut OutputStream) -> Vec<u8> {
    let mut all = Vec::new();
    loop {
        match tokio::time::timeout(DEADLINE, out.recv()).await {
            Ok(Some(chunk)) => all.extend(chunk),
            Ok(None) => return all,
            Err(_) => panic!(
                "stream did not end; got {:?}",
                String::from_utf8_lossy(&all)
            ),
        }
    }
}

/// Inspects until `pred` holds, with a deadline.
pub fn inspect_until(pty: &LocalPty, what: &str, pred: impl Fn(&Inspection) -> bool) -> Inspection {
    let start = Instant::now();
    loop {
        let i = pty.inspect().unwrap();
        if pred(&i) {
            return i;
        }
        assert!(
            start.elapsed() < DEADLINE,
            "never saw {what}; last inspection {i:?}"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// True while a process with this pid and start time exists (not a zombie).
pub fn alive(pid: i32, start_time: u64) -> bool {
    tether_pty::procfs::stat(pid).is_some_and(|s| s.start_time == start_time && s.state != 'Z')
}

pub fn wait_gone(pid: i32, start_time: u64) {
    let start = Instant::now();
    while alive(pid, start_time) {
        assert!(start.elapsed() < DEADLINE, "process {pid} still alive");
        std::thread::sleep(Duration::from_millis(5));
    }
}
