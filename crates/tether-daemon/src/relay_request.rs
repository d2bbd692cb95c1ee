//! A request as a host's daemon gets it from the relay (`relay.rs`): the
//! session's name there, no host (it is that host), a `run` named (so its
//! result can be asked for again) and sent with `pieces` when its client
//! does not follow it, and a `read` of a session whose call a lost link
//! cut asking for that call's result (`recall`).

use std::sync::atomic::{AtomicU64, Ordering};

use crate::protocol::Request;

/// A name for a call, unique to this daemon's life and across restarts.
fn call_name() -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    format!(
        "{:x}-{:x}-{t:x}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

/// `request` as the host's daemon gets it: the session's name there, no
/// host (it is that host), a `run` named (its name returned) and a `read`
/// of a session with a cut call asking for that call's result.
pub(crate) fn there(request: Request, name: &str, cut: Option<&str>) -> (Request, Option<String>) {
    let name = name.to_owned();
    match request {
        Request::Run {
            command,
            timeout_s,
            on_timeout,
            output_limit,
            workdir,
            create,
            stdin,
            follow,
            ..
        } => {
            let call = call_name();
            // The caller's directory and environment are this machine's:
            // the host's session starts in the login directory with the
            // host daemon's (login) environment, as an agentless one does.
            let create = crate::protocol::Create {
                cwd: None,
                env: None,
                ..create
            };
            let run = Request::Run {
                session: name,
                command,
                host: None,
                timeout_s,
                on_timeout,
                output_limit,
                workdir,
                create,
                stdin,
                follow,
                // The pieces come (and the start) for the relay to keep,
                // followed or not.
                pieces: true,
                call: Some(call.clone()),
            };
            (run, Some(call))
        }
        Request::Read { wait_s, .. } => match cut {
            Some(call) => (
                Request::Recall {
                    session: name,
                    call: call.to_owned(),
                    wait_s,
                },
                None,
            ),
            None => (
                Request::Read {
                    session: name,
                    wait_s,
                },
                None,
            ),
        },
        Request::Attach {
            rows, cols, resume, ..
        } => (
            Request::Attach {
                session: name,
                rows,
                cols,
                host: None,
                resume,
            },
            None,
        ),
        mut other => {
            if let Some(session) = other.session_mut() {
                *session = name;
            }
            (other, None)
        }
    }
}
