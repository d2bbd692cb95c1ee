//! `tether cp`: files pushed to many hosts or pulled from them, over SFTP on
//! the executor's connections (the same hosts, SSH options, host keys and
//! window as `tether exec`), printed per host, with the exit code of the
//! chosen policy.

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;

use anyhow::{Context, Result, bail};
use tether_cluster::copy::{self, CopyOptions, CopyProgress, Job, NOT_UTF8_HELP, Plan};

use crate::cli::{CpArgs, CpOutput};
use crate::cp_output;
use crate::fleet_cmd::{self, Fleet, Interrupts};

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
/// ranges and IPv6 addresses have both inside), as scp decides. A local
/// path is taken as it is; a remote one must be UTF-8 (SFTP paths are
/// UTF-8 here).
fn operand(s: &OsStr) -> Result<Operand> {
    let bytes = s.as_bytes();
    let mut depth = 0usize;
    let mut colon_inside = false;
    for (i, b) in bytes.iter().enumerate() {
        match b {
            b'[' => depth += 1,
            b']' => depth = depth.saturating_sub(1),
            b':' if depth > 0 => colon_inside = true,
            b'/' if depth == 0 => break,
            b':' if depth == 0 => {
                let Ok(text) = std::str::from_utf8(bytes) else {
                    bail!(
                        "{}: the remote path is not UTF-8, and {NOT_UTF8_HELP}",
                        s.to_string_lossy()
                    );
                };
                return Ok(Operand::Remote {
                    hosts: (i > 0).then(|| text[..i].to_owned()),
                    path: text[i + 1..].to_owned(),
                });
            }
            _ => {}
        }
    }
    if depth > 0 && colon_inside {
        bail!(
            "{}: a '[' is not closed before the ':' (a host set is written web[01-05]:PATH; for a local name, write ./NAME)",
            s.to_string_lossy()
        );
    }
    Ok(Operand::Local(PathBuf::from(s)))
}

/// The copy the operands ask for, and the hosts they name (`None`: -H or
/// -C's).
fn job_of(operands: &[OsString]) -> Result<(Job, Option<String>, Vec<PathBuf>)> {
    let mut all: Vec<Operand> = operands.iter().map(|o| operand(o)).collect::<Result<_>>()?;
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
    let hosts = match (&named, &args.hosts, &args.cluster) {
        (None, None, None) => {
            bail!("name the hosts: HOSTS:PATH, or :PATH with -H EXPR or -C CLUSTER")
        }
        (Some(_), Some(_), _) | (Some(_), _, Some(_)) => {
            bail!("the hosts are named twice: use HOSTS:PATH or -H/-C with :PATH, not both")
        }
        (Some(h), None, None) => Some(h.as_str()),
        (None, h, _) => h.as_deref(),
    };
    let fleet = Fleet::select(&args.fleet, args.cluster.as_deref(), hosts)?;
    // Bad input is found here, before any host is reached.
    let mut total = None;
    match &mut job {
        Job::Push { plan, .. } => {
            let walked = Plan::walk(&local, args.recursive)?;
            for note in &walked.skipped {
                eprintln!("tether: {}", tether_term::printable::escaped(note, true));
            }
            total = Some(walked.bytes.saturating_mul(fleet.hosts.len() as u64));
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
    let resolve = fleet.resolver(&args.fleet, &args.ssh)?;
    let runtime = fleet_cmd::runtime()?;
    let (ctrl_c, stop) = Interrupts::listen_with(&runtime, args.cancel.batch);
    let transferred = Arc::new(AtomicU64::new(0));
    let opts = CopyOptions {
        fanout: fleet.fanout(&args.fleet),
        resolve,
        fail_fast: args.failures.fail_fast,
        stop: Some(stop),
        preserve: args.preserve,
        recursive: args.recursive,
        mkdir: args.mkdir,
        transferred: Arc::clone(&transferred),
    };
    let line = Arc::new(cp_output::ProgressLine::new(fleet.hosts.len(), total));
    let text = args.output == CpOutput::Text;
    let results = runtime.block_on(async {
        let ticker = tokio::spawn(cp_output::tick(Arc::clone(&line), transferred));
        let results = copy::run(fleet.hosts, job, opts, |p| {
            let mut tally = ctrl_c.tally();
            match p {
                CopyProgress::Started(h) => tally.started(h),
                CopyProgress::Done(d) => tally.finished(d),
            }
            line.hosts(&tally);
            drop(tally);
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
    Ok(ctrl_c.exit_code(&args.failures, &results))
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
        let operand = |s: &str| operand(OsStr::new(s)).unwrap_or_else(|e| panic!("{e}"));
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
        // A host set left open before its ':' is an error naming it, not
        // a local file; a local name of that shape is written ./NAME.
        let e = super::operand(OsStr::new("web[1-:/tmp/")).unwrap_err();
        assert!(e.to_string().contains("'[' is not closed"), "{e}");
        assert_eq!(operand("./web[1-:x"), Operand::Local("./web[1-:x".into()));
        assert_eq!(operand("a[1"), Operand::Local("a[1".into()));
        // Bytes that are not UTF-8: a local path keeps them, a remote one
        // is refused, naming it.
        let latin1 = OsStr::from_bytes(b"./caf\xe9:x");
        assert_eq!(
            super::operand(latin1).unwrap_or_else(|e| panic!("{e}")),
            Operand::Local(PathBuf::from(latin1))
        );
        let e = super::operand(OsStr::from_bytes(b"web1:caf\xe9")).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("web1:caf\u{FFFD}: the remote path is not UTF-8"),
            "{e}"
        );
    }

    #[test]
    fn the_last_operand_decides_the_direction() {
        let ops = |v: &[&str]| v.iter().map(OsString::from).collect::<Vec<_>>();
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
