//! The `tether` binary: a thin command line over the library crates. The
//! front-ends live here and hold no logic another front-end would need.
//!
//! - `cli.rs`: the clap command line (`FleetArgs` and `FailureArgs` shared
//!   by `exec` and `cp`). `main.rs`: dispatch, `tether hosts`, error
//!   messages escaped for the terminal.
//! - Sessions: `session_cmd.rs` makes each session command one daemon
//!   request (`run -f`/`send -f` read the command or input from a file or
//!   stdin); `result_out.rs` prints results and exit codes, escaping
//!   session data; `run_interrupt.rs` is Ctrl-C on a waiting `tether run`;
//!   `run_cmd.rs` is `run --once`, in process; `daemon_cmd.rs`
//!   serve/start/stop/status and the on-demand launcher; `daemon_host.rs`
//!   `ensure` and `relay`, what a tether elsewhere runs on this host.
//! - People: `interactive/` is the bridge every door for people shares (the
//!   person's keys read on the runtime, `keys.rs`; the far end as the
//!   `FarEnd` trait, `far.rs`; what differs as `Settings`), over
//!   `local_term.rs` (raw mode, capture, tracked writes, restore on drop,
//!   given back and taken again around `~^Z`). `attach_cmd.rs` makes the
//!   daemon's attach frames a far end; `ssh_cmd.rs` makes a remote PTY one
//!   (`tether ssh`), or runs a command's exec channel with its streams
//!   apart. `ssh_front.rs` decides from the flags and the resolved
//!   ssh_config (`-Q`, `-c/-m`, the terminal, `-tt`, `-n`, `-q`/`-v`,
//!   LocalCommand; `-M/-S/-O` refused); `ssh_show.rs` is `-G`;
//!   `ssh_remote_command.rs` runs RemoteCommand when no command is given;
//!   `ssh_forward.rs` turns `-L/-R/-D/-W/-N/-f/-g` and the forwarding
//!   options into a plan, sets the forwards up before the session, and
//!   runs `-f` as a detached copy of itself that reports ready on a private
//!   socket.
//! - `ssh_opts.rs`: the one owner of SSH connection settings (`SshArgs`:
//!   `-l -p -i -J -o -F`, flattened into `exec`, `ssh` and `cp`, whose port
//!   is `-P` as in scp); tether's config and `~/.ssh/config` found by one
//!   function each; `overrides` makes the executor's `Overrides` for
//!   `exec`, `cp`, `ssh`, the daemon's hosts and MCP's `exec_hosts`.
//!   `host_route.rs` resolves a host for the daemon (`run --host`, `tether
//!   shell`'s nodes, MCP's `host`) in the caller's process, as `exec` would,
//!   into the `HostRoute` a `run` request carries, with its far side's
//!   settings (`--agentless`, the one flag of `run`, `shell` and `mcp`
//!   that `exec`, `cp` and `ssh` do not take, over the config's `deploy`
//!   and `tether_path`); `remote_hosts.rs` gives
//!   the daemon its `HostPool`, which connects with that route as given. `tty_prompt.rs` reads secrets on
//!   `/dev/tty`.
//! - Fleets: `fleet_cmd.rs` is what `exec` and `cp` share (hosts, config,
//!   resolver, runtime, Ctrl-C once to name the running hosts and twice to
//!   cancel, the tally, `--fail-fast`, the exit code); `exec_cmd.rs` and
//!   `exec_output.rs` (stream, gather, json, dir, diff); `host_text.rs`
//!   (hosts' bytes on a terminal shown escaped, on a pipe exact, `--raw`:
//!   what every printer of host output goes through); `exec_view/` (the
//!   live view, `--tui`: its model, ratatui drawing, keys); `cp_cmd.rs` (operands,
//!   scp's rule for what is remote, the push's plan walked before any host
//!   is reached) and `cp_output.rs`; `ping_cmd.rs` (`tether ping`, as
//!   bssh's); `pdsh_cmd.rs` (pdsh's command line, as `tether pdsh` and
//!   through a link named `pdsh`).
//! - Confined sessions: `confine_args.rs` (the `--confine` flags over the
//!   config's `[confine]`, and an MCP agent's floor); `confine_exec.rs`
//!   (`tether confine-exec`, run by bubblewrap inside the fence: Landlock,
//!   the allowlist's forwarder, the seccomp filter of `seccomp.rs`, then
//!   the shell).
//! - `node_shell/`: `tether shell`, many nodes at one prompt (see its
//!   module doc).
//! - `mcp/`: the MCP server, the only user of `rmcp` (pinned `=3.11.0`):
//!   tool parameters and the text rendering (`shape.rs`), schemas with only
//!   JSON Schema's formats (`schema.rs`), the tools as daemon requests on a
//!   current-thread runtime and pooled connections (`mod.rs`),
//!   `exec_hosts.rs` on a runtime of its own, and the stdio guard
//!   (`stdio.rs`: stdin read in bounded chunks, malformed JSON-RPC lines
//!   answered here, lines up to 64 MiB).
//! - `stdout.rs`: printing as coreutils do (`outln!`/`out!`): a closed
//!   pipe ends tether quietly with 141, a full disk with one line.
//! - `term_cmd.rs`: `tether term`, a recorded byte stream through
//!   `tether-term`. `allocator.rs`: glibc keeps up to 8 MiB freed at a
//!   heap's top (the workspace's other `unsafe` block, a `mallopt`).

use std::process::ExitCode;

use anyhow::Result;
use clap::{CommandFactory, Parser};

/// `println!` through [`stdout`]: a closed pipe ends tether quietly.
macro_rules! outln {
    () => {
        $crate::stdout::print(format_args!("\n"))
    };
    ($($arg:tt)*) => {
        $crate::stdout::print(format_args!("{}\n", format_args!($($arg)*)))
    };
}

/// `print!` through [`stdout`].
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::stdout::print(format_args!($($arg)*))
    };
}

mod allocator;
mod attach_cmd;
mod cli;
mod confine_args;
mod confine_exec;
mod cp_cmd;
mod cp_output;
mod daemon_cmd;
mod daemon_host;
mod exec_cmd;
mod exec_output;
mod exec_view;
mod fleet_cmd;
mod host_route;
mod host_text;
mod interactive;
mod local_term;
mod mcp;
mod node_shell;
mod pdsh_cmd;
mod ping_cmd;
mod remote_hosts;
mod result_out;
mod run_cmd;
mod run_interrupt;
mod seccomp;
mod session_cmd;
mod ssh_cmd;
mod ssh_forward;
mod ssh_front;
mod ssh_keep;
mod ssh_opts;
mod ssh_remote_command;
mod ssh_show;
mod stdout;
mod sudo_args;
mod term_cmd;
mod tty_prompt;

fn main() -> ExitCode {
    allocator::keep_freed_memory();
    let ran = if pdsh_cmd::called_as_pdsh() {
        pdsh_cmd::run(parsed::<pdsh_cmd::PdshCli>().args)
    } else {
        dispatch(parsed::<cli::Cli>().command)
    };
    match ran {
        Ok(code) => ExitCode::from(u8::try_from(code).unwrap_or(u8::MAX)),
        Err(e) if stdout::closed_pipe(&e) => {
            ExitCode::from(u8::try_from(stdout::CLOSED_PIPE).unwrap_or(u8::MAX))
        }
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

/// The command line, parsed; `--help` and `--version` are printed through
/// [`stdout`] (a closed pipe or a full disk is told as for any output),
/// other mistakes as clap says them.
fn parsed<P: Parser>() -> P {
    match P::try_parse() {
        Ok(p) => p,
        Err(e) if !e.use_stderr() => {
            stdout::write_all(e.render().ansi().to_string().as_bytes());
            std::process::exit(0)
        }
        Err(e) => e.exit(),
    }
}

/// `tether hosts`: the node set, expanded, folded or counted.
fn hosts_cmd(args: cli::HostsArgs) -> Result<i32> {
    let config = ssh_opts::load_config(args.config.as_deref())?;
    if args.list_groups || args.list_clusters {
        if args.list_clusters && !args.sets.is_empty() {
            anyhow::bail!("--list-clusters takes no node set");
        }
        use std::io::Write;
        let mut out = std::io::stdout().lock();
        if args.list_groups {
            let only = if args.sets.is_empty() {
                None
            } else {
                let mut set = tether_cluster::NodeSet::new();
                for expr in &args.sets {
                    set.union(&config.nodes(expr)?);
                }
                Some(set)
            };
            let rows = config.list_groups(only.as_ref());
            if rows.is_empty() && only.is_none() {
                eprintln!(
                    "tether: no source defines a group (tether's [groups], ClusterShell's groups.conf)"
                );
            }
            for row in rows {
                let (size, nodes) = match &row.nodes {
                    Ok(set) => (set.len().to_string(), set.fold()),
                    Err(e) => ("error".to_owned(), e.clone()),
                };
                let name = row.name.as_deref().unwrap_or("-");
                writeln!(out, "{name}\t{size}\t{}\t{nodes}", row.source)?;
            }
            return Ok(0);
        }
        let list = config.list_clusters();
        if list.is_empty() {
            eprintln!("tether: the config defines no clusters");
        }
        for (name, size, nodes) in list {
            let size = size.map_or_else(|e| format!("error: {e}"), |n| n.to_string());
            writeln!(out, "{name}\t{size}\t{nodes}")?;
        }
        return Ok(0);
    }
    let mut set = tether_cluster::NodeSet::new();
    for expr in &args.sets {
        set.union(&config.nodes(expr)?);
    }
    let set = config.narrowed(set, args.narrow.narrow())?;
    if args.expand {
        outln!("{}", set.names().join(" "));
    } else if args.count {
        outln!("{}", set.len());
    } else {
        outln!("{}", set.fold());
    }
    Ok(0)
}

fn dispatch(command: cli::Command) -> Result<i32> {
    use cli::Command as C;
    match command {
        C::Run(args) if args.once => run_cmd::run(*args),
        C::Run(args) => session_cmd::run(*args),
        C::ConfineExec(args) => confine_exec::run(args),
        C::ConfineForward(args) => confine_exec::forward(args),
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
        C::Ping(args) => ping_cmd::run(*args),
        C::Pdsh(args) => pdsh_cmd::run(*args),
        C::Cp(args) => cp_cmd::run(*args),
        C::Ssh(args) => ssh_cmd::run(*args),
        C::Shell(args) => node_shell::run(*args),
        C::Completions(args) => {
            let mut cmd = cli::Cli::command();
            let mut script = Vec::new();
            clap_complete::generate(args.shell, &mut cmd, "tether", &mut script);
            stdout::write_all(&script);
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
            let floor = args
                .confine
                .resolve(crate::confine_args::from_config()?.as_ref())?
                .unwrap_or_default();
            let server =
                mcp::TetherMcp::new(tether_daemon::Paths::from_env(), args.norc, args.far, floor);
            runtime.block_on(mcp::serve(server))?;
            // Calls still waiting on the daemon are not waited for: the
            // client is gone, and the daemon ends this server's sessions
            // when its lease closes with the process.
            runtime.shutdown_background();
            Ok(0)
        }
    }
}
