//! `tether ssh --keep HOST`: a person's session in tether on the host,
//! which outlives the link and this process. The host is reached as
//! `tether run --host` reaches it (the same flags and files); the session
//! (`ssh-HOST`) is made in the host's daemon by a first `true`, then
//! joined as `tether attach` joins one: `~.` detaches, and running the
//! same command again joins it again, its screen redrawn from the host's
//! emulator. A host where tether cannot run is refused (a session there
//! would die with the link, which is what `--keep` is for).

use anyhow::{Result, bail};
use tether_daemon::DaemonError;
use tether_daemon::protocol::{Create, FailureKind, OnTimeout, Request, ShellResult};

use crate::cli::{AttachArgs, SshCmdArgs};

/// The options `--keep` takes besides the destination: those of
/// `tether run --host` (-F, -l, -p, -i, -J, -o); every other option of
/// `tether ssh` is refused, never ignored.
fn refuse_others(args: &SshCmdArgs) -> Result<()> {
    let other = [
        (!args.command.is_empty(), "a remote command"),
        (args.tty > 0 || args.no_tty, "-t/-T"),
        (args.stdin_null, "-n"),
        (args.escape.is_some(), "-e"),
        (args.forward_agent || args.no_agent, "-A/-a"),
        (args.print_config || args.query.is_some(), "-G/-Q"),
        (args.ciphers.is_some() || args.macs.is_some(), "-c/-m"),
        (
            args.master > 0 || args.control_path.is_some() || args.control_command.is_some(),
            "-M/-S/-O",
        ),
        (
            !args.local_forward.is_empty()
                || !args.remote_forward.is_empty()
                || !args.dynamic_forward.is_empty()
                || args.stdio_forward.is_some()
                || args.gateway_ports,
            "forwarding (-L/-R/-D/-W/-g)",
        ),
        (args.no_command || args.background, "-N/-f"),
    ];
    if let Some((_, what)) = other.iter().find(|(given, _)| *given) {
        bail!(
            "--keep opens a session in tether on the host and takes only -F, -l, -p, -i, -J and -o; {what} is not applied there: drop it, or leave out --keep"
        );
    }
    Ok(())
}

pub fn run(args: SshCmdArgs) -> Result<i32> {
    refuse_others(&args)?;
    let Some(dest) = args.destination.as_deref() else {
        bail!("--keep needs a destination");
    };
    let host = crate::host_route::single(dest, &args.ssh, Default::default())?;
    let session = format!("ssh-{dest}");
    let mut client = crate::daemon_cmd::connect()?;
    // A first `true` makes the session (or finds it idle); a session with
    // a program running (`top`, an editor) is busy: it is joined as it is.
    let started = client.request::<ShellResult>(&Request::Run {
        session: session.clone(),
        command: "true".into(),
        host: Some(host),
        timeout_s: tether_shell::Timeout::DEFAULT.duration().as_secs_f64(),
        on_timeout: OnTimeout::Interrupt,
        output_limit: 1,
        workdir: None,
        create: Create::default(),
        stdin: None,
        follow: false,
        pieces: false,
        call: None,
    });
    let started = match started {
        Err(DaemonError::Refused(f)) if f.kind == FailureKind::Busy => None,
        other => Some(other?),
    };
    if let Some(why) = started.and_then(|s| s.agentless) {
        bail!(
            "{dest} is agentless ({why}): a session there would end with the link; leave out --keep for a plain login"
        );
    }
    drop(client);
    crate::attach_cmd::run(AttachArgs {
        session,
        host: None,
        ssh: Default::default(),
    })
}
