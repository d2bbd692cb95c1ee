//! The session commands (`run`, `send`, `read`, `signal`, `screen`,
//! `reset`, `close`, `ls`): one request each to the daemon, whose answer is
//! printed. The checks and messages live in the daemon, shared with MCP.

use std::io::Write;

use std::io::IsTerminal;

use anyhow::{Context, Result, bail};
use serde::Serialize;
use serde::de::DeserializeOwned;
use tether_daemon::protocol::{
    CloseReply, Create, ListReply, MAX_STDIN, OnTimeout, Request, ResetReply, ScreenReply,
    SessionState, ShellResult,
};

use crate::cli::{LsArgs, ReadArgs, RunArgs, SendArgs, SessionArg, SignalArgs};
use crate::daemon_cmd;
use crate::result_out::{self, shown};

fn call<T: DeserializeOwned>(request: &Request) -> Result<T> {
    let mut client = daemon_cmd::connect()?;
    Ok(client.request(request)?)
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

/// The command's stdin: tether's own when it is a pipe, a file or a socket
/// (read to its end, at most [`MAX_STDIN`] bytes, else an error and nothing
/// runs); `None` when it is a terminal, a device such as /dev/null, closed,
/// or `--no-stdin`: the command then reads the session's terminal.
pub fn piped_stdin(args: &RunArgs) -> Result<Option<Vec<u8>>> {
    use std::io::Read;
    use std::os::unix::fs::FileTypeExt;
    let stdin = std::io::stdin();
    if args.no_stdin || stdin.is_terminal() {
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
    if !(args.timeout.is_finite() && args.timeout > 0.0) {
        bail!(
            "--timeout must be a positive number of seconds, got {}",
            args.timeout
        );
    }
    let stdin = piped_stdin(&args)?;
    let cwd = std::env::current_dir()
        .ok()
        .map(|d| d.display().to_string());
    let session = args
        .session
        .or_else(|| args.host.clone())
        .unwrap_or_else(|| "main".to_owned());
    let request = Request::Run {
        session,
        command: args.command.join(" "),
        host: args.host,
        timeout_s: args.timeout,
        on_timeout: if args.keep {
            OnTimeout::Keep
        } else {
            OnTimeout::Interrupt
        },
        output_limit: args.output_limit,
        workdir: None,
        create: Create {
            shell: args.shell.map(|s| s.name().to_owned()),
            norc: args.norc,
            cwd,
            env: Some(std::env::vars().collect()),
        },
        stdin,
    };
    print_result(&request, args.json)
}

pub fn send(args: SendArgs) -> Result<i32> {
    let request = Request::Send {
        session: args.session,
        input: args.input,
        keys: args.keys,
        wait_s: args.wait,
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
        println!("{}", v.screen.trim_end_matches('\n'));
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
fn acknowledged<T: DeserializeOwned + Serialize>(
    request: Request,
    json: bool,
    note: &str,
) -> Result<i32> {
    let v: T = call(&request)?;
    if json {
        print_json(&v)?;
    } else {
        eprintln!("tether: {note}");
    }
    Ok(0)
}

pub fn ls(args: LsArgs) -> Result<i32> {
    let v: ListReply = call(&Request::List { all: true })?;
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
        "{:<28} {:<8} {:<6} {:<16} {:<4} CWD",
        "SESSION", "SHELL", "STATE", "FOREGROUND", "ATT"
    )?;
    // Everything from session data is escaped: a name, a cwd or a
    // program's name cannot drive the terminal.
    for s in sessions {
        let fg = s.foreground.map_or_else(
            || "-".to_owned(),
            |f| format!("{}[{}]", shown(&f.command), f.pid),
        );
        let cwd = s.cwd.unwrap_or_default();
        let cwd = match &s.host {
            Some(host) => format!("{}:{}", shown(host), shown(&cwd)),
            None => shown(&cwd).into_owned(),
        };
        writeln!(
            out,
            "{:<28} {:<8} {:<6} {:<16} {:<4} {}",
            shown(&s.address),
            shown(&s.dialect),
            match s.state {
                SessionState::Idle => "idle",
                SessionState::Busy => "busy",
            },
            fg,
            s.attached,
            cwd
        )?;
    }
    Ok(0)
}
