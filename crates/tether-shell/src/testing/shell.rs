//! The fake shell and its terminal: the engine's protocol (ready, start
//! and end marks under the session secret) for the script language of
//! [`super`], with C-c, C-\, TERM and KILL as a foreground program takes
//! them.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use tether_transport::{
    ExitInfo, Foreground, Inspection, OutputStream, ProcessInfo, Signal, TermSize, Terminal,
    TransportError,
};
use tokio::sync::{mpsc, watch};

use super::World;

/// Where the fake shell is.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Step {
    /// At its prompt.
    Idle,
    /// Running command `seq`'s remaining steps.
    Running,
    /// Blocked reading the terminal.
    Reading,
    /// In a program that C-c ends, or C-\ (`ignores`: 1), or nothing (2).
    Hanging(u8),
    /// Gone.
    Exited,
}

/// The fake shell's state.
#[derive(Debug)]
pub(super) struct Shell {
    nonce: String,
    out: mpsc::Sender<Vec<u8>>,
    step: Step,
    delivered: u64,
    exit: watch::Sender<Option<ExitInfo>>,
    /// The command in flight.
    cmd: Command,
}

/// The command in flight: its number, steps left and status so far.
#[derive(Debug, Default)]
struct Command {
    seq: u64,
    steps: VecDeque<String>,
    status: i32,
}

pub(super) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Shell {
    fn emit(&mut self, text: &str) {
        self.delivered += text.len() as u64;
        let _ = self.out.try_send(text.as_bytes().to_vec());
    }

    fn mark(&mut self, seq: u64, kind: &str) {
        let nonce = self.nonce.clone();
        self.emit(&format!("\x1b]6973;{nonce}{seq};{kind}\x07"));
    }

    /// Runs the command's steps until one blocks or none is left.
    fn go(&mut self) {
        let mut cmd = std::mem::take(&mut self.cmd);
        self.run_steps(&mut cmd);
        self.cmd = cmd;
    }

    fn run_steps(&mut self, cmd: &mut Command) {
        self.step = Step::Running;
        while let Some(line) = cmd.steps.pop_front() {
            let (word, rest) = line.split_once(' ').unwrap_or((line.as_str(), ""));
            match word {
                "print" => self.emit(&format!("{rest}\n")),
                "exit" => cmd.status = rest.parse().unwrap_or(1),
                "read" => {
                    self.emit(rest);
                    self.step = Step::Reading;
                    return;
                }
                "hang" => {
                    self.step = Step::Hanging(match rest {
                        "ignore-int" => 1,
                        "ignore-all" => 2,
                        _ => 0,
                    });
                    return;
                }
                "quit-shell" => return self.end(ExitInfo::Code(rest.parse().unwrap_or(0))),
                "lose-link" => return self.end(ExitInfo::LinkLost),
                _ => {}
            }
        }
        let s = cmd.status;
        self.mark(
            cmd.seq,
            &format!("end;exit={s};pipe={s};ran=1;held=-;cwd=/fake"),
        );
        self.step = Step::Idle;
    }

    fn end(&mut self, how: ExitInfo) {
        self.step = Step::Exited;
        self.exit.send_replace(Some(how));
        // The output stream ends with the shell.
        let (closed, _) = mpsc::channel(1);
        self.out = closed;
    }
}

/// A terminal whose program is the fake shell.
pub(crate) struct FakeTerminal {
    shell: Arc<Mutex<Shell>>,
    output: Mutex<Option<OutputStream>>,
    world: Arc<Mutex<World>>,
    size: Mutex<TermSize>,
    /// Shows its foreground (a local PTY), else not (a remote one).
    evidence: bool,
}

impl FakeTerminal {
    fn files(&self) -> MutexGuard<'_, World> {
        lock(&self.world)
    }

    /// A typed line: `run SEQ PATH` starts a command; anything else is an
    /// answer to a program reading the terminal.
    fn typed(&self, bytes: &[u8]) {
        let text = String::from_utf8_lossy(bytes).into_owned();
        let mut shell = lock(&self.shell);
        if let Some(at) = text.find("run ") {
            let mut words = text[at + 4..].split_whitespace();
            let seq = words.next().and_then(|s| s.parse().ok()).unwrap_or(0);
            let path = PathBuf::from(words.next().unwrap_or_default());
            let code = self.files().files.get(&path).cloned().unwrap_or_default();
            shell.cmd = Command {
                seq,
                steps: String::from_utf8_lossy(&code)
                    .lines()
                    .map(str::to_owned)
                    .collect(),
                status: 0,
            };
            shell.mark(seq, "start");
            shell.go();
        } else if shell.step == Step::Reading {
            shell.emit(&format!("got {}\n", text.trim_end()));
            shell.go();
        }
    }
}

impl Terminal for FakeTerminal {
    fn write(&self, bytes: Vec<u8>) -> Result<(), TransportError> {
        if lock(&self.shell).step == Step::Exited {
            return Err(TransportError::Closed);
        }
        self.files().typed.extend_from_slice(&bytes);
        self.typed(&bytes);
        Ok(())
    }

    fn take_output(&self) -> Option<OutputStream> {
        lock(&self.output).take()
    }

    fn resize(&self, size: TermSize) -> Result<(), TransportError> {
        *lock(&self.size) = size;
        Ok(())
    }

    fn signal_foreground(
        &self,
        signal: Signal,
        _expected: Option<&Foreground>,
    ) -> Result<i32, TransportError> {
        self.files().signals.push(signal);
        let mut shell = lock(&self.shell);
        let ends = match (&shell.step, signal) {
            (Step::Hanging(0) | Step::Reading, Signal::Int) => Some(130),
            (Step::Hanging(0 | 1), Signal::Quit) => Some(131),
            (Step::Hanging(0 | 1), Signal::Term) => Some(143),
            (Step::Hanging(_), Signal::Kill) => Some(137),
            _ => None,
        };
        if let Some(status) = ends {
            shell.cmd.steps.clear();
            shell.cmd.status = status;
            shell.go();
        }
        Ok(40)
    }

    fn kill(&self, _grace: Duration) -> Result<(), TransportError> {
        let mut shell = lock(&self.shell);
        if shell.step != Step::Exited {
            shell.end(ExitInfo::Signal(9));
        }
        Ok(())
    }

    fn exit(&self) -> watch::Receiver<Option<ExitInfo>> {
        lock(&self.shell).exit.subscribe()
    }

    fn inspect(&self) -> Result<Inspection, TransportError> {
        let shell = lock(&self.shell);
        let top = ProcessInfo {
            pid: 7,
            start_time: 1,
            command: "fake-shell".to_owned(),
        };
        let at_prompt = shell.step == Step::Idle;
        // As a local PTY sees it: the shell reads at its prompt, a program
        // in its own group otherwise; a remote terminal shows nothing.
        let foreground = (self.evidence && shell.step != Step::Exited).then(|| Foreground {
            pgid: if at_prompt { 7 } else { 40 },
            process: Some(if at_prompt {
                top.clone()
            } else {
                ProcessInfo {
                    pid: 40,
                    start_time: 2,
                    command: "prog".to_owned(),
                }
            }),
            reading_terminal: at_prompt || shell.step == Step::Reading,
            is_top: at_prompt,
        });
        Ok(Inspection {
            top: (shell.step != Step::Exited).then_some(top),
            foreground,
            input_queued: self.evidence.then_some(0),
            output_unread: self.evidence.then_some(0),
            output_delivered: shell.delivered,
        })
    }
}

/// A fresh terminal running the fake shell, which has said it is ready;
/// with `evidence`, it shows its foreground as a local PTY does.
pub(super) fn spawn(
    nonce: String,
    world: &Arc<Mutex<World>>,
    size: TermSize,
    evidence: bool,
) -> (Arc<Mutex<Shell>>, Arc<dyn Terminal>) {
    let (tx, rx) = mpsc::channel(1024);
    let (exit, _) = watch::channel(None);
    let shell = Arc::new(Mutex::new(Shell {
        nonce,
        out: tx,
        step: Step::Idle,
        delivered: 0,
        exit,
        cmd: Command::default(),
    }));
    {
        let mut sh = lock(&shell);
        let ready = format!("\x1b]6973;{};ready\x07", sh.nonce);
        sh.emit(&ready);
    }
    let terminal: Arc<dyn Terminal> = Arc::new(FakeTerminal {
        shell: Arc::clone(&shell),
        output: Mutex::new(Some(rx)),
        world: Arc::clone(world),
        size: Mutex::new(size),
        evidence,
    });
    (shell, terminal)
}

impl Shell {
    /// Blocked reading the terminal.
    pub(super) fn reading(&self) -> bool {
        self.step == Step::Reading
    }
}
