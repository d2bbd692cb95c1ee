//! A scripted stand-in for a shell on a host, for the engine's unit tests:
//! [`FakeHost`] is a [`RemoteHost`] and the terminals it opens are
//! [`FakeTerminal`]s, whose "shell" speaks the engine's protocol as a real
//! dialect would, with a one-line-per-step script language instead of a
//! shell language ([`Scripted`] is its dialect). The engine runs unchanged
//! on it through the remote place: its directory, setup and command files
//! (kept in memory), the typed wrapper line, the marks, the host's `/proc`
//! probes (answered from the fake shell's state in the probe script's own
//! output format), the terminal's C-c and C-\, `link_hung`, the tree's
//! end and a restart. [`FakeLocal`] is a place like this machine's for
//! the same shell, whose terminal shows its foreground as the kernel shows
//! a local PTY's: the engine's local paths (one look at `reading_terminal`,
//! INT, TERM, KILL to the verified foreground). No process is started.
//!
//! A command file holds steps, one a line:
//! - `print TEXT`: writes `TEXT` and a newline;
//! - `exit N`: the command's status (its end mark says it);
//! - `read PROMPT`: writes `PROMPT` and blocks reading the terminal (the
//!   probe says so); a line typed is echoed back as `got LINE`;
//! - `hang [ignore-int|ignore-all]`: runs until C-c (status 130), or C-\
//!   (131) when it ignores C-c, or forever when it ignores both (the probe
//!   says it sleeps);
//! - `quit-shell N`: the shell itself exits with `N`;
//! - `lose-link`: the terminal ends without an exit status.

use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use tether_transport::{
    BoxFuture, ExitInfo, Foreground, HostOutput, Inspection, OutputStream, ProcessInfo, RemoteHost,
    Signal, TermSize, Terminal, TerminalRequest, TransportError,
};
use tokio::sync::{mpsc, watch};

use tether_term::Redactor;

use crate::dialect::{Dialect, SetupContext};
use crate::error::ShellError;
use crate::place::probe::Prober;
use crate::place::{Echo, Place, ShellStart, Staged, SyntaxCheck};
use crate::pump::Shared;
use crate::secrets::Secrets;

/// What the fake host and its terminals share: the files written on the
/// host, what was typed and signalled, and the knobs a test turns.
#[derive(Debug, Default)]
pub(crate) struct World {
    /// Files written on the host, by path.
    pub(crate) files: HashMap<PathBuf, Vec<u8>>,
    /// Every byte typed into every terminal, in order.
    pub(crate) typed: Vec<u8>,
    /// The signals sent to a foreground, in order.
    pub(crate) signals: Vec<Signal>,
    /// Terminals opened (a restart opens another).
    pub(crate) terminals: usize,
    /// Probes of `/proc` answered.
    pub(crate) probes: usize,
    /// Commands run on the host to end a shell's tree.
    pub(crate) tree_ends: usize,
    /// What `link_hung` answers.
    pub(crate) link_hung: bool,
    /// The shell of the terminal opened last.
    shell: Option<Arc<Mutex<Shell>>>,
}

/// A host that keeps its files in memory and runs the engine's host
/// commands by recognising them (each is a fixed script of the engine's).
#[derive(Debug, Default, Clone)]
pub(crate) struct FakeHost {
    world: Arc<Mutex<World>>,
}

impl FakeHost {
    /// What the host has seen so far (locked).
    pub(crate) fn world(&self) -> MutexGuard<'_, World> {
        self.world.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The session secret, from the setup file the engine wrote.
    pub(crate) fn nonce(&self) -> Option<String> {
        let w = self.world();
        let setup = w.files.iter().find(|(p, _)| is_setup(p))?.1;
        let text = String::from_utf8_lossy(setup);
        text.strip_prefix("nonce=").map(|n| n.trim().to_owned())
    }

    fn answer(&self, command: &str, input: Vec<u8>) -> HostOutput {
        let ok = |stdout: &str| HostOutput {
            status: Some(0),
            stdout: stdout.as_bytes().to_vec(),
            stderr: Vec::new(),
        };
        let mut w = self.world();
        if command.contains("__tether_mk") {
            return ok("/fake/tether/sessions/s1");
        }
        if let Some(path) = quoted_after(command, "cat > ") {
            w.files.insert(path, input);
            return ok("");
        }
        if let Some(path) = quoted_after(command, "cat -- ") {
            return match w.files.get(&path) {
                Some(bytes) => HostOutput {
                    status: Some(0),
                    stdout: bytes.clone(),
                    stderr: Vec::new(),
                },
                None => HostOutput {
                    status: Some(1),
                    ..HostOutput::default()
                },
            };
        }
        if command.contains("uname -m") {
            w.probes += 1;
            let reading = w
                .shell
                .as_ref()
                .is_some_and(|s| lock(s).step == Step::Reading);
            return ok(if reading {
                "arch x86_64\ntty /dev/pts/9\nt 40 0 /dev/pts/9 n_tty_read prog\n"
            } else {
                "arch x86_64\ntty /dev/pts/9\nt 40 230 - hrtimer_nanosleep prog\n"
            });
        }
        if command.contains("TETHER_SESSION_ID=") {
            w.tree_ends += 1;
            return ok("");
        }
        // `rm -f`, `stty`: nothing to keep.
        ok("")
    }
}

impl RemoteHost for FakeHost {
    fn name(&self) -> &str {
        "fake"
    }

    fn run(
        &self,
        command: String,
        input: Vec<u8>,
    ) -> BoxFuture<'_, Result<HostOutput, TransportError>> {
        let out = self.answer(&command, input);
        Box::pin(async move { Ok(out) })
    }

    fn open_terminal(
        &self,
        request: TerminalRequest,
    ) -> BoxFuture<'_, Result<Arc<dyn Terminal>, TransportError>> {
        let opened = self.open(request.size, false);
        Box::pin(async move { opened })
    }

    fn link_hung(&self, _within: Duration) -> BoxFuture<'_, bool> {
        let hung = self.world().link_hung;
        Box::pin(async move { hung })
    }
}

impl FakeHost {
    /// A fresh terminal running the fake shell; with `evidence`, it shows
    /// its foreground as a local PTY does (the kernel's view).
    fn open(&self, size: TermSize, evidence: bool) -> Result<Arc<dyn Terminal>, TransportError> {
        self.nonce().ok_or(TransportError::Closed).map(|nonce| {
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
            let mut w = self.world();
            w.terminals += 1;
            w.shell = Some(Arc::clone(&shell));
            let terminal: Arc<dyn Terminal> = Arc::new(FakeTerminal {
                shell,
                output: Mutex::new(Some(rx)),
                world: Arc::clone(&self.world),
                size: Mutex::new(size),
                evidence,
            });
            terminal
        })
    }
}

/// Where the fake shell is.
#[derive(Debug, PartialEq, Eq)]
enum Step {
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
struct Shell {
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

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
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

/// The dialect of the fake shell: its setup file holds the secret, its
/// wrapper line `run SEQ PATH`, its command file the steps as given.
#[derive(Debug)]
pub(crate) struct Scripted;

impl Dialect for Scripted {
    fn name(&self) -> &'static str {
        "fake"
    }

    fn argv(&self, _run_rc_files: bool, setup: &Path) -> (String, Vec<String>) {
        ("fake-shell".to_owned(), vec![setup.display().to_string()])
    }

    fn setup_script(&self, ctx: &SetupContext<'_>) -> String {
        format!("nonce={}\n", ctx.nonce.joined())
    }

    fn load_setup(&self, _run_rc_files: bool, _path: &Path) -> Option<String> {
        None
    }

    fn command_file(&self, code: &str, _last_status: i32) -> String {
        code.to_owned()
    }

    fn wrapper_line(&self, path: &Path, seq: u64, _code: &str) -> String {
        format!("run {seq} {}\n", path.display())
    }

    fn syntax_check(&self, _file: &Path) -> Option<(String, Vec<String>)> {
        None
    }

    fn is_incomplete(&self, _code: &str, _check: &str, _probe: Option<&str>) -> bool {
        false
    }

    fn file_in_messages(&self, _path: &Path) -> Option<(String, String)> {
        None
    }

    fn has_pipe_status(&self) -> bool {
        true
    }
}

fn is_setup(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with("setup."))
}

/// The path in the first single-quoted word after `after` in `command`.
fn quoted_after(command: &str, after: &str) -> Option<PathBuf> {
    let rest = &command[command.find(after)? + after.len()..];
    let rest = rest.strip_prefix('\'')?;
    Some(PathBuf::from(&rest[..rest.find('\'')?]))
}

/// A place like this machine: the fake shell's terminal shows its
/// foreground (as the kernel shows a local PTY's), so readiness and
/// interrupts take the local paths (`reading_terminal`, INT, TERM, KILL
/// to the verified foreground); its files are kept in the host's memory.
pub(crate) struct FakeLocal {
    host: FakeHost,
    dir: PathBuf,
}

impl FakeLocal {
    /// The place, with its files and terminals kept by `host`.
    pub(crate) fn new(host: &FakeHost) -> FakeLocal {
        FakeLocal {
            host: host.clone(),
            dir: PathBuf::from("/fake/local/s1"),
        }
    }
}

impl Place for FakeLocal {
    fn host_name(&self) -> Option<&str> {
        None
    }

    fn dir(&self) -> &Path {
        &self.dir
    }

    fn remote_dir(&self) -> Option<&Path> {
        None
    }

    fn cannot_enter(&self, _dir: &Path) -> Option<String> {
        None
    }

    fn remove_file<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, ()> {
        self.host.world().files.remove(path);
        Box::pin(async {})
    }

    fn write_files(&self, files: Vec<(PathBuf, Vec<u8>)>) -> BoxFuture<'_, Result<(), ShellError>> {
        self.host.world().files.extend(files);
        Box::pin(async { Ok(()) })
    }

    fn inline_command(&self, _: &dyn Dialect, _: &Path, _: &str) -> Option<String> {
        None
    }

    fn write_command(
        &self,
        file: PathBuf,
        text: String,
        _deadline: std::time::Instant,
    ) -> BoxFuture<'_, Result<Staged, ShellError>> {
        self.host.world().files.insert(file, text.into_bytes());
        Box::pin(async { Ok(Staged::Written) })
    }

    fn command_over(&self) {}

    fn learn_exports<'a>(&'a self, _secrets: &'a Secrets) -> BoxFuture<'a, Option<Redactor>> {
        Box::pin(async { None })
    }

    fn open_terminal<'a>(
        &'a self,
        start: ShellStart<'a>,
    ) -> BoxFuture<'a, Result<Arc<dyn Terminal>, ShellError>> {
        let opened = self.host.open(start.size, true).map_err(ShellError::from);
        Box::pin(async move { opened })
    }

    fn check_syntax<'a>(
        &'a self,
        _check: SyntaxCheck<'a>,
    ) -> BoxFuture<'a, Result<String, ShellError>> {
        Box::pin(async { Ok(String::new()) })
    }

    fn end_tree(&self, _remove: bool) -> BoxFuture<'_, ()> {
        Box::pin(async {})
    }

    fn sweep<'a>(&'a self, _dir: &'a Path) -> BoxFuture<'a, ()> {
        Box::pin(async {})
    }

    fn end_tree_later(&self) {}

    fn prober(&self) -> Option<&dyn Prober> {
        None
    }

    fn link_hung(&self, _within: Duration) -> BoxFuture<'_, bool> {
        Box::pin(async { false })
    }

    fn shell_sets_modes(&self) -> bool {
        false
    }

    fn shell_lists_holders(&self) -> bool {
        false
    }

    fn echo(&self) -> Arc<dyn Echo> {
        Arc::new(NoEcho)
    }

    fn base_env(&self, local: &[(String, String)]) -> Vec<(String, String)> {
        local.to_vec()
    }
}

/// Echo that never changes (no person attaches in these tests).
struct NoEcho;

impl Echo for NoEcho {
    fn set(&self, _on: bool, _terminal: &dyn Terminal, _shared: &Arc<Shared>) -> bool {
        false
    }
}
