//! Running commands, sending input and reading: each call waits for the
//! session to be ready again (end mark, a program blocked reading the
//! terminal, the shell exiting, or the deadline) and returns one result.

use std::time::{Duration, Instant};

use tether_term::TextProjector;
use tether_transport::{ExitInfo, Signal, TransportError};

use crate::capture::Capture;
use crate::control::Pending;
use crate::dialect::Rename;
use crate::error::ShellError;
use crate::keys::key_bytes;
use crate::link::Staged;
use crate::pump::{EndMark, Phase};
use crate::remote_probe::ProbeWatch;
use crate::result::{ForegroundProgram, LinkFailure, RunResult, Status, signal_of_status};
use crate::session::Session;

/// Default characters per result.
pub const DEFAULT_OUTPUT_LIMIT: usize = 16_000;

/// How long output must be quiet before the kernel is asked whether the
/// foreground program is reading the terminal (a program that asks for
/// input has just written its prompt).
pub(crate) const QUIET: Duration = Duration::from_millis(3);

/// The longest a wait sleeps between looks at the session; looks at a
/// quiet foreground grow apart up to this as the quiet lasts, so a long
/// silent command costs few inspections.
const LOOK_EVERY_MAX: Duration = Duration::from_millis(20);

/// The time between looks at a foreground quiet for `idle`: a quarter
/// of it, from [`QUIET`] to [`LOOK_EVERY_MAX`].
fn look_every(idle: Duration) -> Duration {
    (idle / 4).clamp(QUIET, LOOK_EVERY_MAX)
}

/// Grace after each signal of the interrupt escalation.
const SIGNAL_GRACE: Duration = Duration::from_millis(300);

/// Grace after each control character of a remote interrupt (it crosses
/// the network twice before the end mark comes back).
const REMOTE_SIGNAL_GRACE: Duration = Duration::from_secs(1);

/// What to do when a command's deadline passes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum OnTimeout {
    /// Interrupt the foreground (INT, then TERM, then KILL), keep the shell.
    #[default]
    Interrupt,
    /// Leave the command running; later reads return its output and status.
    Keep,
}

/// Options of one `run`.
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// The deadline.
    pub timeout: Duration,
    /// The policy when it passes.
    pub on_timeout: OnTimeout,
    /// Most characters of output in the result.
    pub output_limit: usize,
    /// The command's stdin, written to a private file in the shell's
    /// directory; `None`: it reads the session's terminal.
    pub stdin: Option<Vec<u8>>,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            timeout: crate::timeout::Timeout::DEFAULT.duration(),
            on_timeout: OnTimeout::Interrupt,
            output_limit: DEFAULT_OUTPUT_LIMIT,
            stdin: None,
        }
    }
}

/// What a person attached sees of a command the session runs: its first
/// line, dimmed, as if typed at a prompt.
fn command_note(code: &str) -> Vec<u8> {
    let first = code.lines().next().unwrap_or_default();
    let mut shown: String = first
        .chars()
        .filter(|c| !c.is_control())
        .take(200)
        .collect();
    if shown.len() < first.len() || code.lines().nth(1).is_some() {
        shown.push_str(" …");
    }
    format!("\x1b[2m$ {shown}\x1b[22m\r\n").into_bytes()
}

/// What ended a wait.
enum Woke {
    Ended(EndMark),
    /// A reset or close was requested while the call waited.
    Aborted(Pending),
    ShellExited(ExitInfo),
    Waiting(Option<ForegroundProgram>),
    Deadline,
}

impl Session {
    /// Runs `code` (any length, any quoting, many lines) and waits for it.
    pub async fn run(&mut self, code: &str, opts: &RunOptions) -> Result<RunResult, ShellError> {
        let t0 = Instant::now();
        self.settle_pending().await?;
        if self.shell_gone() || self.link_lost.is_some() {
            self.restart().await?;
        }
        if self.busy() {
            return Err(ShellError::Busy);
        }
        self.remove_last_command_file();
        if self.incomplete(code).await? {
            return Ok(self.result(Status::IncompleteInput, t0, String::new(), None, None));
        }
        self.redactor.note_command(code);
        let deadline = t0 + opts.timeout;
        let input = match self
            .stdin_file(code, opts.stdin.as_deref(), deadline)
            .await?
        {
            Ok(input) => input,
            Err(Staged::LinkHung) => return Ok(self.hung_before_typing(t0)),
            Err(Staged::Written) => None,
        };
        let grouped = input.as_ref().map_or(code, |(_, c)| c.as_str());
        let file = self.next_shell_path("cmd", self.dialect());
        // The marks' nonce: the session secret (in the shell's setup file,
        // never typed) followed by this number, the only part typed.
        let seq = self.seq;
        let text = self.opts.dialect.command_file(grouped, self.last_status);
        let wrapper = self.opts.dialect.wrapper_line(&file, seq, code);
        // A remote shell writes a short command file itself, on the typed
        // line: no channel (and no remote process) per command.
        let inline = self
            .place
            .types_command_files()
            .then(|| self.opts.dialect.inline_file(&file, text.as_bytes()))
            .flatten();
        if inline.is_none()
            && self
                .write_command_file(file.clone(), text, deadline)
                .await?
                == Staged::LinkHung
        {
            if let Some((path, _)) = input {
                self.remove_shell_file(path).await;
            }
            return Ok(self.hung_before_typing(t0));
        }
        let spill = self.next_path("out", "txt");
        {
            let mut st = self.shared.lock();
            st.markers.set_sequence(seq);
            st.capture = Some(
                Capture::new(
                    opts.output_limit,
                    self.redactor.fresh(),
                    spill,
                    std::sync::Arc::clone(&self.spills),
                )
                .with_tap(self.follow.begin()),
            );
            st.rename = self
                .opts
                .dialect
                .file_in_messages(&file)
                .and_then(|(name, with)| Rename::new(name.as_bytes(), with.as_bytes()));
            st.phase = Phase::Sent;
            st.command_start = st.processed;
            // What the host said of the last command is not this one's.
            self.forget_probes();
            // The command's quiet starts now: its start mark, close
            // behind, then wakes nobody (its caller waits for the end).
            st.last_output = Instant::now();
            if st.echo_on && st.watched() {
                st.tell_watchers(command_note(code));
            }
        }
        // A program may have left the terminal raw, without signals or
        // without CR translation: the line is typed in the session's modes
        // (a remote shell's end mark has the host set them).
        let echo = self.shared.lock().echo_on;
        self.terminal.restore_modes(self.opts.line_modes(echo))?;
        let mut line = self.opts.dialect.line_kill().to_vec();
        if crate::session::shell_sets_modes(&self.opts, self.place.as_ref()) {
            // The shell's `stty` keeps the echo a person's attach set; the
            // hint says whether the end mark should see if it can skip it.
            let echo = if echo { "echo" } else { "-echo" };
            line.extend(self.opts.dialect.assignment("__tether_echo", echo).bytes());
            let hint = if crate::dialect::probably_builtins(code) {
                "1"
            } else {
                ""
            };
            line.extend(self.opts.dialect.assignment("__tether_q", hint).bytes());
        }
        line.extend_from_slice(inline.unwrap_or_default().as_bytes());
        line.extend_from_slice(wrapper.as_bytes());
        // A process an earlier command left holding the terminal cannot
        // take the line (it is stopped while the shell reads it).
        self.terminal.write_past_holders(line)?;
        let result = match self.wait(deadline).await {
            Woke::Deadline if opts.on_timeout == OnTimeout::Keep => {
                Ok(self.deadline_result(t0).await)
            }
            Woke::Deadline => self.interrupt(t0).await,
            Woke::Aborted(p) => Ok(self.aborted(p, t0)),
            Woke::Ended(end) if end.ran == Some(false) && !self.syntax_error(code).await? => {
                Err(self.not_delivered())
            }
            woke => Ok(self.finish(woke, t0).await),
        };
        // A command still running may not have opened its stdin yet: its
        // file goes with the session's directory.
        if let Some((path, _)) = input
            && !matches!(&result, Ok(r) if r.status == Status::Running)
        {
            self.remove_shell_file(path).await;
        }
        result
    }

    /// With `stdin`, writes it to a private file where the shell reads it
    /// and returns that file with `code` reading from it; by `deadline`
    /// (then the link is checked, see [`Session::write_before_typing`]),
    /// else `Err(Staged::LinkHung)`.
    #[allow(clippy::type_complexity)]
    async fn stdin_file(
        &mut self,
        code: &str,
        stdin: Option<&[u8]>,
        deadline: Instant,
    ) -> Result<Result<Option<(std::path::PathBuf, String)>, Staged>, ShellError> {
        let Some(bytes) = stdin else {
            return Ok(Ok(None));
        };
        let path = self.next_shell_path("in", "data");
        let dialect = self.opts.dialect.name();
        let code = self
            .opts
            .dialect
            .with_stdin(code, &path)
            .ok_or(ShellError::StdinUnsupported(dialect))?;
        match self
            .write_before_typing(vec![(path.clone(), bytes.to_vec())], deadline)
            .await?
        {
            Staged::Written => Ok(Ok(Some((path, code)))),
            Staged::LinkHung => Ok(Err(Staged::LinkHung)),
        }
    }

    /// Removes a file written by `write_shell_file` (best effort).
    async fn remove_shell_file(&self, path: std::path::PathBuf) {
        self.place.remove_file(&path).await;
    }

    /// Writes `input` and named `keys` to the foreground program, then waits
    /// up to `wait` for the session to be ready again.
    pub async fn send(
        &mut self,
        input: Option<&str>,
        keys: &[String],
        wait: Duration,
    ) -> Result<RunResult, ShellError> {
        let t0 = Instant::now();
        self.settle_pending().await?;
        let mut bytes = input.map(|s| s.as_bytes().to_vec()).unwrap_or_default();
        for k in keys {
            bytes.extend_from_slice(key_bytes(k)?);
        }
        if !bytes.is_empty() {
            // The host's verdicts (and a probe in flight) predate the input.
            self.forget_probes();
            // Input for the foreground (an answer to a prompt) too: a
            // process left holding the terminal cannot take it.
            self.terminal.write_past_holders(bytes)?;
        }
        self.read(wait).await.map(|mut r| {
            r.duration_ms = t0.elapsed().as_millis() as u64;
            r
        })
    }

    /// Returns output produced since the last result, waiting up to `wait`
    /// for the command in flight to finish or block for input.
    pub async fn read(&mut self, wait: Duration) -> Result<RunResult, ShellError> {
        let t0 = Instant::now();
        self.settle_pending().await?;
        if !self.busy() && !self.ended() {
            // The link failed under the last call: said again until a
            // command starts a fresh shell.
            if let Some(link) = self.link_lost.clone() {
                let mut r = self.result(Status::ConnectionLost, t0, String::new(), None, None);
                r.link = Some(link);
                return Ok(r);
            }
            let exited = *self.terminal.exit().borrow();
            if let Some(info) = exited {
                return Ok(self.finish(Woke::ShellExited(info), t0).await);
            }
            return Ok(self.result(
                Status::Exited,
                t0,
                String::new(),
                None,
                Some(self.last_status),
            ));
        }
        match self.wait(t0 + wait).await {
            Woke::Deadline => Ok(self.deadline_result(t0).await),
            Woke::Aborted(p) => Ok(self.aborted(p, t0)),
            woke => Ok(self.finish(woke, t0).await),
        }
    }

    /// Sends `signal` to the verified foreground process group.
    pub fn signal(&self, signal: Signal) -> Result<i32, ShellError> {
        let fg = self.terminal.inspect()?.foreground;
        Ok(self.terminal.signal_foreground(signal, fg.as_ref())?)
    }

    /// Drops what the host's probes said (and a probe in flight).
    fn forget_probes(&self) {
        *self.probes.lock().unwrap_or_else(|p| p.into_inner()) = Default::default();
    }

    fn ended(&self) -> bool {
        matches!(self.shared.lock().phase, Phase::Ended(_))
    }

    async fn wait(&self, deadline: Instant) -> Woke {
        let mut exit = self.terminal.exit();
        // When the kernel was last asked, and the output count then: asked
        // again once output came, or after `look_every`. One look is
        // exact: the transport's counts are taken after the foreground was
        // seen, with the kernel's pending output flushed, so a program
        // seen blocked reading has had all it wrote processed (its last
        // bytes, even the end mark, never pass unseen).
        let mut last_look: Option<(Instant, u64)> = None;
        // A remote foreground is judged by the host's evidence, gathered
        // across the calls that wait for this command.
        let mut remote = self
            .place
            .host_name()
            .is_some()
            .then(|| ProbeWatch::take(self.place.as_ref(), &self.shell_dir, &self.probes));
        let mut pending = self.pending.subscribe();
        loop {
            let changed = self.shared.changed.notified();
            if let Some(p) = *pending.borrow_and_update() {
                return Woke::Aborted(p);
            }
            let (started, idle, processed) = {
                let st = self.shared.lock();
                if let Phase::Ended(end) = &st.phase {
                    return Woke::Ended(end.clone());
                }
                (
                    st.phase == Phase::Started,
                    st.last_output.elapsed(),
                    st.processed,
                )
            };
            if let Some(info) = *exit.borrow() {
                return Woke::ShellExited(info);
            }
            let now = Instant::now();
            if let Some(r) = remote.as_mut()
                && started
            {
                r.maybe_start(idle, processed);
            }
            // Remotely silence decides only for a program the host saw
            // where it may be reading; locally, as the terminal's
            // inspection says.
            let may_read = remote
                .as_ref()
                .map(|r| r.silence_decides(processed).cloned());
            let silence_denied = matches!(may_read, Some(None));
            let every = look_every(idle);
            let due = match last_look {
                Some((at, seen)) if seen == processed => now.duration_since(at) >= every,
                _ => true,
            };
            if started && idle >= QUIET && !silence_denied && due {
                last_look = Some((now, processed));
                if let Some(fg) = self.reading_foreground(idle) {
                    // Everything the program wrote is processed: an end
                    // mark among it wins.
                    if let Phase::Ended(end) = &self.shared.lock().phase {
                        return Woke::Ended(end.clone());
                    }
                    return Woke::Waiting(fg.or(may_read.flatten()));
                }
            }
            if now >= deadline {
                return Woke::Deadline;
            }
            let next_look = match last_look {
                // The start mark wakes nobody: a command typed is looked
                // at again within the quiet its first look needs anyway.
                _ if !started => QUIET,
                _ if silence_denied => LOOK_EVERY_MAX,
                _ if idle < QUIET => QUIET - idle,
                Some((at, _)) => every.saturating_sub(now.duration_since(at)),
                None => LOOK_EVERY_MAX,
            };
            let tick = (deadline - now).min(next_look).min(LOOK_EVERY_MAX);
            let probed = async {
                match remote.as_mut().and_then(|r| r.pending()) {
                    Some(f) => f.await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                _ = changed => {}
                _ = pending.changed() => {}
                _ = exit.changed() => {}
                _ = tokio::time::sleep(tick) => {}
                evidence = probed => {
                    let processed = self.shared.lock().processed;
                    if let Some(fg) = remote.as_mut().and_then(|r| r.finish(evidence, processed)) {
                        return Woke::Waiting(Some(fg));
                    }
                }
            }
        }
    }

    /// `Some` when the foreground program is blocked reading the terminal
    /// with nothing left to read, and everything it wrote has been seen; or,
    /// without kernel evidence, when output has been silent for the
    /// silence fallback (`idle` is how long it has been silent).
    fn reading_foreground(&self, idle: Duration) -> Option<Option<ForegroundProgram>> {
        // Processed before the look: the transport's output count, taken
        // last, must not have grown past it (and the pump writes a query's
        // reply before it counts the query processed, so a reply is in the
        // input queue the look checks).
        let processed = self.shared.lock().processed;
        let i = self.terminal.inspect().ok()?;
        let settled = i.input_queued.unwrap_or(0) == 0
            && i.output_unread.unwrap_or(0) == 0
            && processed >= i.output_delivered;
        let evidence = i.foreground.filter(|_| self.opts.kernel_evidence);
        let Some(fg) = evidence else {
            return (settled && idle >= self.opts.silence_fallback).then_some(None);
        };
        (settled && fg.reading_terminal).then(|| {
            fg.process.map(|p| ForegroundProgram {
                pid: p.pid,
                command: p.command,
            })
        })
    }

    /// The result of a wait that ended.
    async fn finish(&mut self, woke: Woke, t0: Instant) -> RunResult {
        match woke {
            Woke::Ended(end) => {
                self.learn_exports().await;
                self.shared.lock().phase = Phase::Idle;
                self.last_status = end.exit;
                if let Some(held) = &end.held {
                    self.host_holders = held.clone();
                }
                if end.cwd.is_some() {
                    self.cwd = end.cwd.clone();
                }
                let (output, truncated) = self.take_output();
                let mut r = self.result(Status::Exited, t0, output, truncated, Some(end.exit));
                r.signal = signal_of_status(end.exit);
                r.pipe_status = self.opts.dialect.has_pipe_status().then_some(end.pipe);
                r
            }
            Woke::ShellExited(info) => {
                self.drain_after_exit().await;
                let code = match info {
                    ExitInfo::Code(c) => c,
                    ExitInfo::Signal(s) => 128 + s,
                    // The host sent no status: nothing to learn there.
                    ExitInfo::LinkLost => return self.link_failed(LinkFailure::Lost, t0),
                };
                self.take_exit_cwd();
                self.learn_exports().await;
                let (output, truncated) = self.take_output();
                self.shared.lock().phase = Phase::Idle;
                let mut r = self.result(Status::ShellExited, t0, output, truncated, Some(code));
                r.signal = signal_of_status(code);
                r
            }
            Woke::Waiting(fg) => {
                // The look that found it named the program: no other look.
                let (output, truncated) = self.take_output();
                let mut r = self.result(Status::WaitingForInput, t0, output, truncated, None);
                r.foreground = fg;
                r
            }
            Woke::Deadline => self.running_result(Status::Running, t0),
            Woke::Aborted(p) => self.aborted(p, t0),
        }
    }

    /// The result of a call whose wait a reset or close ended: the output
    /// so far; the request stays for the next holder of the call lock.
    fn aborted(&mut self, p: Pending, t0: Instant) -> RunResult {
        self.shared.lock().finish_capture();
        let (output, truncated) = self.take_output();
        self.shared.lock().phase = Phase::Idle;
        let status = match p {
            Pending::Reset => Status::Reset,
            Pending::Close => Status::Closed,
        };
        self.result(status, t0, output, truncated, None)
    }

    /// Carries out a reset or close requested through the session's
    /// [`crate::Control`] before this call: a close refuses the call, a
    /// reset restarts the shell first.
    pub(crate) async fn settle_pending(&mut self) -> Result<(), ShellError> {
        let p = *self.pending.borrow();
        match p {
            Some(Pending::Close) => Err(ShellError::Closed),
            Some(Pending::Reset) => {
                self.restart().await?;
                // A close requested meanwhile stays.
                self.pending.send_if_modified(|p| {
                    let was_reset = *p == Some(Pending::Reset);
                    if was_reset {
                        *p = None;
                    }
                    was_reset
                });
                Ok(())
            }
            None => Ok(()),
        }
    }

    /// Carries out a requested reset (if no other call has yet); true
    /// when this call restarted the shell.
    pub async fn take_reset(&mut self) -> Result<bool, ShellError> {
        if *self.pending.borrow() == Some(Pending::Reset) {
            self.settle_pending().await?;
            return Ok(true);
        }
        Ok(false)
    }

    /// After the shell exits, waits briefly for its last output to arrive.
    async fn drain_after_exit(&self) {
        crate::launch::drain(&self.shared).await;
        self.shared.lock().finish_capture();
    }

    /// Interrupts the foreground (INT, TERM, KILL; the shell itself only
    /// ever gets INT), recovers the prompt, and returns `timed_out` with the
    /// partial output. A shell that cannot be recovered is restarted.
    async fn interrupt(&mut self, t0: Instant) -> Result<RunResult, ShellError> {
        let mut recovered = false;
        let evidence = self.terminal.inspect()?.foreground.is_some();
        if evidence {
            recovered = self.interrupt_verified().await?;
        } else {
            // No view of the foreground (a remote terminal): the terminal's
            // own C-c, then C-\, reach whatever is in the foreground; a
            // program that ignores both is ended with the shell.
            for signal in [Signal::Int, Signal::Quit] {
                self.terminal.signal_foreground(signal, None)?;
                match self.wait(Instant::now() + REMOTE_SIGNAL_GRACE).await {
                    Woke::Ended(_) => {
                        recovered = true;
                        break;
                    }
                    Woke::ShellExited(ExitInfo::LinkLost) => {
                        self.drain_after_exit().await;
                        return Ok(self.link_failed(LinkFailure::Lost, t0));
                    }
                    _ => {}
                }
            }
            // Nothing came back: a hung link (or host) is said so, by the
            // deadline plus a bounded grace, and dropped; a restart over it
            // would wait on it.
            if !recovered && let Some(r) = self.if_hung(t0).await {
                return Ok(r);
            }
        }
        let pending = *self.pending.borrow();
        if let Some(p) = pending {
            return Ok(self.aborted(p, t0));
        }
        if recovered {
            self.learn_exports().await;
        }
        let (output, truncated) = self.take_output();
        self.shared.lock().phase = Phase::Idle;
        self.last_status = 130;
        if !recovered {
            self.restart().await?;
        }
        let mut r = self.result(Status::TimedOut, t0, output, truncated, None);
        r.shell_restarted = !recovered || r.shell_restarted;
        Ok(r)
    }

    /// INT, TERM, KILL to the verified foreground (the shell itself only
    /// ever gets INT); true when the shell came back to its prompt.
    async fn interrupt_verified(&mut self) -> Result<bool, ShellError> {
        for signal in [Signal::Int, Signal::Term, Signal::Kill] {
            let fg = self.terminal.inspect()?.foreground;
            let Some(fg) = fg else { break };
            if fg.is_top && signal != Signal::Int {
                break;
            }
            match self.terminal.signal_foreground(signal, Some(&fg)) {
                Ok(_) | Err(TransportError::ForegroundChanged) => {}
                Err(e) => return Err(e.into()),
            }
            if let Woke::Ended(_) = self.wait(Instant::now() + SIGNAL_GRACE).await {
                return Ok(true);
            }
        }
        Ok(false)
    }

    pub(crate) fn running_result(&mut self, status: Status, t0: Instant) -> RunResult {
        let (output, truncated) = self.take_output();
        let mut r = self.result(status, t0, output, truncated, None);
        if let Ok(i) = self.terminal.inspect()
            && let Some(p) = i.foreground.and_then(|f| f.process)
        {
            r.foreground = Some(ForegroundProgram {
                pid: p.pid,
                command: p.command,
            });
        }
        r
    }

    pub(crate) fn take_output(&self) -> (String, Option<crate::result::Truncation>) {
        let (output, truncated) = self.shared.lock().take_output();
        (self.opts.dialect.strip_echo(output), truncated)
    }

    pub(crate) fn result(
        &mut self,
        status: Status,
        t0: Instant,
        output: String,
        truncated: Option<crate::result::Truncation>,
        exit_code: Option<i32>,
    ) -> RunResult {
        let notes: Vec<String> = self
            .notice
            .take()
            .into_iter()
            .chain(self.spills.take_note())
            .collect();
        let output = if notes.is_empty() {
            output
        } else {
            format!("{}\n{output}", notes.join("\n"))
        };
        RunResult {
            status,
            exit_code,
            pipe_status: None,
            signal: None,
            output,
            truncated,
            cwd: self.cwd.clone(),
            foreground: None,
            duration_ms: t0.elapsed().as_millis() as u64,
            shell_restarted: std::mem::take(&mut self.restarted),
            link: None,
            terminal_holders: crate::holders::of(self.terminal.as_ref(), &self.host_holders),
        }
    }

    /// True when `code` is unfinished (and must not be run).
    async fn incomplete(&mut self, code: &str) -> Result<bool, ShellError> {
        let dialect = std::sync::Arc::clone(&self.opts.dialect);
        if dialect.obviously_complete(code) {
            return Ok(false);
        }
        if dialect.is_incomplete(code, "", None) {
            return Ok(true);
        }
        let first = self.check_syntax(code).await?;
        let probe = match dialect.incomplete_probe() {
            Some(more) if !first.is_empty() => {
                Some(self.check_syntax(&format!("{code}{more}")).await?)
            }
            _ => None,
        };
        Ok(dialect.is_incomplete(code, &first, probe.as_deref()))
    }

    /// True when the dialect's syntax checker refuses `code`: a command
    /// whose first line does not parse ends without its file having set
    /// the flag that it ran, yet the shell did read it.
    async fn syntax_error(&mut self, code: &str) -> Result<bool, ShellError> {
        Ok(!self.check_syntax(code).await?.trim().is_empty())
    }

    /// The error for an end mark that says the command file never started
    /// (the shell got a line it did not run as typed): the command did not
    /// run, whatever `$?` says.
    fn not_delivered(&mut self) -> ShellError {
        self.shared.lock().phase = Phase::Idle;
        let (output, _) = self.take_output();
        ShellError::NotDelivered {
            dialect: self.opts.dialect.name(),
            output: clip_chars(&output, 2000),
        }
    }

    /// The dialect's syntax checker's messages for `code` (empty if none).
    async fn check_syntax(&mut self, code: &str) -> Result<String, ShellError> {
        let dialect = std::sync::Arc::clone(&self.opts.dialect);
        let local_file = self.next_path("check", dialect.name());
        let shell_file = self.next_shell_path("check", dialect.name());
        let place = std::sync::Arc::clone(&self.place);
        place
            .check_syntax(crate::place::SyntaxCheck {
                code,
                dialect: dialect.as_ref(),
                local_file,
                shell_file,
            })
            .await
    }
}

/// At most `limit` characters of `s`, with `…` when cut.
fn clip_chars(s: &str, limit: usize) -> String {
    match s.char_indices().nth(limit) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_owned(),
    }
}

/// Projects raw bytes to at most `limit` characters of text (for start-up
/// failures).
pub(crate) fn project_all(raw: &[u8], limit: usize) -> String {
    let mut p = TextProjector::new();
    let mut out = String::new();
    p.feed(raw, &mut out);
    p.finish(&mut out);
    if out.chars().count() > limit {
        let skip = out.chars().count() - limit;
        out = out.chars().skip(skip).collect();
    }
    out
}
