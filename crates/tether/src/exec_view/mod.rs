//! The live view of a `tether exec` run on a terminal (`--tui`, or on by
//! itself from [`AUTO_HOSTS`] hosts): the hosts by state folded as node
//! sets, the selected host's or group's output following, the groups as
//! they form, a diff view, and keys to cancel one host or all. It owns the
//! terminal through [`LocalTerminal`], the same capture and exact restore
//! as `tether ssh` (raw mode, the alternate screen entered through the
//! tracked writer, so the restore plan leaves it; put back on every way
//! out: the run's end, cancel, SIGTERM, SIGHUP, a panic). When the view
//! leaves, `exec_cmd` prints the run's output as the chosen `--output`
//! prints it, on the main screen.
//!
//! - `model.rs`: the state, fed by the run's events and the keys (pure);
//! - `render.rs`: how a model is drawn (ratatui);
//! - `keys.rs`: typed bytes as keys.
//!
//! It does not decide exit codes (`fleet_cmd`'s, but for a signal's) nor
//! print results.

mod keys;
mod model;
mod render;

use std::cell::RefCell;
use std::io::Write;
use std::rc::Rc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use ratatui::backend::CrosstermBackend;
use tether_cluster::exec::{self, ExecOptions, HostResult, HostSpec, HostStops};
use tokio::signal::unix::{SignalKind, signal};

use crate::fleet_cmd::Interrupts;
use crate::local_term::LocalTerminal;
use model::{Action, Model};

/// From this many hosts the view is on by itself on a terminal (the
/// default fanout: a run that rolls through more than one window).
pub const AUTO_HOSTS: usize = 64;

/// How often the view is drawn again, at most (when something changed).
const TICK: Duration = Duration::from_millis(100);

/// How long a lone ESC is held to see whether a sequence follows.
const PARTIAL_HOLD: Duration = Duration::from_millis(20);

/// `tether exec`'s flags for the live view.
#[derive(Clone, Copy, Debug, Default, clap::Args)]
pub struct ViewArgs {
    /// The live view on this terminal: hosts by state as node sets, the
    /// selected host's or group's output following, the groups as they
    /// form, a diff view. Keys: arrows or j/k select, Tab hosts/groups,
    /// Enter follow (back to the end), PgUp/PgDn scroll, d diff against
    /// the largest group, c cancel the selected host, C or q cancel every
    /// host (each asks y/n), Ctrl-C twice within 1 s (once with -b) cancels
    /// all. The view leaves when the run ends (the terminal exactly as it
    /// was) and the output is printed as --output says. On by itself from 64 hosts
    /// when stdin and stdout are a terminal (not with --stdin or -v); an
    /// error without a terminal. NO_COLOR: no colours.
    #[arg(long, conflicts_with = "no_tui")]
    pub tui: bool,
    /// Never the live view (the progress line and the chosen output).
    #[arg(long)]
    pub no_tui: bool,
}

/// Whether a run of `hosts` hosts gets the view: `Ok(false)` without it;
/// an error when `--tui` asks for it where it cannot be.
pub fn wanted(args: ViewArgs, hosts: usize, stdin: bool, verbose: bool) -> Result<bool> {
    if args.no_tui {
        return Ok(false);
    }
    let terminal =
        rustix::termios::isatty(std::io::stdin()) && rustix::termios::isatty(std::io::stdout());
    if args.tui {
        if !terminal {
            bail!(
                "--tui needs a terminal on stdin and stdout; without one, drop --tui (the output is printed as --output says)"
            );
        }
        if stdin {
            bail!("--tui reads its keys from stdin: it cannot go with --stdin");
        }
        if verbose {
            bail!(
                "--tui shows no -v connection steps (they would be written over the view): drop one of them"
            );
        }
        return Ok(true);
    }
    Ok(terminal && !stdin && !verbose && hosts >= AUTO_HOSTS)
}

/// How the view ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ended {
    /// The run ended (its hosts over, or cancelled from the view).
    RunOver,
    /// SIGTERM or SIGHUP: every host cancelled, the terminal put back at
    /// once; tether exits with this code (143, 129).
    Signalled(i32),
}

impl Ended {
    /// The exit code this way out imposes, if any.
    pub fn code(self) -> Option<i32> {
        match self {
            Ended::RunOver => None,
            Ended::Signalled(c) => Some(c),
        }
    }
}

/// Runs `command` on `hosts` under the view; returns the results (in the
/// hosts' order) and how the view ended. The terminal is put back before
/// this returns (or unwinds).
pub fn run(
    runtime: &tokio::runtime::Runtime,
    hosts: Vec<HostSpec>,
    command: &str,
    mut opts: ExecOptions,
    ctrl_c: &Interrupts,
    batch: bool,
) -> Result<(Vec<HostResult>, Ended)> {
    let stops = HostStops::new();
    opts.host_stops = Some(stops.clone());
    let names: Vec<String> = hosts.iter().map(|h| h.name.clone()).collect();
    let mut model = Model::new(command, &names);
    model.batch = batch;
    let model = RefCell::new(model);
    let colour = std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    runtime.block_on(async {
        // Signals first: none may end tether between the capture and the
        // restore.
        let signals = Signals::listen()?;
        let over = tokio::sync::watch::channel(false);
        let (term, typed) = LocalTerminal::enter()?;
        let screen = Screen::open(term)?;
        let view = show(
            screen, &model, colour, signals, over.1, typed, &stops, ctrl_c,
        );
        let run = async {
            let results = exec::run(hosts, command, opts, |p| {
                let mut tally = ctrl_c.tally();
                match p {
                    exec::Progress::Started(h) => tally.started(h),
                    exec::Progress::Done(d) => tally.finished(d),
                    exec::Progress::Connected(_) | exec::Progress::Line(..) => {}
                }
                drop(tally);
                model.borrow_mut().feed(p);
            })
            .await;
            over.0.send_replace(true);
            results
        };
        let (results, ended) = tokio::join!(run, view);
        Ok((results, ended?))
    })
}

/// The signals that end the view.
struct Signals {
    winch: tokio::signal::unix::Signal,
    term: tokio::signal::unix::Signal,
    hup: tokio::signal::unix::Signal,
}

impl Signals {
    fn listen() -> Result<Signals> {
        let listen = |k| signal(k).context("cannot listen for signals");
        Ok(Signals {
            winch: listen(SignalKind::window_change())?,
            term: listen(SignalKind::terminate())?,
            hup: listen(SignalKind::hangup())?,
        })
    }
}

/// The view's loop: draws on each tick when the model changed, takes the
/// keys and signals, until the run is over or a signal; the terminal put
/// back when it returns.
#[allow(clippy::too_many_arguments)]
async fn show(
    screen: Screen,
    model: &RefCell<Model>,
    colour: bool,
    mut signals: Signals,
    mut over: tokio::sync::watch::Receiver<bool>,
    typed: Vec<u8>,
    stops: &HostStops,
    ctrl_c: &Interrupts,
) -> Result<Ended> {
    let mut screen = screen;
    let mut keys = Some(crate::interactive::keys::Keys::start());
    let mut reader = keys::Keys::default();
    let mut tick = tokio::time::interval(TICK);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    // A secret asked meanwhile borrows the terminal (`tty_prompt`).
    let (_holder, mut loans) = crate::tty_prompt::lend_from();
    let mut lent: Option<tokio::sync::oneshot::Receiver<()>> = None;
    let act = |key_list: Vec<keys::Key>| {
        for k in key_list {
            let action = model.borrow_mut().key(k, Instant::now());
            match action {
                Some(Action::CancelHost(h)) => stops.stop(&h),
                Some(Action::CancelAll) => {
                    model.borrow_mut().note = Some("cancelling every host…".into());
                    ctrl_c.cancel_all();
                }
                None => {}
            }
        }
    };
    act(reader.feed(&typed));
    let ended = loop {
        tokio::select! {
            _ = tick.tick() => {
                if *over.borrow() {
                    break Ended::RunOver;
                }
                let mut m = model.borrow_mut();
                if lent.is_none() && m.take_dirty() {
                    m.prepare();
                    screen.draw(&m, colour)?;
                }
            }
            typed = next_keys(&mut keys) => match typed {
                Some(bytes) => act(reader.feed(&bytes)),
                // The terminal is gone: SIGHUP says what to do.
                None => keys = None,
            },
            () = tokio::time::sleep(PARTIAL_HOLD), if reader.pending() > 0 => act(reader.flush()),
            Some(loan) = loans.recv(), if lent.is_none() => {
                keys = None;
                screen.suspend();
                let _ = loan.given.send(());
                lent = Some(loan.back);
            }
            _ = async { if let Some(back) = lent.as_mut() { let _ = back.await; } }, if lent.is_some() => {
                lent = None;
                screen.resume()?;
                keys = Some(crate::interactive::keys::Keys::start());
                model.borrow_mut().touch();
            }
            _ = signals.winch.recv() => {
                // While lent, the resume resizes.
                if lent.is_none() {
                    screen.resized()?;
                }
                model.borrow_mut().touch();
            }
            _ = over.changed() => break Ended::RunOver,
            _ = signals.term.recv() => {
                ctrl_c.cancel_all();
                break Ended::Signalled(143);
            }
            _ = signals.hup.recv() => {
                ctrl_c.cancel_all();
                break Ended::Signalled(129);
            }
        }
    };
    screen.leave();
    Ok(ended)
}

/// The next keys typed; never, while the keys are not read (the terminal
/// lent, or gone).
async fn next_keys(keys: &mut Option<crate::interactive::keys::Keys>) -> Option<Vec<u8>> {
    match keys {
        Some(k) => k.recv().await,
        None => std::future::pending().await,
    }
}

/// The terminal while the view is on it: ratatui over the captured
/// terminal, every byte through [`LocalTerminal::write`] (so the restore
/// plan knows the alternate screen and the hidden cursor).
struct Screen {
    ui: Option<ratatui::Terminal<CrosstermBackend<Out>>>,
    term: Rc<RefCell<LocalTerminal>>,
}

impl Screen {
    /// The alternate screen entered, cleared, the cursor hidden.
    fn open(term: LocalTerminal) -> Result<Screen> {
        let term = Rc::new(RefCell::new(term));
        let mut out = Out {
            term: Rc::clone(&term),
            buf: Vec::new(),
        };
        enter(&mut out)?;
        // A viewport of the size this process reads from stdout, resized on
        // SIGWINCH: ratatui's full screen asks crossterm for the size at
        // every frame, which opens /dev/tty (the controlling terminal,
        // which need not be the one on stdout) each time.
        let options = ratatui::TerminalOptions {
            viewport: ratatui::Viewport::Fixed(area()),
        };
        let mut ui = ratatui::Terminal::with_options(CrosstermBackend::new(out), options)
            .context("cannot draw on the terminal")?;
        ui.hide_cursor()?;
        Ok(Screen { ui: Some(ui), term })
    }

    /// Gives the terminal back for a while (a question asked on it): put
    /// back exactly as on the way out.
    fn suspend(&mut self) {
        self.term.borrow_mut().suspend("");
    }

    /// Takes the terminal again after [`Screen::suspend`], the whole view
    /// drawn anew at the next tick.
    fn resume(&mut self) -> Result<()> {
        self.term.borrow_mut().resume()?;
        if let Some(ui) = self.ui.as_mut() {
            enter(ui.backend_mut())?;
            ui.hide_cursor()?;
            // A resize (to the same size, too) forgets what was drawn.
            ui.resize(area())?;
        }
        Ok(())
    }

    /// The terminal's new size: the whole view drawn anew at the next tick.
    fn resized(&mut self) -> Result<()> {
        if let Some(ui) = self.ui.as_mut() {
            ui.resize(area())?;
        }
        Ok(())
    }

    fn draw(&mut self, m: &Model, colour: bool) -> Result<()> {
        if let Some(ui) = self.ui.as_mut() {
            ui.draw(|f| render::draw(f, m, colour))?;
        }
        Ok(())
    }

    /// Puts the terminal back exactly (nothing after: the output that
    /// follows starts where the person's cursor was).
    fn leave(&mut self) {
        // ratatui shows the cursor again as it goes.
        self.ui.take();
        self.term.borrow_mut().restore("");
    }
}

impl Drop for Screen {
    fn drop(&mut self) {
        self.leave();
    }
}

/// The whole terminal, as large as stdout's says it is.
fn area() -> ratatui::layout::Rect {
    let (rows, cols) = crate::local_term::size();
    ratatui::layout::Rect::new(0, 0, cols, rows)
}

/// The alternate screen entered and cleared. Cleared here, not by
/// ratatui's `clear`, which asks the terminal where its cursor is (and
/// reads the answer from stdin, the keys').
fn enter(out: &mut impl Write) -> std::io::Result<()> {
    use ratatui::crossterm::terminal::{Clear, ClearType, EnterAlternateScreen};
    ratatui::crossterm::queue!(out, EnterAlternateScreen, Clear(ClearType::All))?;
    out.flush()
}

/// ratatui's writer: bytes gathered until a flush, then written through
/// the tracked terminal in one piece.
struct Out {
    term: Rc<RefCell<LocalTerminal>>,
    buf: Vec<u8>,
}

impl Write for Out {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.buf.extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        let r = self.term.borrow_mut().write(&self.buf);
        self.buf.clear();
        r
    }
}

/// `--output stream` after the view: each host's lines as the stream
/// prints them (`host: line`, stdout's on stdout and stderr's on stderr),
/// host after host in the node set's order, then its error or signal.
pub fn print_streams(results: &[HostResult], prefix: bool) -> Result<()> {
    // Buffered (a line a write cost more than the view itself); stdout is
    // flushed before a host's stderr, so each host's lines keep their order.
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let mut err = std::io::BufWriter::new(std::io::stderr().lock());
    for r in results {
        let name = crate::exec_output::printable(&r.host);
        let head = if prefix {
            format!("{name}: ")
        } else {
            String::new()
        };
        lines(&r.stdout, head.as_bytes(), &mut out)?;
        let note = match (&r.error, &r.signal) {
            (Some(e), _) => Some(e.to_string()),
            (None, Some(sig)) => Some(format!("killed by signal {sig}")),
            (None, None) => None,
        };
        if r.stderr.is_empty() && note.is_none() {
            continue;
        }
        out.flush()?;
        lines(&r.stderr, head.as_bytes(), &mut err)?;
        if let Some(note) = note {
            let line = format!("tether: {}: {note}", r.host);
            writeln!(err, "{}", crate::exec_output::printable(&line))?;
        }
        err.flush()?;
    }
    out.flush()?;
    Ok(())
}

/// `kept`'s lines to `w`, each after `head`, the last one ended.
fn lines(kept: &tether_cluster::exec::Kept, head: &[u8], w: &mut impl Write) -> Result<()> {
    let mut at_start = true;
    kept.each(|chunk| {
        let mut rest = chunk;
        while !rest.is_empty() {
            if at_start {
                w.write_all(head)?;
            }
            let cut = rest
                .iter()
                .position(|b| *b == b'\n')
                .map_or(rest.len(), |i| i + 1);
            w.write_all(&rest[..cut])?;
            at_start = rest[cut - 1] == b'\n';
            rest = &rest[cut..];
        }
        Ok(())
    })?;
    if !at_start {
        w.write_all(b"\n")?;
    }
    Ok(())
}
