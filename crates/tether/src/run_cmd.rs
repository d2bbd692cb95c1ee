//! `tether run --once`: one command in a fresh shell of this process (no
//! daemon), printed like a terminal would show it.

use std::time::Duration;

use anyhow::{Context, Result, bail};
use tether_shell::{RunOptions, Session, SessionOptions};

use crate::cli::RunArgs;
use crate::result_out;

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
    let shell = args.shell.unwrap_or(crate::cli::Shell::Bash);
    let dialect = tether_shell::dialect::by_name(shell.name()).context("unknown shell")?;
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
    let result = session.run(&args.command.join(" "), &run).await?;
    let shaped = tether_daemon::ops::shell_result("once", None, result.clone());
    let code = result_out::print(&shaped, args.json)?;
    // The spill file named above outlives the session.
    if result.truncated.is_some() {
        session.keep_spill_files();
    }
    Ok(code)
}
