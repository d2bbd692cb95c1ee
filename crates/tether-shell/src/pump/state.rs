//! The pump's state: the pump (`mod.rs`) changes it as output arrives;
//! everyone else (the session's calls, `Control`, `Live`) reads or changes
//! it only through the verbs here, under one lock ([`Shared::lock`]).

use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use tether_term::{ByteLog, MarkerScanner, Redactor, Since};
use tokio::sync::futures::Notified;
use tokio::sync::{Notify, broadcast};

use super::{EndMark, Phase};
use crate::capture::Capture;
use crate::dialect::Rename;
use crate::emulator::Emulator;

/// Raw bytes kept per session for "since offset N" reads.
pub(crate) const RAW_LOG_BYTES: usize = 1 << 20;

/// What a watcher receives: display output, or how many chunks it missed
/// by falling behind (redraw the screen then).
pub type Watcher = broadcast::Receiver<Arc<Vec<u8>>>;

/// Output chunks a watcher may fall behind by before it is redrawn.
const WATCH_CHUNKS: usize = 1024;

/// State shared between the pump and the session's calls.
#[derive(Debug)]
pub(crate) struct PumpState {
    /// Marks of the current nonce.
    pub(super) markers: MarkerScanner,
    /// Output the marker scanner still holds (an unfinished sequence that
    /// may be a mark): routed to the capture once it is known not to be.
    pub(super) unrouted: Vec<u8>,
    /// The screen.
    pub(super) emulator: Emulator,
    /// Raw output, bounded.
    pub(super) log: ByteLog,
    /// The current command's output pipeline.
    pub(super) capture: Option<Capture>,
    /// Renames the command file in the current command's output (before
    /// the capture).
    pub(super) rename: Option<Rename>,
    /// Where the current command is.
    pub(super) phase: Phase,
    /// The number of the command typed last (its marks' nonce ends in it).
    pub(super) command_seq: u64,
    /// The output offset where the current command's wrapper was typed.
    pub(super) command_start: u64,
    /// The last end mark seen, with the `command_start` of its command
    /// (for a look at a command without its call).
    pub(super) last_end: Option<(u64, EndMark)>,
    /// The session's setup reported ready.
    pub(super) ready: bool,
    /// The shell reported ready (its prompt hooks have run) since the
    /// last command was typed.
    pub(super) at_prompt: bool,
    /// The pids the shell's prompt hooks may have started, as the ready
    /// marks since the last result say (`pids=`).
    pub(super) hook_pids: Vec<crate::holders::HookPids>,
    /// The working directory the shell reported as it exited during the
    /// current command (its exit hook's `exiting` mark: an `exit` prints
    /// no end mark).
    pub(super) exit_cwd: Option<PathBuf>,
    /// What the shell's exit hook said as it exited during the current
    /// command (`exiting`): the status of a nested shell's `exit`, told
    /// when the shell around it ends the command that started it.
    pub(super) exiting: Option<EndMark>,
    /// The shallowest outer shell whose end mark came since the session
    /// last asked ([`PumpState::take_returned`]): the shells inside it
    /// have exited.
    pub(super) returned: Option<usize>,
    /// When output last arrived, or a command was typed (its quiet is
    /// timed from then).
    pub(super) last_output: Instant,
    /// The output stream ended.
    pub(super) eof: bool,
    /// Bytes processed so far.
    pub(super) processed: u64,
    /// The terminal echoes typed input (turned on for a person attached).
    pub(super) echo_on: bool,
    /// The echo the people attached want (on while one is): what the next
    /// command's line sets when a change could not be made at once (the
    /// shell was busy when they came or left).
    pub(super) echo_wanted: bool,
    /// Marks a waiter wakes for (ready, end, exiting) seen so far: not a
    /// start mark, which a waiter needs only on its own clock (a
    /// command's quiet is timed from it), so a fast command wakes its
    /// caller once.
    pub(super) marks_seen: u64,
    /// Display output for people watching the session (`None` after the
    /// stream ends, which tells them the terminal is gone).
    pub(super) watch: Option<broadcast::Sender<Arc<Vec<u8>>>>,
    /// Display output kept for a person who comes back.
    pub(super) shown: super::shown::Shown,
}

/// A watch begun: what to show first, then the subscription.
#[derive(Debug)]
pub struct Watching {
    /// What was shown from the byte asked for on, when all of it is kept
    /// (`None`: not asked, or no longer kept).
    pub replay: Option<Vec<u8>>,
    /// The bytes that draw the current screen.
    pub redraw: Vec<u8>,
    /// The number of the first byte the subscription gives.
    pub from: u64,
    /// All display output after the redraw.
    pub rx: Watcher,
}

/// The pump's state and the notification of every change.
#[derive(Debug)]
pub(crate) struct Shared {
    state: Mutex<PumpState>,
    /// Signalled after a chunk with a mark a waiter waits for (ready, end,
    /// exit) or after a quiet spell, and at end of stream.
    changed: Notify,
}

impl Shared {
    /// Shared state for a new session.
    pub(crate) fn new(state: PumpState) -> Arc<Self> {
        Arc::new(Shared {
            state: Mutex::new(state),
            changed: Notify::new(),
        })
    }

    /// Locks the state (a poisoned lock is still usable: the state is
    /// plain data).
    pub(crate) fn lock(&self) -> MutexGuard<'_, PumpState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A wait for the next change (taken before looking at the state, so
    /// a change between the look and the wait is not missed).
    pub(crate) fn changed(&self) -> Notified<'_> {
        self.changed.notified()
    }

    /// Wakes every waiter (the pump, after a mark, a quiet spell or the
    /// end of the stream).
    pub(super) fn wake(&self) {
        self.changed.notify_waiters();
    }
}

/// A fresh pump state whose marks must carry `nonce`.
pub(crate) fn initial_state(
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
        command_seq: 0,
        command_start: 0,
        last_end: None,
        ready: false,
        at_prompt: false,
        hook_pids: Vec::new(),
        exit_cwd: None,
        exiting: None,
        returned: None,
        last_output: Instant::now(),
        eof: false,
        processed: 0,
        echo_on: false,
        echo_wanted: false,
        marks_seen: 0,
        watch: Some(broadcast::channel(WATCH_CHUNKS).0),
        shown: super::shown::Shown::default(),
    })
}

/// Where a command in flight is, as a wait looks at it.
#[derive(Clone, Debug)]
pub(crate) struct Progress {
    /// Its end mark, once it came.
    pub(crate) ended: Option<EndMark>,
    /// Its start mark came (the user's code runs).
    pub(crate) started: bool,
    /// How long output has been quiet (or since the line was typed).
    pub(crate) idle: Duration,
    /// Bytes processed so far.
    pub(crate) processed: u64,
    /// The shell is back at its prompt, its hooks run (a dialect that
    /// says so: [`crate::dialect::Dialect::ready_at_prompt`]).
    pub(crate) at_prompt: bool,
}

/// A look at the command typed last, without its call ([`crate::Control`]).
#[derive(Clone, Debug)]
pub(crate) struct Look {
    /// It is still in flight, or its end has not been seen.
    pub(crate) running: bool,
    /// Its exit code, once its end mark came.
    pub(crate) exit: Option<i32>,
    /// Its raw output so far (at most the last `max` bytes asked for).
    pub(crate) raw: Vec<u8>,
}

impl PumpState {
    /// A command is typed: its marks carry the session secret followed by
    /// `seq`; its output goes to `capture` (through `rename`); its quiet
    /// starts now (its start mark, close behind, wakes nobody). People
    /// watching with echo on get `note` (the dimmed command line) instead
    /// of the wrapper line's echo.
    pub(crate) fn begin_command(
        &mut self,
        seq: u64,
        capture: Capture,
        rename: Option<Rename>,
        note: impl FnOnce() -> Vec<u8>,
    ) {
        self.markers.set_sequence(seq);
        self.command_seq = seq;
        self.capture = Some(capture);
        self.rename = rename;
        self.phase = Phase::Sent;
        self.at_prompt = false;
        self.exiting = None;
        self.command_start = self.processed;
        self.last_output = Instant::now();
        if self.echo_on && self.watched() {
            self.tell_watchers(note());
        }
    }

    /// A shell started by the command in flight is being armed: marks of
    /// the secret `base` (and the command's number) are its from now on,
    /// those of the shell around it still count as the outer shell's; the
    /// next ready mark is the new shell's.
    pub(crate) fn enter_shell(
        &mut self,
        base: &str,
        seq: u64,
    ) -> Result<(), tether_term::TermError> {
        self.markers.watch_outer(base, seq)?;
        self.at_prompt = false;
        Ok(())
    }

    /// The shell armed inside the command in flight is ready (its ready
    /// mark came): that command is over, and its output so far dropped
    /// (the echo of the line that armed it).
    pub(crate) fn entered(&mut self) {
        if let Some(c) = self.capture.as_mut() {
            let _ = c.take();
        }
        self.phase = Phase::Idle;
    }

    /// Undoes [`PumpState::enter_shell`]: the shell at `depth` is current
    /// again (one that was not armed after all).
    pub(crate) fn leave_shell(&mut self, depth: usize) {
        self.markers.leave_to(depth);
    }

    /// The number of the command typed last.
    pub(crate) fn command_seq(&self) -> u64 {
        self.command_seq
    }

    /// The shallowest outer shell that ended the shells inside it since
    /// the last ask.
    pub(crate) fn take_returned(&mut self) -> Option<usize> {
        self.returned.take()
    }

    /// The shells armed inside the session's own, as the marks count them.
    pub(crate) fn depth(&self) -> usize {
        self.markers.depth()
    }

    /// The command's result is taken: nothing is in flight any more.
    /// Returns whether its code had started.
    pub(crate) fn command_over(&mut self) -> bool {
        let started = self.phase == Phase::Started;
        self.phase = Phase::Idle;
        started
    }

    /// Where the command in flight is, for a wait.
    pub(crate) fn progress(&self) -> Progress {
        Progress {
            ended: self.end_mark().cloned(),
            started: self.phase == Phase::Started,
            idle: self.last_output.elapsed(),
            processed: self.processed,
            at_prompt: self.at_prompt,
        }
    }

    /// Where the current command is.
    pub(crate) fn phase(&self) -> &Phase {
        &self.phase
    }

    /// The end mark of the command in flight, once it came.
    pub(crate) fn end_mark(&self) -> Option<&EndMark> {
        match &self.phase {
            Phase::Ended(end) => Some(end),
            _ => None,
        }
    }

    /// True while a command is in flight (typed, its end not seen).
    pub(crate) fn busy(&self) -> bool {
        matches!(self.phase, Phase::Sent | Phase::Started)
    }

    /// True when the line typed last has shown no sign of life (no start
    /// mark, no output) for `grace`.
    pub(crate) fn typed_unanswered(&self, grace: Duration) -> bool {
        self.phase == Phase::Sent && self.last_output.elapsed() >= grace
    }

    /// Bytes processed so far.
    pub(crate) fn processed(&self) -> u64 {
        self.processed
    }

    /// The session's setup reported ready.
    pub(crate) fn ready(&self) -> bool {
        self.ready
    }

    /// The pids the prompt hooks may have started since the last result.
    pub(crate) fn take_hook_pids(&mut self) -> Vec<crate::holders::HookPids> {
        std::mem::take(&mut self.hook_pids)
    }

    /// The output stream has ended.
    pub(crate) fn eof(&self) -> bool {
        self.eof
    }

    /// Takes the working directory the shell reported as it exited.
    pub(crate) fn take_exit_cwd(&mut self) -> Option<PathBuf> {
        self.exit_cwd.take()
    }

    /// Redacts the current command's output with `redactor` too (secrets
    /// it exported itself).
    pub(crate) fn learn(&mut self, redactor: &Redactor) {
        if let Some(c) = self.capture.as_mut() {
            c.learn(redactor);
        }
    }

    /// Raw output bytes from stream offset `offset` on.
    pub(crate) fn raw_since(&self, offset: u64) -> Since {
        self.log.since(offset)
    }

    /// A look at the command typed last: in flight or not, its exit code
    /// once it ended, its raw output (the last `max` bytes at most).
    pub(crate) fn look(&self, max: u64) -> Look {
        let from = self.command_start.max(self.processed.saturating_sub(max));
        // Only the end of the command typed last counts: between
        // commands, the call holding the session is still at work.
        let exit = self
            .last_end
            .as_ref()
            .filter(|(at, _)| *at == self.command_start)
            .map(|(_, e)| e.exit);
        Look {
            running: self.busy() || exit.is_none(),
            exit,
            raw: self.log.since(from).bytes,
        }
    }

    /// The screen as text.
    pub(crate) fn screen_text(&self) -> String {
        self.emulator.contents()
    }

    /// The bytes that draw the current screen.
    pub(crate) fn redraw(&self) -> Vec<u8> {
        self.emulator.redraw()
    }

    /// The screen's size (rows, columns).
    pub(crate) fn size(&self) -> (u16, u16) {
        self.emulator.size()
    }

    /// Resizes the screen.
    pub(crate) fn resize(&mut self, rows: u16, cols: u16) {
        self.emulator.resize(rows, cols);
    }

    /// The redraw bytes and a subscription to all display output after
    /// them, with what was shown since byte `resume` when asked (and still
    /// kept); `None` once the stream has ended. From the first watch on,
    /// display output is kept for a replay.
    pub(crate) fn watch(&mut self, resume: Option<u64>) -> Option<Watching> {
        let rx = self.watch.as_ref()?.subscribe();
        self.shown.keep();
        Some(Watching {
            replay: resume.and_then(|from| self.shown.since(from)),
            redraw: self.emulator.redraw(),
            from: self.shown.end(),
            rx,
        })
    }

    /// The terminal echoes typed input (on for a person attached).
    pub(crate) fn echo_on(&self) -> bool {
        self.echo_on
    }

    /// Records the terminal's echo as changed.
    pub(crate) fn set_echo_on(&mut self, on: bool) {
        self.echo_on = on;
    }

    /// The echo the people attached want.
    pub(crate) fn echo_wanted(&self) -> bool {
        self.echo_wanted
    }

    /// Records the echo the people attached want, changed or not yet.
    pub(crate) fn want_echo(&mut self, on: bool) {
        self.echo_wanted = on;
    }

    /// True when someone watches the display output.
    pub(crate) fn watched(&self) -> bool {
        self.watch.as_ref().is_some_and(|w| w.receiver_count() > 0)
    }

    /// Sends `bytes` to the people watching (not to the screen), and keeps
    /// them for one who comes back.
    pub(crate) fn tell_watchers(&mut self, bytes: Vec<u8>) {
        self.shown.push(&bytes);
        if let Some(w) = &self.watch
            && w.receiver_count() > 0
        {
            let _ = w.send(Arc::new(bytes));
        }
    }
}
