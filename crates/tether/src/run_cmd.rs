//! `tether run`: one command in a fresh session, printed like a terminal
//! would show it, with the shell's exit code as ours.

use std::io::Write;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use tether_shell::dialect::{Bash, Dialect, Posix, Pwsh, Zsh};
use tether_shell::{RunOptions, Session, SessionOptions, Status};

use crate::cli::{RunArgs, Shell};

/// Runs the command; returns the exit code to exit with.
pub fn run(args: RunArgs) -> Result<i32> {
    if !(args.timeout.is_finite() && args.timeout > 0.0) {
        bail!(
            "--timeout must be a positive number of seconds, got {}",
            args.timeout
        );
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    runtime.block_on(run_async(args))
}

async fn run_async(args: RunArgs) -> Result<i32> {
    let dialect: Arc<dyn Dialect> = match args.shell {
        Shell::Bash => Arc::new(Bash),
        Shell::Zsh => Arc::new(Zsh),
        Shell::Sh => Arc::new(Posix::default()),
        Shell::Dash => Arc::new(Posix::dash()),
        Shell::Busybox => Arc::new(Posix::busybox()),
        Shell::Pwsh => Arc::new(Pwsh),
    };
    let opts = SessionOptions {
        dialect,
        run_rc_files: !args.norc,
        ..SessionOptions::default()
    };
    let mut session = Session::start(opts)
        .await
        .context("the shell did not start")?;
    let run = RunOptions {
        timeout: Duration::from_secs_f64(args.timeout),
        output_limit: args.output_limit,
        ..RunOptions::default()
    };
    let result = session.run(&args.command, &run).await?;
    let mut out = std::io::stdout().lock();
    out.write_all(result.output.as_bytes())?;
    out.flush()?;
    if let Some(t) = &result.truncated {
        eprintln!(
            "tether: {} of {} characters omitted; the whole output is in {}",
            t.omitted_chars,
            t.total_chars,
            t.full_output_path.display()
        );
    }
    let code = match result.status {
        Status::Exited | Status::ShellExited => result.exit_code.unwrap_or(1),
        Status::TimedOut => {
            eprintln!(
                "tether: timed out after {} s; the command was interrupted",
                args.timeout
            );
            124
        }
        Status::WaitingForInput => {
            eprintln!(
                "tether: the command is waiting for input; `tether run` cannot answer it (use a session)"
            );
            125
        }
        Status::IncompleteInput => {
            eprintln!(
                "tether: the command is incomplete (an open quote, heredoc or block); nothing was run"
            );
            2
        }
        Status::Running => 124,
    };
    // The spill file named above outlives the session.
    if result.truncated.is_some() {
        session.keep_spill_files();
    }
    Ok(code)
}
