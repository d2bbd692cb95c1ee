//! A call's result: what a finished wait says (end mark, shell exit,
//! waiting for input, reset or close), with the output taken from the
//! capture and the notes owed to the caller.

use std::time::Instant;

use tether_transport::ExitInfo;

use super::Session;
use super::ready::Woke;
use crate::control::Pending;
use crate::result::{ForegroundProgram, RunResult, Status, signal_of_status};

impl Session {
    /// The result of a wait that ended.
    pub(super) async fn finish(&mut self, woke: Woke, t0: Instant) -> RunResult {
        match woke {
            Woke::Ended(end) => {
                self.learn_exports().await;
                self.shared.lock().command_over();
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
                    ExitInfo::LinkLost => return self.link_ended(t0),
                };
                self.take_exit_cwd();
                self.learn_exports().await;
                let (output, truncated) = self.take_output();
                self.shared.lock().command_over();
                let mut r = self.result(Status::ShellExited, t0, output, truncated, Some(code));
                r.signal = signal_of_status(code);
                r
            }
            Woke::Waiting(fg) => {
                // The look that found it named the program: no other look.
                let (mut output, mut truncated) = self.take_output();
                // A password prompt (of `sudo`, `su`) is not a shell yet.
                let mut secret = crate::secret_prompt::asks_secret(&output);
                if !secret {
                    if self.try_enter(fg.as_ref()).await {
                        // Its last, unfinished line is the new shell's
                        // prompt, not the command's output.
                        let kept = output.rfind('\n').map_or(0, |i| i + 1);
                        output.truncate(kept);
                        return self.result(Status::EnteredShell, t0, output, truncated, None);
                    }
                    // What came while a relay's shell was looked for.
                    let (more, clipped) = self.take_output();
                    output.push_str(&more);
                    truncated = truncated.or(clipped);
                    secret = crate::secret_prompt::asks_secret(&output);
                }
                let mut r = self.result(Status::WaitingForInput, t0, output, truncated, None);
                r.foreground = fg;
                r.secret = secret;
                r
            }
            Woke::Deadline => self.running_result(Status::Running, t0),
            Woke::Aborted(p) => self.aborted(p, t0),
        }
    }

    /// The result of a call whose wait a reset or close ended: the output
    /// so far; the request stays for the next holder of the call lock.
    pub(super) fn aborted(&mut self, p: Pending, t0: Instant) -> RunResult {
        self.shared.lock().finish_capture();
        let (output, truncated) = self.take_output();
        self.shared.lock().command_over();
        let status = match p {
            Pending::Reset => Status::Reset,
            Pending::Close => Status::Closed,
        };
        self.result(status, t0, output, truncated, None)
    }

    /// After the shell exits, waits briefly for its last output to arrive.
    pub(super) async fn drain_after_exit(&self) {
        crate::launch::drain(&self.shared).await;
        self.shared.lock().finish_capture();
    }

    pub(super) fn running_result(&mut self, status: Status, t0: Instant) -> RunResult {
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

    pub(super) fn take_output(&self) -> (String, Option<crate::result::Truncation>) {
        let (output, truncated) = self.shared.lock().take_output();
        (self.opts.dialect.strip_echo(output), truncated)
    }

    pub(super) fn result(
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
        self.settle_levels();
        RunResult {
            nested: self.chain(),
            nest_change: self.nest_change.take(),
            secret: false,
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
            terminal_holders: {
                let hooks = self.shared.lock().take_hook_pids();
                let mut all = crate::holders::of(self.terminal.as_ref(), &self.host_holders);
                all.retain(|h| !self.in_chain(h.pid));
                self.hook_holders.named(all, &hooks)
            },
            confinement: self.fenced.as_ref().and_then(|f| f.report()),
        }
    }
}
