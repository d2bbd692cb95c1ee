//! The session commands (`run`, `send`, `read`, `signal`, `screen`,
//! `reset`, `close`, `ls`): one request each to the daemon, whose answer is
//! printed. The checks and messages live in the daemon, shared with MCP.

use std::io::IsTerminal;
use std::io::Write;
use std::path::Path;

use anyhow::{Context, Result, bail};
use serde::Serialize;
use tether_daemon::protocol::ReplyKind;
use tether_daemon::protocol::{
    CloseReply, Create, ListReply, MAX_STDIN, OnTimeout, Request, ResetReply, ScreenReply,
    SessionState, ShellResult,
};

use crate::cli::{LsArgs, ReadArgs, RunArgs, SendArgs, SessionArg, SignalArgs};
use crate::daemon_cmd;
use crate::result_out::{self, shown};

fn call<T: ReplyKind>(request: &Request) -> Result<T> {
    let mut conn = tether_daemon::Conn::new(Box::new(daemon_cmd::connect));
    Ok(conn.request(request)?)
}

fn print_result(request: &Request, json: bool) -> Result<i32> {
    let r: ShellResult = call(request)?;
    result_out::print(&r, json)
}

fn print_json(value: &impl Serialize) -> Result<()> {
    let mut out = std::io::stdout().lock();
    serde_json::to_writer_pretty(&mut out, value)?;
    out.write_all(b"\n")?;
    Ok(())
}

/// The text of `-f FILE` (`-`: standard input): UTF-8, at most
/// [`MAX_STDIN`] bytes. `what` names it in errors; the text never appears
/// in one.
pub fn text_from(file: &Path, what: &str) -> Result<String> {
    use std::io::Read;
    let stdin = file == Path::new("-");
    let source = if stdin {
        "standard input (-f -)".to_owned()
    } else {
        file.display().to_string()
    };
    let mut bytes = Vec::new();
    let limit = MAX_STDIN as u64 + 1;
    let read = if stdin {
        std::io::stdin().lock().take(limit).read_to_end(&mut bytes)
    } else {
        std::fs::File::open(file).and_then(|f| f.take(limit).read_to_end(&mut bytes))
    };
    read.with_context(|| {
        format!("cannot read the {what} from {source}; nothing was run (give -f a readable file, or - for standard input)")
    })?;
    if bytes.len() > MAX_STDIN {
        bail!(
            "the {what} in {source} has more than {} MiB; nothing was run",
            MAX_STDIN >> 20
        );
    }
    String::from_utf8(bytes).map_err(|e| {
        anyhow::anyhow!(
            "the {what} in {source} is not UTF-8 text (byte {} is not); nothing was run",
            e.utf8_error().valid_up_to()
        )
    })
}

/// The command `run` runs: from `-f FILE`, else the words after `--`.
pub fn command_text(args: &RunArgs) -> Result<String> {
    let Some(file) = &args.file else {
        return Ok(args.command.join(" "));
    };
    let text = text_from(file, "command")?;
    if text.trim().is_empty() {
        bail!(
            "the command in {} is empty; nothing was run",
            file.display()
        );
    }
    Ok(text)
}

/// The command's stdin: tether's own when it is a pipe, a file or a socket
/// (read to its end, at most [`MAX_STDIN`] bytes, else an error and nothing
/// runs); `None` when it is a terminal, a device such as /dev/null, closed,
/// `--no-stdin`, or the command's text (`-f -`): the command then reads
/// the session's terminal.
pub fn piped_stdin(args: &RunArgs) -> Result<Option<Vec<u8>>> {
    use std::io::Read;
    use std::os::unix::fs::FileTypeExt;
    let stdin = std::io::stdin();
    let is_command = args.file.as_deref() == Some(Path::new("-"));
    if args.no_stdin || is_command || stdin.is_terminal() {
        return Ok(None);
    }
    // fstat of fd 0 through /proc: no unsafe, and no path of our own.
    let Ok(meta) = std::fs::metadata("/proc/self/fd/0") else {
        return Ok(None);
    };
    let kind = meta.file_type();
    if !(kind.is_fifo() || kind.is_file() || kind.is_socket()) {
        return Ok(None);
    }
    let mut bytes = Vec::new();
    let limit = MAX_STDIN as u64 + 1;
    stdin
        .lock()
        .take(limit)
        .read_to_end(&mut bytes)
        .context("cannot read stdin")?;
    if bytes.len() > MAX_STDIN {
        bail!(
            "stdin has more than the {} MiB a command may be given; nothing was run (pass a file path instead, or --no-stdin)",
            MAX_STDIN >> 20
        );
    }
    Ok(Some(bytes))
}

/// `tether run` through the daemon.
pub fn run(args: RunArgs) -> Result<i32> {
    // Refused here, before stdin is read, with the flag's name.
    tether_shell::Timeout::from_secs("--timeout", args.timeout)?;
    // The host is resolved here, with this process's files and flags.
    let host = match &args.host {
        Some(name) => Some(crate::host_route::single(name, &args.ssh, args.far)?),
        None if host_flags_given(&args) => anyhow::bail!("{SSH_FLAGS_WITHOUT_HOST}"),
        None => None,
    };
    let confine = run_confinement(&args)?;
    let command = command_text(&args)?;
    let stdin = piped_stdin(&args)?;
    let cwd = std::env::current_dir()
        .ok()
        .map(|d| d.display().to_string());
    let session = tether_daemon::protocol::run_session(args.session, args.host.as_deref());
    let request = Request::Run {
        session: session.clone(),
        command,
        host,
        timeout_s: args.timeout,
        on_timeout: if args.keep {
            OnTimeout::Keep
        } else {
            OnTimeout::Interrupt
        },
        output_limit: args.output_limit,
        workdir: None,
        create: Create {
            shell: args.shell,
            norc: args.norc,
            no_nested: args.no_nested,
            cwd,
            env: Some(std::env::vars().collect()),
            confine,
        },
        stdin,
        follow: false,
        pieces: false,
        call: None,
    };
    let r = crate::run_interrupt::call(&session, &request)?;
    result_out::print(&r, args.json)
}

/// The confinement `tether run` asks for: its flags over the config's
/// `[confine]`, which applies to local sessions only (`--confine` with
/// `--host` is applied by the host's tether).
pub fn run_confinement(args: &RunArgs) -> Result<Option<tether_confine::Confine>> {
    let config = crate::confine_args::from_config()?;
    let config = config.as_ref().filter(|_| args.host.is_none());
    args.confine.resolve(config)
}

/// The refusal of SSH flags given without a host.
pub const SSH_FLAGS_WITHOUT_HOST: &str =
    "-l, -p, -i, -J, -F, -o and --agentless say how to reach --host HOST; name the host";

/// Any flag about the host was given (they all need `--host`).
pub fn host_flags_given(args: &RunArgs) -> bool {
    ssh_flags_given(&args.ssh) || args.far.agentless
}

/// The host a command names with `--host` (`tether ls`, `tether
/// attach`), resolved with its SSH flags; the flags without a host are
/// refused.
pub fn named_host(
    host: Option<&str>,
    ssh: &crate::ssh_opts::SshArgs,
) -> Result<Option<tether_daemon::protocol::HostRoute>> {
    match host {
        Some(name) => Ok(Some(crate::host_route::single(
            name,
            ssh,
            Default::default(),
        )?)),
        None if ssh_flags_given(ssh) => anyhow::bail!("{SSH_FLAGS_WITHOUT_HOST}"),
        None => Ok(None),
    }
}

/// Any of the SSH flags was given.
pub fn ssh_flags_given(ssh: &crate::ssh_opts::SshArgs) -> bool {
    ssh.user.is_some()
        || ssh.port.is_some()
        || ssh.jump.is_some()
        || ssh.ssh_config.is_some()
        || !ssh.identities.is_empty()
        || !ssh.options.is_empty()
        || ssh.ipv4
        || ssh.ipv6
}

pub fn send(args: SendArgs) -> Result<i32> {
    let input = match &args.file {
        Some(file) => Some(text_from(file, "input")?),
        None => args.input,
    };
    let request = Request::Send {
        session: args.session,
        input,
        keys: args.keys,
        wait_s: args.wait,
        only_if_waiting: false,
        now: false,
    };
    print_result(&request, args.json)
}

pub fn read(args: ReadArgs) -> Result<i32> {
    let request = Request::Read {
        session: args.session,
        wait_s: args.wait,
    };
    print_result(&request, args.json)
}

pub fn signal(args: SignalArgs) -> Result<i32> {
    let request = Request::Signal {
        session: args.session,
        signal: args.signal.name().to_owned(),
    };
    print_result(&request, args.json)
}

pub fn screen(args: SessionArg) -> Result<i32> {
    let v: ScreenReply = call(&Request::Screen {
        session: args.session,
    })?;
    if args.json {
        print_json(&v)?;
    } else {
        outln!("{}", v.screen.trim_end_matches('\n'));
    }
    Ok(0)
}

pub fn reset(args: SessionArg) -> Result<i32> {
    let note = format!("session {} restarted", shown(&args.session));
    acknowledged::<ResetReply>(
        Request::Reset {
            session: args.session,
        },
        args.json,
        &note,
    )
}

pub fn close(args: SessionArg) -> Result<i32> {
    let note = format!("session {} closed", shown(&args.session));
    acknowledged::<CloseReply>(
        Request::Close {
            session: args.session,
        },
        args.json,
        &note,
    )
}

/// A request whose answer is only an acknowledgement: printed as JSON, or
/// as a note on stderr.
fn acknowledged<T: ReplyKind + Serialize>(request: Request, json: bool, note: &str) -> Result<i32> {
    let v: T = call(&request)?;
    if json {
        print_json(&v)?;
    } else {
        eprintln!("tether: {note}");
    }
    Ok(0)
}

pub fn ls(args: LsArgs) -> Result<i32> {
    let request = match named_host(args.host.as_deref(), &args.ssh)? {
        Some(host) => Request::ListOn { host, all: true },
        None => Request::List { all: true },
    };
    let v: ListReply = call(&request)?;
    if args.json {
        print_json(&v)?;
        return Ok(0);
    }
    let sessions = v.sessions;
    if sessions.is_empty() {
        eprintln!("tether: no sessions");
        return Ok(0);
    }
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "{:<28} {:<8} {:<6} {:<13} {:<16} {:<4} CWD",
        "SESSION", "SHELL", "STATE", "CONFINED", "FOREGROUND", "ATT"
    )?;
    // Everything from session data is escaped: a name, a cwd or a
    // program's name cannot drive the terminal.
    for s in sessions {
        let fg = s.foreground.map_or_else(
            || "-".to_owned(),
            |f| format!("{}[{}]", shown(&f.command), f.pid),
        );
        // The mode, and `+net` with a network allowlist.
        let confined = s.confinement.as_ref().map_or_else(
            || "-".to_owned(),
            |c| {
                let net = if c.allow_net.is_empty() { "" } else { "+net" };
                format!("{}{net}", c.mode.name())
            },
        );
        let cwd = s.cwd.unwrap_or_default();
        let cwd = match &s.host {
            Some(host) => format!("{}:{}", shown(host), shown(&cwd)),
            None => shown(&cwd).into_owned(),
        };
        writeln!(
            out,
            "{:<28} {:<8} {:<6} {:<13} {:<16} {:<4} {}",
            shown(&s.address),
            shown(&s.dialect),
            match s.state {
                SessionState::Idle => "idle",
                SessionState::Busy => "busy",
                SessionState::Lost => "lost",
                SessionState::OnHost => "on host",
            },
            confined,
            fg,
            s.attached,
            cwd
        )?;
    }
    Ok(0)
}
