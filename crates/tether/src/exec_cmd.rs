//! `tether exec`: one command on many hosts, printed in the chosen mode,
//! with the exit code of the chosen policy.

use std::sync::Arc;

use anyhow::Result;
use tether_cluster::exec::{self, ExecOptions, Progress};

use crate::cli::{ExecArgs, OutputMode};
use crate::fleet_cmd::{self, Fleet, Interrupts, Tally};
use crate::{exec_output, exec_view, ssh_opts};

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

/// The exit code of input refused before anything ran (as clap's).
const BAD_USAGE: i32 = 2;

pub fn run(args: ExecArgs) -> Result<i32> {
    let fleet = Fleet::select(&args.fleet, args.cluster.as_deref(), args.hosts.as_deref())?;
    let mode = if args.diff {
        OutputMode::Diff
    } else {
        args.output
    };
    if mode == OutputMode::Dir
        && let Some(clash) = exec_output::dir_clash(&fleet.hosts)
    {
        eprintln!("tether: {clash}");
        return Ok(BAD_USAGE);
    }
    let view = match exec_view::wanted(
        args.view,
        fleet.hosts.len(),
        args.stdin,
        args.fleet.steps.verbose > 0,
    ) {
        Ok(v) => v,
        Err(e) => {
            eprintln!("tether: {e}");
            return Ok(BAD_USAGE);
        }
    };
    let resolve = fleet.resolver(&args.fleet, &args.ssh)?;
    let command_timeout = ssh_opts::seconds_flag("--command-timeout", args.command_timeout)?;
    if args.stdin && args.sudo.asked() {
        eprintln!(
            "tether: --sudo runs the command on a terminal whose input is sudo's; --stdin cannot be given with it (nothing ran)"
        );
        return Ok(BAD_USAGE);
    }
    let sudo = args.sudo.sudo()?;
    let runtime = fleet_cmd::runtime()?;
    let (ctrl_c, stop) = Interrupts::listen_with(&runtime, args.cancel.batch);
    let opts = ExecOptions {
        fanout: fleet.fanout(&args.fleet),
        resolve,
        command_timeout,
        fail_fast: args.failures.fail_fast,
        stop: Some(stop),
        keep_output: mode != OutputMode::Stream || view,
        host_stops: None,
        stdin: args.stdin.then(read_stdin),
        sudo,
    };
    let command = args.command.join(" ");
    if view {
        let (results, ended) = exec_view::run(
            &runtime,
            fleet.hosts,
            &command,
            opts,
            &ctrl_c,
            args.cancel.batch,
        )?;
        print(mode, &args, &results)?;
        return Ok(ended
            .code()
            .unwrap_or_else(|| ctrl_c.exit_code(&args.failures, &results)));
    }

    let progress = ProgressLine::new(fleet.hosts.len());
    if mode != OutputMode::Stream {
        // Nothing is written before the end: a reader gone meanwhile
        // (`| head`) is noticed on the pipe itself.
        watch_stdout_pipe(ctrl_c.closer());
    }
    let mut closed = None;
    let shown = crate::host_text::Shown::here(args.raw);
    let results = runtime.block_on(exec::run(fleet.hosts, &command, opts, |p| {
        let mut tally = ctrl_c.tally();
        // Only a start or an end changes the line (folding the running
        // hosts at every output line cost 0.5 s of a 500-host run's 1.35 s
        // of client CPU).
        match p {
            Progress::Started(h) => tally.started(h),
            Progress::Done(d) => tally.finished(d),
            Progress::Connected(_) | Progress::Line(..) => {}
        }
        if matches!(p, Progress::Started(_) | Progress::Done(_)) {
            progress.update(&tally);
        }
        drop(tally);
        // Once a stream of tether's closed, the hosts are stopped and
        // nothing more is printed but the one line at the end.
        if mode == OutputMode::Stream
            && closed.is_none()
            && let Err(c) = progress.above(|| exec_output::stream(p, !args.no_prefix, shown))
        {
            closed = Some(c);
            ctrl_c.output_closed();
        }
    }));
    let closed = closed.or(ctrl_c
        .is_output_closed()
        .then_some(exec_output::Closed::Stdout));
    if let Some(c) = closed {
        progress.finish();
        say_closed(c, &results);
        return Ok(fleet_cmd::OUTPUT_CLOSED);
    }
    if mode != OutputMode::Stream {
        print(mode, &args, &results)?;
    }
    progress.finish();
    Ok(ctrl_c.exit_code(&args.failures, &results))
}

/// The output of a run that is over, as `mode` prints it (stream: only
/// after the live view, which kept it).
fn print(mode: OutputMode, args: &ExecArgs, results: &[exec::HostResult]) -> Result<()> {
    for r in results {
        let lost = r.stdout.lost() + r.stderr.lost();
        if lost > 0 {
            eprintln!(
                "tether: {}: {lost} bytes of its output could not be kept (the spill file in the temporary directory could not be written); what follows is cut short",
                exec_output::printable(&r.host)
            );
        }
    }
    let shown = crate::host_text::Shown::here(args.raw);
    match mode {
        OutputMode::Stream => exec_view::print_streams(results, !args.no_prefix, shown)?,
        OutputMode::Gather => exec_output::gather(results, shown)?,
        OutputMode::Diff => exec_output::diff(results, shown)?,
        OutputMode::Json => exec_output::json_lines(results)?,
        OutputMode::Dir => exec_output::dir(
            args.dir.as_deref().unwrap_or(std::path::Path::new(".")),
            results,
        )?,
    }
    Ok(())
}

/// Calls `closed` once tether's stdout is a pipe or socket whose reader
/// has gone (poll's POLLERR/POLLHUP), from a thread of its own; nothing
/// for a terminal or a file.
fn watch_stdout_pipe(closed: impl FnOnce() + Send + 'static) {
    use rustix::event::{PollFd, PollFlags, poll};
    use rustix::fs::FileType;
    let stdout = std::io::stdout();
    let Ok(stat) = rustix::fs::fstat(&stdout) else {
        return;
    };
    let kind = FileType::from_raw_mode(stat.st_mode);
    if !matches!(kind, FileType::Fifo | FileType::Socket) {
        return;
    }
    std::thread::spawn(move || {
        let stdout = std::io::stdout();
        loop {
            let mut fds = [PollFd::new(&stdout, PollFlags::empty())];
            match poll(&mut fds, None) {
                Ok(_) if fds[0].revents().intersects(PollFlags::ERR | PollFlags::HUP) => {
                    closed();
                    return;
                }
                Ok(0) | Err(rustix::io::Errno::INTR) => {}
                // Anything else (POLLNVAL): not a pipe to watch.
                Ok(_) | Err(_) => return,
            }
        }
    });
}

/// The one line (on stderr, when it is open) of a run whose `closed`
/// stream ended it: the hosts stopped, and those that may still run.
fn say_closed(closed: exec_output::Closed, results: &[exec::HostResult]) {
    let mut unsure = tether_cluster::NodeSet::new();
    for r in results {
        if r.error.as_ref().and_then(exec::HostError::halt) == Some(exec::Halt::MayStillRun) {
            unsure.insert(&r.host);
        }
    }
    let line = if unsure.is_empty() {
        format!(
            "tether: {} closed; asked every host still running the command to stop; each confirmed its end (the rest of the output was not read)\n",
            closed.as_str()
        )
    } else {
        format!(
            "tether: {} closed; asked the command to stop; it may still be running on {} ({})\n",
            closed.as_str(),
            exec_output::printable(&unsure.fold()),
            unsure.len()
        )
    };
    let _ = std::io::Write::write_all(&mut std::io::stderr(), line.as_bytes());
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

    fn update(&self, tally: &Tally) {
        if self.bar.is_hidden() {
            return;
        }
        self.bar.set_position(tally.done as u64);
        self.bar.set_message(format!(
            "{} failed, {} running {}",
            tally.failed,
            tally.running.len(),
            tally.running_folded(60)
        ));
    }

    fn above<T>(&self, f: impl FnOnce() -> T) -> T {
        if self.bar.is_hidden() {
            f()
        } else {
            self.bar.suspend(f)
        }
    }

    fn finish(&self) {
        self.bar.finish_and_clear();
    }
}
