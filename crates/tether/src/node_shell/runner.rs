//! One line on many nodes: a worker thread per node (`worker.rs`) asks
//! the daemon to run it in that node's persistent shell, and streams what
//! it prints; the caller's thread prints and waits. The workers, and each
//! one's connection to the daemon, are kept from line to line ([`Pool`]):
//! starting 50 threads and 50 connections for every line cost more than
//! the line itself on the client. Ctrl-C interrupts the command on every
//! node still running it (the engine's INT, on connections of their own,
//! so it acts at once); a second Ctrl-C leaves them running and returns to
//! the prompt. With `-b` one Ctrl-C cancels: INT, then QUIT, TERM and
//! KILL on the nodes where the command still runs (a second still leaves
//! it).
//!
//! Every job has an id, carried by its events, and `Pool::wait` takes
//! only the events of the jobs it waits for. A job left running has its
//! connection cut (the output stays in the daemon, which bounds it), and
//! the node's next line waits for that same job, which follows the
//! command again from the offset where it was cut: pieces it read before
//! the cut are kept for that line, in order.

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::mpsc::{self, Receiver, Sender};

use tether_cluster::multi::{Link, Outcome};
use tether_daemon::protocol::{LinkFailure, ShellResult, Status};

use super::printer::Printer;
use super::worker::{Job, Kept, Watch, interrupt, serve};
use tether_daemon::protocol::HostRoute;
/// One node's part of one line (or the collection of a command left
/// running there), unique in the session.
pub type JobId = u64;

/// What the node threads (and Ctrl-C) tell the printing thread.
pub enum Event {
    /// Output of node `node`'s job `job`; `at`: when the daemon took it,
    /// since the command was typed (`None`: not output as it came).
    Output {
        node: usize,
        job: JobId,
        text: String,
        at: Option<std::time::Duration>,
    },
    /// Something node `node`'s job `job` tells the person (not output).
    Notice {
        node: usize,
        job: JobId,
        text: String,
    },
    /// Node `node`'s job `job` is done.
    Done {
        node: usize,
        job: JobId,
        ended: Ended,
    },
    /// Ctrl-C.
    Interrupt,
}

impl Event {
    /// The node and job of a node's event.
    fn owner(&self) -> Option<(usize, JobId)> {
        match self {
            Event::Output { node, job, .. }
            | Event::Notice { node, job, .. }
            | Event::Done { node, job, .. } => Some((*node, *job)),
            Event::Interrupt => None,
        }
    }
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
    /// The daemon refused the line: a command from before still runs
    /// there (this client did not start it, or lost track of it).
    Busy,
    /// The daemon went away while the call was in flight: whether the
    /// command finished is unknown.
    Lost(String),
}

impl Ended {
    /// The summary's outcome.
    pub fn outcome(&self) -> Outcome {
        let Ended::Result(r) = self else {
            return match self {
                Ended::Lost(_) => Outcome::Lost(Link::Lost),
                Ended::Busy => Outcome::Running,
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
            // The link to the host was lost or hung: the command runs on
            // in tether there (its end collected later), else its end is
            // unknown.
            (Status::ConnectionLost, _, _) => {
                let how = match r.link.as_ref().map(|l| l.failure) {
                    Some(LinkFailure::Unanswered) => Link::Hung,
                    _ => Link::Lost,
                };
                if r.link.as_ref().is_some_and(|l| l.kept) {
                    Outcome::Away(how)
                } else {
                    Outcome::Lost(how)
                }
            }
            // Its shell ended (a signal, or its connection lost): the next
            // line gets a fresh one.
            (Status::ShellExited, _, _) => Outcome::ShellExited,
            (_, Some(sig), _) => Outcome::Signal(sig.trim_start_matches("SIG").to_owned()),
            (Status::Exited | Status::TimedOut, None, Some(code)) => Outcome::Exit(code),
            _ => Outcome::ShellExited,
        }
    }
}

/// What a node is asked.
pub enum Ask {
    /// Run a command line.
    Run(String),
    /// Collect the rest of the command left running there.
    Collect,
    /// One look at the command left running there: its output so far, and
    /// its end if it ended (a client that comes back to the session).
    Look,
    /// Type a line into the program waiting for input there, only if it
    /// still waits when the line is typed; else look at it once.
    Answer(String),
}

/// A worker per node, started at its first line and kept, with its
/// connection to the daemon, for the next ones; and the jobs they run.
pub struct Pool {
    namespace: String,
    /// How each node is reached, resolved when the session started (or
    /// why it could not be).
    hosts: Vec<Result<HostRoute, String>>,
    workers: Vec<Option<Sender<Job>>>,
    /// Each node's job whose end has not been taken yet (it runs, or was
    /// left running).
    jobs: Vec<Option<(JobId, Arc<Watch>)>>,
    last_id: JobId,
    /// Events of jobs left running that came while others were waited
    /// for, in order, for the line that waits for them.
    kept: VecDeque<Event>,
    /// One Ctrl-C cancels (`-b`): INT, then QUIT, TERM and KILL while the
    /// command runs.
    batch: bool,
    /// `--sudo`: sudo's prompt answered once per line on each node.
    sudo: Option<Arc<tether_cluster::exec::Sudo>>,
    tx: Sender<Event>,
    rx: Receiver<Event>,
}

/// What [`Pool::wait`] does with an event.
enum Fate {
    /// One of the jobs waited for (of the node at this index now):
    /// printed, or its end taken.
    Take(usize),
    /// Of a job left running that is not waited for now: kept.
    Keep,
    /// Of a job whose end was taken already, or a Ctrl-C.
    Other,
}

impl Pool {
    /// No workers yet, for the nodes of the session's `namespace`, each
    /// reached as `hosts` says; `batch`: one Ctrl-C cancels.
    pub fn new(namespace: String, hosts: Vec<Result<HostRoute, String>>, batch: bool) -> Pool {
        let (tx, rx) = mpsc::channel();
        let nodes = hosts.len();
        Pool {
            namespace,
            hosts,
            workers: (0..nodes).map(|_| None).collect(),
            jobs: (0..nodes).map(|_| None).collect(),
            last_id: 0,
            kept: VecDeque::new(),
            batch,
            sudo: None,
            tx,
            rx,
        }
    }

    /// With `--sudo`: every line run with sudo's prompt set, and answered.
    pub fn with_sudo(mut self, sudo: Option<Arc<tether_cluster::exec::Sudo>>) -> Pool {
        self.sudo = sudo;
        self
    }

    /// Where Ctrl-C is told.
    pub fn interrupts(&self) -> Sender<Event> {
        self.tx.clone()
    }

    /// Node `i` has a job whose end was not taken (one left running): the
    /// next wait for the node takes that job's events, and nothing else
    /// may be asked of it before.
    pub fn busy(&self, i: usize) -> bool {
        self.jobs[i].is_some()
    }

    /// Forgets a Ctrl-C pressed between lines; what jobs left running
    /// sent is kept for the line that waits for them.
    pub fn settle(&mut self) {
        while let Ok(ev) = self.rx.try_recv() {
            if let Fate::Keep = self.fate(&ev, &[]) {
                self.kept.push_back(ev);
            }
        }
    }

    /// Asks node `i` (`name`); [`Pool::wait`] takes the events. Not for a
    /// node that is [`Pool::busy`].
    pub fn start(&mut self, i: usize, name: String, ask: Ask) {
        self.last_id += 1;
        let watch = Arc::new(Watch::default());
        watch.set(true);
        self.jobs[i] = Some((self.last_id, Arc::clone(&watch)));
        let mut job = Job {
            i,
            id: self.last_id,
            name,
            host: self.hosts[i].clone(),
            ask,
            tx: self.tx.clone(),
            watch,
            namespace: self.namespace.clone(),
            sudo: self.sudo.clone(),
        };
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
                let mut kept = Kept::new(namespace);
                for job in queue {
                    serve(&mut kept, job);
                }
            });
        match spawned {
            Ok(_) => {
                let _ = jobs.send(job);
                self.workers[i] = Some(jobs);
            }
            Err(e) => {
                let _ = job.tx.send(Event::Done {
                    node: i,
                    job: job.id,
                    ended: Ended::Lost(format!("cannot start a thread: {e}")),
                });
            }
        }
    }

    /// What becomes of `ev`. Its job is found by its id (not by the
    /// index it was started at: nodes may have left the session since).
    fn fate(&self, ev: &Event, targets: &[usize]) -> Fate {
        let Some((_, job)) = ev.owner() else {
            return Fate::Other;
        };
        let now = self
            .jobs
            .iter()
            .position(|j| j.as_ref().is_some_and(|(id, _)| *id == job));
        match now {
            Some(node) if targets.contains(&node) => Fate::Take(node),
            Some(_) => Fate::Keep,
            None => Fate::Other,
        }
    }

    /// A node joins the session at index `i` (the nodes from there move
    /// up one), reached as `host` says.
    pub fn insert(&mut self, i: usize, host: Result<HostRoute, String>) {
        self.hosts.insert(i, host);
        self.workers.insert(i, None);
        self.jobs.insert(i, None);
    }

    /// Node `i` leaves the session (the nodes after it move down one).
    /// Its worker ends after its job; what that job still sends is
    /// dropped, as are its events kept for a later line.
    pub fn remove(&mut self, i: usize) {
        let _ = self.hosts.remove(i);
        self.workers.remove(i);
        if let Some((id, watch)) = self.jobs.remove(i) {
            self.kept
                .retain(|ev| ev.owner().is_none_or(|(_, job)| job != id));
            // (Followed to its end, unwatched: its worker is not left
            // waiting for a line that never comes.)
            watch.set(true);
        }
    }

    /// Waits for the jobs of every node in `targets` (indexes into
    /// `names`), printing what they print; `told` (`-v`, when the session
    /// began): each end said on stderr as it comes. Returns each target's
    /// end, `None` for a node left running after a second Ctrl-C.
    pub fn wait(
        &mut self,
        names: &[String],
        targets: &[usize],
        printer: &mut Printer,
        told: Option<std::time::Instant>,
    ) -> Vec<(usize, Option<Ended>)> {
        let mut ends: Vec<(usize, Option<Ended>)> = targets.iter().map(|&i| (i, None)).collect();
        let mut left = 0;
        for &i in targets {
            if let Some((_, watch)) = &self.jobs[i] {
                watch.set(true);
                left += 1;
            }
        }
        // What these jobs sent while others were waited for comes first.
        let mut earlier = std::mem::take(&mut self.kept);
        let mut interrupts = 0;
        while left > 0 {
            let ev = match earlier.pop_front() {
                Some(ev) => ev,
                None => match self.rx.recv() {
                    Ok(ev) => ev,
                    Err(_) => break,
                },
            };
            match (self.fate(&ev, targets), ev) {
                (Fate::Take(node), Event::Output { text, at, .. }) => {
                    printer.output(node, &text, at)
                }
                (Fate::Take(node), Event::Notice { text, .. }) => printer.notice(node, &text),
                (Fate::Take(node), Event::Done { ended, .. }) => {
                    printer.done(node);
                    super::grow::told_end(told, &names[node], &ended);
                    self.jobs[node] = None;
                    if let Some(slot) = ends.iter_mut().find(|(j, _)| *j == node) {
                        slot.1 = Some(ended);
                    }
                    left -= 1;
                }
                (Fate::Keep, ev) => self.kept.push_back(ev),
                (_, Event::Interrupt) => {
                    interrupts += 1;
                    if interrupts > 1 {
                        eprintln!(
                            "tether: left running on the nodes still busy; the next line collects them (!list shows them)"
                        );
                        break;
                    }
                    if self.batch {
                        eprintln!(
                            "tether: cancelling the line on every node (INT, then QUIT, TERM and KILL while it runs; Ctrl-C again to leave it running)"
                        );
                    } else {
                        eprintln!(
                            "tether: interrupting (Ctrl-C again to leave the commands running)"
                        );
                    }
                    for (i, end) in &ends {
                        if end.is_none() && self.jobs[*i].is_some() {
                            interrupt(self.namespace.clone(), names[*i].clone(), self.batch);
                        }
                    }
                }
                _ => {}
            }
        }
        // (After a second Ctrl-C, in the order they came.)
        self.kept.extend(earlier);
        for (i, end) in &ends {
            if end.is_none()
                && let Some((_, watch)) = &self.jobs[*i]
            {
                watch.set(false);
            }
        }
        printer.finish();
        ends
    }
}
