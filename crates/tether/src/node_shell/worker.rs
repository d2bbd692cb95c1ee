//! A node's worker: the daemon calls of one job, on the connection the
//! worker keeps from job to job, its events sent to the printing thread.
//! A line is one `run` that follows its command: its output comes as the
//! node writes it, each piece stamped with when the daemon took it, and
//! its end after; no polling. A look, a collection and an answer follow
//! the command from the offset after the last piece this worker got, so
//! nothing is shown twice. A job left running (a second Ctrl-C) has its
//! connection cut: the command runs on in the daemon, which bounds what it
//! keeps, and the node's next line follows it again from that offset.

use std::net::Shutdown;
use std::os::unix::net::UnixStream;
use std::sync::mpsc::Sender;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use tether_daemon::client::Streamed;
use tether_daemon::protocol::{
    Create, FailureKind, HostRoute, OnTimeout, Request, ShellResult, Status,
};
use tether_daemon::{Client, Conn, DaemonError, Paths};

use tether_cluster::exec::Sudo;

use super::runner::{Ask, Ended, Event, JobId};
use crate::daemon_cmd;

/// Most characters of output a result keeps (its spill file beyond).
const OUTPUT_LIMIT: usize = 4 << 20;

/// A connection in the multi-node session's namespace.
pub fn connect(namespace: &str) -> Result<Client, DaemonError> {
    let hello = tether_daemon::client::hello(&daemon_cmd::me(), Some(namespace.to_owned()), false);
    Client::connect_or_start(&Paths::from_env(), &hello, &daemon_cmd::launch)
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
/// left running), its connection is cut and its worker asks nothing.
#[derive(Default)]
pub struct Watch {
    state: Mutex<WatchState>,
    turned: Condvar,
}

#[derive(Default)]
struct WatchState {
    on: bool,
    /// The connection the job follows on now, cut when it is left.
    conn: Option<UnixStream>,
}

impl Watch {
    fn state(&self) -> std::sync::MutexGuard<'_, WatchState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn set(&self, on: bool) {
        let mut st = self.state();
        st.on = on;
        if !on && let Some(c) = st.conn.take() {
            let _ = c.shutdown(Shutdown::Both);
        }
        drop(st);
        self.turned.notify_all();
    }

    /// Returns once somebody waits.
    fn until_on(&self) {
        let mut st = self.state();
        while !st.on {
            st = self.turned.wait(st).unwrap_or_else(|p| p.into_inner());
        }
    }

    /// Keeps `conn` to cut when the job is left; cuts it at once when it
    /// was left meanwhile.
    fn hold(&self, conn: UnixStream) {
        let mut st = self.state();
        if st.on {
            st.conn = Some(conn);
        } else {
            let _ = conn.shutdown(Shutdown::Both);
        }
    }

    /// The connection's call is over: nothing to cut. True when the job
    /// was left meanwhile.
    fn release(&self) -> bool {
        let mut st = self.state();
        st.conn = None;
        !st.on
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
    /// How the node is reached (or why it cannot be).
    pub host: Result<HostRoute, String>,
    /// What it is asked.
    pub ask: Ask,
    /// Where its events go.
    pub tx: Sender<Event>,
    /// Whether somebody waits for them.
    pub watch: Arc<Watch>,
    /// The session's namespace in the daemon.
    pub namespace: String,
    /// `--sudo`: the line run with sudo's prompt set; that prompt, when a
    /// node waits at it, answered once (see `answer_sudo`).
    pub sudo: Option<Arc<Sudo>>,
}

/// What a worker keeps from job to job: its connection, and where its
/// node's last command's text was followed to (the command's number, the
/// offset after the last piece).
pub struct Kept {
    conn: Conn,
    followed: Option<(u64, u64)>,
    /// The unfinished line (a prompt) shown at the last job's end: not
    /// shown again when the line is finished.
    partial: String,
}

impl Kept {
    /// Nothing yet, for a node of the session's `namespace`.
    pub fn new(namespace: String) -> Kept {
        Kept {
            conn: Conn::new(Box::new(move || connect(&namespace))),
            followed: None,
            partial: String::new(),
        }
    }

    /// The offset to follow the node's command from: after what this
    /// worker got of it; `None` (it got nothing of it: a client that came
    /// back) after what the daemon last sent of it.
    fn from(&self) -> Option<u64> {
        self.followed.map(|(_, at)| at)
    }
}

/// How one followed call ended.
enum Call {
    /// The daemon's end.
    Result(Box<ShellResult>),
    /// The job was left (its connection cut): follow again later.
    Left,
    Failed(DaemonError),
}

/// Sends `request` on the kept connection by the one rule
/// ([`tether_daemon::Conn`]) and follows it, each piece an event of the
/// job.
fn follow(kept: &mut Kept, job: &Job, request: &Request, sudo_line: &mut SudoLine) -> Call {
    let (followed, partial) = (&mut kept.followed, &mut kept.partial);
    let mut left = false;
    let r = kept.conn.with(|client| {
        if let Ok(cut) = client.cutter() {
            job.watch.hold(cut);
        }
        let r = client.follow(request, &mut |s| {
            let (command, mut text, at, next) = match s {
                Streamed::Piece(p) => {
                    let next = p.offset + p.text.len() as u64;
                    let at = Some(Duration::from_millis(p.at_ms));
                    (p.command, p.text, at, next)
                }
                Streamed::Omitted(o) => {
                    *followed = Some((o.command, o.to));
                    let _ = job.tx.send(Event::Notice {
                        node: job.i,
                        job: job.id,
                        text: format!(
                            "{} bytes of its output are not shown: the daemon no longer keeps them",
                            o.to - o.from
                        ),
                    });
                    return;
                }
            };
            *followed = Some((command, next));
            if let Some(sudo) = &job.sudo {
                text = sudo_line.take(job, sudo, text);
            }
            if !partial.is_empty() {
                if let Some(rest) = text.strip_prefix(partial.as_str()) {
                    text = rest.to_owned();
                }
                partial.clear();
            }
            if text.is_empty() {
                return;
            }
            let _ = job.tx.send(Event::Output {
                node: job.i,
                job: job.id,
                text,
                at,
            });
        });
        left = job.watch.release();
        match r {
            // Cut because the job was left: not sent again now; followed
            // again once the node's next line waits for it.
            Err(e) if left => Err(DaemonError::Lost(e.to_string())),
            r => r,
        }
    });
    match r {
        Ok(r) => Call::Result(Box::new(r)),
        Err(_) if left => Call::Left,
        Err(e) => Call::Failed(e),
    }
}

impl Job {
    fn send(&self, event: Event) -> bool {
        self.tx.send(event).is_ok()
    }

    fn done(&self, ended: Ended) {
        let _ = self.send(Event::Done {
            node: self.i,
            job: self.id,
            ended,
        });
    }
}

/// Runs one job on the worker's connection.
pub fn serve(kept: &mut Kept, job: Job) {
    let follow_from = |kept: &Kept, wait_s: Option<f64>| Request::Follow {
        session: job.name.clone(),
        from: kept.from(),
        wait_s,
    };
    let mut request = match &job.ask {
        Ask::Run(command) => {
            kept.followed = None;
            kept.partial.clear();
            let host = match &job.host {
                Ok(h) => h.clone(),
                Err(why) => return job.done(Ended::Unreachable(why.clone())),
            };
            Request::Run {
                session: job.name.clone(),
                command: match &job.sudo {
                    Some(sudo) => sudo.line_command(command),
                    None => command.clone(),
                },
                host: Some(host),
                timeout_s: tether_daemon::ops::MAX_SECONDS,
                on_timeout: OnTimeout::Keep,
                output_limit: OUTPUT_LIMIT,
                workdir: None,
                create: Create::default(),
                stdin: None,
                follow: true,
                pieces: false,
                call: None,
            }
        }
        Ask::Collect => follow_from(kept, None),
        Ask::Look => follow_from(kept, Some(0.0)),
        Ask::Answer(text) => {
            let send = Request::Send {
                session: job.name.clone(),
                input: Some(format!("{text}\n")),
                keys: Vec::new(),
                wait_s: 0.0,
                only_if_waiting: true,
                now: false,
            };
            match kept.conn.request::<ShellResult>(&send) {
                Ok(_) => follow_from(kept, None),
                // Nothing was typed (the program no longer waits, or its
                // command ended): said, and the command looked at once (its
                // end, if it came; else the next line there follows it).
                Err(DaemonError::Refused(f)) if f.kind == FailureKind::NotWaiting => {
                    if !job.send(Event::Notice {
                        node: job.i,
                        job: job.id,
                        text: f.message,
                    }) {
                        return;
                    }
                    follow_from(kept, Some(0.0))
                }
                Err(e) => return job.done(failed(e)),
            }
        }
    };
    // Whether this line's sudo prompt was answered.
    let mut sudo_line = SudoLine::default();
    loop {
        job.watch.until_on();
        let mut r = match follow(kept, &job, &request, &mut sudo_line) {
            Call::Result(r) => r,
            // Left running: followed again from where it was cut, once the
            // node's next line waits for it.
            Call::Left => {
                request = follow_from(kept, None);
                continue;
            }
            Call::Failed(e) => {
                // A command followed (not a line sent) whose session cannot
                // be read any more: its end is unknown, whatever the reason.
                let ended = match (&request, e) {
                    (Request::Follow { .. }, DaemonError::Refused(f)) => {
                        Ended::Lost(format!("its end is unknown: {}", f.message))
                    }
                    (_, e) => failed(e),
                };
                return job.done(ended);
            }
        };
        let look = matches!(
            request,
            Request::Follow {
                wait_s: Some(_),
                ..
            }
        );
        // Kept past the run's hour: followed on.
        if r.status == Status::Running && !look {
            request = follow_from(kept, None);
            continue;
        }
        // The unfinished line (a prompt): shown, not counted.
        let partial = std::mem::take(&mut r.output);
        kept.partial.clone_from(&partial);
        if !show_partial(&job, partial) {
            return;
        }
        return job.done(Ended::Result(r));
    }
}

/// Shows the unfinished line (a prompt); false when nobody listens.
fn show_partial(job: &Job, partial: String) -> bool {
    partial.is_empty()
        || job.send(Event::Output {
            node: job.i,
            job: job.id,
            text: partial,
            at: None,
        })
}

/// A line's dealings with sudo on one node.
#[derive(Default)]
struct SudoLine {
    /// The password was typed.
    typed: bool,
    /// The newline sudo prints after reading it is still to come.
    newline_owed: bool,
}

impl SudoLine {
    /// A piece of the line's output: sudo's prompts answered and taken
    /// out, with the newline sudo prints after the password.
    fn take(&mut self, job: &Job, sudo: &Sudo, text: String) -> String {
        let (mut text, asked) = sudo.take_prompts(&text);
        if self.newline_owed && !text.is_empty() {
            self.newline_owed = false;
            if let Some(rest) = text.strip_prefix('\n') {
                text = rest.to_owned();
            }
        }
        if asked > 0 {
            self.newline_owed = sudo_asked(job, sudo, &mut self.typed, asked);
        }
        text
    }
}

/// sudo printed its prompt on this node (`asked` times). The first time in
/// a line, the password is typed, from a connection of its own (this one
/// follows the command), then wiped from the request; again (sudo refused
/// it, or a later sudo asked anew) sudo is interrupted (INT, then QUIT,
/// TERM and KILL while the command runs) and the node says why. True when
/// the password was typed.
fn sudo_asked(job: &Job, sudo: &Sudo, typed: &mut bool, asked: usize) -> bool {
    let line = sudo.typed_line().filter(|_| !*typed && asked == 1);
    let Some(line) = line else {
        interrupt(job.namespace.clone(), job.name.clone(), true);
        let why = if *typed || asked > 1 {
            "sudo asked for the password a second time (it refused the one typed, or a later sudo \
             asked anew); it is typed once per line: sudo was interrupted"
        } else {
            "the sudo password is not UTF-8 text, and a shell session types text: not typed; \
             sudo was interrupted"
        };
        let _ = job.send(Event::Notice {
            node: job.i,
            job: job.id,
            text: why.into(),
        });
        return false;
    };
    *typed = true;
    let (namespace, session) = (job.namespace.clone(), job.name.clone());
    std::thread::spawn(move || {
        let Ok(mut c) = connect(&namespace) else {
            return;
        };
        let mut send = Request::Send {
            session,
            input: Some(String::from(line.as_str())),
            keys: Vec::new(),
            wait_s: 0.0,
            // A daemon that does not know `now` (an older tether on the
            // host) types it only into a program reading the terminal,
            // never into the shell after the line.
            only_if_waiting: true,
            now: true,
        };
        let _ = c.request::<ShellResult>(&send);
        if let Request::Send {
            input: Some(text), ..
        } = &mut send
        {
            zeroize::Zeroize::zeroize(text);
        }
    });
    true
}

/// Sends INT to node `name`'s command, on a connection of its own; with
/// `cancel`, then QUIT, TERM and KILL while it still runs (each signal's
/// reply comes once the daemon gave the command half a second to end).
/// INT and QUIT are the terminal's own keys, for the foreground on every
/// transport; where the foreground cannot be seen (a shell driven over
/// the link) TERM and KILL reach the shell itself, as the engine's own
/// interrupt ends a program that ignores both with its shell: the next
/// line gets a fresh one, cwd and exported variables restored.
pub fn interrupt(namespace: String, name: String, cancel: bool) {
    let signals: &[&str] = if cancel {
        &["INT", "QUIT", "TERM", "KILL"]
    } else {
        &["INT"]
    };
    std::thread::spawn(move || {
        let Ok(mut c) = connect(&namespace) else {
            return;
        };
        for signal in signals {
            let sent = c.request::<ShellResult>(&Request::Signal {
                session: name.clone(),
                signal: (*signal).into(),
            });
            match sent {
                Ok(r) if r.status == Status::Running => {}
                _ => return,
            }
        }
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
