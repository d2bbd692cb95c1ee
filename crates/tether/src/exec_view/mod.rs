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
//! - `tail.rs`: each host's latest lines, bounded;
//! - `keys.rs`: typed bytes as keys;
//! - `screen.rs`: the terminal under ratatui, every byte tracked;
//! - `print.rs`: the kept output printed as the stream prints it.
//!
//! It does not decide exit codes (`fleet_cmd`'s, but for a signal's) nor
//! print results.

mod keys;
mod model;
mod print;
mod render;
mod screen;
mod tail;

use std::cell::RefCell;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use tether_cluster::exec::{self, ExecOptions, HostResult, HostSpec, HostStops};
use tokio::signal::unix::{SignalKind, signal};

use crate::fleet_cmd::Interrupts;
use crate::local_term::LocalTerminal;
use model::{Action, Model};
pub use print::print_streams;
use screen::Screen;

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
