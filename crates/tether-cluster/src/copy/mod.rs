//! Copying files to and from many hosts over SFTP, with the executor's
//! sliding window, resolution and cancellation: a push sends one walked
//! [`Plan`] to every host, a pull brings each host's sources into a
//! directory of its own. Every file is written under a temporary name
//! beside its real one and renamed into place once whole (a pull's
//! sources may be shell patterns, matched on each host), so a failed or
//! interrupted copy never leaves a partial file under the real name. Each
//! host keeps a bounded number of requests in flight (its window) and a
//! bounded number of files open, so memory does not grow with file sizes
//! or host counts beyond `fanout ×` [`WINDOW_BYTES`].

mod glob;
mod names;
mod plan;
mod pull;
mod push;
mod tasks;

pub use plan::{Entry, Plan, What};

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use tokio::sync::{Semaphore, mpsc, watch};

use crate::exec::{HostError, HostSpec, Resolver, StopReason};

/// What to copy.
#[derive(Clone, Debug)]
pub enum Job {
    /// The plan's sources to `dest` on every host.
    Push {
        /// The walked sources.
        plan: Arc<Plan>,
        /// The destination as typed (a trailing `/` says it is a
        /// directory).
        dest: String,
    },
    /// Each host's `sources` into `dir/HOST/`.
    Pull {
        /// The paths on the hosts, as typed.
        sources: Vec<String>,
        /// The local directory.
        dir: PathBuf,
    },
}

/// How a copy goes.
#[derive(Clone)]
pub struct CopyOptions {
    /// Most hosts connected at once.
    pub fanout: usize,
    /// Where and how to connect to each host.
    pub resolve: Resolver,
    /// Stop starting hosts after the first failure, and cancel those
    /// running.
    pub fail_fast: bool,
    /// When this turns true, start no more hosts and cancel those running.
    pub stop: Option<watch::Receiver<bool>>,
    /// Keep modes and modification times (`-p`).
    pub preserve: bool,
    /// Copy directories (`-r`).
    pub recursive: bool,
    /// Create the missing directories of a push's destination.
    pub mkdir: bool,
    /// Every byte copied, all hosts together, as it goes (for a progress
    /// line).
    pub transferred: Arc<AtomicU64>,
}

/// Bytes in flight per host: the requests out at once are this over the
/// piece size (8 of OpenSSH's 255 KiB), within [`MIN_REQUESTS`] and
/// [`MAX_REQUESTS`]. 2 MiB is what sshd's channel window holds anyway.
pub const WINDOW_BYTES: usize = 2 << 20;
/// The fewest requests out at once per host.
pub const MIN_REQUESTS: usize = 4;
/// The most requests out at once per host.
pub const MAX_REQUESTS: usize = 64;
/// Files copied at once per host.
pub const FILES_AT_ONCE: usize = 16;

/// One host's result.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CopyResult {
    /// The host, as the node set named it.
    pub host: String,
    /// Bytes copied.
    pub bytes: u64,
    /// Files put in place.
    pub files: u64,
    /// Directories created.
    pub dirs: u64,
    /// Links put in place.
    pub links: u64,
    /// What was skipped (special files), one note each.
    pub skipped: Vec<String>,
    /// Why it did not finish.
    pub error: Option<HostError>,
    /// Time to connect, in milliseconds.
    pub connect_ms: u64,
    /// Total time, in milliseconds.
    pub total_ms: u64,
}

impl CopyResult {
    /// True when everything was copied.
    pub fn succeeded(&self) -> bool {
        self.error.is_none()
    }

    /// The code the exit-code policies count: 0, 1 for a copy that failed
    /// on a file, 255 when the host could not be reached or was lost.
    pub fn code(&self) -> u32 {
        match &self.error {
            None => 0,
            Some(HostError::Copy(_)) => 1,
            Some(_) => 255,
        }
    }
}

/// What happens during a copy, in order per host.
#[derive(Clone, Debug)]
pub enum CopyProgress {
    /// A host started connecting.
    Started(String),
    /// A host is done.
    Done(CopyResult),
}

/// One host's copy under way: its session and what it has done so far.
pub(crate) struct Ctx {
    host: String,
    sftp: tether_ssh::Sftp,
    opts: Arc<CopyOptions>,
    window: Arc<Semaphore>,
    bytes: AtomicU64,
    files: AtomicU64,
    dirs: AtomicU64,
    links: AtomicU64,
    skipped: std::sync::Mutex<Vec<String>>,
    /// Temporary names written but not yet renamed (on the host for a
    /// push, here for a pull): removed when the copy fails.
    temps: std::sync::Mutex<Vec<String>>,
}

impl Ctx {
    fn copied(&self, n: usize) {
        self.bytes.fetch_add(n as u64, Ordering::Relaxed);
        self.opts.transferred.fetch_add(n as u64, Ordering::Relaxed);
    }

    fn err(&self, e: tether_ssh::SshError) -> HostError {
        HostError::from_ssh(&self.host, e)
    }

    fn temp_started(&self, t: &str) {
        if let Ok(mut v) = self.temps.lock() {
            v.push(t.to_owned());
        }
    }

    fn temp_done(&self, t: &str) {
        if let Ok(mut v) = self.temps.lock() {
            v.retain(|x| x != t);
        }
    }

    fn skip(&self, note: String) {
        if let Ok(mut v) = self.skipped.lock() {
            v.push(note);
        }
    }

    /// Removes the temporary files left by a failed copy (best effort:
    /// a host that is gone keeps its own until someone removes them).
    async fn clean_up(&self, push: bool) {
        let temps = self.temps.lock().map(|v| v.clone()).unwrap_or_default();
        if push {
            let removes = async {
                for t in &temps {
                    let _ = self.sftp.remove(t).await;
                }
            };
            let _ = tokio::time::timeout(Duration::from_secs(5), removes).await;
        } else {
            for t in &temps {
                let _ = std::fs::remove_file(t);
            }
        }
    }
}

fn ms(since: Instant) -> u64 {
    u64::try_from(since.elapsed().as_millis()).unwrap_or(u64::MAX)
}

async fn one(
    spec: HostSpec,
    job: Arc<Job>,
    opts: Arc<CopyOptions>,
    events: mpsc::Sender<CopyProgress>,
    mut cancel: watch::Receiver<Option<StopReason>>,
) -> CopyResult {
    let t0 = Instant::now();
    let host = spec.name.clone();
    let mut result = CopyResult {
        host: host.clone(),
        ..CopyResult::default()
    };
    if let Some(why) = *cancel.borrow() {
        result.error = Some(HostError::Cancelled {
            why,
            started: false,
        });
        return result;
    }
    let _ = events.send(CopyProgress::Started(host.clone())).await;
    let (target, connect) = match (opts.resolve)(&spec) {
        Ok(r) => r,
        Err(e) => {
            result.error = Some(HostError::resolve(&host, e));
            return result;
        }
    };
    let conn = match tether_ssh::connect(&target, &connect).await {
        Ok(c) => c,
        Err(e) => {
            result.error = Some(HostError::ssh(&host, e.to_string()));
            result.total_ms = ms(t0);
            return result;
        }
    };
    result.connect_ms = ms(t0);
    let sftp = match conn.sftp().await {
        Ok(s) => s,
        Err(e) => {
            result.error = Some(HostError::from_ssh(&host, e));
            conn.disconnect().await;
            result.total_ms = ms(t0);
            return result;
        }
    };
    let requests = (WINDOW_BYTES / sftp.chunk().max(1)).clamp(MIN_REQUESTS, MAX_REQUESTS);
    let ctx = Arc::new(Ctx {
        host: host.clone(),
        sftp,
        opts: Arc::clone(&opts),
        window: Arc::new(Semaphore::new(requests)),
        bytes: AtomicU64::new(0),
        files: AtomicU64::new(0),
        dirs: AtomicU64::new(0),
        links: AtomicU64::new(0),
        skipped: std::sync::Mutex::default(),
        temps: std::sync::Mutex::default(),
    });
    let work = async {
        match &*job {
            Job::Push { plan, dest } => push::push(&ctx, plan, dest).await,
            Job::Pull { sources, dir } => pull::pull(&ctx, sources, dir).await,
        }
    };
    let reason = cancel.clone();
    let outcome = tokio::select! {
        r = work => r,
        _ = cancel.wait_for(Option::is_some) => Err(HostError::Cancelled {
            why: reason.borrow().unwrap_or(StopReason::Interrupted),
            started: true,
        }),
    };
    if let Err(e) = outcome {
        ctx.clean_up(matches!(*job, Job::Push { .. })).await;
        result.error = Some(e);
    }
    conn.disconnect().await;
    result.bytes = ctx.bytes.load(Ordering::Relaxed);
    result.files = ctx.files.load(Ordering::Relaxed);
    result.dirs = ctx.dirs.load(Ordering::Relaxed);
    result.links = ctx.links.load(Ordering::Relaxed);
    result.skipped = ctx.skipped.lock().map(|v| v.clone()).unwrap_or_default();
    result.total_ms = ms(t0);
    result
}

/// Copies `job` with every host, at most `opts.fanout` at a time, calling
/// `progress` for every event; returns the results in the hosts' order.
pub async fn run(
    hosts: Vec<HostSpec>,
    job: Job,
    opts: CopyOptions,
    mut progress: impl FnMut(&CopyProgress),
) -> Vec<CopyResult> {
    let opts = Arc::new(opts);
    let job = Arc::new(job);
    let window = Arc::new(Semaphore::new(opts.fanout.max(1)));
    let (cancel_tx, cancel) = watch::channel(None);
    let cancel_tx = Arc::new(cancel_tx);
    if let Some(mut stop) = opts.stop.clone() {
        let tx = Arc::clone(&cancel_tx);
        tokio::spawn(async move {
            if stop.wait_for(|s| *s).await.is_ok() {
                tx.send_replace(Some(StopReason::Interrupted));
            }
        });
    }
    let (tx, mut rx) = mpsc::channel(1024);
    let position: HashMap<String, usize> = hosts
        .iter()
        .enumerate()
        .map(|(i, h)| (h.name.clone(), i))
        .collect();
    // Hosts start in the order given (one feeder takes the permits in turn).
    let feeder_opts = Arc::clone(&opts);
    let feeder_cancel = Arc::clone(&cancel_tx);
    tokio::spawn(async move {
        for spec in hosts {
            let Ok(permit) = Arc::clone(&window).acquire_owned().await else {
                return;
            };
            let (job, opts, tx, cancel, cancel_tx) = (
                Arc::clone(&job),
                Arc::clone(&feeder_opts),
                tx.clone(),
                cancel.clone(),
                Arc::clone(&feeder_cancel),
            );
            tokio::spawn(async move {
                let _permit = permit;
                let r = one(spec, job, Arc::clone(&opts), tx.clone(), cancel).await;
                // Before the permit goes: the next host must see it.
                if opts.fail_fast && !r.succeeded() {
                    cancel_tx.send_if_modified(|c| {
                        let first = c.is_none();
                        if first {
                            *c = Some(StopReason::FailFast);
                        }
                        first
                    });
                }
                let _ = tx.send(CopyProgress::Done(r)).await;
            });
        }
    });
    let mut done = Vec::with_capacity(position.len());
    while let Some(p) = rx.recv().await {
        progress(&p);
        if let CopyProgress::Done(r) = p {
            done.push(r);
        }
    }
    done.sort_by_key(|r| position.get(&r.host).copied().unwrap_or(usize::MAX));
    done
}
