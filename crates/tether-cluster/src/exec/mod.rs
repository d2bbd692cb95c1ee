//! Running one command on many hosts: a sliding window of at most
//! `fanout` connections, each host's events passed on as they happen (whole
//! lines only), and every host's result, error or not; one host's failure
//! never stops the others (unless asked to fail fast).

mod gather;
mod resolve;
mod spec;

pub use gather::{Group, gather};
pub use resolve::{Overrides, current_user, policy_of, resolve, resolver};
pub use spec::HostSpec;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tether_ssh::{ConnectOptions, Event, Target};
use tokio::sync::{Semaphore, mpsc, watch};

/// Where and how to connect to a host (ssh_config and the command line
/// decide); an error is that host's one line.
pub type Resolver =
    Arc<dyn Fn(&HostSpec) -> Result<(Target, ConnectOptions), String> + Send + Sync>;

/// How a run goes.
#[derive(Clone)]
pub struct ExecOptions {
    /// Most hosts connected at once.
    pub fanout: usize,
    /// Where and how to connect to each host.
    pub resolve: Resolver,
    /// Deadline for each command (after it connected).
    pub command_timeout: Option<Duration>,
    /// Stop starting hosts after the first failure, and cancel those
    /// running.
    pub fail_fast: bool,
    /// When this turns true, start no more hosts and cancel those running
    /// (an interrupt).
    pub stop: Option<watch::Receiver<bool>>,
    /// Written to every host's stdin (then closed); `None`: stdin closed.
    pub stdin: Option<Arc<Vec<u8>>>,
    /// Keep each host's whole output in its result (gather, json, dir);
    /// off, output only streams by as lines, in bounded memory.
    pub keep_output: bool,
}

/// The longest line held back waiting for its newline; a longer one is
/// passed on in pieces of this size.
pub const MAX_LINE: usize = 64 * 1024;

/// Which stream a line came on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stream {
    /// stdout.
    Stdout,
    /// stderr.
    Stderr,
}

/// One host's result.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HostResult {
    /// The host, as the node set named it.
    pub host: String,
    /// Its exit code, when the command exited.
    pub exit_code: Option<u32>,
    /// The signal that ended it.
    pub signal: Option<String>,
    /// Everything on stdout.
    pub stdout: Vec<u8>,
    /// Everything on stderr.
    pub stderr: Vec<u8>,
    /// Why it did not run or finish (connection, host key, auth, timeout,
    /// cancelled), as one line.
    pub error: Option<String>,
    /// Time to connect, in milliseconds.
    pub connect_ms: u64,
    /// Total time, in milliseconds.
    pub total_ms: u64,
}

impl HostResult {
    /// True when the command ran and exited 0.
    pub fn succeeded(&self) -> bool {
        self.error.is_none() && self.exit_code == Some(0)
    }

    /// The code the exit-code policies count: the exit code, 128+N for a
    /// signal, 255 for an error.
    pub fn code(&self) -> u32 {
        match (&self.error, self.exit_code, &self.signal) {
            (Some(_), _, _) => 255,
            (None, Some(c), _) => c,
            (None, None, Some(_)) => 128 + 15,
            (None, None, None) => 255,
        }
    }
}

/// What happens during a run, in order per host.
#[derive(Clone, Debug)]
pub enum Progress {
    /// A host started connecting.
    Started(String),
    /// A whole line of output (without its newline; a last partial line
    /// comes at the end).
    Line(String, Stream, Vec<u8>),
    /// A host is done.
    Done(HostResult),
}

/// Splits output into lines, holding a partial one.
#[derive(Default)]
struct Lines(Vec<u8>);

impl Lines {
    fn push(&mut self, bytes: &[u8], mut line: impl FnMut(Vec<u8>)) {
        let mut rest = bytes;
        while let Some(nl) = rest.iter().position(|&b| b == b'\n') {
            let mut l = std::mem::take(&mut self.0);
            l.extend_from_slice(&rest[..nl]);
            line(l);
            rest = &rest[nl + 1..];
        }
        self.0.extend_from_slice(rest);
        while self.0.len() >= MAX_LINE {
            let tail = self.0.split_off(MAX_LINE);
            line(std::mem::replace(&mut self.0, tail));
        }
    }

    fn finish(&mut self, line: impl FnOnce(Vec<u8>)) {
        if !self.0.is_empty() {
            line(std::mem::take(&mut self.0));
        }
    }
}

async fn one(
    spec: HostSpec,
    command: Arc<str>,
    opts: Arc<ExecOptions>,
    events: mpsc::Sender<Progress>,
    mut cancel: watch::Receiver<Option<&'static str>>,
) -> HostResult {
    let t0 = Instant::now();
    let host = spec.name.clone();
    let mut result = HostResult {
        host: host.clone(),
        ..HostResult::default()
    };
    if let Some(why) = *cancel.borrow() {
        result.error = Some(format!("{host}: cancelled ({why}): not started"));
        return result;
    }
    let _ = events.send(Progress::Started(host.clone())).await;
    let (target, connect) = match (opts.resolve)(&spec) {
        Ok(r) => r,
        Err(e) => {
            result.error = Some(format!("{host}: {e}"));
            return result;
        }
    };
    let conn = match tether_ssh::connect(&target, &connect).await {
        Ok(c) => c,
        Err(e) => {
            result.error = Some(e.to_string());
            result.total_ms = t0.elapsed().as_millis() as u64;
            return result;
        }
    };
    result.connect_ms = t0.elapsed().as_millis() as u64;
    let cancel_reason = cancel.clone();
    let stop = async move {
        let _ = cancel.wait_for(Option::is_some).await;
    };
    // Output flows through bounded queues: a slow printer slows the
    // remote command instead of filling memory.
    let (ev_tx, mut ev_rx) = mpsc::channel::<Event>(64);
    let keep = opts.keep_output;
    let consume = async {
        let (mut out_lines, mut err_lines) = (Lines::default(), Lines::default());
        let (mut stdout, mut stderr) = (Vec::new(), Vec::new());
        let mut pending = Vec::new();
        while let Some(e) = ev_rx.recv().await {
            let (stream, bytes, lines, all) = match e {
                Event::Stdout(b) => (Stream::Stdout, b, &mut out_lines, &mut stdout),
                Event::Stderr(b) => (Stream::Stderr, b, &mut err_lines, &mut stderr),
            };
            if keep {
                all.extend_from_slice(&bytes);
            }
            lines.push(&bytes, |l| pending.push((stream, l)));
            for (stream, l) in pending.drain(..) {
                let _ = events.send(Progress::Line(host.clone(), stream, l)).await;
            }
        }
        out_lines.finish(|l| pending.push((Stream::Stdout, l)));
        err_lines.finish(|l| pending.push((Stream::Stderr, l)));
        for (stream, l) in pending.drain(..) {
            let _ = events.send(Progress::Line(host.clone(), stream, l)).await;
        }
        (stdout, stderr)
    };
    let input = opts.stdin.as_deref().map(Vec::as_slice);
    let run = async {
        let r = conn
            .exec_async(&command, input, opts.command_timeout, stop, |e| {
                let tx = ev_tx.clone();
                async move {
                    let _ = tx.send(e).await;
                }
            })
            .await;
        drop(ev_tx);
        r
    };
    let (ended, (stdout, stderr)) = tokio::join!(run, consume);
    conn.disconnect().await;
    result.stdout = stdout;
    result.stderr = stderr;
    match ended {
        Ok(e) if e.cancelled => {
            let why = cancel_reason.borrow().unwrap_or("stopped");
            result.error = Some(format!(
                "{host}: cancelled ({why}): sent TERM and its channel closed"
            ));
        }
        Ok(e) if e.timed_out => {
            result.error = Some(format!(
                "{host}: the command did not finish within {:.1} s (command timeout); it was sent TERM and its channel closed",
                opts.command_timeout.unwrap_or_default().as_secs_f64()
            ));
        }
        Ok(e) => {
            result.exit_code = e.exit_code;
            result.signal = e.signal;
        }
        Err(e) => result.error = Some(e.to_string()),
    }
    result.total_ms = t0.elapsed().as_millis() as u64;
    result
}

/// Runs `command` on every host, at most `opts.fanout` at a time, calling
/// `progress` for every event; returns the results in the hosts' order.
pub async fn run(
    hosts: Vec<HostSpec>,
    command: &str,
    opts: ExecOptions,
    mut progress: impl FnMut(&Progress),
) -> Vec<HostResult> {
    let opts = Arc::new(opts);
    let command: Arc<str> = Arc::from(command);
    let window = Arc::new(Semaphore::new(opts.fanout.max(1)));
    let (cancel_tx, cancel) = watch::channel(None);
    let cancel_tx = Arc::new(cancel_tx);
    if let Some(mut stop) = opts.stop.clone() {
        let tx = Arc::clone(&cancel_tx);
        tokio::spawn(async move {
            if stop.wait_for(|s| *s).await.is_ok() {
                tx.send_replace(Some("interrupted"));
            }
        });
    }
    let (tx, mut rx) = mpsc::channel(1024);
    let position: HashMap<String, usize> = hosts
        .iter()
        .enumerate()
        .map(|(i, h)| (h.name.clone(), i))
        .collect();
    for spec in hosts {
        let (window, command, opts, tx, cancel) = (
            Arc::clone(&window),
            Arc::clone(&command),
            Arc::clone(&opts),
            tx.clone(),
            cancel.clone(),
        );
        tokio::spawn(async move {
            let Ok(_permit) = window.acquire_owned().await else {
                return;
            };
            let r = one(spec, command, opts, tx.clone(), cancel).await;
            let _ = tx.send(Progress::Done(r)).await;
        });
    }
    drop(tx);
    let mut done = Vec::with_capacity(position.len());
    while let Some(p) = rx.recv().await {
        if let Progress::Done(r) = &p
            && !r.succeeded()
            && opts.fail_fast
        {
            cancel_tx.send_if_modified(|c| c.replace("fail fast").is_none());
        }
        progress(&p);
        if let Progress::Done(r) = p {
            done.push(r);
        }
    }
    done.sort_by_key(|r| position.get(&r.host).copied().unwrap_or(usize::MAX));
    done
}
