//! The process inspector: what runs in a PTY's foreground and whether it is
//! blocked reading the terminal, from kernel state in `/proc`.
//!
//! "Reading the terminal" means a thread of the foreground group is blocked
//! in `read` on the PTY, or in `poll`/`select`/`epoll_wait` with the PTY
//! among the descriptors it waits to read. That is exact evidence of a
//! program waiting for input, without any silence timer.

use std::path::{Path, PathBuf};

use tether_transport::{Foreground, ProcessInfo};

use crate::procfs::{self, Stat, Syscall};

/// System call numbers the inspector recognises.
mod nr {
    #[cfg(target_arch = "x86_64")]
    pub const READ: &[i64] = &[0, 19, 17, 295]; // read, readv, pread64, preadv
    #[cfg(target_arch = "x86_64")]
    pub const POLL: &[i64] = &[7, 271]; // poll, ppoll
    #[cfg(target_arch = "x86_64")]
    pub const SELECT: &[i64] = &[23, 270]; // select, pselect6
    #[cfg(target_arch = "x86_64")]
    pub const EPOLL: &[i64] = &[232, 281, 441]; // epoll_wait, epoll_pwait, epoll_pwait2

    #[cfg(target_arch = "aarch64")]
    pub const READ: &[i64] = &[63, 65, 67, 69];
    #[cfg(target_arch = "aarch64")]
    pub const POLL: &[i64] = &[73];
    #[cfg(target_arch = "aarch64")]
    pub const SELECT: &[i64] = &[72];
    #[cfg(target_arch = "aarch64")]
    pub const EPOLL: &[i64] = &[22, 441];

    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    pub const READ: &[i64] = &[];
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    pub const POLL: &[i64] = &[];
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    pub const SELECT: &[i64] = &[];
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    pub const EPOLL: &[i64] = &[];
}

/// Most descriptors read from a poll/select set (a sanity bound).
const MAX_FDS: u64 = 4096;

/// Identifies one PTY: its slave path and the session of its top program.
#[derive(Clone, Debug)]
pub struct PtyIdentity {
    /// The slave device, e.g. `/dev/pts/3`.
    pub pts: PathBuf,
    /// The session id (the pid of the program started on the PTY: it is
    /// the session leader).
    pub session: i32,
    /// The top program's pid: the session leader, or the one child of a
    /// launcher started on the PTY (bubblewrap, which waits for the
    /// program it starts in its fence).
    pub top: i32,
}

impl PtyIdentity {
    fn is_terminal(&self, target: &Path) -> bool {
        target == self.pts || target == Path::new("/dev/tty")
    }
}

/// Process info for a pid, if it is alive.
pub fn process_info(pid: i32) -> Option<ProcessInfo> {
    let s = procfs::stat(pid)?;
    Some(info(&s))
}

fn info(s: &Stat) -> ProcessInfo {
    let command = std::fs::read_to_string(format!("/proc/{}/comm", s.pid))
        .map(|c| c.trim_end().to_owned())
        .unwrap_or_else(|_| s.comm.clone());
    ProcessInfo {
        pid: s.pid,
        start_time: s.start_time,
        command,
    }
}

/// The foreground of the PTY whose foreground process group is `pgid`.
pub fn foreground(id: &PtyIdentity, pgid: i32) -> Foreground {
    let mut members: Vec<Stat> = procfs::all_processes()
        .into_iter()
        .filter(|s| s.pgrp == pgid && s.session == id.session && s.state != 'Z')
        .collect();
    members.sort_by_key(|s| (s.pid != pgid, s.start_time, s.pid));
    let reading_terminal = members.iter().any(|s| reads_terminal(id, s.pid));
    Foreground {
        pgid,
        process: members.first().map(info),
        reading_terminal,
        is_top: pgid == id.top,
    }
}

/// True when some thread of `pid` is blocked waiting to read the PTY.
pub fn reads_terminal(id: &PtyIdentity, pid: i32) -> bool {
    procfs::threads(pid)
        .into_iter()
        .filter_map(|tid| procfs::syscall(pid, tid))
        .any(|call| waits_on_terminal(id, pid, &call))
}

fn waits_on_terminal(id: &PtyIdentity, pid: i32, call: &Syscall) -> bool {
    let is_tty = |fd: u64| procfs::fd_target(pid, fd).is_some_and(|t| id.is_terminal(&t));
    let [a0, a1, ..] = call.args;
    if nr::READ.contains(&call.nr) {
        is_tty(a0)
    } else if nr::POLL.contains(&call.nr) {
        poll_fds(pid, a0, a1).into_iter().any(is_tty)
    } else if nr::SELECT.contains(&call.nr) {
        select_fds(pid, a0, a1).into_iter().any(is_tty)
    } else if nr::EPOLL.contains(&call.nr) {
        procfs::epoll_read_targets(pid, a0).into_iter().any(is_tty)
    } else {
        false
    }
}

/// Descriptors a `poll(fds, nfds)` call waits to read.
fn poll_fds(pid: i32, addr: u64, nfds: u64) -> Vec<u64> {
    const POLLIN: i16 = 0x1;
    let n = nfds.min(MAX_FDS) as usize;
    let Some(mem) = procfs::read_memory(pid, addr, n * 8) else {
        return Vec::new();
    };
    mem.chunks_exact(8)
        .filter_map(|p| {
            let fd = i32::from_ne_bytes([p[0], p[1], p[2], p[3]]);
            let events = i16::from_ne_bytes([p[4], p[5]]);
            (fd >= 0 && events & POLLIN != 0).then_some(fd as u64)
        })
        .collect()
}

/// Descriptors a `select(nfds, readfds, ...)` call waits to read.
fn select_fds(pid: i32, nfds: u64, readfds: u64) -> Vec<u64> {
    if readfds == 0 {
        return Vec::new();
    }
    let n = nfds.min(MAX_FDS);
    let Some(mem) = procfs::read_memory(pid, readfds, n.div_ceil(8) as usize) else {
        return Vec::new();
    };
    (0..n)
        .filter(|fd| mem[(fd / 8) as usize] & (1 << (fd % 8)) != 0)
        .collect()
}
