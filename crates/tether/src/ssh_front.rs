//! What `tether ssh` decides from its flags and the resolved ssh_config
//! before and around a connection, as `ssh` decides it: `-Q` (what tether
//! supports), `-G` (`ssh_show`), `-M`/`-S`/`-O` refused with what to do
//! instead, `-c`/`-m`, the terminal (`-t`, `-tt`, `-T`, `RequestTTY`, and
//! ssh's warning when stdin is not a terminal), `-n`/`StdinNull`, the
//! escape character, how much it says (`-q`, `-v`, `LogLevel`: the
//! banner too is hidden when quiet), `LocalCommand` (only with
//! `PermitLocalCommand yes`, run by `$SHELL -c` after the connection is
//! made, its tokens expanded), and the user as ssh picks it.

use std::io::{IsTerminal, Write};

use anyhow::{Context, Result, bail};
use tether_cluster::exec::{HostSpec, Overrides};
use tether_ssh::config::HostConfig;
use tether_ssh::directives::{LogLevel, RequestTty};

use crate::cli::SshCmdArgs;

/// What tether does instead of ssh's connection sharing.
const NO_SHARING: &str = "tether does not share connections through a control socket (ssh's -M, -S, -O, ControlMaster); \
tether's daemon already keeps one connection per host: `tether run --host HOST` and `tether shell` reuse it, \
and each `tether ssh` makes its own";

/// `-M`, `-S PATH` and `-O CMD`: refused, saying what to use instead.
pub fn refuse_sharing(args: &SshCmdArgs) -> Result<()> {
    if let Some(cmd) = &args.control_command {
        bail!("-O {cmd}: {NO_SHARING}");
    }
    if let Some(path) = args.control_path.as_deref().filter(|p| *p != "none") {
        bail!("-S {path}: {NO_SHARING}");
    }
    if args.master > 0 {
        bail!("-M: {NO_SHARING}");
    }
    Ok(())
}

/// `-Q QUERY`: one name a line, as ssh prints them.
pub fn query(what: &str) -> Result<i32> {
    let Some(names) = tether_ssh::algorithms::query(what) else {
        bail!(
            "-Q {what}: not a query tether answers; use one of {}",
            tether_ssh::algorithms::QUERIES.join(", ")
        );
    };
    let mut out = std::io::stdout().lock();
    for n in names {
        let _ = writeln!(out, "{n}");
    }
    Ok(0)
}

/// `-c` and `-m`: as `Ciphers` and `MACs`, winning over `-o` and
/// ssh_config (as in ssh).
pub fn algorithm_flags(args: &SshCmdArgs, ov: &mut Overrides) -> Result<()> {
    use tether_ssh::algorithms::{Kind, assemble};
    if let Some(c) = &args.ciphers {
        ov.ciphers = Some(assemble(Kind::Cipher, c).map_err(|e| anyhow::anyhow!("-c: {e}"))?);
    }
    if let Some(m) = &args.macs {
        assemble(Kind::Mac, m).map_err(|e| anyhow::anyhow!("-m: {e}"))?;
        ov.options.insert(0, format!("MACs={m}"));
    }
    Ok(())
}

/// The ssh_config (and `-o`) settings for `spec`, as the connection will
/// use them.
pub fn host_config(spec: &HostSpec, ov: &Overrides) -> Result<HostConfig> {
    Ok(tether_ssh::config::resolve_with(
        ov.config.as_deref(),
        &ov.options,
        &spec.host,
        spec.user.as_deref().or(ov.user.as_deref()),
        spec.port.or(ov.port),
    )?)
}

/// How much tether says on stderr.
#[derive(Clone, Copy, Debug)]
pub struct Voice {
    /// `-q` or `LogLevel QUIET`/`FATAL`/`ERROR`: errors only.
    pub quiet: bool,
    /// `-v` or `LogLevel VERBOSE`/`DEBUG`.
    pub verbose: bool,
}

impl Voice {
    /// From the flags, then `LogLevel` (the flags win).
    pub fn of(args: &SshCmdArgs, cfg: &HostConfig) -> Voice {
        let level = cfg.log_level.unwrap_or(LogLevel::Info);
        Voice {
            quiet: args.quiet || (args.verbose == 0 && level < LogLevel::Info),
            verbose: args.verbose > 0 || (!args.quiet && level > LogLevel::Info),
        }
    }

    /// One line under `-v`.
    pub fn step(&self, line: &str) {
        if self.verbose {
            eprintln!("tether: {}", tether_term::printable::escaped(line, false));
        }
    }

    /// A warning ssh prints at its default level (hidden by `-q`).
    pub fn warn(&self, line: &str) {
        if !self.quiet {
            eprintln!("{line}");
        }
    }
}

/// Whether the session gets a terminal, and whether the person's own
/// terminal is bridged to it; as ssh: `-t` asks for one when stdin is a
/// terminal (else a warning, and none), `-tt` (`RequestTTY force`) even
/// when it is not, `-T` (`RequestTTY no`) never, and by default only for
/// the login shell.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tty {
    /// No terminal: stdin, stdout and stderr apart.
    None,
    /// A remote terminal bridged to the person's (raw mode, escapes).
    Bridged,
    /// A remote terminal without a local one (`-tt` from a script): bytes
    /// in and out as they come.
    Plain,
}

/// The terminal decision (see [`Tty`]); `stdin_null`: `-n` or
/// `StdinNull`.
pub fn tty(
    args: &SshCmdArgs,
    cfg: &HostConfig,
    login: bool,
    stdin_null: bool,
    voice: Voice,
) -> Tty {
    let request = if args.no_tty {
        RequestTty::No
    } else if args.tty >= 2 {
        RequestTty::Force
    } else if args.tty == 1 {
        RequestTty::Yes
    } else {
        cfg.request_tty.unwrap_or(RequestTty::Auto)
    };
    let mut wanted = match request {
        RequestTty::Yes | RequestTty::Force => true,
        RequestTty::No => false,
        RequestTty::Auto => login,
    };
    let stdin_tty = std::io::stdin().is_terminal() && !stdin_null;
    if !stdin_tty && request != RequestTty::Force {
        if wanted {
            voice.warn("Pseudo-terminal will not be allocated because stdin is not a terminal.");
        }
        wanted = false;
    }
    match (wanted, stdin_tty && std::io::stdout().is_terminal()) {
        (false, _) => Tty::None,
        (true, true) => Tty::Bridged,
        (true, false) => Tty::Plain,
    }
}

/// The escape character's spelling: `-e`, else `EscapeChar`, else `~`.
pub fn escape<'a>(args: &'a SshCmdArgs, cfg: &'a HostConfig) -> &'a str {
    args.escape
        .as_deref()
        .or(cfg.escape_char.as_deref())
        .unwrap_or("~")
}

/// `LocalCommand`, when `PermitLocalCommand yes`: run by the shell
/// (`$SHELL`, else /bin/sh) on this
/// machine once the connection is made, its `%` tokens expanded (`%T` is
/// `NONE`: tether opens no tunnel device), its output to tether's; tether
/// waits for it, as ssh does.
pub fn local_command(cfg: &HostConfig, voice: Voice) -> Result<()> {
    let Some(cmd) = cfg.local_command.as_deref() else {
        return Ok(());
    };
    if cfg.permit_local_command != Some(true) {
        voice.step(&format!(
            "LocalCommand not run: PermitLocalCommand is not yes ({cmd})"
        ));
        return Ok(());
    }
    let cmd = cfg
        .tokens
        .expand_for_shell(cmd, &[('T', "NONE")])
        .map_err(|e| anyhow::anyhow!("LocalCommand {e}"))?;
    voice.step(&format!("running LocalCommand: {cmd}"));
    let status = std::process::Command::new(tether_ssh::percent::shell())
        .arg("-c")
        .arg(&cmd)
        .stdin(std::process::Stdio::null())
        .status()
        .with_context(|| {
            format!(
                "cannot run LocalCommand with {}",
                tether_ssh::percent::shell()
            )
        })?;
    if !status.success() {
        voice.step(&format!("LocalCommand ended with {status}"));
    }
    Ok(())
}

/// A remote terminal without a local one (`-tt` from a script, or stdout
/// not a terminal): stdin's bytes to it as they come (none with `-n`), its
/// output to stdout, its exit status returned (255 and a line when the
/// connection ends without one).
pub async fn plain_pty(
    conn: &tether_ssh::Connection,
    command: Option<String>,
    stdin_null: bool,
) -> Result<i32> {
    use tether_ssh::{PtyEvent, PtyRequest};
    use tether_transport::{ExitInfo, TermSize};
    let term = std::env::var("TERM")
        .ok()
        .filter(|t| !t.is_empty())
        .unwrap_or_else(|| "dumb".to_owned());
    let request = PtyRequest {
        term: term.clone(),
        size: TermSize { rows: 24, cols: 80 },
        echo: true,
        output_processing: true,
        env: vec![("TERM".to_owned(), term)],
        command,
    };
    let mut remote = conn.open_pty_channel(&request).await?;
    let (tx, mut rx) = tokio::sync::mpsc::channel::<Vec<u8>>(16);
    let _reader = (!stdin_null).then(|| crate::local_term::spawn_stdin_reader(tx));
    let mut input_open = !stdin_null;
    loop {
        tokio::select! {
            event = remote.next() => match event {
                PtyEvent::Output(bytes) => {
                    let mut out = std::io::stdout().lock();
                    if out.write_all(&bytes).and_then(|()| out.flush()).is_err() {
                        let _ = remote.writer().hang_up();
                        return Ok(255);
                    }
                }
                PtyEvent::Ended(ExitInfo::Code(c)) => return Ok(c),
                PtyEvent::Ended(ExitInfo::Signal(s)) => return Ok(128 + s),
                PtyEvent::Ended(ExitInfo::LinkLost) if conn.hung() => {
                    eprintln!("tether: {}", conn.hung_error());
                    return Ok(255);
                }
                PtyEvent::Ended(ExitInfo::LinkLost) => {
                    eprintln!("tether: {}", crate::interactive::LOST);
                    return Ok(255);
                }
            },
            chunk = rx.recv(), if input_open => match chunk {
                Some(bytes) => {
                    let _ = remote.writer().write(bytes);
                }
                None => input_open = false,
            },
        }
    }
}

/// The user the command line gives, as ssh decides it: the first of `-l
/// USER` and `-o User=USER` as typed (the destination's `user@` counts only
/// when neither is given). `argv`: `tether`'s arguments after `ssh`, up to
/// the destination.
pub fn first_user<I: IntoIterator<Item = String>>(argv: I) -> Option<String> {
    // Short flags that take a value (tether's and ssh's).
    const VALUED: &str = "lpJFioeQcmSOLRDWbBEIw";
    let mut it = argv.into_iter();
    while let Some(a) = it.next() {
        if a == "--" || !a.starts_with('-') || a == "-" {
            return None;
        }
        if let Some(long) = a.strip_prefix("--") {
            let (name, inline) = match long.split_once('=') {
                Some((n, v)) => (n, Some(v.to_owned())),
                None => (long, None),
            };
            let takes = ["user", "port", "jump", "ssh-config", "identity"].contains(&name);
            let value = if takes {
                inline.or_else(|| it.next())
            } else {
                None
            };
            if name == "user" {
                return value;
            }
            continue;
        }
        let flags: Vec<char> = a.chars().skip(1).collect();
        for (i, f) in flags.iter().enumerate() {
            if !VALUED.contains(*f) {
                continue;
            }
            let rest: String = flags[i + 1..].iter().collect();
            let value = if rest.is_empty() {
                it.next()
            } else {
                Some(rest)
            };
            match (f, value) {
                ('l', v) => return v,
                ('o', Some(o)) => {
                    if let Some((_, v)) = crate::ssh_opts::split_option(&o)
                        .filter(|(k, _)| k.eq_ignore_ascii_case("user"))
                    {
                        return Some(v.to_owned());
                    }
                }
                _ => {}
            }
            break;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::first_user;

    fn first(args: &[&str]) -> Option<String> {
        first_user(args.iter().map(|a| (*a).to_owned()))
    }

    #[test]
    fn the_first_user_typed_wins() {
        assert_eq!(
            first(&["-o", "user=foo", "-l", "bar", "baz@host"]).as_deref(),
            Some("foo")
        );
        assert_eq!(
            first(&["-lbar", "baz@host", "user=foo"]).as_deref(),
            Some("bar")
        );
        assert_eq!(first(&["-q", "-ouser=x", "h"]).as_deref(), Some("x"));
        assert_eq!(first(&["-p", "22", "-o", "Port=2", "h", "-l", "z"]), None);
        assert_eq!(first(&["-ql", "carol", "h"]).as_deref(), Some("carol"));
        assert_eq!(first(&["--user=dave", "h"]).as_deref(), Some("dave"));
    }
}
