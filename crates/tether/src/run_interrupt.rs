//! Ctrl-C on a waiting `tether run`: the first interrupts the command (a
//! `signal INT` to the session, on a connection of its own, so it acts at
//! once), and the call then returns the command's true status; the second
//! detaches, leaving the command running in the session for `tether read`.

use std::sync::atomic::{AtomicUsize, Ordering};

use tether_daemon::protocol::Request;

use crate::daemon_cmd;
use crate::result_out;

/// Watches SIGINT for the life of the process while a call on `session`
/// waits (a thread with its own small runtime; the blocking call stays on
/// the caller's thread).
pub fn watch(session: String) {
    if let Err(e) = on_own_thread("ctrl-c", on_sigint(session)) {
        eprintln!("tether: Ctrl-C will end tether, not the command ({e})");
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

async fn on_sigint(session: String) {
    use tokio::signal::unix::{SignalKind, signal};
    let Ok(mut int) = signal(SignalKind::interrupt()) else {
        return;
    };
    let presses = AtomicUsize::new(0);
    while int.recv().await.is_some() {
        if presses.fetch_add(1, Ordering::AcqRel) == 0 {
            eprintln!(
                "\ntether: interrupting the command in session {session} (Ctrl-C again to detach and leave it running)"
            );
            let request = Request::Signal {
                session: session.clone(),
                signal: "INT".into(),
            };
            let sent = tokio::task::spawn_blocking(move || {
                daemon_cmd::connect().and_then(|mut c| c.call(&request))
            })
            .await;
            if let Ok(Err(e)) = sent {
                eprintln!("tether: could not interrupt it: {e}");
            }
        } else {
            eprintln!(
                "tether: detached; the command keeps running in session {session}: `tether read -s {session}` returns the rest, `tether signal -s {session} INT` stops it"
            );
            std::process::exit(result_out::RUNNING);
        }
    }
}
