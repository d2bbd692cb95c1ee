//! Ending a whole process tree: everything in the shell's session, every
//! descendant of the shell, and every process still holding the PTY open
//! (which catches `setsid prog &` whose parent has exited), every process
//! of ours whose start environment holds the tree's marker (which catches
//! `setsid` with redirected descriptors and double-forked daemons), each
//! verified by start time before it is signalled so a reused pid is never
//! hit.

use std::collections::HashSet;
use std::path::Path;
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

use crate::procfs::{self, Stat};

/// A process to end: pid plus start time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct Target {
    pid: i32,
    start_time: u64,
}

/// The processes of the tree rooted at `root` (a session leader, 0 for
/// none): members of its session, holders of the PTY `pts`, processes of
/// ours carrying `marker` (`NAME=VALUE` in their environment), and their
/// descendants by parentage.
fn members(root: i32, pts: Option<&Path>, marker: Option<&str>) -> Vec<Target> {
    let me = std::process::id() as i32;
    // This process, and a child of ours other than the root, are never in
    // the tree: such a child is another terminal's program caught between
    // fork and exec, still holding a descriptor this process had open on
    // this PTY for a moment (an inspection opens the slave).
    let all: Vec<Stat> = procfs::all_processes()
        .into_iter()
        .filter(|s| s.pid != me && (s.ppid != me || s.pid == root))
        .collect();
    let mut tree: HashSet<i32> = HashSet::new();
    if root > 0 {
        tree.insert(root);
    }
    if let Some(pts) = pts {
        tree.extend(all.iter().filter(|s| holds(s.pid, pts)).map(|s| s.pid));
    }
    if let Some(marker) = marker {
        use std::os::unix::fs::MetadataExt;
        let uid = std::fs::metadata("/proc/self").map_or(u32::MAX, |m| m.uid());
        tree.extend(
            all.iter()
                .filter(|s| carries(s.pid, uid, marker))
                .map(|s| s.pid),
        );
    }
    loop {
        let before = tree.len();
        for s in &all {
            if tree.contains(&s.ppid) || (root > 0 && s.session == root) {
                tree.insert(s.pid);
            }
        }
        if tree.len() == before {
            break;
        }
    }
    all.iter()
        .filter(|s| tree.contains(&s.pid) && s.state != 'Z')
        .map(|s: &Stat| Target {
            pid: s.pid,
            start_time: s.start_time,
        })
        .collect()
}

/// True when `pid` has a descriptor open on `pts`.
fn holds(pid: i32, pts: &Path) -> bool {
    let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
        return false;
    };
    fds.flatten()
        .any(|fd| std::fs::read_link(fd.path()).is_ok_and(|t| t == pts))
}

/// True when `pid` is ours and its start environment holds `marker`.
fn carries(pid: i32, uid: u32, marker: &str) -> bool {
    use std::os::unix::fs::MetadataExt;
    let ours = std::fs::metadata(format!("/proc/{pid}")).is_ok_and(|m| m.uid() == uid);
    ours && std::fs::read(format!("/proc/{pid}/environ"))
        .is_ok_and(|env| env.split(|b| *b == 0).any(|e| e == marker.as_bytes()))
}

/// SIGHUP and SIGTERM, with SIGCONT so stopped jobs can act on them.
fn ask_to_end(targets: &[Target]) {
    for t in targets {
        send(t, Signal::SIGHUP);
        send(t, Signal::SIGTERM);
        send(t, Signal::SIGCONT);
    }
}

fn still_alive(t: &Target) -> bool {
    procfs::stat(t.pid).is_some_and(|s| s.start_time == t.start_time && s.state != 'Z')
}

fn send(t: &Target, signal: Signal) {
    if still_alive(t) {
        // The process may exit between the check and the signal: harmless.
        let _ = kill(Pid::from_raw(t.pid), signal);
    }
}

/// Ends the tree rooted at `root` whose terminal is `pts`: SIGHUP and SIGTERM (with SIGCONT so
/// stopped jobs can act on them), then SIGKILL for anything still alive
/// after `grace`. Returns once every member is gone or `grace` has passed
/// twice (three times for a launcher).
///
/// `root_start` is the root's start time when it was spawned: a root that
/// has been reaped and whose pid now names another process is left out
/// (its session, if any of it survives, still holds its terminal; the
/// kernel never reuses a pid that still names a session). A `launcher`
/// root (bubblewrap, whose child is the top program) is asked last.
pub fn kill_tree(
    root: i32,
    root_start: Option<u64>,
    pts: &Path,
    marker: Option<&str>,
    grace: Duration,
    launcher: bool,
) {
    let reused = procfs::stat(root).is_some_and(|s| Some(s.start_time) != root_start);
    let root = if reused { 0 } else { root };
    let last = (launcher && root > 0).then_some(root);
    end(root, Some(pts), marker, grace, last);
}

/// Ends every process of ours whose start environment holds `marker`
/// (`NAME=VALUE`), and their descendants: what a tree left behind when the
/// program that would have ended it was killed.
pub fn kill_marked(marker: &str, grace: Duration) {
    end(0, None, Some(marker), grace, None);
}

/// `last` (a launcher: bubblewrap) is asked to end only once the rest of
/// its tree is gone or `grace` has passed. A launcher that leads the
/// terminal's session hangs the terminal up as it exits, and the kernel's
/// second SIGHUP then ends the shell in the middle of its own exit trap,
/// before it has saved its exports for the next shell.
fn end(root: i32, pts: Option<&Path>, marker: Option<&str>, grace: Duration, last: Option<i32>) {
    let targets = members(root, pts, marker);
    let (later, first): (Vec<Target>, Vec<Target>) =
        targets.iter().partition(|t| Some(t.pid) == last);
    ask_to_end(&first);
    if !later.is_empty() {
        wait_gone(&first, grace);
        ask_to_end(&later);
    }
    if wait_gone(&targets, grace) {
        return;
    }
    // New members may have appeared (a trap that forks); take them too.
    let mut all: HashSet<Target> = targets.into_iter().collect();
    all.extend(members(root, pts, marker));
    for t in &all {
        send(t, Signal::SIGKILL);
    }
    let all: Vec<Target> = all.into_iter().collect();
    wait_gone(&all, grace);
}

fn wait_gone(targets: &[Target], grace: Duration) -> bool {
    let deadline = Instant::now() + grace;
    loop {
        if !targets.iter().any(still_alive) {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}
