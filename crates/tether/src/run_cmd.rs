//! `tether run --once`: one command in a fresh shell of this process (no
//! daemon), printed like a terminal would show it. The shell ends with the
//! command, so its statuses are told as a one-shot shell's: a shell that
//! exits is the command exiting (its code, no restart), and a command that
//! waits for input is ended, since nothing can answer it.

use anyhow::{Context, Result};
use tether_shell::{RunOptions, Session, SessionOptions, Status};

use crate::cli::RunArgs;
use crate::result_out;

/// Runs the command; returns the exit code to exit with.
pub fn run(args: RunArgs) -> Result<i32> {
    if crate::session_cmd::host_flags_given(&args) {
        anyhow::bail!(crate::session_cmd::SSH_FLAGS_WITHOUT_HOST);
    }
    let timeout = tether_shell::Timeout::from_secs("--timeout", args.timeout)?;
    let command = crate::session_cmd::command_text(&args)?;
    let stdin = crate::session_cmd::piped_stdin(&args)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    runtime.block_on(run_async(args, timeout, &command, stdin))
}

async fn run_async(
    args: RunArgs,
    timeout: tether_shell::Timeout,
    command: &str,
    stdin: Option<Vec<u8>>,
) -> Result<i32> {
    // The engine's default dialect unless one is named (clap took only
    // the engine's names).
    let defaults = SessionOptions::default();
    let dialect = match &args.shell {
        Some(name) => tether_shell::dialect::by_name(name).context("unknown shell")?,
        None => defaults.dialect.clone(),
    };
    // The daemon's private directory, by the same rules (created 0700 or
    // proven private); the session's own is `sessions/ID` in it, removed
    // when the session drops (but for a spill file the result names).
    let paths = tether_daemon::Paths::from_env();
    paths.ensure_private()?;
    let opts = SessionOptions {
        dialect,
        run_rc_files: !args.norc,
        arm_nested: !args.no_nested,
        spill_cap: crate::daemon_cmd::spill_cap()?,
        confine: crate::session_cmd::run_confinement(&args)?.unwrap_or_default(),
        hide: vec![paths.dir.clone()],
        confine_helper: std::env::current_exe().ok(),
        runtime_dir: Some(paths.dir),
        ..defaults
    };
    let mut session = Session::start(opts)
        .await
        .context("the shell did not start")?;
    let run = RunOptions {
        timeout: timeout.duration(),
        output_limit: args.output_limit,
        stdin,
        ..RunOptions::default()
    };
    let mut result = session.run(command, &run).await?;
    // No command follows: the shell's exit is the command's exit.
    if result.status == Status::ShellExited {
        result.status = Status::Exited;
    }
    let waited = result.status == Status::WaitingForInput;
    let shaped = tether_daemon::ops::shell_result("once", None, result.clone());
    let note = if waited {
        Some(WAITED.to_owned())
    } else {
        result_out::note(&shaped)
    };
    let code = result_out::print_noted(&shaped, args.json, note)?;
    // The spill file named above outlives the session.
    if result.truncated.is_some() {
        session.keep_spill_files();
    }
    Ok(code)
}

/// The note for a command that blocked reading its terminal.
const WAITED: &str = "the command waited for input on its terminal and was ended: with --once \
nothing can be sent to it. Pipe its input to tether's stdin, or run it in a session (without \
--once) to answer it there";
