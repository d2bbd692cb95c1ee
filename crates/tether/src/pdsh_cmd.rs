//! pdsh's command line (issue 28): `tether pdsh`, and tether run through a
//! link named `pdsh`. pdsh's flags become `tether exec`'s (`-w` the hosts,
//! `-x` exclusions, `-g`/`-X` genders attributes (the groups of the
//! group source `genders`), `-f` the fanout, `-l` the user, `-t` and `-u` the
//! connect and command timeouts, `-N` no prefix, `-b` one Ctrl-C cancels,
//! `-k` fail fast, `-S` the largest remote exit code, else 0 as pdsh
//! exits whatever the hosts did); output is pdsh's `host:
//! line`. Only the ssh module exists (`-R ssh`), and pdsh's interactive mode
//! is `tether shell`'s.

use anyhow::{Result, bail};

use crate::cli::{ExecArgs, ExitPolicy, FailureArgs, FleetArgs, NarrowArgs, OutputMode};

/// pdsh's flags.
#[derive(clap::Args, Debug)]
pub struct PdshArgs {
    /// Target hosts (a host list: `n[1-9]`, `a,b`, `^FILE`); repeatable.
    #[arg(short = 'w', value_name = "HOSTS")]
    pub hosts: Vec<String>,
    /// Hosts to leave out; repeatable.
    #[arg(short = 'x', value_name = "HOSTS")]
    pub exclude: Vec<String>,
    /// Hosts with any of these genders attributes (`attr` or `attr=val`,
    /// comma-separated): the groups of the group source `genders`.
    #[arg(short = 'g', value_name = "ATTRS")]
    pub genders: Vec<String>,
    /// Hosts with any of these genders attributes left out.
    #[arg(short = 'X', value_name = "ATTRS")]
    pub genders_exclude: Vec<String>,
    /// Most hosts at once (pdsh's fanout).
    #[arg(short = 'f', value_name = "N")]
    pub fanout: Option<usize>,
    /// The remote user.
    #[arg(short = 'l', value_name = "USER")]
    pub user: Option<String>,
    /// Seconds to connect.
    #[arg(short = 't', value_name = "SECONDS")]
    pub connect_timeout: Option<f64>,
    /// Seconds each command may run.
    #[arg(short = 'u', value_name = "SECONDS")]
    pub command_timeout: Option<f64>,
    /// No `host: ` prefix on output lines.
    #[arg(short = 'N')]
    pub no_prefix: bool,
    /// Batch mode: one Ctrl-C cancels.
    #[arg(short = 'b')]
    pub batch: bool,
    /// Fail fast: after the first failure, start no more hosts.
    #[arg(short = 'k')]
    pub fail_fast: bool,
    /// Exit with the largest remote exit code.
    #[arg(short = 'S')]
    pub largest: bool,
    /// The rcmd module: only `ssh`.
    #[arg(short = 'R', value_name = "MODULE")]
    pub rcmd: Option<String>,
    /// Show the options and target hosts, then exit.
    #[arg(short = 'q')]
    pub query: bool,
    /// The command.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    pub command: Vec<String>,
}

/// pdsh's command line as a program's own (`pdsh ARGS`).
#[derive(clap::Parser, Debug)]
#[command(
    name = "pdsh",
    about = "tether in pdsh's clothes: a command on many hosts over SSH"
)]
pub struct PdshCli {
    #[command(flatten)]
    pub args: PdshArgs,
}

/// True when this program was started as `pdsh` (a link to tether).
pub fn called_as_pdsh() -> bool {
    std::env::args_os()
        .next()
        .map(std::path::PathBuf::from)
        .and_then(|p| p.file_name().map(|n| n == "pdsh"))
        .unwrap_or(false)
}

/// `-g`/`-X` attributes as groups of the group source `genders` (a
/// `groups.conf` section, as ClusterShell's `genders.conf.example`:
/// `map: nodeattr -n $GROUP`). Genders queries (`a&&b`, `~a`) are not
/// node sets: refused.
fn genders_groups(attrs: &[String]) -> Result<Vec<String>> {
    let mut groups = Vec::new();
    for attr in attrs.iter().flat_map(|a| a.split(',')) {
        if attr.is_empty() || attr.contains(['&', '|', '~', '(', ')', ' ']) {
            bail!(
                "-g/-X {attr:?}: tether takes genders attributes (attr or attr=val, comma-separated), not queries"
            );
        }
        groups.push(format!("@genders:{attr}"));
    }
    Ok(groups)
}

/// Runs pdsh's command line as `tether exec`.
pub fn run(args: PdshArgs) -> Result<i32> {
    if let Some(m) = args.rcmd.as_deref().filter(|m| *m != "ssh") {
        bail!("-R {m}: tether reaches hosts over ssh only (-R ssh)");
    }
    let mut args = args;
    // As pdsh's genders module: -g selects hosts, or with -w keeps those
    // of -w's hosts that have the attributes.
    let mut hosts = args.hosts.clone();
    let mut filter = Vec::new();
    let genders = genders_groups(&args.genders)?;
    if hosts.is_empty() {
        hosts = genders;
    } else if !genders.is_empty() {
        filter.push(genders.join(","));
    }
    args.exclude.extend(genders_groups(&args.genders_exclude)?);
    if hosts.is_empty() {
        bail!("no remote hosts specified: name them with -w HOSTS or -g ATTR");
    }
    let hosts = hosts.join(",");
    if args.query {
        let config = crate::ssh_opts::load_config(None)?;
        let set = config.narrowed(
            config.nodes(&hosts)?,
            tether_cluster::select::Narrow {
                exclude: &args.exclude,
                filter: &filter,
            },
        )?;
        outln!("-- tether pdsh options --");
        outln!("Target nodes            {}", set.fold());
        outln!("Rcmd type               ssh");
        let or_default = |v: Option<String>, d: &str| v.unwrap_or_else(|| d.to_owned());
        outln!(
            "Remote username         {}",
            or_default(args.user.clone(), "(ssh_config)")
        );
        outln!(
            "Fanout                  {}",
            or_default(args.fanout.map(|f| f.to_string()), "(config, else 64)")
        );
        outln!(
            "Connect timeout (secs)  {}",
            or_default(
                args.connect_timeout.map(|t| t.to_string()),
                "(ssh_config, else 10)"
            )
        );
        outln!(
            "Command timeout (secs)  {}",
            or_default(args.command_timeout.map(|t| t.to_string()), "none")
        );
        return Ok(0);
    }
    if args.command.is_empty() {
        bail!("pdsh's interactive mode is tether shell's: tether shell -H '{hosts}'");
    }
    let exec = ExecArgs {
        hosts: Some(hosts),
        cluster: None,
        fleet: FleetArgs {
            fanout: args.fanout,
            config: None,
            connect_timeout: args.connect_timeout,
            same_password: false,
            narrow: NarrowArgs {
                exclude: args.exclude,
                filter,
            },
            steps: crate::cli::StepsArg::default(),
        },
        command_timeout: args.command_timeout,
        output: OutputMode::Stream,
        dir: None,
        diff: false,
        no_prefix: args.no_prefix,
        raw: false,
        cancel: crate::cli::BatchArg { batch: args.batch },
        view: crate::exec_view::ViewArgs {
            tui: false,
            no_tui: true,
        },
        stdin: false,
        sudo: Default::default(),
        failures: FailureArgs {
            exit_code: ExitPolicy::Max,
            fail_fast: args.fail_fast,
        },
        command: args.command,
        ssh: crate::ssh_opts::SshArgs {
            user: args.user,
            ..crate::ssh_opts::SshArgs::default()
        },
    };
    let code = crate::exec_cmd::run(exec)?;
    // Without -S pdsh exits 0 whatever the hosts did (each failure said on
    // stderr); a run cancelled by Ctrl-C still exits 130.
    Ok(match code {
        _ if args.largest => code,
        130 => 130,
        _ => 0,
    })
}
