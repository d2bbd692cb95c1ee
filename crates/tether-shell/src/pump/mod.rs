//! The output pump: one task per session that consumes the terminal's
//! output, feeds the headless emulator (and writes its replies at once), the
//! marker scanner, the raw byte log, and the current command's capture.

mod shown;
mod state;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tether_term::{Marker, MarkerEvent};
use tether_transport::{OutputStream, Terminal};

use crate::result::Truncation;
pub(crate) use state::{Progress, PumpState, Shared, initial_state};
pub use state::{Watcher, Watching};

/// How long output must be quiet before the kernel is asked whether the
/// foreground program is reading the terminal (a program that asks for
/// input has just written its prompt); output after such a quiet wakes
/// the waiters.
pub(crate) const QUIET: Duration = Duration::from_millis(3);

/// What the end mark of a command said.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct EndMark {
    /// `$?` after the command.
    pub(crate) exit: i32,
    /// Each pipeline stage's status.
    pub(crate) pipe: Vec<i32>,
    /// The working directory after it.
    pub(crate) cwd: Option<PathBuf>,
    /// Whether the command file started: `Some(false)` when the shell
    /// printed the end mark without running it (the wrapper line was not
    /// delivered whole); `None` from a dialect that does not say.
    pub(crate) ran: Option<bool>,
    /// The processes other than the shell that hold its terminal, as the
    /// shell saw them on the host (`held=`); `None` when it did not look
    /// (a local terminal, which the engine inspects itself).
    pub(crate) held: Option<Vec<crate::result::TerminalHolder>>,
}

/// Where the current command is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Phase {
    /// No command in flight.
    Idle,
    /// Wrapper sent; its start mark not seen yet.
    Sent,
    /// The user's code is running.
    Started,
    /// The end mark arrived.
    Ended(EndMark),
}

/// Runs until the output stream ends.
pub(crate) async fn run(
    terminal: Arc<dyn Terminal>,
    mut output: OutputStream,
    shared: Arc<Shared>,
) {
    while let Some(chunk) = output.recv().await {
        let mut st = shared.lock();
        let marks_before = st.marks_seen;
        // Output after a quiet spell may find a waiter asleep for long (its
        // looks grow apart with the quiet): it is woken to time the quiet
        // afresh.
        let after_quiet = st.last_output.elapsed() >= QUIET;
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
            shared.wake();
        }
    }
    shared.lock().finish_capture();
    {
        let mut st = shared.lock();
        st.eof = true;
        st.watch = None;
    }
    shared.wake();
}

impl PumpState {
    fn process(&mut self, chunk: &[u8]) -> Vec<u8> {
        self.last_output = Instant::now();
        self.processed += chunk.len() as u64;
        let base = self.log.end();
        self.log.append(chunk);
        let watched = self.watched() || self.shown.kept();
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
        if let Some(d) = display
            && !d.is_empty()
        {
            self.tell_watchers(d);
        }
        replies
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
    pub(crate) fn finish_capture(&mut self) {
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
    pub(crate) fn take_output(&mut self) -> (String, Option<Truncation>) {
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
        if let Some(depth) = m.outer {
            self.outer_mark(depth, &kind, &fields);
            return;
        }
        match kind.as_str() {
            "ready" => {
                self.ready = true;
                self.at_prompt = true;
                if let Some(w) = fields
                    .iter()
                    .find(|(k, _)| k == "pids")
                    .and_then(|(_, v)| crate::holders::HookPids::parse(v))
                {
                    self.hook_pids.push(w);
                }
            }
            "start" if self.phase == Phase::Sent => {
                self.phase = Phase::Started;
                self.exit_cwd = None;
                if let Some(c) = self.capture.as_ref() {
                    c.started();
                }
            }
            "end" if matches!(self.phase, Phase::Sent | Phase::Started) => {
                self.finish_capture();
                let end = parse_end(&fields);
                self.last_end = Some((self.command_start, end.clone()));
                self.phase = Phase::Ended(end);
            }
            "exiting" if matches!(self.phase, Phase::Sent | Phase::Started) => {
                let end = parse_end(&fields);
                self.exit_cwd = end.cwd.clone();
                self.exiting = Some(end);
            }
            _ => {}
        }
    }

    /// A mark of the outer shell at `depth` (see
    /// `MarkerScanner::watch_outer`): its end mark says the shells inside
    /// it have exited, and ends the command in flight (with the status its
    /// shell's exit hook reported, and the outer shell's cwd); its ready
    /// mark, that it is at its prompt.
    fn outer_mark(&mut self, depth: usize, kind: &str, fields: &[(String, String)]) {
        match kind {
            "end" => {
                self.markers.leave_to(depth);
                self.returned = Some(self.returned.map_or(depth, |d| d.min(depth)));
                let outer = parse_end(fields);
                let end = match self.exiting.take() {
                    Some(inner) => EndMark {
                        exit: inner.exit,
                        pipe: inner.pipe,
                        ..outer
                    },
                    None => outer,
                };
                if matches!(self.phase, Phase::Sent | Phase::Started) {
                    self.finish_capture();
                    self.last_end = Some((self.command_start, end.clone()));
                    self.phase = Phase::Ended(end);
                }
            }
            "ready" => self.at_prompt = true,
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
