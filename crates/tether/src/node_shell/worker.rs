//! A node's worker: the daemon calls of one job (run, then read every
//! [`STEP`] while it runs; a look; a reply typed only if the node still
//! waits), on the connection the worker keeps from job to job, its events
//! sent to the printing thread; and a job's pause while nobody waits for it.

use std::sync::mpsc::Sender;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use tether_daemon::protocol::{Create, FailureKind, OnTimeout, Request, ShellResult, Status};
use tether_daemon::{Client, DaemonError, Paths};

use super::runner::{Ask, Ended, Event, JobId};
use crate::daemon_cmd;

/// How long a call waits before it returns what was printed so far.
pub const STEP: Duration = Duration::from_millis(500);
/// Most characters of output one call returns.
const OUTPUT_LIMIT: usize = 4 << 20;

/// A connection in the multi-node session's namespace.
pub fn connect(namespace: &str) -> Result<Client, DaemonError> {
    let hello = tether_daemon::client::hello(&daemon_cmd::me(), Some(namespace.to_owned()), false);
    Client::connect_or_start(&Paths::from_env(), &hello, &daemon_cmd::launch)
}

/// Sends `request` on the worker's kept connection `conn`, or on a new one
/// (kept for the next request while it works). A request the daemon never
/// read (it stopped, or another one runs now) goes on a new connection,
/// which starts a daemon if needed.
fn call(
    namespace: &str,
    conn: &mut Option<Client>,
    request: &Request,
) -> Result<ShellResult, DaemonError> {
    let mut attempts = 0;
    loop {
        attempts += 1;
        let client = match conn {
            Some(c) => c,
            None => conn.insert(connect(namespace)?),
        };
        let r = client.request(request);
        if !tether_daemon::reusable(&r) {
            *conn = None;
        }
        match r {
            Err(e) if e.unsent() && attempts < tether_daemon::SEND_ATTEMPTS => {}
            other => return other,
        }
    }
}

/// How a failed call ended: the node failed (could not be reached, or
/// failed what tether asked of it there: the reply says how), the daemon
/// refused the call or failed it otherwise, or the daemon went away.
fn failed(e: DaemonError) -> Ended {
    match e {
        DaemonError::Refused(f) if f.host.is_some() => Ended::Unreachable(f.message),
        DaemonError::Refused(f) if f.kind == FailureKind::Busy => Ended::Busy,
        DaemonError::Refused(f) => Ended::Refused(f.message),
        other => Ended::Lost(other.to_string()),
    }
}

/// Whether somebody waits for a job's events. While nobody does (it was
/// left running), its worker asks the daemon nothing.
#[derive(Default)]
pub struct Watch {
    on: Mutex<bool>,
    turned: Condvar,
}

impl Watch {
    pub fn set(&self, on: bool) {
        *self.on.lock().unwrap_or_else(|p| p.into_inner()) = on;
        self.turned.notify_all();
    }

    /// Returns once somebody waits.
    fn until_on(&self) {
        let mut on = self.on.lock().unwrap_or_else(|p| p.into_inner());
        while !*on {
            on = self.turned.wait(on).unwrap_or_else(|p| p.into_inner());
        }
    }
}

/// One node's part of a line.
pub struct Job {
    /// The node's index.
    pub i: usize,
    /// The job's id.
    pub id: JobId,
    /// The node's name (its session's).
    pub name: String,
    /// What it is asked.
    pub ask: Ask,
    /// Where its events go.
    pub tx: Sender<Event>,
    /// Whether somebody waits for them.
    pub watch: Arc<Watch>,
}

/// Runs one job on the worker's connection `conn`.
pub fn serve(namespace: &str, conn: &mut Option<Client>, job: Job) {
    let Job {
        i,
        id,
        name,
        ask,
        tx,
        watch,
    } = job;
    let mut once = matches!(ask, Ask::Look);
    let first = match ask {
        Ask::Run(command) => Request::Run {
            session: name.clone(),
            command,
            host: Some(name.clone()),
            timeout_s: STEP.as_secs_f64(),
            on_timeout: OnTimeout::Keep,
            output_limit: OUTPUT_LIMIT,
            workdir: None,
            create: Create::default(),
            stdin: None,
            follow: false,
        },
        Ask::Collect | Ask::Look => Request::Read {
            session: name.clone(),
            wait_s: 0.0,
        },
        Ask::Answer(text) => Request::Send {
            session: name.clone(),
            input: Some(format!("{text}\n")),
            keys: Vec::new(),
            wait_s: STEP.as_secs_f64(),
            only_if_waiting: true,
        },
    };

    // An answer that changed nothing yet (the program has not read it
    // when the daemon looked) gets one more look before the node is
    // called waiting again.
    let mut answered = matches!(first, Request::Send { .. });
    let mut request = first;
    loop {
        let mut r = match call(namespace, conn, &request) {
            Ok(r) => r,
            // Nothing was typed (the program no longer waits, or its command
            // ended): said, and the command looked at once (its end, if it
            // came; else the next line there follows it).
            Err(DaemonError::Refused(f)) if f.kind == FailureKind::NotWaiting => {
                if tx
                    .send(Event::Notice {
                        node: i,
                        job: id,
                        text: f.message,
                    })
                    .is_err()
                {
                    return;
                }
                answered = false;
                once = true;
                request = Request::Read {
                    session: name.clone(),
                    wait_s: 0.0,
                };
                continue;
            }
            Err(e) => {
                // A command followed (not a line sent) whose session cannot
                // be read any more: its end is unknown, whatever the reason.
                let ended = match (&request, e) {
                    (Request::Read { .. }, DaemonError::Refused(f)) => {
                        Ended::Lost(format!("its end is unknown: {}", f.message))
                    }
                    (_, e) => failed(e),
                };
                let _ = tx.send(Event::Done {
                    node: i,
                    job: id,
                    ended,
                });
                return;
            }
        };
        // (Only the printer needs the output.)
        let output = std::mem::take(&mut r.output);
        let again = std::mem::take(&mut answered)
            && r.status == Status::WaitingForInput
            && output.is_empty();
        if !output.is_empty()
            && tx
                .send(Event::Output {
                    node: i,
                    job: id,
                    text: output,
                })
                .is_err()
        {
            return;
        }
        if (r.status != Status::Running && !again) || once {
            let _ = tx.send(Event::Done {
                node: i,
                job: id,
                ended: Ended::Result(Box::new(r)),
            });
            return;
        }
        // Left running: the next look waits for the line that collects it.
        watch.until_on();
        request = Request::Read {
            session: name.clone(),
            wait_s: STEP.as_secs_f64(),
        };
    }
}

/// Sends INT to node `name`'s command, on a connection of its own.
pub fn interrupt(namespace: String, name: String) {
    std::thread::spawn(move || {
        let _ = connect(&namespace).and_then(|mut c| {
            c.call(&Request::Signal {
                session: name,
                signal: "INT".into(),
            })
        });
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use tether_daemon::protocol::Failure;
    use tether_transport::HostFailure;

    fn engine(host: Option<HostFailure>) -> DaemonError {
        DaemonError::Refused(Failure {
            kind: FailureKind::Engine,
            message: "said".into(),
            host,
        })
    }

    #[test]
    fn only_a_hosts_failure_makes_a_node_unreachable() {
        assert!(matches!(
            failed(engine(Some(HostFailure::Refused))),
            Ended::Unreachable(m) if m == "said"
        ));
        assert!(matches!(
            failed(engine(Some(HostFailure::Setup))),
            Ended::Unreachable(_)
        ));
        // The engine failed otherwise: the node is not called down.
        assert!(matches!(failed(engine(None)), Ended::Refused(m) if m == "said"));
    }
}
