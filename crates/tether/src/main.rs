//! The `tether` binary: a thin command line over the library crates.

use std::process::ExitCode;

use anyhow::Result;
use clap::{CommandFactory, Parser};

mod allocator;
mod attach_cmd;
mod cli;
mod cp_cmd;
mod cp_output;
mod daemon_cmd;
mod exec_cmd;
mod exec_output;
mod fleet_cmd;
mod interactive;
mod local_term;
mod mcp;
mod node_shell;
mod remote_hosts;
mod result_out;
mod run_cmd;
mod run_interrupt;
mod session_cmd;
mod ssh_cmd;
mod ssh_forward;
mod ssh_front;
mod ssh_opts;
mod ssh_remote_command;
mod ssh_show;
mod term_cmd;
mod tty_prompt;

fn main() -> ExitCode {
    allocator::keep_freed_memory();
    let cli = cli::Cli::parse();
    match dispatch(cli.command) {
        Ok(code) => ExitCode::from(u8::try_from(code).unwrap_or(u8::MAX)),
        Err(e) => {
            // Messages may quote session data: escaped for the terminal.
            let message = format!("{e:#}");
            eprintln!(
                "tether: {}",
                tether_term::printable::escaped(&message, true)
            );
            ExitCode::from(u8::try_from(result_out::TETHER_FAILED).unwrap_or(u8::MAX))
        }
    }
}

/// `tether hosts`: the node set, expanded, folded or counted.
fn hosts_cmd(args: cli::HostsArgs) -> Result<i32> {
    let config = ssh_opts::load_config(args.config.as_deref())?;
    let mut set = tether_cluster::NodeSet::new();
    for expr in &args.sets {
        set.union(&config.nodes(expr)?);
    }
    if args.expand {
        println!("{}", set.names().join(" "));
    } else if args.count {
        println!("{}", set.len());
    } else {
        println!("{}", set.fold());
    }
    Ok(0)
}

fn dispatch(command: cli::Command) -> Result<i32> {
    use cli::Command as C;
    match command {
        C::Run(args) if args.once => run_cmd::run(args),
        C::Run(args) => session_cmd::run(args),
        C::Send(args) => session_cmd::send(args),
        C::Read(args) => session_cmd::read(args),
        C::Signal(args) => session_cmd::signal(args),
        C::Screen(args) => session_cmd::screen(args),
        C::Reset(args) => session_cmd::reset(args),
        C::Close(args) => session_cmd::close(args),
        C::Ls(args) => session_cmd::ls(args),
        C::Attach(args) => attach_cmd::run(args),
        C::Daemon(args) => daemon_cmd::run(args.action),
        C::Hosts(args) => hosts_cmd(args),
        C::Exec(args) => exec_cmd::run(*args),
        C::Cp(args) => cp_cmd::run(*args),
        C::Ssh(args) => ssh_cmd::run(*args),
        C::Shell(args) => node_shell::run(*args),
        C::Completions(args) => {
            let mut cmd = cli::Cli::command();
            clap_complete::generate(args.shell, &mut cmd, "tether", &mut std::io::stdout());
            Ok(0)
        }
        C::Term(args) => term_cmd::run(args).map(|()| 0),
        C::Mcp(args) => {
            // One thread: a call's request, the daemon's reply and the
            // JSON-RPC lines pass between tasks of one thread, not across
            // threads (exec_hosts, which computes, has a runtime of its
            // own).
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?;
            let server = mcp::TetherMcp::new(tether_daemon::Paths::from_env(), args.norc);
            runtime.block_on(mcp::serve(server))?;
            // Calls still waiting on the daemon are not waited for: the
            // client is gone, and the daemon ends this server's sessions
            // when its lease closes with the process.
            runtime.shutdown_background();
            Ok(0)
        }
    }
}
