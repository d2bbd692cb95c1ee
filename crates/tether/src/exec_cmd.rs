//! `tether exec`: one command on many hosts, printed in the chosen mode,
//! with the exit code of the chosen policy.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use tether_cluster::NodeSet;
use tether_cluster::exec::{self, ExecOptions, HostResult, HostSpec, Overrides, Progress};

use crate::cli::{ExecArgs, ExitPolicy, OutputMode};
use crate::exec_output;
use crate::ssh_opts;

/// This process's stdin, read as it comes by a thread of its own (it may
/// never end: the run ends when the hosts do).
fn read_stdin() -> Arc<exec::SharedInput> {
    let input = exec::SharedInput::new();
    let feed = Arc::clone(&input);
    std::thread::spawn(move || {
        let mut buf = vec![0u8; 64 * 1024];
        let mut stdin = std::io::stdin().lock();
        loop {
            match std::io::Read::read(&mut stdin, &mut buf) {
                Ok(0) => break,
                Ok(n) => feed.push(&buf[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => {
                    eprintln!("tether exec: stdin: {e}; the hosts get what was read");
                    break;
                }
            }
        }
        feed.finish();
    });
    input
}

pub fn run(args: ExecArgs) -> Result<i32> {
    let config = ssh_opts::load_config(args.config.as_deref())?;
    let (set, settings) = match (&args.cluster, &args.hosts) {
        (Some(c), None) => config.cluster(c)?,
        (None, Some(h)) => (config.nodes(h)?, config.defaults.clone()),
        _ => bail!("name the hosts with -H or a cluster with -C, not both"),
    };
    if set.is_empty() {
        bail!("the node set names no hosts");
    }
    let hosts: Vec<HostSpec> = set
        .names()
        .iter()
        .map(|n| HostSpec::parse(n))
        .collect::<Result<_, _>>()?;
    let base = Overrides {
        secrets: Some(tether_ssh::Secrets::new(
            std::sync::Arc::new(crate::tty_prompt::TtyPrompter),
            args.same_password,
        )),
        connect_timeout: ssh_opts::seconds_flag("--connect-timeout", args.connect_timeout)?,
        ..Overrides::default()
    };
    let ov = ssh_opts::overrides(&args.ssh, base, &settings)?;
    if let Some(first) = hosts.first() {
        ssh_opts::check_ssh_config(&ov, &first.host)?;
    }
    let resolver = exec::resolver(ov);
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let running: Arc<Mutex<BTreeSet<String>>> = Arc::default();
    let interrupted = Arc::new(AtomicBool::new(false));
    let opts = ExecOptions {
        fanout: args.fanout.or(settings.fanout).unwrap_or(64).max(1),
        resolve: resolver,
        command_timeout: ssh_opts::seconds_flag("--command-timeout", args.command_timeout)?,
        fail_fast: args.fail_fast,
        stop: Some(stop_rx),
        keep_output: args.output != OutputMode::Stream,
        stdin: args.stdin.then(read_stdin),
    };
    let command = args.command.join(" ");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let mode = args.output;
    let watch_running = Arc::clone(&running);
    let progress = ProgressLine::new(set.len());
    let (mut done, mut failed) = (0usize, 0usize);
    let results = runtime.block_on(async {
        tokio::spawn(interrupts(
            Arc::clone(&running),
            stop_tx,
            Arc::clone(&interrupted),
        ));
        exec::run(hosts, &command, opts, |p| {
            if let Ok(mut r) = watch_running.lock() {
                match p {
                    Progress::Started(h) => {
                        r.insert(h.clone());
                    }
                    Progress::Done(d) => {
                        r.remove(&d.host);
                        done += 1;
                        failed += usize::from(!d.succeeded());
                    }
                    Progress::Line(..) => {}
                }
                progress.update(done, failed, &r);
            }
            if mode == OutputMode::Stream {
                progress.above(|| exec_output::stream(p));
            }
        })
        .await
    });
    match mode {
        OutputMode::Stream => {}
        OutputMode::Gather => exec_output::gather(&results)?,
        OutputMode::Json => exec_output::json_lines(&results)?,
        OutputMode::Dir => exec_output::dir(
            args.dir.as_deref().unwrap_or(std::path::Path::new(".")),
            &results,
        )?,
    }
    progress.finish();
    if interrupted.load(Ordering::Acquire) {
        return Ok(130);
    }
    if args.fail_fast {
        let cancelled: Vec<&str> = results
            .iter()
            .filter(|r| {
                matches!(
                    r.error,
                    Some(exec::HostError::Cancelled {
                        why: exec::StopReason::FailFast,
                        ..
                    })
                )
            })
            .map(|r| r.host.as_str())
            .collect();
        if !cancelled.is_empty() {
            let mut set = NodeSet::new();
            cancelled.iter().for_each(|h| set.insert(h));
            eprintln!("tether: --fail-fast cancelled {set} ({})", set.len());
        }
    }
    Ok(exit_code(args.exit_code, &results))
}

/// The live progress line on a terminal (stderr): done, failed and running
/// counts and the hosts still running; output is printed above it, never
/// through it. Hidden when stderr is not a terminal. No colours are used
/// (so NO_COLOR holds).
struct ProgressLine {
    bar: indicatif::ProgressBar,
}

impl ProgressLine {
    fn new(total: usize) -> ProgressLine {
        let bar = indicatif::ProgressBar::with_draw_target(
            Some(total as u64),
            indicatif::ProgressDrawTarget::stderr(),
        );
        if let Ok(style) = indicatif::ProgressStyle::with_template("[{pos}/{len} done] {msg}") {
            bar.set_style(style);
        }
        ProgressLine { bar }
    }

    fn update(&self, done: usize, failed: usize, running: &BTreeSet<String>) {
        self.bar.set_position(done as u64);
        let mut set = NodeSet::new();
        running.iter().take(1000).for_each(|h| set.insert(h));
        let mut names = set.fold();
        if names.len() > 60 {
            names.truncate(57);
            names.push_str("...");
        }
        self.bar.set_message(format!(
            "{failed} failed, {} running {names}",
            running.len()
        ));
    }

    fn above(&self, f: impl FnOnce()) {
        if self.bar.is_hidden() {
            f();
        } else {
            self.bar.suspend(f);
        }
    }

    fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

/// Ctrl-C once: say which hosts are still running. Twice within a second:
/// cancel them all (the run then exits 130).
pub(crate) async fn interrupts(
    running: Arc<Mutex<BTreeSet<String>>>,
    stop: tokio::sync::watch::Sender<bool>,
    interrupted: Arc<AtomicBool>,
) {
    let Ok(mut int) = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt())
    else {
        return;
    };
    let mut last: Option<std::time::Instant> = None;
    while int.recv().await.is_some() {
        if last.is_some_and(|t| t.elapsed() <= Duration::from_secs(1)) {
            eprintln!("tether: interrupted: cancelling every host");
            interrupted.store(true, Ordering::Release);
            stop.send_replace(true);
            return;
        }
        last = Some(std::time::Instant::now());
        let mut set = NodeSet::new();
        if let Ok(r) = running.lock() {
            r.iter().for_each(|h| set.insert(h));
        }
        eprintln!(
            "tether: still running on {} ({}); press Ctrl-C again within 1 s to cancel",
            if set.is_empty() {
                "no host".to_owned()
            } else {
                set.fold()
            },
            set.len()
        );
    }
}

fn exit_code(policy: ExitPolicy, results: &[HostResult]) -> i32 {
    let code = |r: &HostResult| i32::try_from(r.code().min(255)).unwrap_or(255);
    match policy {
        ExitPolicy::Max => results.iter().map(code).max().unwrap_or(0),
        ExitPolicy::AllZero => i32::from(!results.iter().all(HostResult::succeeded)),
        ExitPolicy::First => results.first().map_or(0, code),
    }
}
