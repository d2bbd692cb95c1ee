//! Evidence about a remote shell's foreground, from the host's `/proc`: a
//! command run on the host lists the threads of the terminal's foreground
//! process group with the system call each is blocked in. A thread blocked
//! in `read` on the terminal is a program waiting for input (exact, as
//! locally); threads that are all elsewhere (sleeping, waiting for a child,
//! running) are not, so a silent command is not mistaken for one waiting.
//! Blocked in `poll`/`select`/`epoll`, or on a host without `/proc` or that
//! hides the system call, the answer is unknown and the silence fallback
//! decides.

use std::path::PathBuf;
use std::sync::Arc;

use tether_transport::{BoxFuture, RemoteHost};

use crate::result::ForegroundProgram;

/// What the host says about the foreground.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Evidence {
    /// This program is blocked reading the terminal.
    Reading(ForegroundProgram),
    /// Nothing in the foreground is reading the terminal.
    NotReading,
    /// The host cannot tell.
    Unknown,
}

/// Lists `arch`, `tty` (the shell's terminal), then one `t PID NR FD WCHAN
/// COMM` line per thread of the foreground group (NR `?` when the system
/// call is hidden, FD the target of a read's descriptor or `-`).
/// (It follows [`crate::remote::SHELL_STAT`].)
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
    case $n in 0|17|19|295|63|65|67|69) f=$(readlink "$p/fd/$(($2))" 2>/dev/null) || f=- ;; esac
    w=$(cat "$t/wchan" 2>/dev/null); [ -n "$w" ] || w=-
    echo "t ${p#/proc/} $n $f $w $c"
  done
done
"#;

/// Starts a probe of the shell whose directory is `dir`.
pub(crate) fn probe(host: Arc<dyn RemoteHost>, dir: PathBuf) -> BoxFuture<'static, Evidence> {
    Box::pin(async move {
        let line = crate::remote::in_dir(&dir, &format!("{}{SCRIPT}", crate::remote::SHELL_STAT));
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
                let reading = if nr == "?" {
                    // The system call is hidden (ptrace restrictions): the
                    // wait point may still tell.
                    if wchan == "n_tty_read" {
                        true
                    } else {
                        unsure |= !NOT_READING.contains(&wchan) && wchan != "0";
                        false
                    }
                } else if reads.contains(&nr) {
                    // A read on something else (a pipe, a file) is not input.
                    terminal
                } else {
                    unsure |= polls.contains(&nr);
                    false
                };
                if reading {
                    return Evidence::Reading(ForegroundProgram {
                        pid: pid.parse().unwrap_or(0),
                        command: comm.unwrap_or_default().to_owned(),
                    });
                }
            }
            _ => {}
        }
    }
    match (any, unsure) {
        (true, false) => Evidence::NotReading,
        _ => Evidence::Unknown,
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
            Evidence::Unknown
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
        assert_eq!(judge(head), Evidence::Unknown);
        assert_eq!(
            judge("arch riscv64\ntty /dev/pts/1\nt 1 63 /dev/pts/1 x y\n"),
            Evidence::Unknown
        );
    }
}
