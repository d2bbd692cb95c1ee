//! `tether ssh [user@]host [command]`: one host, as `ssh` does it. With a
//! terminal (the login shell, or `-t`), the person's terminal is bridged
//! to a remote PTY (`interactive`: raw mode, the capture and the exact
//! restore on every way out, `~.` and the other escapes); the remote
//! program's queries reach the person's terminal and its answers go back,
//! as with ssh. Without one (a command, or `-T`), stdin, stdout and stderr
//! stay apart. The remote exit status is tether's.

use std::io::Write;
use std::sync::Arc;

use anyhow::{Context, Result, anyhow, bail};
use tether_cluster::exec::{self, HostSpec, Overrides};
use tether_ssh::{Connection, Event, Input, PtyChannel, PtyEvent, PtyRequest};
use tether_transport::{ExitInfo, TermSize};
use tokio::sync::mpsc;

use crate::cli::SshCmdArgs;
use crate::interactive::{Bridge, FarEnd, FarEvent, Gone, LOST, Settings, ToFar};
use crate::local_term::{self, LocalTerminal};
use crate::ssh_forward;
use crate::ssh_opts;
use tether_ssh::forward::Forwards;

/// ssh's `-e`: one character, `^X` for a control character, or `none`.
fn escape_char(arg: &str) -> Result<Option<u8>> {
    match arg.as_bytes() {
        b"none" => Ok(None),
        [c] if c.is_ascii() && !c.is_ascii_control() => Ok(Some(*c)),
        [b'^', c] if (b'@'..=b'_').contains(&c.to_ascii_uppercase()) => {
            Ok(Some(c.to_ascii_uppercase() - b'@'))
        }
        _ => bail!("-e {arg:?}: give one character, ^X for a control character, or none"),
    }
}

/// Exit code when tether or the connection failed, or after `~.`.
const FAILED: i32 = 255;

pub fn run(mut args: SshCmdArgs) -> Result<i32> {
    if args.keep {
        return crate::ssh_keep::run(args);
    }
    crate::ssh_front::refuse_sharing(&args)?;
    if let Some(q) = &args.query {
        return crate::ssh_front::query(q);
    }
    // `-G` prints some of them as typed.
    let typed = args.ssh.options.clone();
    let from_options = ssh_forward::take_options(&mut args.ssh.options)?;
    let config = ssh_opts::load_config(None)?;
    let mut spec = HostSpec::parse(args.destination.as_deref().unwrap_or_default())?;
    let base = Overrides {
        secrets: Some(tether_ssh::Secrets::new(
            Arc::new(crate::tty_prompt::TtyPrompter),
            false,
        )),
        runs_remote_command: true,
        ..Overrides::default()
    };
    let mut ov = ssh_opts::overrides(&args.ssh, base, &config.defaults)?;
    crate::ssh_front::algorithm_flags(&args, &mut ov)?;
    // As ssh: the first of -l and -o User typed, else user@.
    let argv = std::env::args().skip_while(|a| a != "ssh").skip(1);
    if let Some(user) = crate::ssh_front::first_user(argv) {
        spec.user = None;
        ov.user = Some(user);
    }
    let cfg = crate::ssh_front::host_config(&spec, &ov)?;
    let plan = ssh_forward::plan(&args, from_options, &cfg)?;
    let (target, mut opts) = exec::resolve(&spec, &ov, false).map_err(|e| anyhow!("{e}"))?;
    if args.print_config {
        let agent = (args.forward_agent || args.no_agent).then_some(args.forward_agent);
        let mut decided = ssh_forward::shown(&plan);
        decided.extend(crate::ssh_show::command_line_keys(&ov, &cfg, agent));
        decided.extend(crate::ssh_show::typed_options(&typed, &cfg));
        // As `ssh -G`: ServerAliveInterval as ssh_config and `-o` set it
        // (0 when neither does); tether's own default keepalive (15 × 3,
        // the README's) is not an ssh_config setting.
        if ov.alive_interval.is_none() && cfg.server_alive_interval.is_none() {
            decided.push(("serveraliveinterval", "0".to_owned()));
        }
        out!(
            "{}",
            crate::ssh_show::render(&spec.host, &cfg, &target, &opts, &decided)
        );
        return Ok(0);
    }
    let command = crate::ssh_remote_command::command(&args.command, &cfg)?;
    if plan.no_command && command.is_some() {
        bail!("-N (SessionType none) runs no command: leave out the command, or -N");
    }
    if plan.stdio.is_some() && command.is_some() {
        bail!("-W forwards stdin and stdout and runs no command: leave out the command, or -W");
    }
    let no_session = plan.no_command || plan.stdio.is_some();
    if plan.background && command.is_none() && !no_session {
        bail!("-f needs a command to run in the background, or -N (only forward)");
    }
    if plan.background && !ssh_forward::is_background_copy() {
        return ssh_forward::background();
    }
    let voice = crate::ssh_front::Voice::of(&args, &cfg);
    if let Some(file) = &ov.config {
        voice.step(&format!("reading ssh_config {}", file.display()));
    }
    cfg.notes.iter().for_each(|n| voice.step(n));
    // A dead link is noticed within the keepalive budget, not only when
    // the person next types: `exec::resolve` gives 15 × 3 when nothing
    // sets it (`ServerAliveInterval 0` turns it off, as OpenSSH's).
    if args.forward_agent || args.no_agent {
        opts.forward_agent = tether_ssh::agent_socket(if args.no_agent { "no" } else { "yes" })
            .map_err(|e| anyhow!("{e}"))?;
    }
    if voice.verbose {
        opts.steps = Some(tether_ssh::Steps(Arc::new(move |line: &str| {
            voice.step(line)
        })));
    }
    let escape = escape_char(crate::ssh_front::escape(&args, &cfg))?;
    let stdin_null = args.stdin_null || cfg.stdin_null == Some(true);
    let mode = if no_session {
        crate::ssh_front::Tty::None
    } else {
        crate::ssh_front::tty(&args, &cfg, command.is_none(), stdin_null, voice)
    };
    let tty = mode != crate::ssh_front::Tty::None;
    // One thread for an interactive session: a keystroke and its echo
    // cross no thread but the stdin reader's (a multi-thread runtime added
    // two wake-ups per key: docs/BENCHMARKS.md, interactive use). Secrets
    // are asked on `spawn_blocking`, which this runtime has too. Forwards
    // move bulk data: two workers.
    let runtime = if plan.specs.is_empty() && plan.stdio.is_none() {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
    } else {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
    }
    .context("cannot start the async runtime")?;
    let host = spec.name.clone();
    let quiet = voice.quiet;
    let code = runtime.block_on(async move {
        voice.step(&format!(
            "connecting to {} port {} as {}",
            target.hostname, target.port, target.user
        ));
        // tether-ssh's messages name no host: said once, here.
        let conn = Arc::new(
            tether_ssh::connect(&target, &opts)
                .await
                .map_err(|e| anyhow!("{}: {e}", target.host))?,
        );
        if let Some(banner) = conn.banner().filter(|_| !quiet) {
            eprint!(
                "{}",
                tether_term::printable::escaped(&banner.replace("\r\n", "\n"), true)
            );
        }
        voice.step(&format!(
            "authenticated to {} as {}",
            target.hostname, target.user
        ));
        if let Some(place) = &plan.stdio {
            return Ok(match tether_ssh::forward::stdio(&conn, place).await {
                Ok(()) => 0,
                Err(e) => {
                    eprintln!("tether: {e}");
                    FAILED
                }
            });
        }
        let forwards = Forwards::new(
            Arc::clone(&conn),
            tether_ssh::forward::Settings {
                gateway_ports: plan.gateway_ports,
                say: Arc::new(ssh_forward::say),
                permit_remote_open: plan.permit_remote_open.clone(),
                bind_mask: plan.bind_mask,
                bind_unlink: plan.bind_unlink,
                max_connections: tether_ssh::forward::connection_limit(),
            },
        );
        if let Err(e) = ssh_forward::setup(&forwards, &plan).await {
            eprintln!("tether: {e}");
            return Ok(FAILED);
        }
        crate::ssh_front::local_command(&cfg, voice)?;
        if ssh_forward::is_background_copy() {
            ssh_forward::ready(plan.no_command);
        }
        let code = if plan.no_command {
            forwards.until_closed().await;
            if !quiet {
                eprintln!("tether: the connection to {host} closed");
            }
            FAILED
        } else if mode == crate::ssh_front::Tty::Plain {
            crate::ssh_front::plain_pty(&conn, command, stdin_null)
                .await
                .with_context(|| host.clone())?
        } else if tty {
            with_terminal(&conn, &forwards, command, &host, escape, quiet).await?
        } else {
            without_terminal(
                &conn,
                command.as_deref().unwrap_or_default(),
                &host,
                quiet,
                stdin_null,
            )
            .await?
        };
        forwards.close();
        Ok::<i32, anyhow::Error>(code)
    })?;
    // A blocking stdin read may still be waiting: it is not waited for.
    runtime.shutdown_background();
    Ok(code)
}

/// The remote program on a PTY, bridged to the person's terminal. `quiet`
/// (`-q`): the closing line only for an error.
async fn with_terminal(
    conn: &Connection,
    forwards: &Forwards,
    command: Option<String>,
    host: &str,
    escape: Option<u8>,
    quiet: bool,
) -> Result<i32> {
    let (rows, cols) = local_term::size();
    let term_name = std::env::var("TERM")
        .ok()
        .filter(|t| !t.is_empty())
        .unwrap_or_else(|| "xterm-256color".to_owned());
    let request = PtyRequest {
        term: term_name.clone(),
        size: TermSize { rows, cols },
        echo: true,
        output_processing: true,
        env: vec![
            ("TERM".to_owned(), term_name),
            ("COLORTERM".to_owned(), "truecolor".to_owned()),
        ],
        command,
    };
    let remote = conn
        .open_pty_channel(&request)
        .await
        .map_err(|e| anyhow!("{host}: {e}"))?;
    let writer = remote.writer().clone();
    let (mut term, typed) = LocalTerminal::enter()?;
    let bridge = Bridge {
        term: &mut term,
        settings: Settings {
            queries_answered_elsewhere: false,
            escape,
            escapes: tether_term::EscapeSet::ALL,
            escape_help: tether_term::escape_help(
                escape.unwrap_or(b'~'),
                tether_term::EscapeSet::ALL,
                "disconnect",
            ),
            leaving: "disconnected",
            left_code: FAILED,
        },
        far: SshFar { remote, forwards },
    };
    // A channel that ends without an exit status is `ExitInfo::LinkLost`
    // from the PTY itself (255 and "the connection was lost"); a SIGHUP
    // the host reported is the program's own end.
    let (code, why) = bridge.run(typed).await?;
    let farewell = match why.as_str() {
        "" => String::new(),
        LOST if conn.hung() => format!("\r\ntether: {} ({host})\r\n", conn.hung_error()),
        LOST => format!("\r\ntether: {LOST} ({host})\r\n"),
        // Only errors under -q; the line still ends.
        _ if quiet => "\r\n".to_owned(),
        "disconnected" => format!("\r\nConnection to {host} closed.\r\n"),
        other => format!("\r\ntether: {other} ({host})\r\n"),
    };
    term.restore(&farewell);
    let _ = writer.hang_up();
    Ok(code)
}

/// The remote PTY's channel as the bridge's far end: its output read in
/// the bridge's own loop, keys queued for the channel's writer.
struct SshFar<'a> {
    remote: PtyChannel,
    /// The session's forwards, for `~C` and `~#`.
    forwards: &'a Forwards,
}

impl FarEnd for SshFar<'_> {
    async fn recv(&mut self) -> FarEvent {
        match self.remote.next().await {
            PtyEvent::Output(bytes) => FarEvent::Output(bytes),
            PtyEvent::Ended(ExitInfo::Code(code)) => FarEvent::Ended {
                code,
                why: String::new(),
            },
            PtyEvent::Ended(ExitInfo::Signal(s)) => FarEvent::Ended {
                code: 128 + s,
                why: format!("the remote program ended by signal {s}"),
            },
            // No exit status came: as OpenSSH, 255 and a line.
            PtyEvent::Ended(ExitInfo::LinkLost) => FarEvent::Ended {
                code: FAILED,
                why: LOST.to_owned(),
            },
        }
    }

    async fn send(&mut self, msg: ToFar) -> Result<(), Gone> {
        let writer = self.remote.writer();
        match msg {
            ToFar::Input(bytes) => writer.write(bytes),
            ToFar::Resize { rows, cols } => writer.resize(TermSize { rows, cols }),
            ToFar::Detach => writer.hang_up(),
        }
        .map_err(|_| Gone)
    }

    async fn command_line(&mut self, line: &str) -> String {
        match tether_ssh::forward::command_line(self.forwards, line).await {
            Ok(text) => text,
            Err(e) => format!("{e}\n"),
        }
    }

    fn forwards(&self) -> String {
        tether_ssh::forward::list(self.forwards)
    }
}

/// A command without a terminal: stdin streamed to it, stdout and stderr
/// kept apart, its exit status returned. `quiet` (`-q`): a signal that
/// ended it is not reported, only errors. When tether's stdout or stderr
/// closes (`| head -1`), the remote command is stopped (as `exec` stops
/// one) and tether exits 255 with one line on stderr, as ssh does.
async fn without_terminal(
    conn: &Connection,
    command: &str,
    host: &str,
    quiet: bool,
    stdin_null: bool,
) -> Result<i32> {
    let (input_tx, input_rx) = mpsc::channel::<Vec<u8>>(16);
    // `-n`: stdin is /dev/null (the channel ends at once).
    let _reader = (!stdin_null).then(|| local_term::spawn_stdin_reader(input_tx));
    let closed = std::cell::Cell::new(None::<&'static str>);
    let closing = tokio::sync::Notify::new();
    let ended = conn
        .exec_async(
            command,
            Input::Stream(input_rx),
            None,
            closing.notified(),
            |e| {
                if closed.get().is_none() {
                    let failed = match e {
                        Event::Stdout(b) => {
                            let mut out = std::io::stdout().lock();
                            out.write_all(&b)
                                .and_then(|()| out.flush())
                                .err()
                                .map(|_| "stdout")
                        }
                        Event::Stderr(b) => {
                            let mut err = std::io::stderr().lock();
                            err.write_all(&b)
                                .and_then(|()| err.flush())
                                .err()
                                .map(|_| "stderr")
                        }
                    };
                    if let Some(which) = failed {
                        closed.set(Some(which));
                        closing.notify_one();
                    }
                }
                std::future::ready(())
            },
        )
        .await?;
    if let Some(which) = closed.get() {
        let line = match ended.halted {
            _ if ended.exit_code.is_some() || ended.signal.is_some() => format!(
                "tether: {which} closed; the remote command had ended (the rest of its output was not written)\n"
            ),
            None => format!(
                "tether: {which} closed; the remote command had ended (the rest of its output was not written)\n"
            ),
            Some(tether_ssh::Halted::Confirmed) => format!(
                "tether: {which} closed; asked the remote command to stop; the host confirmed its end (the rest of its output was not read)\n"
            ),
            _ => format!(
                "tether: {which} closed; asked the remote command to stop; it may still be running on {}\n",
                tether_term::printable::escaped(host, false)
            ),
        };
        let _ = std::io::stderr().write_all(line.as_bytes());
        // As ssh: the command's own exit code when it ended by itself
        // (before the stop, or despite it); 255 when it ended by a signal
        // (the stop) or the host confirmed nothing.
        return Ok(match (ended.exit_code, ended.signal.as_ref()) {
            (Some(c), _) => i32::try_from(c).unwrap_or(FAILED),
            (None, None) => ended
                .code_after_stop
                .and_then(|c| i32::try_from(c).ok())
                .unwrap_or(FAILED),
            (None, Some(_)) => FAILED,
        });
    }
    Ok(match (ended.exit_code, ended.signal) {
        (Some(c), _) => i32::try_from(c).unwrap_or(FAILED),
        (None, Some(sig)) => {
            if !quiet {
                eprintln!("tether: the remote command was killed by signal {sig}");
            }
            tether_ssh::signal_number(&sig).map_or(FAILED, |n| 128 + n)
        }
        (None, None) if conn.hung() => {
            eprintln!(
                "tether: {} ({})",
                conn.hung_error(),
                tether_term::printable::escaped(host, false)
            );
            FAILED
        }
        (None, None) => {
            eprintln!("tether: the connection closed before the command's exit status came");
            FAILED
        }
    })
}
