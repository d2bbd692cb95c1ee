//! `tether confine-exec` (hidden): what bubblewrap runs first inside a
//! confined session's fence. It restricts itself with Landlock (the
//! filesystem rules mirroring the fence's binds, and the scopes that keep
//! the session from signalling or reaching abstract sockets of processes
//! outside it), starts the forwarder of the network allowlist when there
//! is one, then execs the shell (same pid): the shell and everything it
//! starts inherit the restriction, and a restarted shell comes through
//! here again. Last, it installs the seccomp filter (`seccomp.rs`) that
//! refuses Unix and vsock sockets, and reports what the kernel enforced
//! (`tether_confine::Enforced`) to the daemon on the session's report
//! socket, connected before the filter, waiting for its answer before
//! the shell runs. `tether confine-forward` (hidden) is that forwarder: it
//! leaves the shell's session and terminal, and passes each connection
//! to the proxy address on to the proxy's socket outside the fence.

use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use landlock::{
    ABI, Access, AccessFs, CompatLevel, Compatible, Ruleset, RulesetAttr, RulesetCreatedAttr,
    Scope, path_beneath_rules,
};

/// `tether confine-exec`'s arguments.
#[derive(clap::Args, Debug)]
pub struct ConfineExecArgs {
    /// Writable paths (the roots, the temp directory, the shell's files).
    #[arg(long)]
    pub write: Vec<PathBuf>,
    /// The Landlock ABI required (its features, or an error).
    #[arg(long, default_value_t = 6)]
    pub abi: u8,
    /// Apply what the kernel can give of the ABI, not all of it.
    #[arg(long)]
    pub best_effort: bool,
    /// The proxy's socket, to forward the proxy address to.
    #[arg(long)]
    pub forward: Option<PathBuf>,
    /// The daemon's socket for the report of what the kernel enforced.
    #[arg(long)]
    pub report: Option<PathBuf>,
    /// A pathname Unix socket the session may connect to (repeatable):
    /// Landlock (ABI 9) refuses every other one, and the seccomp filter
    /// then lets Unix sockets be made.
    #[arg(long)]
    pub unix: Vec<PathBuf>,
    /// The program and its arguments.
    #[arg(trailing_var_arg = true, required = true)]
    pub program: Vec<OsString>,
}

/// `tether confine-forward`'s arguments.
#[derive(clap::Args, Debug)]
pub struct ForwardArgs {
    /// The proxy's socket.
    pub socket: PathBuf,
}

fn abi(n: u8) -> Result<ABI> {
    Ok(match n {
        1 => ABI::V1,
        2 => ABI::V2,
        3 => ABI::V3,
        4 => ABI::V4,
        5 => ABI::V5,
        6 => ABI::V6,
        7 => ABI::V7,
        8 => ABI::V8,
        9 => ABI::V9,
        10 => ABI::V10,
        _ => bail!("Landlock ABI {n} is not one tether knows (1 to 10)"),
    })
}

/// The number of a Landlock ABI tether knows.
fn abi_number(abi: ABI) -> Option<u8> {
    (1..=10).find(|n| self::abi(*n).is_ok_and(|a| a == abi))
}

/// Restricts this process, starts the forwarder, and execs the program.
pub fn run(args: ConfineExecArgs) -> Result<i32> {
    // Connected before anything is restricted, used once all is in force.
    let report = match &args.report {
        Some(socket) => Some(
            tether_confine::ReportSender::connect(socket).with_context(|| {
                format!(
                    "cannot reach the daemon's report socket {}, so nothing was run",
                    socket.display()
                )
            })?,
        ),
        None => None,
    };
    let abi = abi(args.abi)?;
    let level = if args.best_effort {
        CompatLevel::BestEffort
    } else {
        CompatLevel::HardRequirement
    };
    let unix = !args.unix.is_empty();
    if unix && !resolve_unix_given() {
        bail!(
            "unix_sockets needs Landlock ABI 9 (Linux 7.1 or later), which refuses every Unix socket but the ones named, and this kernel cannot give it, so nothing was run: remove unix_sockets (every Unix socket is then refused), or use a newer kernel"
        );
    }
    // Landlock's refusal of pathname Unix sockets (ABI 9): handled when
    // asked for, and then given only where a socket is allowed (the
    // forwarder's proxy socket, `--unix`).
    let handles_unix = unix || abi >= ABI::V9;
    let no_unix = !landlock::BitFlags::from(AccessFs::ResolveUnix);
    let (dirs, files): (Vec<&PathBuf>, Vec<&PathBuf>) = args.write.iter().partition(|p| p.is_dir());
    let restrict = || -> Result<landlock::RestrictionStatus, landlock::RulesetError> {
        let mut ruleset = Ruleset::default()
            .set_compatibility(level)
            .handle_access(AccessFs::from_all(abi))?;
        if unix {
            ruleset = ruleset
                .set_compatibility(CompatLevel::HardRequirement)
                .handle_access(AccessFs::ResolveUnix)?
                .set_compatibility(level);
        }
        if abi >= ABI::V6 || unix {
            ruleset = ruleset.scope(Scope::AbstractUnixSocket | Scope::Signal)?;
        }
        let all = AccessFs::from_all(abi) & no_unix;
        let file = AccessFs::from_file(abi) & no_unix;
        let mut ruleset = ruleset
            .create()?
            .add_rules(path_beneath_rules(["/"], AccessFs::from_read(abi)))?
            .add_rules(path_beneath_rules(["/dev"], all))?
            .add_rules(path_beneath_rules(["/proc"], file))?
            .add_rules(path_beneath_rules(dirs, all))?
            .add_rules(path_beneath_rules(files, file))?;
        if handles_unix {
            let sockets = args.unix.iter().chain(args.forward.iter());
            ruleset = ruleset.add_rules(path_beneath_rules(sockets, AccessFs::ResolveUnix))?;
        }
        ruleset.restrict_self()
    };
    let status = restrict().with_context(|| {
        format!(
            "the kernel cannot give Landlock ABI {} as this confined session asks, so nothing was run (set best_effort to accept less)",
            args.abi
        )
    })?;
    if !status.no_new_privs {
        bail!("no_new_privs could not be set, so nothing was run");
    }
    if let Some(socket) = &args.forward {
        start_forwarder(socket)?;
    }
    // After the forwarder (which alone needs a Unix socket), before the
    // shell: no vsock, and no Unix socket unless Landlock refuses all but
    // those allowed, for anything the session runs.
    crate::seccomp::close_sockets(unix)
        .context("the seccomp filter could not be installed, so nothing was run")?;
    if let Some(report) = report {
        // unix_sockets asks for ABI 9 (its refusal of the other sockets).
        let asked = if unix { args.abi.max(9) } else { args.abi };
        let mut enforced = enforced(&status, asked);
        enforced.unix_sockets = args.unix.clone();
        report
            .send(&enforced)
            .context("the daemon did not take the fence's report, so nothing was run")?;
    }
    let mut program = args.program.into_iter();
    let Some(first) = program.next() else {
        bail!("no program to run");
    };
    let e = std::process::Command::new(&first).args(program).exec();
    bail!("cannot run {}: {e}", PathBuf::from(first).display())
}

/// True when this kernel's Landlock refuses pathname Unix sockets by path
/// (ABI 9).
fn resolve_unix_given() -> bool {
    Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(AccessFs::ResolveUnix)
        .and_then(|r| r.create())
        .is_ok()
}

/// What the kernel enforced, as this process finds it: Landlock's status
/// (for ABI `asked`), seccomp's mode in `/proc/self/status`, and whether
/// the session's terminal is on another devpts than the fence's.
fn enforced(status: &landlock::RestrictionStatus, asked: u8) -> tether_confine::Enforced {
    use landlock::RulesetStatus;
    use tether_confine::{Landlock, Skipped};
    let landlock = match status.ruleset {
        RulesetStatus::FullyEnforced => Landlock::Full,
        RulesetStatus::PartiallyEnforced => Landlock::Partial,
        RulesetStatus::NotEnforced => Landlock::None,
    };
    let in_force = match (landlock, &status.landlock) {
        (Landlock::None, _) => None,
        (_, landlock::LandlockStatus::Available { effective_abi, .. }) => {
            abi_number(*effective_abi).map(|n| n.min(asked))
        }
        _ => None,
    };
    let seccomp = std::fs::read_to_string("/proc/self/status").is_ok_and(|s| {
        s.lines()
            .any(|l| l.strip_prefix("Seccomp:").is_some_and(|v| v.trim() == "2"))
    });
    tether_confine::Enforced {
        landlock_abi: in_force,
        landlock_asked: asked,
        landlock,
        skipped: Skipped::between(in_force.unwrap_or(0), asked),
        seccomp,
        own_devpts: own_devpts(),
        unix_sockets: Vec::new(),
    }
}

/// True when the fence's `/dev/pts` is a devpts instance other than the
/// one the session's terminal (stdin) is on.
fn own_devpts() -> bool {
    use std::io::IsTerminal;
    use std::os::fd::AsFd;
    use std::os::unix::fs::MetadataExt;
    let stdin = std::io::stdin();
    if !stdin.is_terminal() {
        return false;
    }
    let tty = stdin
        .as_fd()
        .try_clone_to_owned()
        .map(std::fs::File::from)
        .and_then(|f| f.metadata());
    match (tty, std::fs::metadata("/dev/pts/ptmx")) {
        (Ok(tty), Ok(ptmx)) => tty.dev() != ptmx.dev(),
        _ => false,
    }
}

/// Starts `tether confine-forward SOCKET` and waits until it listens.
fn start_forwarder(socket: &std::path::Path) -> Result<()> {
    use std::io::Read;
    let me = std::env::current_exe().context("cannot find tether's own binary")?;
    let mut child = std::process::Command::new(me)
        .arg("confine-forward")
        .arg(socket)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .context("cannot start the network forwarder")?;
    let mut ready = [0u8; 1];
    let n = child
        .stdout
        .take()
        .map(|mut o| o.read(&mut ready).unwrap_or(0))
        .unwrap_or(0);
    if n != 1 {
        bail!("the network forwarder did not start, so nothing was run");
    }
    Ok(())
}

/// The forwarder: out of the shell's session, gone with the shell,
/// passing each connection on to the proxy's socket.
pub fn forward(args: ForwardArgs) -> Result<i32> {
    use std::io::Write;
    let parent = nix::unistd::getppid();
    let _ = nix::unistd::setsid();
    nix::sys::prctl::set_pdeathsig(nix::sys::signal::Signal::SIGKILL)?;
    // Without the seccomp filter, it must not be a puppet of the session:
    // a process that is not dumpable cannot be traced, nor its memory
    // read, by the session's programs.
    nix::sys::prctl::set_dumpable(false)?;
    if nix::unistd::getppid() != parent {
        return Ok(0);
    }
    let listener = std::net::TcpListener::bind(tether_confine::PROXY_ADDR)?;
    {
        let mut out = std::io::stdout();
        out.write_all(b"1")?;
        out.flush()?;
    }
    // Nothing of the session's terminal is kept.
    let null = std::fs::File::open("/dev/null")?;
    nix::unistd::dup2_stdout(&null)?;
    for conn in listener.incoming().flatten() {
        let socket = args.socket.clone();
        std::thread::spawn(move || {
            let Ok(up) = std::os::unix::net::UnixStream::connect(&socket) else {
                return;
            };
            let (Ok(mut up2), Ok(mut conn2)) = (up.try_clone(), conn.try_clone()) else {
                return;
            };
            let (mut up, mut conn) = (up, conn);
            let t = std::thread::spawn(move || {
                let _ = std::io::copy(&mut conn2, &mut up2);
                let _ = up2.shutdown(std::net::Shutdown::Write);
            });
            let _ = std::io::copy(&mut up, &mut conn);
            let _ = conn.shutdown(std::net::Shutdown::Write);
            let _ = t.join();
        });
    }
    Ok(0)
}
