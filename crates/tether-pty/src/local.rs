//! [`LocalPty`]: a program on a fresh local PTY, as a [`Terminal`].

use std::os::fd::{AsFd, AsRawFd};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use nix::sys::termios::{self, InputFlags, LocalFlags, OutputFlags, SetArg};
use tether_transport::{
    ExitInfo, Foreground, Inspection, LineModes, ModesRestored, OutputStream, Signal, TermSize,
    Terminal, TransportError,
};
use tokio::sync::watch;

use crate::inspect::{self, PtyIdentity};
use crate::master::{self, Delivered, Writer};
use crate::signals;
use crate::tree;

/// What to start, and how the terminal is set up.
#[derive(Clone, Debug)]
pub struct SpawnSpec {
    /// The program.
    pub program: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// The complete environment (nothing is inherited).
    pub env: Vec<(String, String)>,
    /// The working directory.
    pub cwd: Option<PathBuf>,
    /// Terminal size.
    pub size: TermSize,
    /// Echo input (ECHO). Off suits programs driven by programs.
    pub echo: bool,
    /// Output post-processing (OPOST/ONLCR: LF becomes CRLF). Off is ~10x
    /// faster for floods of short lines.
    pub output_processing: bool,
    /// A variable (name, value) put in the program's environment that every
    /// process of its tree inherits: ending the tree also ends processes of
    /// this user whose environment holds it, which finds those that left
    /// the session, the PTY and the parentage (`setsid`, double forks,
    /// daemons). A process started with a cleared environment (`env -i`)
    /// escapes it.
    pub tree_marker: Option<(String, String)>,
    /// The program is a launcher (bubblewrap) that starts the top program
    /// as its one child and waits for it: the child is the one whose
    /// process group tells the top program in the foreground.
    pub launcher: bool,
}

impl SpawnSpec {
    /// A spec for `program` with no arguments, an empty environment, 24x80,
    /// echo and output processing on (a normal terminal).
    pub fn new(program: impl Into<String>) -> Self {
        SpawnSpec {
            program: program.into(),
            args: Vec::new(),
            env: Vec::new(),
            cwd: None,
            size: TermSize::default(),
            echo: true,
            output_processing: true,
            tree_marker: None,
            launcher: false,
        }
    }
}

/// A program running on a local PTY. Dropping it ends the program's whole
/// process tree.
pub struct LocalPty {
    pty: Arc<pty_process::blocking::Pty>,
    id: PtyIdentity,
    /// The top program's start time, to tell it from a later process given
    /// its pid.
    root_start: Option<u64>,
    /// `NAME=VALUE` of the tree marker.
    marker: Option<String>,
    writer: Writer,
    output: Mutex<Option<OutputStream>>,
    delivered: Arc<Delivered>,
    exit: watch::Receiver<Option<ExitInfo>>,
    /// The incremental search for the slave's holders.
    holders: Mutex<crate::holders::Scan>,
}

impl std::fmt::Debug for LocalPty {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalPty").field("id", &self.id).finish()
    }
}

pub(crate) fn setup(what: &'static str) -> impl FnOnce(std::io::Error) -> TransportError {
    move |source| TransportError::Setup { what, source }
}

/// The OS error inside a `pty-process` error.
pub(crate) fn pty_err(e: pty_process::Error) -> std::io::Error {
    match e {
        pty_process::Error::Io(e) => e,
        pty_process::Error::Rustix(e) => std::io::Error::from_raw_os_error(e.raw_os_error()),
        #[allow(unreachable_patterns)]
        other => std::io::Error::other(other.to_string()),
    }
}

fn io_err(e: nix::Error) -> std::io::Error {
    e.into()
}

/// The one child of launcher `pid`, once it has made it (it does at
/// once: this waits at most a second); `pid` itself if it makes none (it
/// failed, and its exit tells why).
fn launched(pid: i32) -> i32 {
    let deadline = std::time::Instant::now() + Duration::from_secs(1);
    // One small file where the kernel keeps a task's children
    // (CONFIG_PROC_CHILDREN); else a look through every process.
    let children = format!("/proc/{pid}/task/{pid}/children");
    loop {
        let child = match std::fs::read_to_string(&children) {
            Ok(list) => list.split_whitespace().find_map(|p| p.parse().ok()),
            Err(_) => crate::procfs::all_processes()
                .into_iter()
                .find(|s| s.ppid == pid)
                .map(|s| s.pid),
        };
        match child {
            Some(child) => return child,
            None if std::time::Instant::now() >= deadline => return pid,
            None => std::thread::sleep(Duration::from_micros(500)),
        }
    }
}

/// Ok when this process could enter `dir` (it exists, is a directory, and
/// we have search permission on it and on the path to it).
pub fn check_cwd(dir: &std::path::Path) -> std::io::Result<()> {
    if !std::fs::metadata(dir)?.is_dir() {
        return Err(std::io::Error::from(std::io::ErrorKind::NotADirectory));
    }
    nix::unistd::access(dir, nix::unistd::AccessFlags::X_OK).map_err(std::io::Error::from)
}

impl LocalPty {
    /// Starts `spec.program` as a session leader whose controlling terminal
    /// is a new PTY, with default signal dispositions and an empty signal
    /// mask whatever tether inherited. Its output is read by a thread of
    /// its own, so this needs no runtime.
    pub fn spawn(spec: &SpawnSpec) -> Result<LocalPty, TransportError> {
        Self::start(spec, None)
    }

    /// As [`LocalPty::spawn`], with the output read by a task on `runtime`
    /// instead of a thread: one thread wake-up fewer per chunk, which a
    /// person typing into an attached session feels. `runtime` must outlive
    /// the PTY (its output stream ends when the runtime shuts down) and
    /// have its IO driver enabled.
    ///
    /// # Panics
    ///
    /// When `runtime`'s IO driver is not enabled.
    pub fn spawn_on(
        spec: &SpawnSpec,
        runtime: &tokio::runtime::Handle,
    ) -> Result<LocalPty, TransportError> {
        Self::start(spec, Some(runtime))
    }

    fn start(
        spec: &SpawnSpec,
        runtime: Option<&tokio::runtime::Handle>,
    ) -> Result<LocalPty, TransportError> {
        // A directory the child cannot enter fails its spawn with the same
        // errno as a missing program: tell them apart first.
        if let Some(cwd) = &spec.cwd {
            check_cwd(cwd).map_err(|source| TransportError::Cwd {
                path: cwd.clone(),
                source,
            })?;
        }
        let (pty, pts) =
            pty_process::blocking::open().map_err(|e| setup("allocation")(pty_err(e)))?;
        pty.resize(pty_process::Size::new(spec.size.rows, spec.size.cols))
            .map_err(|e| setup("resize")(pty_err(e)))?;
        configure(&pts, spec)?;
        master::set_nonblocking(&pty)?;
        let pts_path = std::fs::read_link(format!("/proc/self/fd/{}", pts.as_raw_fd()))
            .map_err(setup("slave lookup"))?;
        // Every process alive now is older than the PTY: not a holder.
        let holders = Mutex::new(crate::holders::Scan::before_spawn());
        let mut cmd = pty_process::blocking::Command::new(&spec.program)
            .args(&spec.args)
            .env_clear()
            .envs(spec.env.iter().map(|(k, v)| (k, v)));
        if let Some((k, v)) = &spec.tree_marker {
            cmd = cmd.env(k, v);
        }
        if let Some(cwd) = &spec.cwd {
            cmd = cmd.current_dir(cwd);
        }
        let child =
            signals::spawn_with_default_signals(cmd, pts).map_err(|e| TransportError::Spawn {
                program: spec.program.clone(),
                source: e,
            })?;
        let pid = i32::try_from(child.id()).unwrap_or(i32::MAX);
        // Read before the waiter can reap it: the pid is surely ours.
        let root_start = crate::procfs::stat(pid).map(|s| s.start_time);
        let pty = Arc::new(pty);
        let (exit_tx, exit) = watch::channel(None);
        std::thread::Builder::new()
            .name("tether-pty-wait".into())
            .spawn(move || wait_child(child, exit_tx))
            .map_err(setup("waiter thread"))?;
        let delivered = Arc::new(Delivered::default());
        let output = match runtime {
            Some(rt) => master::read_on_runtime(&pty, rt, Arc::clone(&delivered))?,
            None => master::read_on_thread(Arc::clone(&pty), Arc::clone(&delivered))?,
        };
        let writer = Writer::start(Arc::clone(&pty))?;
        Ok(LocalPty {
            pty,
            marker: spec.tree_marker.as_ref().map(|(k, v)| format!("{k}={v}")),
            id: PtyIdentity {
                pts: pts_path,
                session: pid,
                top: if spec.launcher { launched(pid) } else { pid },
            },
            root_start,
            writer,
            output: Mutex::new(Some(output)),
            delivered,
            exit,
            holders,
        })
    }

    /// The top program's pid (it leads its own session, unless a
    /// launcher started it).
    pub fn pid(&self) -> i32 {
        self.id.top
    }

    /// The PTY slave device, e.g. `/dev/pts/3`.
    pub fn pts_path(&self) -> &std::path::Path {
        &self.id.pts
    }
}

/// Moves the bytes written to the other side of the PTY that the kernel
/// has not handed to `fd`'s queue yet (they pass a buffer emptied by a
/// kernel worker, asynchronously) into it: a `poll` that finds nothing
/// readable waits for that worker (`n_tty_poll` flushes the buffer's
/// work), so the queue's size read after it counts every byte written
/// before the call.
fn flush_pending(fd: std::os::fd::BorrowedFd<'_>) {
    use rustix::event::{PollFd, PollFlags, Timespec};
    let mut fds = [PollFd::new(&fd, PollFlags::IN)];
    let now = Timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    let _ = rustix::event::poll(&mut fds, Some(&now));
}

fn configure(pts: &pty_process::blocking::Pts, spec: &SpawnSpec) -> Result<(), TransportError> {
    let err = |e: nix::Error| setup("termios")(io_err(e));
    let mut t = termios::tcgetattr(pts.as_fd()).map_err(err)?;
    t.input_flags |= InputFlags::IUTF8;
    t.local_flags.set(LocalFlags::ECHO, spec.echo);
    t.output_flags
        .set(OutputFlags::OPOST, spec.output_processing);
    termios::tcsetattr(pts.as_fd(), SetArg::TCSANOW, &t).map_err(err)
}

fn wait_child(mut child: std::process::Child, exit: watch::Sender<Option<ExitInfo>>) {
    use std::os::unix::process::ExitStatusExt;
    let info = match child.wait() {
        Ok(status) => match (status.code(), status.signal()) {
            (Some(code), _) => ExitInfo::Code(code),
            (None, Some(sig)) => ExitInfo::Signal(sig),
            (None, None) => ExitInfo::Code(-1),
        },
        Err(_) => ExitInfo::Code(-1),
    };
    let _ = exit.send(Some(info));
}

/// How long a holder that could read the terminal has to stop before a
/// line is typed anyway.
const HOLDER_STOP_WAIT: Duration = Duration::from_millis(500);

/// The longest holders stay stopped while the foreground reads a line.
const HOLDER_PAUSE_MAX: Duration = Duration::from_secs(2);

impl Terminal for LocalPty {
    fn write(&self, bytes: Vec<u8>) -> Result<(), TransportError> {
        self.writer.write(bytes)
    }

    fn take_output(&self) -> Option<OutputStream> {
        self.output.lock().ok()?.take()
    }

    fn resize(&self, size: TermSize) -> Result<(), TransportError> {
        self.pty
            .resize(pty_process::Size::new(size.rows, size.cols))
            .map_err(|e| setup("resize")(pty_err(e)))
    }

    fn signal_foreground(
        &self,
        signal: Signal,
        expected: Option<&Foreground>,
    ) -> Result<i32, TransportError> {
        let pgid = self.foreground_pgid()?;
        if let Some(want) = expected {
            let now = inspect::foreground(&self.id, pgid);
            let same = want.pgid == pgid
                && want.process.as_ref().map(|p| (p.pid, p.start_time))
                    == now.process.as_ref().map(|p| (p.pid, p.start_time));
            if !same {
                return Err(TransportError::ForegroundChanged);
            }
        }
        signals::signal_group(pgid, signal).map_err(|source| TransportError::Signal {
            signal,
            pgid,
            source,
        })?;
        Ok(pgid)
    }

    fn signal_top(&self, signal: Signal) -> Result<bool, TransportError> {
        self.signal_member(self.id.top, signal)
    }

    fn signal_member(&self, pid: i32, signal: Signal) -> Result<bool, TransportError> {
        if self.exit.borrow().is_some() {
            return Ok(false);
        }
        // Still the terminal's: a member of its session, not a zombie.
        let ours = crate::procfs::stat(pid)
            .is_some_and(|s| s.session == self.id.session && s.state != 'Z');
        if !ours {
            return Ok(false);
        }
        signals::signal_process(pid, signal).map_err(|source| TransportError::Signal {
            signal,
            pgid: pid,
            source,
        })?;
        Ok(true)
    }

    fn kill(&self, grace: Duration) -> Result<(), TransportError> {
        tree::kill_tree(
            self.id.session,
            self.root_start,
            &self.id.pts,
            self.marker.as_deref(),
            grace,
            self.id.top != self.id.session,
        );
        Ok(())
    }

    fn exit(&self) -> watch::Receiver<Option<ExitInfo>> {
        self.exit.clone()
    }

    fn set_echo(&self, on: bool) -> Result<bool, TransportError> {
        let err = |e: nix::Error| setup("termios")(io_err(e));
        // The master shares the slave's settings on Linux.
        let fd = self.pty.as_fd();
        let mut t = termios::tcgetattr(fd).map_err(err)?;
        if !t.local_flags.contains(LocalFlags::ICANON) {
            return Ok(false);
        }
        t.local_flags.set(LocalFlags::ECHO, on);
        termios::tcsetattr(fd, SetArg::TCSANOW, &t).map_err(err)?;
        Ok(true)
    }

    fn restore_modes(&self, modes: LineModes) -> Result<ModesRestored, TransportError> {
        let err = |e: nix::Error| setup("termios")(io_err(e));
        let fd = self.pty.as_fd();
        let now = termios::tcgetattr(fd).map_err(err)?;
        let want = crate::modes::applied(&now, modes);
        if want == now {
            return Ok(ModesRestored::Unchanged);
        }
        termios::tcsetattr(fd, SetArg::TCSANOW, &want).map_err(err)?;
        Ok(ModesRestored::Restored)
    }

    fn holders(&self) -> Vec<tether_transport::Holder> {
        self.found_holders()
            .into_iter()
            .map(|f| tether_transport::Holder {
                pid: f.pid,
                program: f.program,
                can_type: f.can_type,
            })
            .collect()
    }

    fn write_past_holders(&self, bytes: Vec<u8>) -> Result<(), TransportError> {
        let found = self.found_holders();
        let paused = crate::holders::Paused::stop(&found, HOLDER_STOP_WAIT);
        self.write(bytes)?;
        if !paused.is_empty() {
            // The readers stay stopped until the foreground has read
            // everything typed (bounded: a shell that does not read gets
            // its line later, and they are continued).
            let deadline = std::time::Instant::now() + HOLDER_PAUSE_MAX;
            while self.input_queued().is_some_and(|n| n > 0) && std::time::Instant::now() < deadline
            {
                std::thread::sleep(Duration::from_millis(1));
            }
        }
        Ok(())
    }

    fn inspect(&self) -> Result<Inspection, TransportError> {
        if self.exit.borrow().is_some() {
            let (output_delivered, output_unread) = self.output_counts();
            return Ok(Inspection {
                top: None,
                foreground: None,
                input_queued: None,
                output_unread,
                output_delivered,
            });
        }
        // Input, then the processes, then output, each queue with the
        // kernel's pending bytes flushed into it first: input found empty
        // before a program is seen blocked cannot have woken it since
        // (unless written by the caller meanwhile), and everything a
        // program seen blocked wrote before it blocked is counted after.
        // So one look is exact.
        let input_queued = self.input_queued();
        let top = inspect::process_info(self.id.top);
        let foreground = self
            .foreground_pgid()
            .ok()
            .map(|pgid| inspect::foreground(&self.id, pgid));
        let (output_delivered, output_unread) = self.output_counts();
        Ok(Inspection {
            top,
            foreground,
            input_queued,
            output_unread,
            output_delivered,
        })
    }
}

impl LocalPty {
    /// The slave's holders now (see [`crate::holders`]).
    fn found_holders(&self) -> Vec<crate::holders::Found> {
        if self.exit.borrow().is_some() {
            return Vec::new();
        }
        let foreground = self.foreground_pgid().ok();
        match self.holders.lock() {
            Ok(mut scan) => scan.holders(&self.id, foreground, self.marker.as_deref()),
            Err(_) => Vec::new(),
        }
    }

    /// Bytes in the slave's input queue (typed, not yet read), from a
    /// short-lived non-blocking descriptor that never becomes a
    /// controlling terminal.
    fn input_queued(&self) -> Option<u64> {
        use rustix::fs::{Mode, OFlags};
        // Queued in our writer first, then in the kernel's input queue.
        let unwritten = self.writer.unwritten();
        let flags = OFlags::RDONLY | OFlags::NOCTTY | OFlags::NONBLOCK | OFlags::CLOEXEC;
        let fd = rustix::fs::open(&self.id.pts, flags, Mode::empty()).ok()?;
        flush_pending(fd.as_fd());
        Some(unwritten + rustix::io::ioctl_fionread(&fd).ok()?)
    }

    /// Bytes read from the master so far, and bytes the program wrote that
    /// are not read yet, the kernel's pending ones included: under the
    /// reader's lock, so no read is half counted.
    fn output_counts(&self) -> (u64, Option<u64>) {
        let count = self.delivered.lock();
        flush_pending(self.pty.as_fd());
        let unread = rustix::io::ioctl_fionread(self.pty.as_fd()).ok();
        (*count, unread)
    }

    fn foreground_pgid(&self) -> Result<i32, TransportError> {
        nix::unistd::tcgetpgrp(self.pty.as_fd())
            .map(|p| p.as_raw())
            .map_err(|_| TransportError::Closed)
    }
}

impl Drop for LocalPty {
    fn drop(&mut self) {
        self.writer.close();
        if self.exit.borrow().is_none() {
            tree::kill_tree(
                self.id.session,
                self.root_start,
                &self.id.pts,
                self.marker.as_deref(),
                Duration::from_millis(500),
                self.id.top != self.id.session,
            );
        }
    }
}
