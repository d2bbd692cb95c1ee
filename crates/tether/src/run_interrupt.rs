//! Ctrl-C on a waiting `tether run`: the first interrupts the command (a
//! `signal INT` to the session, on a connection of its own, so it acts at
//! once), and the call then returns the command's true status; the second
//! detaches, leaving the command running in the session for `tether read`.

use anyhow::Result;
use nix::sys::signal::{SigSet, Signal};
use nix::sys::signalfd::{SfdFlags, SignalFd};
use rustix::event::{PollFd, PollFlags};
use tether_daemon::protocol::{Request, ShellResult};

use crate::daemon_cmd;
use crate::result_out;

/// Sends `request` (a `run` in `session`) and waits for its result, with
/// Ctrl-C watched meanwhile. SIGINT is blocked and read from a signalfd
/// beside the socket, in this thread: a call needs no thread or runtime
/// of its own.
pub fn call(session: &str, request: &Request) -> Result<ShellResult> {
    let mut client = daemon_cmd::connect()?;
    let mut int = SigSet::empty();
    int.add(Signal::SIGINT);
    let watched = int
        .thread_block()
        .and_then(|()| SignalFd::with_flags(&int, SfdFlags::SFD_CLOEXEC | SfdFlags::SFD_NONBLOCK));
    let signals = match watched {
        Ok(fd) => Some(fd),
        Err(e) => {
            let _ = int.thread_unblock();
            eprintln!("tether: Ctrl-C will end tether, not the command ({e})");
            None
        }
    };
    client.send(request)?;
    let mut presses = 0;
    while let Some(sigfd) = &signals
        && !client.buffered()
    {
        let socket = client.socket();
        let mut fds = [
            PollFd::new(&socket, PollFlags::IN),
            PollFd::new(sigfd, PollFlags::IN),
        ];
        match rustix::event::poll(&mut fds, None) {
            Ok(_) | Err(rustix::io::Errno::INTR) => {}
            Err(_) => break,
        }
        if !fds[0].revents().is_empty() {
            break;
        }
        while let Ok(Some(_)) = sigfd.read_signal() {
            presses += 1;
            on_sigint(session, presses);
        }
    }
    Ok(client.receive()?)
}

fn on_sigint(session: &str, presses: usize) {
    if presses > 1 {
        eprintln!(
            "tether: detached; the command keeps running in session {session}: `tether read -s {session}` returns the rest, `tether signal -s {session} INT` stops it"
        );
        std::process::exit(result_out::RUNNING);
    }
    eprintln!(
        "\ntether: interrupting the command in session {session} (Ctrl-C again to detach and leave it running)"
    );
    let request = Request::Signal {
        session: session.to_owned(),
        signal: "INT".into(),
    };
    if let Err(e) = daemon_cmd::connect().and_then(|mut c| c.call(&request)) {
        eprintln!("tether: could not interrupt it: {e}");
    }
}

/// Runs `task` on a small current-thread runtime of a thread of its own
/// (signal watchers beside a caller that blocks).
pub fn on_own_thread<F>(name: &str, task: F) -> std::io::Result<()>
where
    F: std::future::Future<Output = ()> + Send + 'static,
{
    std::thread::Builder::new()
        .name(name.into())
        .spawn(move || {
            let Ok(rt) = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            else {
                return;
            };
            rt.block_on(task);
        })
        .map(|_| ())
}
