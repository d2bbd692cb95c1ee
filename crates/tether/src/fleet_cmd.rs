//! What `tether exec` and `tether cp` do alike around their runs: the hosts
//! a run names and the config's settings for them, how they are reached
//! (the flags of [`FleetArgs`] over the OpenSSH ones), Ctrl-C, the tally
//! of hosts running, done and failed for the progress lines, and the exit
//! code ([`FailureArgs`]).

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use tether_cluster::NodeSet;
use tether_cluster::config::Settings;
use tether_cluster::exec::{self, HostError, HostSpec, Outcome, Overrides, Resolver, StopReason};
use tokio::sync::watch;

use crate::cli::{ExitPolicy, FailureArgs, FleetArgs};
use crate::ssh_opts::{self, SshArgs};

/// The exit code of a run that a second Ctrl-C cancelled.
const INTERRUPTED: i32 = 130;

/// The exit code of a run stopped because tether's stdout or stderr
/// closed (as ssh's 255).
pub const OUTPUT_CLOSED: i32 = 255;

/// The hosts of a run, and tether's config settings for them.
pub struct Fleet {
    /// The hosts, in the node set's order.
    pub hosts: Vec<HostSpec>,
    /// The config's settings (the cluster's, else the defaults).
    pub settings: Settings,
}

impl Fleet {
    /// The hosts of `cluster` and `hosts` (narrowed by the other), less
    /// `args`'s exclusions and kept to its filters, in tether's config
    /// (`args.config`).
    pub fn select(args: &FleetArgs, cluster: Option<&str>, hosts: Option<&str>) -> Result<Fleet> {
        let config = ssh_opts::load_config(args.config.as_deref())?;
        let (set, settings) = config.select_narrowed(cluster, hosts, args.narrow.narrow())?;
        let hosts = set
            .names()
            .iter()
            .map(|n| HostSpec::parse(n))
            .collect::<Result<_, _>>()?;
        Ok(Fleet { hosts, settings })
    }

    /// Most hosts at once: the flag, else the config's, else 64.
    pub fn fanout(&self, args: &FleetArgs) -> usize {
        self.settings.fanout_or(args.fanout)
    }

    /// Where and how to reach each host: secrets asked on the terminal,
    /// the flags, then the config; a mistake in the OpenSSH client config
    /// is found here, before any host is reached.
    pub fn resolver(&self, args: &FleetArgs, ssh: &SshArgs) -> Result<Resolver> {
        let base = Overrides {
            secrets: Some(tether_ssh::Secrets::new(
                Arc::new(crate::tty_prompt::TtyPrompter),
                args.same_password,
            )),
            connect_timeout: ssh_opts::seconds_flag("--connect-timeout", args.connect_timeout)?,
            steps: (args.steps.verbose > 0).then(|| {
                let t0 = Instant::now();
                tether_ssh::Steps(Arc::new(move |line: &str| {
                    let ms = t0.elapsed().as_millis();
                    eprintln!("tether: +{ms} ms {}", crate::exec_output::printable(line));
                }))
            }),
            ..Overrides::default()
        };
        let ov = ssh_opts::overrides(ssh, base, &self.settings)?;
        if let Some(first) = self.hosts.first() {
            ssh_opts::check_ssh_config(&ov, &first.host)?;
        }
        Ok(exec::resolver(ov))
    }
}

/// The runtime a run goes on.
pub fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")
}

/// The hosts of a run as it goes, for the progress lines and Ctrl-C.
#[derive(Default)]
pub struct Tally {
    /// The hosts started and not yet done.
    pub running: BTreeSet<String>,
    /// Hosts done.
    pub done: usize,
    /// Hosts done that failed.
    pub failed: usize,
}

impl Tally {
    /// `host` started.
    pub fn started(&mut self, host: &str) {
        self.running.insert(host.to_owned());
    }

    /// A host is done.
    pub fn finished(&mut self, r: &impl Outcome) {
        self.running.remove(r.host());
        self.done += 1;
        self.failed += usize::from(!r.succeeded());
    }

    /// The hosts running, folded (`web[01-03]`), cut to `max` characters.
    pub fn running_folded(&self, max: usize) -> String {
        let mut set = NodeSet::new();
        self.running.iter().take(1000).for_each(|h| set.insert(h));
        let mut names = set.fold();
        if names.len() > max {
            let mut cut = max.saturating_sub(3);
            while !names.is_char_boundary(cut) {
                cut -= 1;
            }
            names.truncate(cut);
            names.push_str("...");
        }
        names
    }
}

/// Ctrl-C during a run: once says which hosts are still running, twice
/// within a second cancels them all (the run then exits 130).
pub struct Interrupts {
    tally: Arc<Mutex<Tally>>,
    interrupted: Arc<AtomicBool>,
    /// Set when tether's own stdout or stderr closed (the run was stopped).
    output_closed: Arc<AtomicBool>,
    stop: Arc<watch::Sender<bool>>,
}

impl Interrupts {
    /// Listens from now on, on `runtime`; the receiver is the run's stop.
    pub fn listen(runtime: &tokio::runtime::Runtime) -> (Interrupts, watch::Receiver<bool>) {
        Interrupts::listen_with(runtime, false)
    }

    /// [`Interrupts::listen`]; with `batch`, the first Ctrl-C cancels.
    pub fn listen_with(
        runtime: &tokio::runtime::Runtime,
        batch: bool,
    ) -> (Interrupts, watch::Receiver<bool>) {
        let (stop, stopped) = watch::channel(false);
        let me = Interrupts {
            tally: Arc::default(),
            interrupted: Arc::default(),
            output_closed: Arc::default(),
            stop: Arc::new(stop),
        };
        runtime.spawn(interrupts(
            Arc::clone(&me.tally),
            Arc::clone(&me.stop),
            Arc::clone(&me.interrupted),
            batch,
        ));
        (me, stopped)
    }

    /// tether's stdout or stderr closed: every host is stopped, as a second
    /// Ctrl-C stops them, and the run exits [`OUTPUT_CLOSED`].
    pub fn output_closed(&self) {
        (self.closer())();
    }

    /// [`Interrupts::output_closed`], for another thread.
    pub fn closer(&self) -> impl Fn() + Send + 'static {
        let (closed, stop) = (Arc::clone(&self.output_closed), Arc::clone(&self.stop));
        move || {
            closed.store(true, Ordering::Release);
            stop.send_replace(true);
        }
    }

    /// Cancels every host as a double Ctrl-C does (the run exits 130): the
    /// live view's cancel of all.
    pub fn cancel_all(&self) {
        self.interrupted.store(true, Ordering::Release);
        self.stop.send_replace(true);
    }

    /// True once tether's stdout or stderr closed.
    pub fn is_output_closed(&self) -> bool {
        self.output_closed.load(Ordering::Acquire)
    }

    /// The run's tally, to update and show.
    pub fn tally(&self) -> MutexGuard<'_, Tally> {
        self.tally.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The exit code of a run that is over: 130 when Ctrl-C cancelled it,
    /// else the policy's, after naming the hosts `--fail-fast` cancelled.
    pub fn exit_code(&self, failures: &FailureArgs, results: &[impl Outcome]) -> i32 {
        if self.output_closed.load(Ordering::Acquire) {
            return OUTPUT_CLOSED;
        }
        if self.interrupted.load(Ordering::Acquire) {
            return INTERRUPTED;
        }
        if failures.fail_fast {
            fail_fast_note(results);
        }
        exit_code(failures.exit_code, results)
    }
}

async fn interrupts(
    tally: Arc<Mutex<Tally>>,
    stop: Arc<watch::Sender<bool>>,
    interrupted: Arc<AtomicBool>,
    batch: bool,
) {
    let Ok(mut int) = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt())
    else {
        return;
    };
    let mut last: Option<Instant> = None;
    while int.recv().await.is_some() {
        if batch || last.is_some_and(|t| t.elapsed() <= Duration::from_secs(1)) {
            eprintln!("tether: interrupted: cancelling every host");
            interrupted.store(true, Ordering::Release);
            stop.send_replace(true);
            return;
        }
        last = Some(Instant::now());
        let mut set = NodeSet::new();
        if let Ok(t) = tally.lock() {
            t.running.iter().for_each(|h| set.insert(h));
        }
        let line = format!(
            "tether: still running on {} ({}); press Ctrl-C again within 1 s to cancel",
            if set.is_empty() {
                "no host".to_owned()
            } else {
                set.fold()
            },
            set.len()
        );
        eprintln!("{}", tether_term::printable::escaped(&line, false));
    }
}

/// `--fail-fast`: which hosts it cancelled, once.
fn fail_fast_note(results: &[impl Outcome]) {
    let mut set = NodeSet::new();
    for r in results {
        if let Some(HostError::Cancelled {
            why: StopReason::FailFast,
            ..
        }) = r.error()
        {
            set.insert(r.host());
        }
    }
    if !set.is_empty() {
        let line = format!("tether: --fail-fast cancelled {set} ({})", set.len());
        eprintln!("{}", tether_term::printable::escaped(&line, false));
    }
}

fn exit_code<R: Outcome>(policy: ExitPolicy, results: &[R]) -> i32 {
    let code = |r: &R| i32::try_from(r.code().min(255)).unwrap_or(255);
    match policy {
        ExitPolicy::Max => results.iter().map(code).max().unwrap_or(0),
        ExitPolicy::AllZero => i32::from(!results.iter().all(Outcome::succeeded)),
        ExitPolicy::First => results.first().map_or(0, code),
    }
}
