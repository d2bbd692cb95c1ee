//! Starting a child with default signal dispositions, and signalling
//! process groups.

use nix::sys::signal::{self, SigSet, SigmaskHow};
use nix::unistd::Pid;
use tether_transport::Signal;

/// Spawns `cmd` on `pts` after resetting, in the child, every signal to its
/// default disposition and clearing the signal mask. A program started by
/// `nohup`, from a background job or from a harness that ignores SIGPIPE
/// passes ignored signals on through `exec`; a shell that inherits an
/// ignored SIGINT cannot be interrupted, and one that inherits an ignored
/// SIGPIPE makes `yes | head` print `Broken pipe`.
#[allow(unsafe_code)]
pub fn spawn_with_default_signals(
    cmd: pty_process::blocking::Command,
    pts: pty_process::blocking::Pts,
) -> std::io::Result<std::process::Child> {
    // SAFETY: the closure runs in the forked child before exec and makes
    // only raw system calls (rt_sigaction, rt_sigprocmask), which are
    // async-signal-safe; it allocates nothing and touches no locks. The
    // rt_sigaction argument is an all-zero kernel `struct sigaction`
    // (handler SIG_DFL, no flags, empty mask), so its layout cannot be wrong.
    let cmd = unsafe {
        cmd.pre_exec(|| {
            // Every signal number, real-time ones included: only SIG_IGN
            // survives exec, and that is what must not be inherited. The raw
            // call is used because glibc refuses to touch signals 32 and 33,
            // which a parent may still have ignored.
            let default_action = [0u64; 4];
            for sig in 1..=64 {
                if sig != nix::libc::SIGKILL && sig != nix::libc::SIGSTOP {
                    nix::libc::syscall(
                        nix::libc::SYS_rt_sigaction,
                        sig,
                        default_action.as_ptr(),
                        std::ptr::null_mut::<u64>(),
                        8usize,
                    );
                }
            }
            signal::sigprocmask(SigmaskHow::SIG_SETMASK, Some(&SigSet::empty()), None)?;
            Ok(())
        })
    };
    cmd.spawn(pts).map_err(crate::local::pty_err)
}

/// Sends `signal` to process group `pgid`.
pub fn signal_group(pgid: i32, signal: Signal) -> std::io::Result<()> {
    signal::killpg(Pid::from_raw(pgid), to_nix(signal)).map_err(std::io::Error::from)
}

/// Sends `signal` to the process `pid` alone.
pub fn signal_process(pid: i32, signal: Signal) -> std::io::Result<()> {
    signal::kill(nix::unistd::Pid::from_raw(pid), to_nix(signal)).map_err(std::io::Error::from)
}

fn to_nix(signal: Signal) -> signal::Signal {
    match signal {
        Signal::Int => signal::Signal::SIGINT,
        Signal::Term => signal::Signal::SIGTERM,
        Signal::Kill => signal::Signal::SIGKILL,
        Signal::Quit => signal::Signal::SIGQUIT,
        Signal::Hup => signal::Signal::SIGHUP,
        Signal::Tstp => signal::Signal::SIGTSTP,
        Signal::Cont => signal::Signal::SIGCONT,
    }
}
