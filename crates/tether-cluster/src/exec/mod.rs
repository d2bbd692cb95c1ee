//! Running one command on many hosts: a sliding window of at most
//! `fanout` connections, each host's events passed on as they happen (whole
//! lines only), and every host's result, error or not; one host's failure
//! never stops the others (unless asked to fail fast), and one host can be
//! stopped alone ([`HostStops`]).

mod gather;
mod host_error;
mod input;
mod kept;
mod ping;
mod resolve;
mod spec;
mod stops;
mod sudo;

pub use gather::{Group, gather};
pub use host_error::{Halt, HostError, HostErrorKind, Lost, StopReason};
pub use input::SharedInput;
pub use kept::{Kept, KeptReader, MEMORY_CAP, RUN_MEMORY_CAP, Spill};
pub use ping::{PingProgress, PingResult, ping};
pub use resolve::{
    DEFAULT_KEEPALIVE, Overrides, current_user, policy_of, resolve, resolver, route,
};
pub use spec::HostSpec;
pub use stops::HostStops;
pub use sudo::Sudo;

use std::sync::Arc;
use std::time::{Duration, Instant};

use tether_ssh::{ConnectOptions, Event, Target};
use tokio::sync::{mpsc, watch};

use crate::window::{self, Cancel, HostEvent, WindowOptions};

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
    /// Given to every host's stdin (then closed); `None`: stdin closed.
    pub stdin: Option<Arc<SharedInput>>,
    /// Keep each host's whole output in its result (gather, json, dir);
    /// off, output only streams by as lines, in bounded memory.
    pub keep_output: bool,
    /// `--sudo`: the command on a quiet terminal, sudo's prompt answered
    /// once with this password (see [`Sudo`]). The terminal's input is
    /// sudo's: `stdin` is not sent when this is set.
    pub sudo: Option<Arc<Sudo>>,
    /// Hosts the caller may stop one by one while the others go on.
    pub host_stops: Option<HostStops>,
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
    /// Everything on stdout (kept only when asked; past a cap, in a
    /// private file).
    pub stdout: Kept,
    /// Everything on stderr (likewise).
    pub stderr: Kept,
    /// Why it did not run or finish (connection, host key, auth, timeout,
    /// cancelled).
    pub error: Option<HostError>,
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

    /// The code the exit-code policies count: the exit code, 128+N for
    /// signal N (as the host named it; 255 for a name tether does not
    /// know), 255 for an error.
    pub fn code(&self) -> u32 {
        match (&self.error, self.exit_code, &self.signal) {
            (Some(_), _, _) => 255,
            (None, Some(c), _) => c,
            (None, None, Some(sig)) => tether_ssh::signal_number(sig)
                .and_then(|n| u32::try_from(128 + n).ok())
                .unwrap_or(255),
            (None, None, None) => 255,
        }
    }
}

/// What every host's result tells, a command's ([`HostResult`]) or a
/// copy's ([`CopyResult`](crate::copy::CopyResult)), for what reads both
/// (exit-code policies, notes).
pub trait Outcome {
    /// The host, as the node set named it.
    fn host(&self) -> &str;
    /// True when the host did all it was asked.
    fn succeeded(&self) -> bool;
    /// The code the exit-code policies count.
    fn code(&self) -> u32;
    /// Why it did not run or finish.
    fn error(&self) -> Option<&HostError>;
}

window::host_outcome!(HostResult);

/// What happens during a run, in order per host.
#[derive(Clone, Debug)]
pub enum Progress {
    /// A host started connecting.
    Started(String),
    /// A host is connected; its command is being started.
    Connected(String),
    /// A whole line of output (without its newline; a last partial line
    /// comes at the end).
    Line(String, Stream, Vec<u8>),
    /// A host is done.
    Done(HostResult),
}

impl HostEvent for Progress {
    type Outcome = HostResult;

    fn started(host: String) -> Self {
        Progress::Started(host)
    }

    fn done(outcome: HostResult) -> Self {
        Progress::Done(outcome)
    }

    fn into_outcome(self) -> Option<HostResult> {
        match self {
            Progress::Done(r) => Some(r),
            Progress::Started(_) | Progress::Connected(_) | Progress::Line(..) => None,
        }
    }
}

/// Splits output into lines, holding a partial one.
#[derive(Default)]
struct Lines(Vec<u8>);

impl Lines {
    fn push(&mut self, bytes: &[u8], mut line: impl FnMut(Vec<u8>)) {
        let mut rest = bytes;
        while let Some(nl) = memchr::memchr(b'\n', rest) {
            let mut l = std::mem::take(&mut self.0);
            l.extend_from_slice(&rest[..nl]);
            line(l);
            rest = &rest[nl + 1..];
        }
        // No newline in the rest: whole pieces go on as they are, each byte
        // copied once.
        if self.0.len() + rest.len() >= MAX_LINE {
            let fill = MAX_LINE - self.0.len();
            let mut l = std::mem::take(&mut self.0);
            l.extend_from_slice(&rest[..fill]);
            line(l);
            rest = &rest[fill..];
            while rest.len() >= MAX_LINE {
                line(rest[..MAX_LINE].to_vec());
                rest = &rest[MAX_LINE..];
            }
        }
        self.0.extend_from_slice(rest);
    }

    fn finish(&mut self, line: impl FnOnce(Vec<u8>)) {
        if !self.0.is_empty() {
            line(std::mem::take(&mut self.0));
        }
    }
}

/// One host's output so far: its partial lines, and everything when kept.
#[derive(Default)]
struct Output {
    keep: bool,
    out_lines: Lines,
    err_lines: Lines,
    stdout: Kept,
    stderr: Kept,
}

type Piece = (Stream, Vec<u8>);

impl Output {
    /// Takes a chunk; returns the whole lines it completes.
    fn push(&mut self, e: Event) -> Vec<Piece> {
        let (stream, bytes, lines, all) = match e {
            Event::Stdout(b) => (Stream::Stdout, b, &mut self.out_lines, &mut self.stdout),
            Event::Stderr(b) => (Stream::Stderr, b, &mut self.err_lines, &mut self.stderr),
        };
        if self.keep {
            all.push(&bytes);
        }
        let mut done = Vec::new();
        lines.push(&bytes, |l| done.push((stream, l)));
        done
    }

    /// Everything kept, and the last partial lines.
    fn finish(mut self) -> (Kept, Kept, Vec<Piece>) {
        let mut last = Vec::new();
        self.out_lines.finish(|l| last.push((Stream::Stdout, l)));
        self.err_lines.finish(|l| last.push((Stream::Stderr, l)));
        (self.stdout, self.stderr, last)
    }
}

/// Milliseconds since `t0`, for a result.
pub(crate) fn ms_since(t0: Instant) -> u64 {
    u64::try_from(t0.elapsed().as_millis()).unwrap_or(u64::MAX)
}

/// Where and how `resolve` says to reach `spec`, connected: the connection,
/// or the host's error (either without the host's name). A cancel while it
/// connects (Ctrl-C, or another host failing a `--fail-fast` run) ends the
/// attempt: nothing is sent to the host, and it is reported not started.
pub(crate) async fn connect(
    spec: &HostSpec,
    resolve: &Resolver,
    cancel: &mut Cancel,
) -> Result<tether_ssh::Connection, HostError> {
    let not_started = |why: Option<StopReason>| {
        why.map(|why| HostError::Cancelled {
            why,
            halt: Halt::NotStarted,
        })
    };
    if let Some(e) = not_started(*cancel.borrow()) {
        return Err(e);
    }
    let (target, options) = resolve(spec).map_err(HostError::Resolve)?;
    let cancelled = async {
        let why = cancel.wait_for(Option::is_some).await.map(|why| *why);
        match why {
            Ok(why) => not_started(why),
            // A cancel that can no longer come never ends the attempt.
            Err(_) => std::future::pending().await,
        }
    };
    let connected = tokio::select! {
        biased;
        Some(e) = cancelled => return Err(e),
        c = tether_ssh::connect(&target, &options) => c,
    };
    // A cancel that came with the connection still wins, before anything
    // is sent.
    if let Some(e) = not_started(*cancel.borrow()) {
        return Err(e);
    }
    connected.map_err(|e| HostError::ssh(&e))
}

/// One host's run, in its place in the window.
async fn one(
    spec: HostSpec,
    command: Arc<str>,
    opts: Arc<ExecOptions>,
    events: mpsc::Sender<Progress>,
    mut cancel: Cancel,
    spill: Arc<Spill>,
) -> HostResult {
    let t0 = Instant::now();
    let host = spec.name.clone();
    let mut result = HostResult {
        host: host.clone(),
        ..HostResult::default()
    };
    if let Some(stops) = &opts.host_stops {
        cancel = stops.merged(&host, cancel);
    }
    let conn = match connect(&spec, &opts.resolve, &mut cancel).await {
        Ok(c) => c,
        Err(e) => {
            result.error = Some(e);
            result.total_ms = ms_since(t0);
            return result;
        }
    };
    result.connect_ms = ms_since(t0);
    let _ = events.send(Progress::Connected(host.clone())).await;
    let cancel_reason = cancel.clone();
    let stop = async move {
        let _ = cancel.wait_for(Option::is_some).await;
    };
    // Output goes to the printer through a bounded queue, and the next
    // chunk is read only once this one is queued: a slow printer slows the
    // remote command (the SSH window fills) instead of filling memory.
    let out = std::sync::Mutex::new(Output {
        keep: opts.keep_output,
        stdout: Kept::spilling_to(&spill),
        stderr: Kept::spilling_to(&spill),
        ..Output::default()
    });
    let (out_ref, events_ref, host_ref) = (&out, &events, &host);
    // With --sudo, the terminal's input carries the answers to sudo.
    let (host_sudo, typed) = match opts.sudo.as_deref().map(sudo::HostSudo::new) {
        Some((h, typed)) => (Some(h), Some(typed)),
        None => (None, None),
    };
    let (terminal, command, input) = match (&opts.sudo, typed, &opts.stdin) {
        (Some(sudo), Some(typed), _) => (
            sudo::CommandTerminal::Quiet,
            Arc::from(sudo.command(&command)),
            tether_ssh::Input::Stream(typed),
        ),
        (_, _, Some(shared)) => (
            sudo::CommandTerminal::None,
            command,
            tether_ssh::Input::Stream(shared.reader()),
        ),
        _ => (
            sudo::CommandTerminal::None,
            command,
            tether_ssh::Input::Closed,
        ),
    };
    let sudo_ref = host_sudo.as_ref();
    let run = conn.exec_on(terminal, &command, input, opts.command_timeout, stop, |e| {
        let (e, answers) = match (e, sudo_ref) {
            (Event::Stdout(b), Some(h)) => {
                let (passed, answers) = h.feed(&b);
                (Event::Stdout(passed), answers)
            }
            (e, _) => (e, Vec::new()),
        };
        let lines = out_ref.lock().map(|mut o| o.push(e)).unwrap_or_default();
        async move {
            if let Some(h) = sudo_ref {
                h.answer(answers).await;
            }
            for (stream, l) in lines {
                let _ = events_ref
                    .send(Progress::Line(host_ref.clone(), stream, l))
                    .await;
            }
        }
    });
    let ended = match sudo_ref {
        Some(h) => tokio::select! {
            e = run => e,
            never = h.keep_interrupting() => match never {},
        },
        None => run.await,
    };
    let (refused, held) = host_sudo.map(sudo::HostSudo::finish).unwrap_or_default();
    let pieces = match out.lock() {
        Ok(mut o) if !held.is_empty() => o.push(Event::Stdout(held)),
        _ => Vec::new(),
    };
    for (stream, l) in pieces {
        let _ = events.send(Progress::Line(host.clone(), stream, l)).await;
    }
    let (stdout, stderr, last) = out.into_inner().map(Output::finish).unwrap_or_default();
    for (stream, l) in last {
        let _ = events.send(Progress::Line(host.clone(), stream, l)).await;
    }
    let lost = match (conn.hung(), conn.is_closed()) {
        (true, _) => Lost::Hung,
        (false, true) => Lost::Connection,
        (false, false) => Lost::Channel,
    };
    conn.disconnect().await;
    result.stdout = stdout;
    result.stderr = stderr;
    let halt = |e: &tether_ssh::Ended| e.halted.map_or(Halt::MayStillRun, Halt::of);
    match ended {
        Ok(e) if e.cancelled => {
            let why = cancel_reason.borrow().unwrap_or(StopReason::Interrupted);
            result.error = Some(HostError::Cancelled {
                why,
                halt: halt(&e),
            });
        }
        Ok(e) if e.timed_out => {
            result.error = Some(HostError::timeout(
                opts.command_timeout.unwrap_or_default(),
                halt(&e),
            ));
        }
        // No exit status and no signal: the host told nothing of the
        // command's end (a lost connection, or a server that sent none).
        Ok(e) if e.exit_code.is_none() && e.signal.is_none() => {
            result.error = Some(HostError::ConnectionLost { how: lost });
        }
        Ok(e) => {
            result.exit_code = e.exit_code;
            result.signal = e.signal;
            if refused {
                result.error = Some(HostError::SudoRefused);
            }
        }
        // A hung link says so, whatever the step it ended.
        Err(_) if lost == Lost::Hung => result.error = Some(HostError::ssh(&conn.hung_error())),
        Err(e) => result.error = Some(HostError::ssh(&e)),
    }
    result.total_ms = ms_since(t0);
    result
}

/// Runs `command` on every host, at most `opts.fanout` at a time, calling
/// `progress` for every event; returns the results in the hosts' order.
pub async fn run(
    hosts: Vec<HostSpec>,
    command: &str,
    opts: ExecOptions,
    progress: impl FnMut(&Progress),
) -> Vec<HostResult> {
    let window = WindowOptions {
        fanout: opts.fanout,
        fail_fast: opts.fail_fast,
        stop: opts.stop.clone(),
    };
    let opts = Arc::new(opts);
    let command: Arc<str> = Arc::from(command);
    // One spill file for the run's kept outputs past the memory caps.
    let spill = Spill::new();
    let work = move |spec, events, cancel| {
        one(
            spec,
            Arc::clone(&command),
            Arc::clone(&opts),
            events,
            cancel,
            Arc::clone(&spill),
        )
    };
    window::run(hosts, window, work, progress).await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(chunks: &[&[u8]]) -> Vec<Vec<u8>> {
        let mut lines = Lines::default();
        let mut out = Vec::new();
        for c in chunks {
            lines.push(c, |l| out.push(l));
        }
        lines.finish(|l| out.push(l));
        out
    }

    #[test]
    fn lines_are_whole_across_chunks_and_long_ones_come_in_pieces() {
        assert_eq!(
            split(&[b"a\nb", b"c\n\nd"]),
            [b"a".to_vec(), b"bc".to_vec(), vec![], b"d".to_vec()]
        );
        let long = vec![b'x'; 3 * MAX_LINE + 10];
        let pieces = split(&[&long[..1000], &long[1000..]]);
        let sizes: Vec<usize> = pieces.iter().map(Vec::len).collect();
        assert_eq!(sizes, [MAX_LINE, MAX_LINE, MAX_LINE, 10]);
    }
}
