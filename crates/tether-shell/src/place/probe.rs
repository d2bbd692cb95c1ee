//! Evidence about a remote shell's foreground, from the host's `/proc`: a
//! command run on the host lists the threads of the terminal's foreground
//! process group with the system call each is blocked in. A thread blocked
//! in `read` on the terminal is a program waiting for input (exact, as
//! locally); threads that are all elsewhere (sleeping, waiting for a child,
//! running) are not, so a silent command is not mistaken for one waiting.
//! A thread blocked in `poll`/`select`/`epoll` may wait on the terminal,
//! as may one whose system call is hidden (Yama's `ptrace_scope` 1, as on
//! Ubuntu) sleeping where a terminal read sleeps (`wait_woken`) with the
//! terminal as its stdin: then (only then) silence decides, as locally
//! without evidence. On a host without `/proc`, or that hides the system
//! call and the wait point, the answer is unknown and silence alone never
//! claims waiting: the command is `running` until it ends or its deadline
//! passes.
//!
//! The verdicts are the command's, not one wait's ([`ProbeMemory`], kept
//! in the session): a command polled by many short reads is judged by the
//! evidence gathered across them, and a read that starts after a long
//! silence does not decide before the host has answered.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tether_transport::{BoxFuture, RemoteHost};

use crate::result::ForegroundProgram;

/// What the host says about the foreground.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Evidence {
    /// This program is blocked reading the terminal.
    Reading(ForegroundProgram),
    /// Nothing in the foreground is reading the terminal.
    NotReading,
    /// This program may be waiting on the terminal: blocked in
    /// `poll`/`select`/`epoll`, or (system calls hidden) at the wait point
    /// a terminal read sleeps in with the terminal as its stdin. Silence
    /// decides.
    MayRead(ForegroundProgram),
    /// The host cannot tell.
    Unknown,
}

/// Lists `arch`, `tty` (the shell's terminal), then one `t PID NR FD WCHAN
/// COMM` line per thread of the foreground group (NR `?` when the system
/// call is hidden, FD the target of a read's descriptor, of stdin when the
/// call is hidden, or `-`).
/// (It follows [`super::host::SHELL_STAT`].)
const SCRIPT: &str = r#"echo "arch $(uname -m)"
echo "tty $(readlink "/proc/$s/fd/0")"
for p in /proc/[0-9]*; do
  read -r st < "$p/stat" 2>/dev/null || continue
  set -- ${st##*) }
  [ "$3" = "$fg" ] || continue
  c=$(cat "$p/comm" 2>/dev/null)
  for t in "$p"/task/*; do
    sc=$(cat "$t/syscall" 2>/dev/null) || sc='?'
    set -- $sc
    n=$1 f=-
    case $n in 0|17|19|295|63|65|67|69) f=$(readlink "$p/fd/$(($2))" 2>/dev/null) || f=- ;;
      \?) f=$(readlink "$p/fd/0" 2>/dev/null) || f=- ;; esac
    w=$(cat "$t/wchan" 2>/dev/null); [ -n "$w" ] || w=-
    echo "t ${p#/proc/} $n $f $w $c"
  done
done
"#;

/// Starts a probe of the shell whose directory is `dir`.
pub(crate) fn probe(host: Arc<dyn RemoteHost>, dir: PathBuf) -> BoxFuture<'static, Evidence> {
    Box::pin(async move {
        let line = super::host::in_dir(&dir, &format!("{}{SCRIPT}", super::host::SHELL_STAT));
        match host.run(line, Vec::new()).await {
            Ok(out) if out.status == Some(0) => judge(&String::from_utf8_lossy(&out.stdout)),
            _ => Evidence::Unknown,
        }
    })
}

/// System calls by architecture: (read family, poll/select/epoll family).
fn calls(arch: &str) -> Option<(&'static [&'static str], &'static [&'static str])> {
    match arch {
        "x86_64" => Some((
            &["0", "17", "19", "295"],
            &["7", "271", "23", "270", "232", "281", "441"],
        )),
        "aarch64" => Some((&["63", "65", "67", "69"], &["73", "72", "22", "441"])),
        _ => None,
    }
}

/// Kernel wait points that are certainly not a terminal read.
const NOT_READING: &[&str] = &[
    "hrtimer_nanosleep",
    "do_nanosleep",
    "do_wait",
    "kernel_wait4",
    "futex_wait_queue",
    "futex_wait_queue_me",
    "pipe_read",
    "pipe_write",
    "do_sigtimedwait",
    "sigsuspend",
];

/// The verdict from the probe's output.
fn judge(out: &str) -> Evidence {
    let mut arch = "";
    let mut tty = "";
    let mut any = false;
    let mut unsure = false;
    let mut may_read: Option<ForegroundProgram> = None;
    for line in out.lines() {
        let mut f = line.splitn(6, ' ');
        match f.next() {
            Some("arch") => arch = f.next().unwrap_or_default(),
            Some("tty") => tty = f.next().unwrap_or_default(),
            Some("t") => {
                let (pid, nr, fd, wchan, comm) = (f.next(), f.next(), f.next(), f.next(), f.next());
                let (Some(pid), Some(nr), Some(fd), Some(wchan)) = (pid, nr, fd, wchan) else {
                    return Evidence::Unknown;
                };
                any = true;
                let terminal = !tty.is_empty() && (fd == tty || fd == "/dev/tty");
                let Some((reads, polls)) = calls(arch) else {
                    return Evidence::Unknown;
                };
                let program = || ForegroundProgram {
                    pid: pid.parse().unwrap_or(0),
                    command: comm.unwrap_or_default().to_owned(),
                };
                let reading = if nr == "?" {
                    // The system call is hidden (ptrace restrictions): the
                    // wait point may still tell.
                    if wchan == "n_tty_read" {
                        true
                    } else if POLLING.contains(&wchan) || (wchan == "wait_woken" && terminal) {
                        may_read.get_or_insert_with(program);
                        false
                    } else {
                        unsure |= !NOT_READING.contains(&wchan) && wchan != "0";
                        false
                    }
                } else if reads.contains(&nr) {
                    // A read on something else (a pipe, a file) is not input.
                    terminal
                } else {
                    if polls.contains(&nr) {
                        may_read.get_or_insert_with(program);
                    }
                    false
                };
                if reading {
                    return Evidence::Reading(program());
                }
            }
            _ => {}
        }
    }
    match (any, unsure, may_read) {
        (true, _, Some(fg)) => Evidence::MayRead(fg),
        (true, false, None) => Evidence::NotReading,
        _ => Evidence::Unknown,
    }
}

/// Kernel wait points of `poll`, `select` and `epoll`.
const POLLING: &[&str] = &["do_sys_poll", "do_select", "ep_poll", "do_epoll_wait"];

/// Quiet this long before a remote foreground is probed.
const PROBE_AFTER: Duration = Duration::from_millis(200);

/// A verdict that nothing reads stands this long (then it is probed again).
const PROBE_EVERY: Duration = Duration::from_millis(1000);

/// A host that cannot tell is asked again this seldom.
const PROBE_UNKNOWN_EVERY: Duration = Duration::from_secs(5);

/// What the probes found about the command in flight: kept in the session
/// across the calls that wait for it, cleared when a command is typed.
#[derive(Default)]
pub(crate) struct ProbeMemory {
    /// The probe in flight, with the output count when it started.
    pending: Option<(u64, BoxFuture<'static, Evidence>)>,
    /// The last verdict: when it came, the output count it holds for.
    last: Option<(Instant, u64, Evidence)>,
    /// When the probe in flight started.
    since: Option<Instant>,
}

impl ProbeMemory {
    /// How long the probe in flight has gone unanswered.
    pub(crate) fn unanswered_for(&self) -> Option<Duration> {
        self.pending.as_ref().and(self.since).map(|t| t.elapsed())
    }
}

/// A place that can look at its shell's foreground from outside the
/// terminal (a host's `/proc`).
pub(crate) trait Prober: Send + Sync {
    /// Starts a probe of the shell's foreground.
    fn probe(&self) -> BoxFuture<'static, Evidence>;
}

/// One wait's use of the session's [`ProbeMemory`]: taken when the wait
/// starts, put back when it ends (however it ends: a wait dropped midway
/// keeps its probe in flight for the next).
pub(crate) struct ProbeWatch<'a> {
    prober: &'a dyn Prober,
    memory: ProbeMemory,
    home: &'a Mutex<ProbeMemory>,
}

impl<'a> ProbeWatch<'a> {
    /// The watch of `prober`'s shell, from the memory in `home`.
    pub(crate) fn take(prober: &'a dyn Prober, home: &'a Mutex<ProbeMemory>) -> ProbeWatch<'a> {
        let memory = std::mem::take(&mut *home.lock().unwrap_or_else(|p| p.into_inner()));
        ProbeWatch {
            prober,
            memory,
            home,
        }
    }

    /// Starts a probe when output has been quiet and the last verdict is
    /// stale (or needs confirming).
    pub(crate) fn maybe_start(&mut self, idle: Duration, processed: u64) {
        if self.memory.pending.is_some() || idle < PROBE_AFTER {
            return;
        }
        let due = match &self.memory.last {
            Some((_, seen, _)) if *seen != processed => true,
            Some((_, _, Evidence::Reading(_))) => true,
            Some((at, _, Evidence::Unknown)) => at.elapsed() >= PROBE_UNKNOWN_EVERY,
            Some((at, _, _)) => at.elapsed() >= PROBE_EVERY,
            None => true,
        };
        if due {
            self.memory.pending = Some((processed, self.prober.probe()));
            self.memory.since = Some(Instant::now());
        }
    }

    /// The probe in flight, to await (cancel-safe: it stays in flight).
    pub(crate) fn pending(&mut self) -> Option<&mut BoxFuture<'static, Evidence>> {
        self.memory.pending.as_mut().map(|(_, f)| f)
    }

    /// Takes a probe's verdict; returns the program waiting for input when
    /// two verdicts in a row say so with no output between them.
    pub(crate) fn finish(
        &mut self,
        evidence: Evidence,
        processed: u64,
    ) -> Option<ForegroundProgram> {
        let (started_at, _) = self.memory.pending.take()?;
        if started_at != processed {
            // Output came meanwhile: the verdict may be stale.
            self.memory.last = None;
            return None;
        }
        let confirmed = matches!(
            (&self.memory.last, &evidence),
            (Some((_, seen, Evidence::Reading(_))), Evidence::Reading(_)) if *seen == processed
        );
        self.memory.last = Some((Instant::now(), processed, evidence.clone()));
        match evidence {
            Evidence::Reading(fg) if confirmed => Some(fg),
            _ => None,
        }
    }

    /// The program silence may call waiting: only one the host saw where
    /// it may read the terminal ([`Evidence::MayRead`]), with no output
    /// since. Silence alone (no verdict yet, or a host that cannot tell)
    /// never decides remotely.
    pub(crate) fn silence_decides(&self, processed: u64) -> Option<&ForegroundProgram> {
        match &self.memory.last {
            Some((_, seen, Evidence::MayRead(fg))) if *seen == processed => Some(fg),
            _ => None,
        }
    }
}

impl Drop for ProbeWatch<'_> {
    fn drop(&mut self) {
        *self.home.lock().unwrap_or_else(|p| p.into_inner()) = std::mem::take(&mut self.memory);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reading(pid: i32, command: &str) -> Evidence {
        Evidence::Reading(ForegroundProgram {
            pid,
            command: command.to_owned(),
        })
    }

    #[test]
    fn a_read_on_the_terminal_is_waiting_and_a_sleep_is_not() {
        let head = "arch x86_64\ntty /dev/pts/3\n";
        assert_eq!(
            judge(&format!("{head}t 40 0 /dev/pts/3 wait_woken python3\n")),
            reading(40, "python3")
        );
        assert_eq!(
            judge(&format!("{head}t 41 230 - hrtimer_nanosleep sleep\n")),
            Evidence::NotReading
        );
        // A read from a pipe is not a read of the terminal.
        assert_eq!(
            judge(&format!("{head}t 42 0 pipe:[123] pipe_read cat\n")),
            Evidence::NotReading
        );
        // poll on something: the silence fallback decides.
        assert_eq!(
            judge(&format!("{head}t 43 7 - do_sys_poll vim\n")),
            Evidence::MayRead(ForegroundProgram {
                pid: 43,
                command: "vim".to_owned()
            })
        );
        assert_eq!(
            judge(&format!("{head}t 46 ? - ep_poll node\n")),
            Evidence::MayRead(ForegroundProgram {
                pid: 46,
                command: "node".to_owned()
            })
        );
        // Hidden system calls: the wait point.
        assert_eq!(
            judge(&format!("{head}t 44 ? - n_tty_read my prog\n")),
            reading(44, "my prog")
        );
        assert_eq!(
            judge(&format!("{head}t 45 ? - do_wait make\n")),
            Evidence::NotReading
        );
        // Hidden, asleep where a terminal read sleeps, the terminal its
        // stdin: silence decides; with another stdin, nobody can tell.
        assert_eq!(
            judge(&format!("{head}t 47 ? /dev/pts/3 wait_woken dash\n")),
            Evidence::MayRead(ForegroundProgram {
                pid: 47,
                command: "dash".to_owned()
            })
        );
        assert_eq!(
            judge(&format!("{head}t 48 ? pipe:[9] wait_woken dash\n")),
            Evidence::Unknown
        );
        assert_eq!(judge(head), Evidence::Unknown);
        assert_eq!(
            judge("arch riscv64\ntty /dev/pts/1\nt 1 63 /dev/pts/1 x y\n"),
            Evidence::Unknown
        );
    }
}
