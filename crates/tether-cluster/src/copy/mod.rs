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

pub use names::NOT_UTF8_HELP;
pub use plan::{Entry, Plan, What};

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use tokio::sync::{Semaphore, mpsc, watch};

use crate::exec::{self, HostError, HostSpec, Resolver, StopReason, ms_since};
use crate::window::{self, Cancel, HostEvent, WindowOptions};

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

window::host_outcome!(CopyResult);

/// What happens during a copy, in order per host.
#[derive(Clone, Debug)]
pub enum CopyProgress {
    /// A host started connecting.
    Started(String),
    /// A host is done.
    Done(CopyResult),
}

impl HostEvent for CopyProgress {
    type Outcome = CopyResult;

    fn started(host: String) -> Self {
        CopyProgress::Started(host)
    }

    fn done(outcome: CopyResult) -> Self {
        CopyProgress::Done(outcome)
    }

    fn into_outcome(self) -> Option<CopyResult> {
        match self {
            CopyProgress::Done(r) => Some(r),
            CopyProgress::Started(_) => None,
        }
    }
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
        HostError::from_ssh(e)
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

/// `e`, or the hung link when the link hung under it (the file operation
/// it cut short says less); a cancel stays a cancel.
fn hung_or(conn: &tether_ssh::Connection, e: HostError) -> HostError {
    match e {
        HostError::Cancelled { .. } => e,
        _ if conn.hung() => HostError::ssh(&conn.hung_error()),
        _ => e,
    }
}

/// One host's copy, in its place in the window.
async fn one(
    spec: HostSpec,
    job: Arc<Job>,
    opts: Arc<CopyOptions>,
    mut cancel: Cancel,
) -> CopyResult {
    let t0 = Instant::now();
    let host = spec.name.clone();
    let mut result = CopyResult {
        host: host.clone(),
        ..CopyResult::default()
    };
    let conn = match exec::connect(&spec, &opts.resolve, &mut cancel).await {
        Ok(c) => c,
        Err(e) => {
            result.error = Some(e);
            result.total_ms = ms_since(t0);
            return result;
        }
    };
    result.connect_ms = ms_since(t0);
    // (A server that never answers SFTP's start is left at a cancel too.)
    let reason = cancel.clone();
    let started = tokio::select! {
        s = conn.sftp() => s.map_err(HostError::from_ssh),
        _ = cancel.wait_for(Option::is_some) => Err(HostError::Cancelled {
            why: reason.borrow().unwrap_or(StopReason::Interrupted),
            halt: crate::exec::Halt::CopyStopped,
        }),
    };
    let sftp = match started {
        Ok(s) => s,
        Err(e) => {
            result.error = Some(hung_or(&conn, e));
            conn.disconnect().await;
            result.total_ms = ms_since(t0);
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
            halt: crate::exec::Halt::CopyStopped,
        }),
    };
    if let Err(e) = outcome {
        ctx.clean_up(matches!(*job, Job::Push { .. })).await;
        result.error = Some(hung_or(&conn, e));
    }
    conn.disconnect().await;
    result.bytes = ctx.bytes.load(Ordering::Relaxed);
    result.files = ctx.files.load(Ordering::Relaxed);
    result.dirs = ctx.dirs.load(Ordering::Relaxed);
    result.links = ctx.links.load(Ordering::Relaxed);
    result.skipped = ctx.skipped.lock().map(|v| v.clone()).unwrap_or_default();
    result.total_ms = ms_since(t0);
    result
}

/// Copies `job` with every host, at most `opts.fanout` at a time, calling
/// `progress` for every event; returns the results in the hosts' order.
pub async fn run(
    hosts: Vec<HostSpec>,
    job: Job,
    opts: CopyOptions,
    progress: impl FnMut(&CopyProgress),
) -> Vec<CopyResult> {
    let window = WindowOptions {
        fanout: opts.fanout,
        fail_fast: opts.fail_fast,
        stop: opts.stop.clone(),
    };
    let opts = Arc::new(opts);
    let job = Arc::new(job);
    let work = move |spec, _events: mpsc::Sender<CopyProgress>, cancel| {
        one(spec, Arc::clone(&job), Arc::clone(&opts), cancel)
    };
    window::run(hosts, window, work, progress).await
}
