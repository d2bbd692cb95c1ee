//! Reading process state from Linux `/proc`.

use std::fs;
use std::os::unix::fs::FileExt;
use std::path::PathBuf;

/// The fields of `/proc/PID/stat` the inspector uses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stat {
    /// Process id.
    pub pid: i32,
    /// Command name (as in `comm`, at most 15 bytes).
    pub comm: String,
    /// State letter (`R`, `S`, `Z`, ...).
    pub state: char,
    /// Parent process id.
    pub ppid: i32,
    /// Process group.
    pub pgrp: i32,
    /// Session id.
    pub session: i32,
    /// The controlling terminal's device number, as the kernel encodes it
    /// (0: none); compare with [`tty_nr_of`].
    pub tty_nr: i32,
    /// Start time, clock ticks after boot.
    pub start_time: u64,
}

/// Parses `/proc/PID/stat`; `None` if the process is gone or the file odd.
pub fn stat(pid: i32) -> Option<Stat> {
    let text = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    parse_stat(&text)
}

/// Parses the text of a stat file. The command name may hold spaces and
/// parentheses, so fields are counted from the last `)`.
pub fn parse_stat(text: &str) -> Option<Stat> {
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    let pid = text[..open].trim().parse().ok()?;
    let comm = text.get(open + 1..close)?.to_owned();
    let rest: Vec<&str> = text.get(close + 1..)?.split_whitespace().collect();
    // rest[0] is field 3 (state); field N is rest[N - 3].
    Some(Stat {
        pid,
        comm,
        state: rest.first()?.chars().next()?,
        ppid: rest.get(1)?.parse().ok()?,
        pgrp: rest.get(2)?.parse().ok()?,
        session: rest.get(3)?.parse().ok()?,
        tty_nr: rest.get(4)?.parse().ok()?,
        start_time: rest.get(19)?.parse().ok()?,
    })
}

/// The pid the kernel gave last (the fifth field of `/proc/loadavg`, in
/// this pid namespace): while it stays the same, no process was created.
pub fn last_pid() -> Option<i32> {
    let text = fs::read_to_string("/proc/loadavg").ok()?;
    text.split_whitespace().nth(4)?.parse().ok()
}

/// The pids in `/proc`, without reading any process's files.
pub fn pids() -> Vec<i32> {
    let Ok(dir) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .collect()
}

/// The `tty_nr` of [`Stat`] for the terminal device at `path` (its device
/// number in the kernel's `new_encode_dev` form), `None` if it cannot be
/// read.
pub fn tty_nr_of(path: &std::path::Path) -> Option<i32> {
    let rdev = rustix::fs::stat(path).ok()?.st_rdev;
    let (major, minor) = (rustix::fs::major(rdev), rustix::fs::minor(rdev));
    i32::try_from((minor & 0xff) | (major << 8) | ((minor & !0xff) << 12)).ok()
}

/// The descriptors of `pid` open on a file whose path satisfies `is`,
/// each with whether it was opened for reading.
pub fn fds_on(pid: i32, is: impl Fn(&std::path::Path) -> bool) -> Vec<(u64, bool)> {
    let Ok(dir) = fs::read_dir(format!("/proc/{pid}/fd")) else {
        return Vec::new();
    };
    dir.flatten()
        .filter(|e| fs::read_link(e.path()).is_ok_and(|t| is(&t)))
        .filter_map(|e| e.file_name().to_str()?.parse::<u64>().ok())
        .map(|fd| (fd, opened_for_reading(pid, fd)))
        .collect()
}

/// True when descriptor `fd` of `pid` was opened read-only or read-write
/// (`flags:` of its fdinfo; true when that cannot be read).
fn opened_for_reading(pid: i32, fd: u64) -> bool {
    const O_ACCMODE: u32 = 0o3;
    const O_WRONLY: u32 = 0o1;
    let Ok(text) = fs::read_to_string(format!("/proc/{pid}/fdinfo/{fd}")) else {
        return true;
    };
    text.lines()
        .find_map(|l| l.strip_prefix("flags:"))
        .and_then(|f| u32::from_str_radix(f.trim(), 8).ok())
        .is_none_or(|flags| flags & O_ACCMODE != O_WRONLY)
}

/// Whether `pid`'s environment at its start holds `entry` (`NAME=VALUE`):
/// false when it cannot be read (another user's process), `None` when it
/// is empty (a process in the middle of `execve` shows none).
pub fn environ_holds(pid: i32, entry: &str) -> Option<bool> {
    let Ok(env) = fs::read(format!("/proc/{pid}/environ")) else {
        return Some(false);
    };
    (!env.is_empty()).then(|| env.split(|b| *b == 0).any(|e| e == entry.as_bytes()))
}

/// True when `pid` has CAP_SYS_ADMIN in its effective set (it may type
/// into any terminal by TIOCSTI).
pub fn has_sys_admin(pid: i32) -> bool {
    const CAP_SYS_ADMIN: u32 = 21;
    fs::read_to_string(format!("/proc/{pid}/status")).is_ok_and(|text| {
        text.lines()
            .find_map(|l| l.strip_prefix("CapEff:"))
            .and_then(|c| u64::from_str_radix(c.trim(), 16).ok())
            .is_some_and(|caps| caps & (1 << CAP_SYS_ADMIN) != 0)
    })
}

/// True when this kernel lets a process type into a terminal by TIOCSTI
/// (`/proc/sys/dev/tty/legacy_tiocsti` is 1, or the kernel predates it).
pub fn tiocsti_allowed() -> bool {
    match fs::read_to_string("/proc/sys/dev/tty/legacy_tiocsti") {
        Ok(v) => v.trim() != "0",
        Err(e) => e.kind() == std::io::ErrorKind::NotFound,
    }
}

/// Every process visible in `/proc`.
pub fn all_processes() -> Vec<Stat> {
    let Ok(dir) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter_map(stat)
        .collect()
}

/// Thread ids of a process.
pub fn threads(pid: i32) -> Vec<i32> {
    let Ok(dir) = fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|e| e.file_name().to_str()?.parse().ok())
        .collect()
}

/// A thread blocked in a system call: its number and first arguments.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Syscall {
    /// The system call number.
    pub nr: i64,
    /// Its arguments.
    pub args: [u64; 6],
}

/// The system call thread `tid` of `pid` is blocked in, if any.
pub fn syscall(pid: i32, tid: i32) -> Option<Syscall> {
    let text = fs::read_to_string(format!("/proc/{pid}/task/{tid}/syscall")).ok()?;
    parse_syscall(&text)
}

/// Parses `/proc/.../syscall`: `NR arg0 ... arg5 sp pc`, or `running`, or
/// `-1 sp pc` when not in a system call.
pub fn parse_syscall(text: &str) -> Option<Syscall> {
    let mut fields = text.split_whitespace();
    let nr: i64 = fields.next()?.parse().ok()?;
    if nr < 0 {
        return None;
    }
    let mut args = [0u64; 6];
    for a in &mut args {
        let f = fields.next()?;
        *a = u64::from_str_radix(f.trim_start_matches("0x"), 16).ok()?;
    }
    Some(Syscall { nr, args })
}

/// Where file descriptor `fd` of `pid` points (e.g. `/dev/pts/3`).
pub fn fd_target(pid: i32, fd: u64) -> Option<PathBuf> {
    fs::read_link(format!("/proc/{pid}/fd/{fd}")).ok()
}

/// Reads `len` bytes of `pid`'s memory at `addr` (needs ptrace access; the
/// shell's descendants are ours).
pub fn read_memory(pid: i32, addr: u64, len: usize) -> Option<Vec<u8>> {
    let file = fs::File::open(format!("/proc/{pid}/mem")).ok()?;
    let mut buf = vec![0u8; len];
    file.read_exact_at(&mut buf, addr).ok()?;
    Some(buf)
}

/// The file descriptors an epoll instance watches for input:
/// `tfd:` lines of `/proc/PID/fdinfo/EPFD` whose events include EPOLLIN.
pub fn epoll_read_targets(pid: i32, epfd: u64) -> Vec<u64> {
    let Ok(text) = fs::read_to_string(format!("/proc/{pid}/fdinfo/{epfd}")) else {
        return Vec::new();
    };
    parse_epoll_fdinfo(&text)
}

/// Parses epoll fdinfo text; see [`epoll_read_targets`].
pub fn parse_epoll_fdinfo(text: &str) -> Vec<u64> {
    const EPOLLIN: u64 = 0x1;
    text.lines()
        .filter_map(|line| {
            let mut it = line.split_whitespace();
            if it.next()? != "tfd:" {
                return None;
            }
            let fd: u64 = it.next()?.parse().ok()?;
            if it.next()? != "events:" {
                return None;
            }
            let events = u64::from_str_radix(it.next()?, 16).ok()?;
            (events & EPOLLIN != 0).then_some(fd)
        })
        .collect()
}
