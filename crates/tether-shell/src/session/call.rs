//! The calls: `run` (deliver the command through its file and the typed
//! wrapper line, then wait), `send` (input for the foreground) and `read`
//! (what came since the last result). Each waits for the session to be
//! ready again and returns one result.

use std::time::{Duration, Instant};

use super::Session;
use super::ready::Woke;
use crate::capture::Capture;
use crate::dialect::Rename;
use crate::error::ShellError;
use crate::keys::key_bytes;
use crate::options::{OnTimeout, RunOptions};
use crate::place::Staged;
use crate::result::{RunResult, Status};

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
        // No command is in flight: the last one's file has been read.
        self.place.command_over();
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
        // Written by the typed line itself where that saves a round trip,
        // else first.
        // A shell of another user armed inside the session reads its own
        // directory.
        let mine = self
            .write_for_level(&file, text.as_bytes())
            .map_err(|source| ShellError::Files {
                what: "write the command file",
                path: file.clone(),
                source,
            })?;
        let inline = self
            .place
            .inline_command(self.opts.dialect.as_ref(), &file, &text)
            .filter(|_| !mine);
        if !mine
            && inline.is_none()
            && self
                .place
                .write_command(file.clone(), text, deadline)
                .await?
                == Staged::LinkHung
        {
            if let Some((path, _)) = input {
                self.remove_shell_file(path).await;
            }
            return Ok(self.hung_before_typing(t0));
        }
        let spill = self.next_path("out", "txt");
        let mut capture = Capture::new(
            opts.output_limit,
            self.redactor.fresh(),
            spill,
            std::sync::Arc::clone(&self.spills),
        )
        .with_tap(self.follow.begin());
        if self.opts.dialect.terminal_adds_cr() {
            capture = capture.undoing_crlf();
        }
        let rename = self
            .opts
            .dialect
            .file_in_messages(&file)
            .and_then(|(name, with)| Rename::new(name.as_bytes(), with.as_bytes()));
        // What the host said of the last command is not this one's.
        self.forget_probes();
        self.shared
            .lock()
            .begin_command(seq, capture, rename, || command_note(code));
        // A program may have left the terminal raw, without signals or
        // without CR translation: the line is typed in the session's modes
        // (a remote shell's end mark has the host set them), with the echo
        // the people attached want, also when it could not be changed while
        // the last command ran.
        let echo = {
            let mut shared = self.shared.lock();
            let echo = shared.echo_wanted();
            shared.set_echo_on(echo);
            echo
        };
        // Behind a relay (`sudo` with `use_pty`) this terminal is the
        // relay's, raw as it set it: the armed shell's own terminal has the
        // modes that matter, and a C-c here must reach the relay as a byte.
        if !self.behind_relay() {
            self.terminal.restore_modes(self.opts.line_modes(echo))?;
        }
        let mut line = self.opts.dialect.line_kill().to_vec();
        if crate::launch::shell_sets_modes(&self.opts, self.place.as_ref()) {
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
    /// (then the link is checked, see `Place::write_before_typing`),
    /// else `Err(Staged::LinkHung)`.
    #[allow(clippy::type_complexity)]
    pub(super) async fn stdin_file(
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
        let mine = self
            .write_for_level(&path, bytes)
            .map_err(|source| ShellError::Files {
                what: "write the command's stdin",
                path: path.clone(),
                source,
            })?;
        if mine {
            return Ok(Ok(Some((path, code))));
        }
        match self
            .place
            .write_before_typing(vec![(path.clone(), bytes.to_vec())], deadline)
            .await?
        {
            Staged::Written => Ok(Ok(Some((path, code)))),
            Staged::LinkHung => Ok(Err(Staged::LinkHung)),
        }
    }

    /// Removes a file written by `write_shell_file` (best effort).
    pub(super) async fn remove_shell_file(&self, path: std::path::PathBuf) {
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
}
