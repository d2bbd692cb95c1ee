//! Processes that hold a PTY's slave outside its foreground: left behind by
//! an earlier command (`setsid prog $(tty) &`, a background job), they can
//! read what is typed into the terminal and, where the kernel allows
//! TIOCSTI, type into it.
//!
//! A holder has a descriptor open on the slave, or the slave as its
//! controlling terminal. Only processes started after the PTY can have
//! inherited it, so the scan is incremental: each look lists `/proc`'s pids
//! (no process's files; not even that when `/proc/loadavg` shows no pid
//! given since the last look) and examines only the pids it has not seen, keeping
//! those that hold the slave or carry the tree's marker in their
//! environment (the session's own processes, which may open it later) to
//! examine again. A process older than the PTY that opens the slave by its
//! path is not seen.

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

use crate::inspect::PtyIdentity;
use crate::procfs::{self, Stat};

/// A holder found by a [`Scan`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Found {
    /// Its pid.
    pub pid: i32,
    /// Its start time (to tell it from a later process given its pid).
    pub start_time: u64,
    /// Its command name.
    pub program: String,
    /// It could read input typed for the foreground: a descriptor open for
    /// reading, and no job control to stop it (another session, or the
    /// foreground process group).
    pub can_read: bool,
    /// It can type into the terminal: the kernel allows TIOCSTI, and the
    /// terminal is its controlling terminal or it is privileged.
    pub can_type: bool,
}

/// The state of incremental scans of one PTY; see the module docs.
#[derive(Debug, Default)]
pub struct Scan {
    /// Pids present at the last look.
    seen: HashSet<i32>,
    /// Pids to examine at every look.
    kept: HashMap<i32, Kept>,
    /// The slave's device number as `/proc/PID/stat` gives it.
    tty_nr: Option<i32>,
    /// The last pid given when `seen` was taken.
    last_pid: Option<i32>,
}

impl Scan {
    /// A scan that treats every process alive now as older than the PTY.
    pub fn before_spawn() -> Scan {
        Scan {
            last_pid: procfs::last_pid(),
            seen: procfs::pids().into_iter().collect(),
            kept: HashMap::new(),
            tty_nr: None,
        }
    }

    /// The holders of `id`'s slave now, other than its top program and the
    /// members of the foreground group `foreground` (when that is not the
    /// top program's own) and this process and its other children.
    /// `marker` is the tree marker's `NAME=VALUE`.
    pub fn holders(
        &mut self,
        id: &PtyIdentity,
        foreground: Option<i32>,
        marker: Option<&str>,
    ) -> Vec<Found> {
        if self.tty_nr.is_none() {
            self.tty_nr = procfs::tty_nr_of(&id.pts);
        }
        let Some(tty_nr) = self.tty_nr else {
            return Vec::new();
        };
        let on_tty = |p: &Path| p == id.pts;
        let me = std::process::id() as i32;
        // When no process was created since the last look, only the kept
        // ones need a look (`/proc` is not listed).
        let last_pid = procfs::last_pid();
        let listed = last_pid.is_none() || last_pid != self.last_pid;
        self.last_pid = last_pid;
        let now: HashSet<i32> = if listed {
            procfs::pids().into_iter().collect()
        } else {
            let alive = |pid: &i32| Path::new(&format!("/proc/{pid}")).exists();
            self.kept.keys().copied().filter(alive).collect()
        };
        for &pid in now.difference(&self.seen) {
            if pid == id.session || pid == id.top || pid == me {
                continue;
            }
            if let Some(s) = procfs::stat(pid) {
                let k = Kept {
                    start_time: s.start_time,
                    ours: false,
                };
                self.kept.insert(pid, k);
            }
        }
        // A process stays while it may be the session's: it carries the
        // marker (read once), or its environment cannot be read yet (one
        // caught in `execve` shows none), or it holds the slave.
        self.kept.retain(|&pid, k| {
            if !now.contains(&pid) {
                return false;
            }
            if !k.ours {
                match marker.map(|m| procfs::environ_holds(pid, m)) {
                    Some(Some(true)) => k.ours = true,
                    Some(None) => return true,
                    _ => {}
                }
            }
            k.ours || !procfs::fds_on(pid, on_tty).is_empty()
        });
        if listed {
            self.seen = now;
        }
        let tiocsti = std::cell::OnceCell::new();
        let mut found = Vec::new();
        for (&pid, k) in &self.kept {
            let Some(s) =
                procfs::stat(pid).filter(|s| s.start_time == k.start_time && s.state != 'Z')
            else {
                continue;
            };
            let in_foreground = foreground.is_some_and(|fg| fg == s.pgrp && fg != id.top);
            if s.ppid == me
                || in_foreground
                || foreground.is_some_and(|fg| started_by(&s, fg, id.top))
            {
                continue;
            }
            let ctty = s.tty_nr == tty_nr;
            let fds = procfs::fds_on(pid, |p| on_tty(p) || (ctty && p == Path::new("/dev/tty")));
            if fds.is_empty() && !ctty {
                continue;
            }
            let unstopped = s.session != id.session || foreground == Some(s.pgrp);
            found.push(Found {
                pid,
                start_time: s.start_time,
                program: program(&s),
                can_read: unstopped && fds.iter().any(|(_, read)| *read),
                can_type: *tiocsti.get_or_init(procfs::tiocsti_allowed)
                    && (ctty || procfs::has_sys_admin(pid)),
            });
        }
        found.sort_by_key(|f| f.pid);
        found
    }
}

/// How far up a holder's parents are followed to its foreground ancestor.
const ANCESTORS_MAX: usize = 8;

/// Whether `s` was started by the foreground group `fg` (not the top
/// program's own): part of what runs now, such as the relay process of a
/// `sudo` with `use_pty`, not left by an earlier command. Once that program
/// ends, its children are another's and are named again.
fn started_by(s: &Stat, fg: i32, top: i32) -> bool {
    if fg == top {
        return false;
    }
    let mut ppid = s.ppid;
    for _ in 0..ANCESTORS_MAX {
        if ppid <= 1 {
            return false;
        }
        let Some(parent) = procfs::stat(ppid) else {
            return false;
        };
        if parent.pgrp == fg {
            return true;
        }
        if parent.pid == top {
            return false;
        }
        ppid = parent.ppid;
    }
    false
}

fn program(s: &Stat) -> String {
    std::fs::read_to_string(format!("/proc/{}/comm", s.pid))
        .map(|c| c.trim_end().to_owned())
        .unwrap_or_else(|_| s.comm.clone())
}

/// A process examined at every look.
#[derive(Clone, Copy, Debug)]
struct Kept {
    start_time: u64,
    /// Its environment showed the tree's marker: it is the session's.
    ours: bool,
}

/// Holders stopped (SIGSTOP) while a line is typed for the foreground, so
/// none of them can read it; continued (SIGCONT) when dropped.
#[derive(Debug, Default)]
pub struct Paused(Vec<Found>);

impl Paused {
    /// Stops each holder in `found` that could read the terminal, and
    /// waits (up to `wait`) until each is stopped. One stopped already (by
    /// someone else) cannot read, and is left stopped.
    pub fn stop(found: &[Found], wait: Duration) -> Paused {
        let readers: Vec<Found> = found
            .iter()
            .filter(|f| f.can_read && running(f))
            .cloned()
            .collect();
        for f in &readers {
            signal(f, Signal::SIGSTOP);
        }
        let deadline = Instant::now() + wait;
        while readers.iter().any(running) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
        }
        Paused(readers)
    }

    /// True when nothing was stopped.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl Drop for Paused {
    fn drop(&mut self) {
        for f in &self.0 {
            signal(f, Signal::SIGCONT);
        }
    }
}

/// True while `f` is alive and not stopped.
fn running(f: &Found) -> bool {
    procfs::stat(f.pid)
        .is_some_and(|s| s.start_time == f.start_time && !matches!(s.state, 'T' | 't' | 'Z' | 'X'))
}

fn signal(f: &Found, sig: Signal) {
    let same = procfs::stat(f.pid).is_some_and(|s| s.start_time == f.start_time);
    if same {
        // It may exit between the check and the signal: harmless.
        let _ = kill(Pid::from_raw(f.pid), sig);
    }
}
