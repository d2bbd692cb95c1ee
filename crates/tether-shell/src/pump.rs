//! The output pump: one task per session that consumes the terminal's
//! output, feeds the headless emulator (and writes its replies at once), the
//! marker scanner, the raw byte log, and the current command's capture.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use tether_term::{ByteLog, Marker, MarkerEvent, MarkerScanner};
use tether_transport::{OutputStream, Terminal};
use tokio::sync::{Notify, broadcast};

use crate::capture::Capture;
use crate::dialect::Rename;
use crate::emulator::Emulator;
use crate::result::Truncation;

/// Raw bytes kept per session for "since offset N" reads.
pub const RAW_LOG_BYTES: usize = 1 << 20;

/// Output chunks a watcher may fall behind by before it is redrawn.
const WATCH_CHUNKS: usize = 1024;

/// What the end mark of a command said.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EndMark {
    /// `$?` after the command.
    pub exit: i32,
    /// Each pipeline stage's status.
    pub pipe: Vec<i32>,
    /// The working directory after it.
    pub cwd: Option<PathBuf>,
    /// Whether the command file started: `Some(false)` when the shell
    /// printed the end mark without running it (the wrapper line was not
    /// delivered whole); `None` from a dialect that does not say.
    pub ran: Option<bool>,
    /// The processes other than the shell that hold its terminal, as the
    /// shell saw them on the host (`held=`); `None` when it did not look
    /// (a local terminal, which the engine inspects itself).
    pub held: Option<Vec<crate::result::TerminalHolder>>,
}

/// Where the current command is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Phase {
    /// No command in flight.
    Idle,
    /// Wrapper sent; its start mark not seen yet.
    Sent,
    /// The user's code is running.
    Started,
    /// The end mark arrived.
    Ended(EndMark),
}

/// State shared between the pump and the session's calls.
#[derive(Debug)]
pub struct PumpState {
    /// Marks of the current nonce.
    pub markers: MarkerScanner,
    /// Output the marker scanner still holds (an unfinished sequence that
    /// may be a mark): routed to the capture once it is known not to be.
    unrouted: Vec<u8>,
    /// The screen.
    pub emulator: Emulator,
    /// Raw output, bounded.
    pub log: ByteLog,
    /// The current command's output pipeline.
    pub capture: Option<Capture>,
    /// Renames the command file in the current command's output (before
    /// the capture).
    pub rename: Option<Rename>,
    /// Where the current command is.
    pub phase: Phase,
    /// The output offset where the current command's wrapper was typed.
    pub command_start: u64,
    /// The last end mark seen, with the `command_start` of its command
    /// (for a look at a command without its call).
    pub last_end: Option<(u64, EndMark)>,
    /// The session's setup reported ready.
    pub ready: bool,
    /// The working directory the shell reported as it exited during the
    /// current command (its exit hook's `exiting` mark: an `exit` prints
    /// no end mark).
    pub exit_cwd: Option<PathBuf>,
    /// When output last arrived, or a command was typed (its quiet is
    /// timed from then).
    pub last_output: Instant,
    /// The output stream ended.
    pub eof: bool,
    /// Bytes processed so far.
    pub processed: u64,
    /// The terminal echoes typed input (turned on for a person attached).
    pub echo_on: bool,
    /// Marks a waiter wakes for (ready, end, exiting) seen so far: not a
    /// start mark, which a waiter needs only on its own clock (a
    /// command's quiet is timed from it), so a fast command wakes its
    /// caller once.
    pub marks_seen: u64,
    /// Display output for people watching the session (`None` after the
    /// stream ends, which tells them the terminal is gone).
    pub watch: Option<broadcast::Sender<Arc<Vec<u8>>>>,
}

/// The pump's state and the notification of every change.
#[derive(Debug)]
pub struct Shared {
    state: Mutex<PumpState>,
    /// Signalled after a chunk with a mark a waiter waits for (ready, end,
    /// exit) or after a quiet spell, and at end of stream.
    pub changed: Notify,
}

impl Shared {
    /// Shared state for a new session.
    pub fn new(state: PumpState) -> Arc<Self> {
        Arc::new(Shared {
            state: Mutex::new(state),
            changed: Notify::new(),
        })
    }

    /// Locks the state (a poisoned lock is still usable: the state is
    /// plain data).
    pub fn lock(&self) -> MutexGuard<'_, PumpState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Runs until the output stream ends.
pub async fn run(terminal: Arc<dyn Terminal>, mut output: OutputStream, shared: Arc<Shared>) {
    while let Some(chunk) = output.recv().await {
        let mut st = shared.lock();
        let marks_before = st.marks_seen;
        // Output after a quiet spell may find a waiter asleep for long (its
        // looks grow apart with the quiet): it is woken to time the quiet
        // afresh.
        let after_quiet = st.last_output.elapsed() >= crate::run::QUIET;
        let replies = st.process(&chunk);
        if !replies.is_empty() {
            // Replies go out before any later caller input, and under the
            // lock that counts the chunk processed: whoever sees the count
            // finds the replies in the terminal's input already.
            let _ = terminal.write(replies);
        }
        let marked = st.marks_seen != marks_before;
        drop(st);
        // Waiters wait for marks (ready, end, exit) and the end of the
        // stream; output alone they look at on their own clock (the quiet
        // before a look), so a chunk close behind another wakes nobody.
        if marked || after_quiet {
            shared.changed.notify_waiters();
        }
    }
    shared.lock().finish_capture();
    {
        let mut st = shared.lock();
        st.eof = true;
        st.watch = None;
    }
    shared.changed.notify_waiters();
}

impl PumpState {
    fn process(&mut self, chunk: &[u8]) -> Vec<u8> {
        self.last_output = Instant::now();
        self.processed += chunk.len() as u64;
        let base = self.log.end();
        self.log.append(chunk);
        let watched = self.watched();
        let mut display = watched.then(|| Vec::with_capacity(chunk.len() + 64));
        let mut replies = Vec::new();
        let mut marks = Vec::new();
        self.markers.feed(chunk, &mut marks);
        // The capture gets the bytes between marks; the tail the scanner
        // still holds waits, so a mark split across chunks never reaches it.
        let held_before = std::mem::take(&mut self.unrouted);
        let rbase = base - held_before.len() as u64;
        // Joined only when something was held (a mark's start cut at the
        // end of the last chunk): a chunk is routed as it is, not copied.
        let joined;
        let routed: &[u8] = if held_before.is_empty() {
            chunk
        } else {
            joined = [held_before.as_slice(), chunk].concat();
            &joined
        };
        let held = (base + chunk.len() as u64).saturating_sub(self.markers.offset());
        let known = routed.len() - usize::try_from(held).unwrap_or(0).min(routed.len());
        let within = |off: u64, len: usize| {
            usize::try_from(off.saturating_sub(rbase))
                .unwrap_or(len)
                .min(len)
        };
        let mut at = 0usize;
        let mut rat = 0usize;
        for m in marks {
            let start = usize::try_from(m.start.saturating_sub(base))
                .unwrap_or(0)
                .max(at);
            let end = usize::try_from(m.end - base)
                .unwrap_or(chunk.len())
                .clamp(start, chunk.len());
            if start > at {
                self.show(&chunk[at..start], &mut replies, &mut display);
            }
            let rstart = within(m.start, routed.len()).max(rat);
            if rstart > rat {
                self.route(&routed[rat..rstart]);
            }
            rat = within(m.end, routed.len()).max(rstart);
            self.show(&chunk[start..end], &mut replies, &mut display);
            at = end;
            self.mark(m);
        }
        if at < chunk.len() {
            self.show(&chunk[at..], &mut replies, &mut display);
        }
        if known > rat {
            self.route(&routed[rat..known]);
            rat = known;
        }
        self.unrouted = routed[rat..].to_vec();
        if let (Some(d), Some(w)) = (display, &self.watch)
            && !d.is_empty()
        {
            let _ = w.send(Arc::new(d));
        }
        replies
    }

    /// True when someone watches the display output.
    pub fn watched(&self) -> bool {
        self.watch.as_ref().is_some_and(|w| w.receiver_count() > 0)
    }

    /// Sends `bytes` to the people watching (not to the screen).
    pub fn tell_watchers(&self, bytes: Vec<u8>) {
        if let Some(w) = &self.watch {
            let _ = w.send(Arc::new(bytes));
        }
    }

    /// Feeds the emulator; watchers get the display bytes, except the
    /// terminal's echo of a wrapper line (typed while echo is on for a
    /// person attached), which they are told about in words instead.
    fn show(&mut self, bytes: &[u8], replies: &mut Vec<u8>, display: &mut Option<Vec<u8>>) {
        let hide = self.echo_on && self.phase == Phase::Sent;
        let d = if hide { None } else { display.as_mut() };
        replies.extend(self.emulator.feed(bytes, d));
    }

    fn route(&mut self, bytes: &[u8]) {
        if self.phase == Phase::Started
            && let Some(c) = self.capture.as_mut()
        {
            match self.rename.as_mut() {
                Some(r) => r.feed(bytes, &mut |b| c.push(b)),
                None => c.push(bytes),
            }
        }
    }

    /// Ends the current command's output: what the renaming holds, then
    /// the capture's last partial line.
    pub fn finish_capture(&mut self) {
        let held = std::mem::take(&mut self.unrouted);
        self.route(&held);
        if let Some(c) = self.capture.as_mut() {
            if let Some(r) = self.rename.as_mut() {
                r.flush(&mut |b| c.push(b));
            }
            c.finish();
        }
    }

    /// The current command's output since the last result (a result
    /// boundary: nothing stays held for renaming).
    pub fn take_output(&mut self) -> (String, Option<Truncation>) {
        let Some(c) = self.capture.as_mut() else {
            return Default::default();
        };
        if let Some(r) = self.rename.as_mut() {
            r.flush(&mut |b| c.push(b));
        }
        c.take()
    }

    fn mark(&mut self, m: MarkerEvent) {
        let Marker::Engine { kind, fields } = m.marker else {
            return;
        };
        if kind != "start" {
            self.marks_seen += 1;
        }
        match kind.as_str() {
            "ready" => self.ready = true,
            "start" if self.phase == Phase::Sent => {
                self.phase = Phase::Started;
                self.exit_cwd = None;
            }
            "end" if matches!(self.phase, Phase::Sent | Phase::Started) => {
                self.finish_capture();
                let end = parse_end(&fields);
                self.last_end = Some((self.command_start, end.clone()));
                self.phase = Phase::Ended(end);
            }
            "exiting" if matches!(self.phase, Phase::Sent | Phase::Started) => {
                self.exit_cwd = parse_end(&fields).cwd;
            }
            _ => {}
        }
    }
}

fn parse_end(fields: &[(String, String)]) -> EndMark {
    let get = |k: &str| fields.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
    let exit = get("exit").and_then(|v| v.parse().ok()).unwrap_or(-1);
    let pipe = get("pipe")
        .map(|v| v.split(' ').filter_map(|s| s.parse().ok()).collect())
        .unwrap_or_default();
    let cwd = get("cwd").map(|c| {
        use std::os::unix::ffi::OsStringExt;
        PathBuf::from(std::ffi::OsString::from_vec(percent_decode(c)))
    });
    let ran = get("ran").map(|v| v == "1");
    let held = get("held").filter(|v| *v != "-").map(parse_held);
    EndMark {
        exit,
        pipe,
        cwd,
        ran,
        held,
    }
}

/// `PID:T:NAME …` (`T` 1 when it can type by TIOCSTI), as
/// `dialect::held` writes it.
fn parse_held(v: &str) -> Vec<crate::result::TerminalHolder> {
    v.split(' ')
        .filter_map(|h| {
            let mut parts = h.splitn(3, ':');
            Some(crate::result::TerminalHolder {
                pid: parts.next()?.parse().ok()?,
                can_type: parts.next()? == "1",
                program: parts.next()?.to_owned(),
            })
        })
        .collect()
}

/// Undoes the `%XX` escaping the shell applies to the cwd in marks (the
/// bytes of any name, UTF-8 or not).
fn percent_decode(s: &str) -> Vec<u8> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(b)) => {
                out.push(b);
                i += 3;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    out
}

/// A fresh pump state whose marks must carry `nonce`.
pub fn initial_state(
    nonce: &str,
    rows: u16,
    cols: u16,
    lf_is_newline: bool,
) -> Result<PumpState, tether_term::TermError> {
    Ok(PumpState {
        markers: MarkerScanner::new(nonce)?,
        emulator: Emulator::new(rows, cols, lf_is_newline),
        log: ByteLog::new(RAW_LOG_BYTES)?,
        capture: None,
        rename: None,
        unrouted: Vec::new(),
        phase: Phase::Idle,
        command_start: 0,
        last_end: None,
        ready: false,
        exit_cwd: None,
        last_output: Instant::now(),
        eof: false,
        processed: 0,
        echo_on: false,
        marks_seen: 0,
        watch: Some(broadcast::channel(WATCH_CHUNKS).0),
    })
}
