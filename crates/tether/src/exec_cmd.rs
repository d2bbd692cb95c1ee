//! `tether exec`: one command on many hosts, printed in the chosen mode,
//! with the exit code of the chosen policy.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use tether_cluster::NodeSet;
use tether_cluster::config::Config;
use tether_cluster::exec::{self, ExecOptions, HostResult, HostSpec, Overrides, Progress};
use tether_ssh::HostKeyPolicy;

use crate::cli::{ExecArgs, ExitPolicy, OutputMode};
use crate::exec_output;

fn seconds(what: &str, v: f64) -> Result<Duration> {
    Duration::try_from_secs_f64(v)
        .with_context(|| format!("{what} must be a number of seconds, got {v}"))
}

fn policy(v: &str) -> Result<HostKeyPolicy> {
    exec::policy_of(v)
        .with_context(|| format!("StrictHostKeyChecking={v}: use yes, accept-new or no"))
}

/// Applies `-o Key=Value` (OpenSSH's names, case-insensitive).
fn apply_option(o: &str, ov: &mut Overrides) -> Result<()> {
    let (key, value) = o.split_once('=').with_context(|| {
        format!("-o {o:?}: write KEY=VALUE, as in -o StrictHostKeyChecking=accept-new")
    })?;
    let yes = |v: &str| matches!(v.to_ascii_lowercase().as_str(), "yes" | "true");
    let secs = |what: &str| seconds(what, value.parse().unwrap_or(-1.0));
    match key.to_ascii_lowercase().as_str() {
        "stricthostkeychecking" => ov.policy = Some(policy(value)?),
        "userknownhostsfile" => {
            ov.known_hosts = Some(value.split_whitespace().map(PathBuf::from).collect())
        }
        "identityfile" => ov.identities.push(tether_ssh::config::expand_tilde(value)),
        "identitiesonly" => ov.identities_only = Some(yes(value)),
        "identityagent" => ov.agent = Some((value != "none").then(|| PathBuf::from(value))),
        "connecttimeout" => ov.connect_timeout = Some(secs("ConnectTimeout")?),
        "serveraliveinterval" => ov.alive_interval = Some(secs("ServerAliveInterval")?),
        "serveralivecountmax" => {
            ov.alive_max = Some(
                value
                    .parse()
                    .context("ServerAliveCountMax must be a number")?,
            )
        }
        "user" => ov.user = Some(value.to_owned()),
        "port" => {
            ov.port = Some(
                value
                    .parse()
                    .context("Port must be a number from 1 to 65535")?,
            )
        }
        "proxyjump" => ov.jumps = Some(value.split(',').map(str::to_owned).collect()),
        "ciphers" => ov.ciphers = Some(value.split(',').map(str::to_owned).collect()),
        "kexalgorithms" => ov.kex = Some(value.split(',').map(str::to_owned).collect()),
        "passwordauthentication" | "kbdinteractiveauthentication" => {
            ov.passwords = Some(yes(value))
        }
        "batchmode" if yes(value) => ov.secrets = None,
        "batchmode" => {}
        other => bail!("-o {other}: not an option tether reads; see `tether exec --help`"),
    }
    Ok(())
}

/// tether's config: `file` (which must exist), else the default one (which
/// may not).
pub fn load_config(file: Option<&std::path::Path>) -> Result<Config> {
    Ok(match file {
        Some(f) => Config::load(f, true)?,
        None => Config::load(&tether_cluster::config::default_path(), false)?,
    })
}

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

/// tether's config settings, where the command line said nothing.
pub fn apply_settings(
    ov: &mut Overrides,
    settings: &tether_cluster::config::Settings,
) -> Result<()> {
    if ov.user.is_none() {
        ov.user = settings.user.clone();
    }
    ov.port = ov.port.or(settings.port);
    if let Some(id) = &settings.identity {
        ov.identities.push(tether_ssh::config::expand_tilde(id));
    }
    if ov.jumps.is_none() {
        ov.jumps = settings
            .jump
            .as_ref()
            .map(|j| j.split(',').map(str::to_owned).collect());
    }
    if ov.connect_timeout.is_none() {
        ov.connect_timeout = settings.connect_timeout.map(Duration::from_secs);
    }
    if let (None, Some(p)) = (ov.policy, &settings.strict_host_key_checking) {
        ov.policy = Some(policy(p)?);
    }
    Ok(())
}

pub fn run(args: ExecArgs) -> Result<i32> {
    let config = load_config(args.config.as_deref())?;
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
    let mut ov = Overrides {
        secrets: Some(tether_ssh::Secrets::new(
            std::sync::Arc::new(crate::tty_prompt::TtyPrompter),
            args.same_password,
        )),
        identities: args.identities.clone(),
        user: args.user.clone(),
        port: args.port,
        connect_timeout: args
            .connect_timeout
            .map(|t| seconds("--connect-timeout", t))
            .transpose()?,
        jumps: args
            .jump
            .as_ref()
            .map(|j| j.split(',').map(str::to_owned).collect()),
        ..Overrides::default()
    };
    ov.config = match &args.ssh_config {
        Some(p) if p.as_os_str() == "none" => None,
        Some(p) => Some(p.clone()),
        None => Some(tether_ssh::config::expand_tilde("~/.ssh/config")).filter(|p| p.is_file()),
    };
    for o in &args.options {
        apply_option(o, &mut ov)?;
    }
    apply_settings(&mut ov, &settings)?;
    // A config error is the user's to fix before anything runs.
    if let (Some(file), Some(first)) = (&ov.config, hosts.first()) {
        tether_ssh::config::resolve(file, &first.host)?;
    }
    let resolver = exec::resolver(ov);
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let running: Arc<Mutex<BTreeSet<String>>> = Arc::default();
    let interrupted = Arc::new(AtomicBool::new(false));
    let opts = ExecOptions {
        fanout: args.fanout.or(settings.fanout).unwrap_or(64).max(1),
        resolve: resolver,
        command_timeout: args
            .command_timeout
            .map(|t| seconds("--command-timeout", t))
            .transpose()?,
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
async fn interrupts(
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
