//! `tether cp`: files pushed to many hosts or pulled from them, over SFTP on
//! the executor's connections (the same hosts, SSH options, host keys and
//! window as `tether exec`), printed per host, with the exit code of the
//! chosen policy.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use anyhow::{Context, Result, bail};
use tether_cluster::copy::{self, CopyOptions, CopyProgress, CopyResult, Job, Plan};
use tether_cluster::exec::{self, HostSpec, Overrides};

use crate::cli::{CpArgs, CpOutput, ExitPolicy};
use crate::{cp_output, ssh_opts};

/// One operand: a path here, or hosts and a path there.
#[derive(Debug, PartialEq, Eq)]
enum Operand {
    Local(PathBuf),
    /// `hosts` is `None` for `:PATH` (the hosts of -H or -C).
    Remote {
        hosts: Option<String>,
        path: String,
    },
}

/// Remote when a `:` comes before any `/`, outside brackets (node-set
/// ranges and IPv6 addresses have both inside), as scp decides.
fn operand(s: &str) -> Operand {
    let mut depth = 0usize;
    for (i, c) in s.char_indices() {
        match c {
            '[' => depth += 1,
            ']' => depth = depth.saturating_sub(1),
            '/' if depth == 0 => break,
            ':' if depth == 0 => {
                return Operand::Remote {
                    hosts: (i > 0).then(|| s[..i].to_owned()),
                    path: s[i + 1..].to_owned(),
                };
            }
            _ => {}
        }
    }
    Operand::Local(PathBuf::from(s))
}

/// The copy the operands ask for, and the hosts they name (`None`: -H or
/// -C's).
fn job_of(operands: &[String]) -> Result<(Job, Option<String>, Vec<PathBuf>)> {
    let mut all: Vec<Operand> = operands.iter().map(|o| operand(o)).collect();
    let Some(last) = all.pop() else {
        bail!("name at least one source and a destination");
    };
    match last {
        Operand::Remote { hosts, path } => {
            let mut local = Vec::new();
            for o in all {
                match o {
                    Operand::Local(p) => local.push(p),
                    Operand::Remote { .. } => bail!(
                        "copies from hosts to hosts are not supported: pull into a local directory, then push"
                    ),
                }
            }
            let job = Job::Push {
                plan: Arc::default(),
                dest: path,
            };
            Ok((job, hosts, local))
        }
        Operand::Local(dir) => {
            let mut sources = Vec::new();
            let mut named: Option<Option<String>> = None;
            for o in all {
                match o {
                    Operand::Local(p) => bail!(
                        "{} and the destination are both local: name the hosts (HOSTS:PATH, or :PATH with -H/-C) on one side; for a local name with a ':', write ./NAME",
                        p.display()
                    ),
                    Operand::Remote { hosts, path } => {
                        if named.as_ref().is_some_and(|n| *n != hosts) {
                            bail!(
                                "the sources name different hosts: name them once, with -H EXPR and :PATH operands"
                            );
                        }
                        named = Some(hosts);
                        sources.push(path);
                    }
                }
            }
            Ok((Job::Pull { sources, dir }, named.flatten(), Vec::new()))
        }
    }
}

pub fn run(args: CpArgs) -> Result<i32> {
    let (mut job, named, local) = job_of(&args.operands)?;
    let config = ssh_opts::load_config(args.config.as_deref())?;
    let (set, settings) = match (named, &args.hosts, &args.cluster) {
        (Some(h), None, None) => (config.nodes(&h)?, config.defaults.clone()),
        (None, Some(h), None) => (config.nodes(h)?, config.defaults.clone()),
        (None, None, Some(c)) => config.cluster(c)?,
        (None, None, None) => {
            bail!("name the hosts: HOSTS:PATH, or :PATH with -H EXPR or -C CLUSTER")
        }
        (Some(_), _, _) => {
            bail!("the hosts are named twice: use HOSTS:PATH or -H/-C with :PATH, not both")
        }
        (None, Some(_), Some(_)) => bail!("name the hosts with -H or a cluster with -C, not both"),
    };
    if set.is_empty() {
        bail!("the node set names no hosts");
    }
    let hosts: Vec<HostSpec> = set
        .names()
        .iter()
        .map(|n| HostSpec::parse(n))
        .collect::<Result<_, _>>()?;
    // Bad input is found here, before any host is reached.
    let mut total = None;
    match &mut job {
        Job::Push { plan, .. } => {
            let walked = Plan::walk(&local, args.recursive)?;
            for note in &walked.skipped {
                eprintln!("tether: {}", tether_term::printable::escaped(note, true));
            }
            total = Some(walked.bytes.saturating_mul(hosts.len() as u64));
            *plan = Arc::new(walked);
        }
        Job::Pull { dir, .. } => match std::fs::metadata(&*dir) {
            Ok(m) if m.is_dir() => {}
            Ok(_) => bail!(
                "{} is not a directory; pull into a directory",
                dir.display()
            ),
            Err(_) if args.mkdir => std::fs::create_dir_all(&*dir)
                .with_context(|| format!("cannot create {}", dir.display()))?,
            Err(e) => bail!(
                "cannot use {} ({e}); create it, or pass --mkdir",
                dir.display()
            ),
        },
    }
    let base = Overrides {
        secrets: Some(tether_ssh::Secrets::new(
            Arc::new(crate::tty_prompt::TtyPrompter),
            args.same_password,
        )),
        connect_timeout: ssh_opts::seconds_flag("--connect-timeout", args.connect_timeout)?,
        ..Overrides::default()
    };
    let ov = ssh_opts::overrides(&args.ssh.clone().into(), base, &settings)?;
    if let Some(first) = hosts.first() {
        ssh_opts::check_ssh_config(&ov, &first.host)?;
    }
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let transferred = Arc::new(AtomicU64::new(0));
    let opts = CopyOptions {
        fanout: args.fanout.or(settings.fanout).unwrap_or(64).max(1),
        resolve: exec::resolver(ov),
        fail_fast: args.fail_fast,
        stop: Some(stop_rx),
        preserve: args.preserve,
        recursive: args.recursive,
        mkdir: args.mkdir,
        transferred: Arc::clone(&transferred),
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let running: Arc<Mutex<BTreeSet<String>>> = Arc::default();
    let interrupted = Arc::new(AtomicBool::new(false));
    let line = Arc::new(cp_output::ProgressLine::new(hosts.len(), total));
    let text = args.output == CpOutput::Text;
    let results = runtime.block_on(async {
        tokio::spawn(crate::exec_cmd::interrupts(
            Arc::clone(&running),
            stop_tx,
            Arc::clone(&interrupted),
        ));
        let ticker = tokio::spawn(cp_output::tick(Arc::clone(&line), transferred));
        let (mut done, mut failed) = (0usize, 0usize);
        let results = copy::run(hosts, job, opts, |p| {
            if let Ok(mut r) = running.lock() {
                match p {
                    CopyProgress::Started(h) => {
                        r.insert(h.clone());
                    }
                    CopyProgress::Done(d) => {
                        r.remove(&d.host);
                        done += 1;
                        failed += usize::from(!d.succeeded());
                    }
                }
                line.hosts(done, failed, &r);
            }
            if let (true, CopyProgress::Done(r)) = (text, p) {
                line.above(|| cp_output::text(r));
            }
        })
        .await;
        ticker.abort();
        results
    });
    line.finish();
    if args.output == CpOutput::Json {
        cp_output::json_lines(&results)?;
    }
    if interrupted.load(Ordering::Acquire) {
        return Ok(130);
    }
    if args.fail_fast {
        cp_output::fail_fast_note(&results);
    }
    Ok(exit_code(args.exit_code, &results))
}

fn exit_code(policy: ExitPolicy, results: &[CopyResult]) -> i32 {
    let code = |r: &CopyResult| i32::try_from(r.code().min(255)).unwrap_or(255);
    match policy {
        ExitPolicy::Max => results.iter().map(code).max().unwrap_or(0),
        ExitPolicy::AllZero => i32::from(!results.iter().all(CopyResult::succeeded)),
        ExitPolicy::First => results.first().map_or(0, code),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn remote(hosts: Option<&str>, path: &str) -> Operand {
        Operand::Remote {
            hosts: hosts.map(str::to_owned),
            path: path.to_owned(),
        }
    }

    #[test]
    fn operands_are_remote_when_a_colon_comes_before_a_slash() {
        assert_eq!(
            operand("web[01-10]:/etc/x"),
            remote(Some("web[01-10]"), "/etc/x")
        );
        assert_eq!(
            operand("rack[1-2]-n[1-9/2]:d/"),
            remote(Some("rack[1-2]-n[1-9/2]"), "d/")
        );
        assert_eq!(operand("root@[::1]:x"), remote(Some("root@[::1]"), "x"));
        assert_eq!(operand(":logs/a"), remote(None, "logs/a"));
        assert_eq!(operand("web1:"), remote(Some("web1"), ""));
        assert_eq!(operand("./a:b"), Operand::Local("./a:b".into()));
        assert_eq!(operand("/tmp/a:b"), Operand::Local("/tmp/a:b".into()));
        assert_eq!(operand("file"), Operand::Local("file".into()));
    }

    #[test]
    fn the_last_operand_decides_the_direction() {
        let ops = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let (job, hosts, local) =
            job_of(&ops(&["a", "b", "web[1-2]:/x/"])).unwrap_or_else(|e| panic!("{e}"));
        assert!(matches!(job, Job::Push { ref dest, .. } if dest == "/x/"));
        assert_eq!((hosts.as_deref(), local.len()), (Some("web[1-2]"), 2));
        let (job, hosts, _) =
            job_of(&ops(&[":/var/log/a", ":b", "logs"])).unwrap_or_else(|e| panic!("{e}"));
        assert!(matches!(job, Job::Pull { ref sources, .. } if sources.len() == 2));
        assert_eq!(hosts, None);
        for bad in [
            &["a", "b"][..],
            &["w1:a", "b", "c"],
            &["w1:a", "w2:b", "c"],
            &["w1:a", "w2:b"],
        ] {
            assert!(job_of(&ops(bad)).is_err(), "{bad:?}");
        }
    }
}
