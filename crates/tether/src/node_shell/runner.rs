//! One line on many nodes: a worker thread per node asks the daemon to
//! run it in that node's persistent shell, and streams what it prints (a
//! command still running after [`STEP`] is followed with `read` every
//! [`STEP`]); the caller's thread prints and waits. The workers, and each
//! one's connection to the daemon, are kept from line to line ([`Pool`]):
//! starting 50 threads and 50 connections for every line cost more than
//! the line itself on the client. Ctrl-C interrupts the command on every
//! node still running it (the engine's INT, on connections of their own,
//! so it acts at once); a second Ctrl-C leaves them running and returns to
//! the prompt.

use std::sync::mpsc::{self, Receiver, Sender};
use std::time::Duration;

use tether_cluster::multi::Outcome;
use tether_daemon::protocol::{Create, FailureKind, OnTimeout, Request, ShellResult, Status};
use tether_daemon::{Client, DaemonError, Paths};

use super::printer::Printer;
use crate::daemon_cmd;

/// How long a call waits before it returns what was printed so far.
pub const STEP: Duration = Duration::from_millis(500);
/// Most characters of output one call returns.
const OUTPUT_LIMIT: usize = 4 << 20;

/// What the node threads (and Ctrl-C) tell the printing thread.
pub enum Event {
    /// Output of node `i`.
    Output(usize, String),
    /// Node `i` is done.
    Done(usize, Ended),
    /// Ctrl-C.
    Interrupt,
}

/// How a node's part of a line ended.
#[derive(Clone, Debug)]
pub enum Ended {
    /// The daemon's last answer.
    Result(Box<ShellResult>),
    /// The node could not be reached (its shell could not start).
    Unreachable(String),
    /// The daemon refused the call (shown as it said).
    Refused(String),
    /// The daemon went away while the call was in flight: whether the
    /// command finished is unknown.
    Lost(String),
}

impl Ended {
    /// The summary's outcome.
    pub fn outcome(&self) -> Outcome {
        let Ended::Result(r) = self else {
            return match self {
                Ended::Lost(_) => Outcome::Lost,
                _ => Outcome::NotRun,
            };
        };
        match (r.status, &r.signal, r.exit_code) {
            (Status::Running, _, _) => Outcome::Running,
            (Status::WaitingForInput, _, _) => Outcome::Waiting(
                r.foreground
                    .as_ref()
                    .map_or_else(String::new, |f| f.command.clone()),
            ),
            (Status::IncompleteInput, _, _) => Outcome::Incomplete,
            // Its shell ended (a signal, or its connection lost): the next
            // line gets a fresh one.
            (Status::ShellExited, _, _) => Outcome::ShellExited,
            (_, Some(sig), _) => Outcome::Signal(sig.trim_start_matches("SIG").to_owned()),
            (Status::Exited | Status::TimedOut, None, Some(code)) => Outcome::Exit(code),
            _ => Outcome::ShellExited,
        }
    }
}

/// A connection in the multi-node session's namespace.
pub fn connect(namespace: &str) -> Result<Client, DaemonError> {
    let hello = tether_daemon::client::hello(&daemon_cmd::me(), Some(namespace.to_owned()), false);
    Client::connect_or_start(&Paths::from_env(), &hello, &daemon_cmd::launch)
}

/// Sends `request` on the worker's kept connection `conn`, or on a new one
/// (kept for the next request while it works).
fn call(
    namespace: &str,
    conn: &mut Option<Client>,
    request: &Request,
) -> Result<ShellResult, DaemonError> {
    if let Some(client) = conn.as_mut() {
        match client.request(request) {
            // The kept connection failed while the request was written: the
            // daemon never read it (it stopped, or another one runs now), so
            // it goes on a new connection, which starts a daemon if needed.
            Err(DaemonError::Connection(_)) => *conn = None,
            other => return keep(conn, other),
        }
    }
    let mut client = connect(namespace)?;
    let r = client.request(request);
    *conn = Some(client);
    keep(conn, r)
}

/// Keeps the connection after an answer (a refusal is one), not after a
/// connection that broke or carried something unreadable.
fn keep(
    conn: &mut Option<Client>,
    r: Result<ShellResult, DaemonError>,
) -> Result<ShellResult, DaemonError> {
    if !matches!(r, Ok(_) | Err(DaemonError::Refused(_))) {
        *conn = None;
    }
    r
}

/// How a failed call ended: the engine could not start the shell there
/// (the node is down), the daemon refused it, or the daemon went away.
fn failed(e: DaemonError) -> Ended {
    match e {
        DaemonError::Refused(f) if f.kind == FailureKind::Engine => Ended::Unreachable(f.message),
        DaemonError::Refused(f) => Ended::Refused(f.message),
        other => Ended::Lost(other.to_string()),
    }
}

/// What a node is asked.
pub enum Ask {
    /// Run a command line.
    Run(String),
    /// Collect the rest of the command left running there.
    Collect,
    /// Type a line into the program waiting for input there.
    Answer(String),
}

/// One node's part of a line.
struct Job {
    i: usize,
    name: String,
    ask: Ask,
    tx: Sender<Event>,
}

/// A worker per node, started at its first line and kept, with its
/// connection to the daemon, for the next ones.
pub struct Pool {
    namespace: String,
    workers: Vec<Option<Sender<Job>>>,
}

impl Pool {
    /// No workers yet, for `nodes` nodes of the session's `namespace`.
    pub fn new(namespace: String, nodes: usize) -> Pool {
        Pool {
            namespace,
            workers: (0..nodes).map(|_| None).collect(),
        }
    }

    /// Asks node `i` (`name`), streaming events to `tx`.
    pub fn start(&mut self, i: usize, name: String, ask: Ask, tx: Sender<Event>) {
        let mut job = Job { i, name, ask, tx };
        if let Some(worker) = &self.workers[i] {
            match worker.send(job) {
                Ok(()) => return,
                // Its thread is gone: a new one takes the job.
                Err(mpsc::SendError(back)) => job = back,
            }
        }
        let (jobs, queue) = mpsc::channel::<Job>();
        let namespace = self.namespace.clone();
        let spawned = std::thread::Builder::new()
            .name(format!("node-{i}"))
            .spawn(move || {
                let mut conn = None;
                for job in queue {
                    serve(&namespace, &mut conn, job);
                }
            });
        match spawned {
            Ok(_) => {
                let _ = jobs.send(job);
                self.workers[i] = Some(jobs);
            }
            Err(e) => {
                let _ = job.tx.send(Event::Done(
                    i,
                    Ended::Lost(format!("cannot start a thread: {e}")),
                ));
            }
        }
    }

    /// Node `i`'s worker is left to its job (a command left running after
    /// a second Ctrl-C): it ends after that job, and the node's next job
    /// gets a new worker, so nothing waits behind it.
    pub fn abandon(&mut self, i: usize) {
        self.workers[i] = None;
    }
}

/// Runs one job on the worker's connection `conn`.
fn serve(namespace: &str, conn: &mut Option<Client>, job: Job) {
    let Job { i, name, ask, tx } = job;
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
        },
        Ask::Collect => Request::Read {
            session: name.clone(),
            wait_s: 0.0,
        },
        Ask::Answer(text) => Request::Send {
            session: name.clone(),
            input: Some(format!("{text}\n")),
            keys: Vec::new(),
            wait_s: STEP.as_secs_f64(),
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
            Err(e) => {
                let _ = tx.send(Event::Done(i, failed(e)));
                return;
            }
        };
        // (Only the printer needs the output.)
        let output = std::mem::take(&mut r.output);
        let again = std::mem::take(&mut answered)
            && r.status == Status::WaitingForInput
            && output.is_empty();
        if !output.is_empty() && tx.send(Event::Output(i, output)).is_err() {
            return;
        }
        if r.status != Status::Running && !again {
            let _ = tx.send(Event::Done(i, Ended::Result(Box::new(r))));
            return;
        }
        request = Request::Read {
            session: name.clone(),
            wait_s: STEP.as_secs_f64(),
        };
    }
}

/// Sends INT to node `name`'s command, on a connection of its own.
fn interrupt(namespace: String, name: String) {
    std::thread::spawn(move || {
        let _ = connect(&namespace).and_then(|mut c| {
            c.call(&Request::Signal {
                session: name,
                signal: "INT".into(),
            })
        });
    });
}

/// Waits for every node in `targets` (indexes into `names`), printing
/// what they print. Returns each target's end, `None` for a node left
/// running after a second Ctrl-C.
pub fn wait(
    namespace: &str,
    names: &[String],
    targets: &[usize],
    rx: &Receiver<Event>,
    printer: &mut Printer,
) -> Vec<(usize, Option<Ended>)> {
    let mut ends: Vec<(usize, Option<Ended>)> = targets.iter().map(|&i| (i, None)).collect();
    let mut left = targets.len();
    let mut interrupts = 0;
    while left > 0 {
        let Ok(ev) = rx.recv() else { break };
        match ev {
            Event::Output(i, text) => printer.output(i, &text),
            Event::Done(i, ended) => {
                printer.done(i);
                if let Some(slot) = ends.iter_mut().find(|(j, e)| *j == i && e.is_none()) {
                    slot.1 = Some(ended);
                    left -= 1;
                }
            }
            Event::Interrupt => {
                interrupts += 1;
                if interrupts > 1 {
                    eprintln!(
                        "tether: left running on the nodes still busy; the next line collects them (!list shows them)"
                    );
                    break;
                }
                eprintln!("tether: interrupting (Ctrl-C again to leave the commands running)");
                for (i, end) in &ends {
                    if end.is_none() {
                        interrupt(namespace.to_owned(), names[*i].clone());
                    }
                }
            }
        }
    }
    printer.finish();
    ends
}
