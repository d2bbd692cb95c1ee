//! The command-line grammar.

use std::path::PathBuf;

use clap::builder::{PossibleValue, PossibleValuesParser};
use clap::{Args, Parser, Subcommand, ValueEnum};
use tether_daemon::protocol::DEFAULT_SESSION;
use tether_transport::Signal;

/// Persistent terminal sessions, local and over SSH, for people and programs.
#[derive(Debug, Parser)]
#[command(name = "tether", version, about)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run a command in a persistent session (created on first use) and
    /// print its output; exit with its exit code.
    Run(Box<RunArgs>),
    /// Inside a confined session's fence: restrict, then run the shell.
    #[command(hide = true, name = "confine-exec")]
    ConfineExec(crate::confine_exec::ConfineExecArgs),
    /// Inside a confined session's fence: the allowlist's forwarder.
    #[command(hide = true, name = "confine-forward")]
    ConfineForward(crate::confine_exec::ForwardArgs),
    /// Type input or press keys in a session's foreground program.
    Send(SendArgs),
    /// Print output produced since the last result (and the final status
    /// of a command kept past its deadline).
    Read(ReadArgs),
    /// Signal a session's foreground program.
    Signal(SignalArgs),
    /// Print a session's current screen (for full-screen programs).
    Screen(SessionArg),
    /// Kill a session's processes and start its shell afresh (cwd and
    /// exported variables restored).
    Reset(SessionArg),
    /// End a session.
    Close(SessionArg),
    /// List the sessions (yours and your agents').
    Ls(LsArgs),
    /// Join a session's live terminal: watch, type, and detach with `~.`
    /// at the start of a line.
    Attach(AttachArgs),
    /// Serve persistent shell sessions to an agent over MCP (stdio).
    Mcp(McpArgs),
    /// Run a command on many hosts over SSH (a sliding window of
    /// connections), like pdsh and clush.
    Exec(Box<ExecArgs>),
    /// Connect to and log into each host, running nothing: a line per
    /// host, exit 0 when all were reached, 1 when some, 255 when none (as
    /// bssh's ping).
    Ping(Box<PingArgs>),
    /// pdsh's command line (-w -x -f -l -t -u -N -b -k -S -R ssh -q), run
    /// as `tether exec`; a link named `pdsh` to tether does the same.
    Pdsh(Box<crate::pdsh_cmd::PdshArgs>),
    /// Copy files to many hosts (`SRC... HOSTS:DEST`) or from them
    /// (`HOSTS:SRC... LOCAL_DIR`, into LOCAL_DIR/HOST/), over SFTP.
    Cp(Box<CpArgs>),
    /// Log in to one host over SSH with a full terminal (or run one
    /// command there), as `ssh` does.
    Ssh(Box<SshCmdArgs>),
    /// Many nodes at one prompt: a persistent shell per node (in the
    /// daemon), lines to the active ones, `!` commands to choose them.
    Shell(Box<ShellArgs>),
    /// Expand, fold or count a node set (`web[01-10]!web05`), as
    /// ClusterShell's `nodeset` does.
    Hosts(HostsArgs),
    /// Control the per-user session daemon (started on demand).
    Daemon(DaemonArgs),
    /// Print a shell completion script.
    Completions(CompletionsArgs),
    /// Run a terminal byte stream (a recording, or stdin) through the
    /// terminal-protocol core.
    Term(TermArgs),
}

/// The session a command addresses.
#[derive(Debug, Args)]
pub struct SessionArg {
    /// The session: a name, or NAMESPACE/NAME for an agent's session (see
    /// `tether ls`).
    #[arg(short, long, default_value = DEFAULT_SESSION)]
    pub session: String,
    /// Print the structured result as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `tether run`.
#[derive(Debug, Args)]
#[command(after_help = run_after_help())]
pub struct RunArgs {
    /// The session: a name, or NAMESPACE/NAME for an agent's session
    /// (default: the host's name with --host, else `main`).
    #[arg(short, long)]
    pub session: Option<String>,
    /// Run in a persistent shell on this host over SSH (`[user@]host[:port]`),
    /// reached as `tether exec -H HOST` reaches it with the same SSH flags
    /// (resolved here: your ssh_config and tether's config defaults; keys
    /// from the agent or unencrypted files). The host's sessions with the
    /// same settings share one connection; a session keeps the settings it
    /// started with.
    #[arg(long = "host", short = 'H')]
    pub host: Option<String>,
    /// Seconds before the command is interrupted (or, with --keep, left
    /// running).
    #[arg(long, default_value_t = tether_shell::Timeout::default_secs())]
    pub timeout: f64,
    /// At the deadline, leave the command running (`tether read` returns
    /// the rest) instead of interrupting it.
    #[arg(long)]
    pub keep: bool,
    /// Print the structured result as JSON.
    #[arg(long)]
    pub json: bool,
    /// Characters of output to print at most (head and tail are kept; the
    /// whole output is in a file named on stderr).
    #[arg(long, default_value_t = tether_shell::DEFAULT_OUTPUT_LIMIT)]
    pub output_limit: usize,
    /// The shell of a session this creates (default bash); naming another
    /// shell than an existing session's is an error.
    #[arg(long, value_parser = shell_names())]
    pub shell: Option<String>,
    /// Start a session this creates without the user's start-up files.
    #[arg(long)]
    pub norc: bool,
    /// In a session this creates, leave a shell a command starts (`bash`,
    /// `sudo -i`, `su -`) unarmed: it waits for input like any program,
    /// instead of running later commands.
    #[arg(long)]
    pub no_nested: bool,
    /// Leave tether's stdin alone: the command reads the session's terminal
    /// (answer it with `tether send`), as when stdin is a terminal or
    /// /dev/null. Without it, a pipe or file on stdin is read to its end
    /// (64 MiB at most) and is the command's stdin, as with ssh.
    #[arg(long)]
    pub no_stdin: bool,
    /// Run in a fresh shell that ends with the command, without the daemon.
    #[arg(long, conflicts_with_all = ["session", "keep", "host"])]
    pub once: bool,
    /// Read the command (shell code) from FILE, `-` for standard input,
    /// instead of the command line, which every user of this machine can
    /// see (`ps`): pass secrets this way. A pipe on stdin stays the
    /// command's stdin, except with `-f -`.
    #[arg(short = 'f', long = "file", value_name = "FILE")]
    pub file: Option<PathBuf>,
    /// The command (shell code; several words are joined with spaces, as
    /// ssh does). Options come before it (or before `--`): an unknown one
    /// is an error, never the start of the command.
    #[arg(
        required_unless_present = "file",
        conflicts_with = "file",
        trailing_var_arg = true
    )]
    pub command: Vec<String>,
    /// How --host is reached, as `tether exec` takes them.
    #[command(flatten)]
    pub ssh: crate::ssh_opts::SshArgs,
    /// Whether tether may run on --host.
    #[command(flatten)]
    pub far: crate::host_route::FarArgs,
    /// The confinement of a session this creates.
    #[command(flatten)]
    pub confine: crate::confine_args::ConfineArgs,
}

/// The exit codes, for `--help`.
pub const EXIT_CODES: &str = "Exit codes: the command's own (128+N when a signal N ended it); \
121 incomplete input (nothing was run); 122 the shell exited (the next command starts a fresh one; \
with --once, the shell's own exit code instead); 123 still running (kept past the deadline); \
124 timed out (interrupted); 125 waiting for input (with --once: it waited and was ended, \
nothing can answer it); 126 the session was reset or closed while the command ran (its processes \
were ended); 120 the connection to the session's host was lost or stopped answering (no exit \
code: the command's fate is unknown; the next command starts a fresh shell); 255 tether itself \
failed; 2 bad usage.";

/// `tether run --help`'s closing text: the exit codes and the environment
/// defaults of a new session.
fn run_after_help() -> String {
    let defaults: Vec<String> = tether_shell::defaults::NON_INTERACTIVE_DEFAULTS
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    format!(
        "{EXIT_CODES}\n\nA new session's environment is yours plus these non-interactive defaults: {}.",
        defaults.join(", ")
    )
}

/// Arguments of `tether send`.
#[derive(Debug, Args)]
#[command(after_help = EXIT_CODES)]
pub struct SendArgs {
    /// The session.
    #[arg(short, long, default_value = DEFAULT_SESSION)]
    pub session: String,
    /// Keys to press after the input (comma-separated or repeated).
    #[arg(short, long, value_delimiter = ',',
          value_parser = PossibleValuesParser::new(tether_shell::keys::names()))]
    pub keys: Vec<String>,
    /// Seconds to wait for the session to be ready again.
    #[arg(long, default_value_t = tether_daemon::protocol::DEFAULT_SEND_WAIT_S)]
    pub wait: f64,
    /// Print the structured result as JSON.
    #[arg(long)]
    pub json: bool,
    /// Read the text to type from FILE, `-` for standard input, instead of
    /// the command line, which every user of this machine can see (`ps`):
    /// pass secrets this way. Typed as is (a final newline too).
    #[arg(
        short = 'f',
        long = "file",
        value_name = "FILE",
        conflicts_with = "input"
    )]
    pub file: Option<PathBuf>,
    /// Text to type, as is (`\n` is not interpreted; use `-k Enter`).
    pub input: Option<String>,
}

/// Arguments of `tether read`.
#[derive(Debug, Args)]
#[command(after_help = EXIT_CODES)]
pub struct ReadArgs {
    /// The session.
    #[arg(short, long, default_value = DEFAULT_SESSION)]
    pub session: String,
    /// Seconds to wait for more output or the final status.
    #[arg(long, default_value_t = 0.0)]
    pub wait: f64,
    /// Print the structured result as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `tether signal`.
#[derive(Debug, Args)]
pub struct SignalArgs {
    /// The session.
    #[arg(short, long, default_value = DEFAULT_SESSION)]
    pub session: String,
    /// Print the structured result as JSON.
    #[arg(long)]
    pub json: bool,
    /// The signal (any case, `SIG` optional).
    #[arg(value_parser = signal, help = signal_help())]
    pub signal: Signal,
}

fn signal_help() -> String {
    format!(
        "The signal: {} (any case, `SIG` optional)",
        Signal::names_list()
    )
}

/// Parses a signal name of [`Signal::ALL`].
fn signal(name: &str) -> Result<Signal, String> {
    Signal::from_name(name).ok_or_else(|| format!("use one of {}", Signal::names_list()))
}

/// Arguments of `tether ls`.
#[derive(Debug, Args)]
pub struct LsArgs {
    /// Print the list as JSON.
    #[arg(long)]
    pub json: bool,
    /// List the sessions that live in tether on this host
    /// (`[user@]host[:port]`, reached as `tether run --host` reaches it).
    #[arg(long = "host", short = 'H')]
    pub host: Option<String>,
    /// How --host is reached, as `tether exec` takes them.
    #[command(flatten)]
    pub ssh: crate::ssh_opts::SshArgs,
}

/// Arguments of `tether attach`.
#[derive(Debug, Args)]
pub struct AttachArgs {
    /// The session: a name, or NAMESPACE/NAME; a bare name that only an
    /// agent's session has finds it.
    #[arg(default_value = DEFAULT_SESSION)]
    pub session: String,
    /// The host whose tether holds the session, when this machine's
    /// daemon does not know it (another machine made it there):
    /// `[user@]host[:port]`, reached as `tether run --host` reaches it.
    #[arg(long = "host", short = 'H')]
    pub host: Option<String>,
    /// How --host is reached, as `tether exec` takes them.
    #[command(flatten)]
    pub ssh: crate::ssh_opts::SshArgs,
}

/// Arguments of `tether daemon`.
#[derive(Debug, Args)]
pub struct DaemonArgs {
    /// What to do.
    #[command(subcommand)]
    pub action: DaemonAction,
}

/// `tether daemon` actions.
#[derive(Debug, Subcommand)]
pub enum DaemonAction {
    /// Serve in the foreground (the CLI starts it in the background on
    /// demand).
    Serve {
        /// Exit after this many seconds with no sessions and no clients
        /// (default: $TETHER_IDLE_EXIT, else 60).
        #[arg(long)]
        idle_exit: Option<f64>,
        /// Detach from the terminal (start a new session id).
        #[arg(long, hide = true)]
        detach: bool,
    },
    /// Start it in the background unless it runs already.
    Start,
    /// End every session and stop it.
    Stop,
    /// Say whether it runs, where, and its version.
    Status,
    /// Reach it, starting it when none runs, and print its socket's path
    /// (what a tether on another machine runs here over SSH).
    Ensure,
    /// Copy stdin to the daemon's socket and the socket to stdout (for a
    /// tether on another machine whose SSH server forbids stream-local
    /// forwarding).
    #[command(hide = true)]
    Relay {
        /// The daemon's socket (from `tether daemon ensure`).
        socket: std::path::PathBuf,
    },
}

/// Arguments of `tether ssh`.
#[derive(Debug, Args)]
#[command(
    after_help = "Escapes (after a newline): ~. disconnect, ~? help, ~~ send one ~. Exit code: the remote command's or shell's (128+N when signal N ended it); 255 when tether or the connection failed, after ~., or when tether's stdout or stderr closed under a command (the remote command is then stopped, and one line says whether the host confirmed it); 2 bad usage (an unknown option before the command, -p 0); 0 after -G or -Q (nothing connects). -o takes any ssh_config keyword: applied, accepted without effect (a note under -v), or refused saying why (ControlMaster, like -M, -S and -O, is refused: tether's daemon keeps one connection per host for `tether run --host` and `tether shell`). Host keys are checked against ~/.ssh/known_hosts (StrictHostKeyChecking=yes unless -o says otherwise)."
)]
pub struct SshCmdArgs {
    /// The host: `[user@]host[:port]`, `ssh://[user@]host[:port]` or a
    /// name from ~/.ssh/config.
    /// Open (or join again) a session in tether on the host that
    /// outlives the link: its shell lives in the host's own daemon; `~.`
    /// or a dropped link leaves it running, and the same command joins it
    /// again (no remote command, forwarding or ssh-only option with it).
    #[arg(long)]
    pub keep: bool,
    #[arg(required_unless_present = "query")]
    pub destination: Option<String>,
    /// A command to run there instead of the login shell (several words
    /// are joined with spaces, as ssh does); without -t it gets no
    /// terminal, and its stdin, stdout and stderr stay apart.
    #[arg(trailing_var_arg = true)]
    pub command: Vec<String>,
    /// A terminal even for a command (when stdin is one; -tt: even when
    /// it is not).
    #[arg(short = 't', action = clap::ArgAction::Count, conflicts_with = "no_tty")]
    pub tty: u8,
    /// No terminal, even for the login shell (it then reads its commands
    /// from stdin, as with ssh).
    #[arg(short = 'T')]
    pub no_tty: bool,
    /// stdin from /dev/null (as ssh -n).
    #[arg(short = 'n')]
    pub stdin_null: bool,
    /// The escape character: one character, `^X` for a control
    /// character, or `none` (no escapes).
    #[arg(short = 'e', value_name = "CHAR")]
    pub escape: Option<String>,
    /// Quiet: no `Connection to HOST closed.` line, no banner and no other
    /// diagnostics, only errors (a lost connection, a failure to connect).
    #[arg(short = 'q')]
    pub quiet: bool,
    /// Forward the agent (SSH_AUTH_SOCK) to the host (ForwardAgent yes).
    #[arg(short = 'A', conflicts_with = "no_agent")]
    pub forward_agent: bool,
    /// No agent forwarding, whatever ssh_config says (ForwardAgent no).
    #[arg(short = 'a')]
    pub no_agent: bool,
    /// Verbose: tether's connection steps, and a note for each option
    /// accepted without effect, on stderr.
    #[arg(short = 'v', action = clap::ArgAction::Count)]
    pub verbose: u8,
    /// Print the options resolved for the destination (ssh -G format) and
    /// exit without connecting.
    #[arg(short = 'G')]
    pub print_config: bool,
    /// Print the algorithms tether supports: cipher, cipher-auth, mac,
    /// kex, key, key-plain, key-sig, sig, compression, help.
    #[arg(short = 'Q', value_name = "QUERY")]
    pub query: Option<String>,
    /// Ciphers to offer, comma-separated (as -o Ciphers; +, -, ^ work).
    #[arg(short = 'c', value_name = "CIPHERS")]
    pub ciphers: Option<String>,
    /// MACs to offer, comma-separated (as -o MACs).
    #[arg(short = 'm', value_name = "MACS")]
    pub macs: Option<String>,
    /// ssh's control master: refused (tether's daemon keeps one
    /// connection per host for `tether run --host` and `tether shell`).
    #[arg(short = 'M', action = clap::ArgAction::Count, hide = true)]
    pub master: u8,
    /// ssh's control socket: refused (see -M).
    #[arg(short = 'S', value_name = "CTL_PATH", hide = true)]
    pub control_path: Option<String>,
    /// ssh's control commands: refused (see -M).
    #[arg(short = 'O', value_name = "CTL_CMD", hide = true)]
    pub control_command: Option<String>,
    /// Forward a local port or socket through the host (repeatable):
    /// `[bind:]port:host:hostport`, `[bind:]port:/remote.sock`,
    /// `/local.sock:host:hostport`, `/local.sock:/remote.sock`.
    #[arg(short = 'L', value_name = "SPEC")]
    pub local_forward: Vec<String>,
    /// Forward a port or socket on the host to one reached from here
    /// (repeatable; `-L`'s forms, `[bind:]port` alone: a SOCKS proxy on
    /// the host; port 0: the host picks one, printed).
    #[arg(short = 'R', value_name = "SPEC")]
    pub remote_forward: Vec<String>,
    /// A SOCKS 4/4a/5 proxy here, connecting from the host (repeatable):
    /// `[bind:]port`.
    #[arg(short = 'D', value_name = "[BIND:]PORT")]
    pub dynamic_forward: Vec<String>,
    /// stdin and stdout forwarded to HOST:PORT (or a socket) on the
    /// host's side, with no session (implies -N, -T,
    /// ExitOnForwardFailure, ClearAllForwardings).
    #[arg(short = 'W', value_name = "HOST:PORT")]
    pub stdio_forward: Option<String>,
    /// No command and no shell: only forward.
    #[arg(short = 'N')]
    pub no_command: bool,
    /// Go to the background once connected and forwarding (stdin from
    /// /dev/null); needs a command or -N.
    #[arg(short = 'f')]
    pub background: bool,
    /// GatewayPorts: local forwards without an address listen on every
    /// interface, not only loopback.
    #[arg(short = 'g')]
    pub gateway_ports: bool,
    /// The SSH options, as ssh takes them.
    #[command(flatten)]
    pub ssh: crate::ssh_opts::SshArgs,
}

/// Arguments of `tether shell`.
#[derive(Debug, Args)]
#[command(
    after_help = "At the prompt: lines run on the active nodes; !help lists tether's commands (!list, !use EXPR, !NODE, !all, !add EXPR, !drop [--keep] EXPR, !broadcast CMD, !gather on|off, !status, !attach NODE, !exit, !detach). !add resolves new nodes as the session's were (-x and --filter narrow only the start) and starts their shells; !drop closes theirs, or with --keep leaves them running apart (`--attach NAME` then comes back without them and names them; !add takes one back); the last node is not dropped. Ctrl-C interrupts the command on the nodes running it (a second leaves it running); with -b one Ctrl-C cancels it (INT, then QUIT, TERM and KILL while it runs). Ctrl-D on an empty line is !exit. Nodes are reached as `tether exec` reaches them with the same words: the SSH flags, tether's config (a cluster's settings with -C) and ~/.ssh/config, resolved by this process. Exit code: 0 after !exit or !detach, 255 when the session cannot start."
)]
pub struct ShellArgs {
    /// The nodes: a node set (`web[01-10]`, `@group`, `^FILE`); with -C,
    /// some of the cluster's. With `--attach`: the session's nodes, to come
    /// back to it from another machine (its shells live in tether on the
    /// nodes).
    #[arg(short = 'H', long = "hosts")]
    pub hosts: Option<String>,
    /// A cluster from the config file (with `--attach`, as -H).
    #[arg(short = 'C', long)]
    pub cluster: Option<String>,
    /// Nodes taken away, and patterns every node must match.
    #[command(flatten)]
    pub narrow: NarrowArgs,
    /// The session's name (default: the folded node set, or the
    /// cluster's name); `--attach NAME` comes back to it.
    #[arg(long, conflicts_with = "attach")]
    pub name: Option<String>,
    /// Come back to the session NAME (its nodes' shells kept running);
    /// from another machine, name its nodes too (-H or -C).
    #[arg(long, value_name = "NAME")]
    pub attach: Option<String>,
    /// Fold identical outputs under one node set (`!gather on`).
    #[arg(long)]
    pub gather: bool,
    /// The prefix of tether's commands at the prompt (default: the
    /// config's, else `!`).
    #[arg(long)]
    pub prefix: Option<char>,
    /// Colours on output lines: auto (a terminal, and NO_COLOR unset),
    /// always, never.
    #[arg(long, value_parser = ["auto", "always", "never"])]
    pub color: Option<String>,
    /// tether's config file (default ~/.config/tether/config.toml).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// One Ctrl-C cancels the line, as `tether exec` takes it.
    #[command(flatten)]
    pub cancel: BatchArg,
    /// Each node's connection steps, as `tether exec` takes them.
    #[command(flatten)]
    pub steps: StepsArg,
    /// How the nodes are reached, as `tether exec` takes them.
    #[command(flatten)]
    pub ssh: crate::ssh_opts::SshArgs,
    /// Whether tether may run on the nodes.
    #[command(flatten)]
    pub far: crate::host_route::FarArgs,
    /// sudo's password, typed once per line on each node into sudo's own
    /// prompt.
    #[command(flatten)]
    pub sudo: crate::sudo_args::SudoArgs,
}

/// Arguments of `tether exec`.
#[derive(Debug, Args)]
#[command(
    after_help = "Exit codes (--exit-code): max (default) is the largest remote exit code, a connection or authentication failure or a timeout counting as 255 and a signal as 128+N; all-zero is 0 when every host exited 0, else 1; first is the first host's (in node-set order). A timeout or cancel stops the command (TERM on its channel, and its process tree on the host ended from a second channel); each host's line says whether the host confirmed its end or it may still be running. 255 when tether's stdout or stderr closed (every host is stopped, one line says so); 130 after a double Ctrl-C; 2 bad usage (nothing runs): an unknown option before the command, -u 0, -f 0, -p 0, --output dir hosts whose files would clash. Host keys are checked against ~/.ssh/known_hosts (StrictHostKeyChecking=yes unless -o says otherwise)."
)]
pub struct ExecArgs {
    /// The hosts: a node set (`web[01-10]`, `user@db1:2222`, `@group`,
    /// `^FILE`, …); with -C, some of the cluster's.
    #[arg(short = 'H', long = "hosts", required_unless_present = "cluster")]
    pub hosts: Option<String>,
    /// A cluster from the config file.
    #[arg(short = 'C', long)]
    pub cluster: Option<String>,
    /// The window and how hosts are reached, as `tether cp` takes them.
    #[command(flatten)]
    pub fleet: FleetArgs,
    /// Seconds each command may run (more than 0); at the deadline it is
    /// stopped (see Exit codes).
    #[arg(short = 'u', long = "command-timeout", value_parser = positive_seconds)]
    pub command_timeout: Option<f64>,
    /// How to print: stream (`host: line` as they come), gather (identical
    /// results folded, at the end), json (one object per host), dir (files
    /// per host in --dir).
    #[arg(long, value_enum, default_value_t = OutputMode::Stream)]
    pub output: OutputMode,
    /// The directory for `--output dir`.
    #[arg(long, required_if_eq("output", "dir"))]
    pub dir: Option<PathBuf>,
    /// `--output diff`, as `clush --diff` spells it.
    #[arg(long, conflicts_with = "output")]
    pub diff: bool,
    /// Print each line without its `host: ` prefix (stream output; pdsh -N).
    #[arg(short = 'N', long)]
    pub no_prefix: bool,
    /// The hosts' bytes exact on a terminal too. Without it a terminal
    /// gets their control characters shown escaped (`\x1b]0;…\x07`), so
    /// no host retitles it or writes its clipboard; a pipe or a file always
    /// gets them exact.
    #[arg(long)]
    pub raw: bool,
    /// One Ctrl-C cancels, as `tether cp` and `tether shell` take it.
    #[command(flatten)]
    pub cancel: BatchArg,
    /// The live view (`--tui`, `--no-tui`).
    #[command(flatten)]
    pub view: crate::exec_view::ViewArgs,
    /// Send this command's stdin to every host as it comes (a host started
    /// later, past the fanout, gets it from the start); without it the
    /// remote stdin is closed.
    #[arg(long)]
    pub stdin: bool,
    /// sudo's password, typed once per host into sudo's own prompt.
    #[command(flatten)]
    pub sudo: crate::sudo_args::SudoArgs,
    /// What failures do, as `tether cp` takes it.
    #[command(flatten)]
    pub failures: FailureArgs,
    /// The command (several words are joined with spaces).
    #[arg(required = true, trailing_var_arg = true)]
    pub command: Vec<String>,
    /// The OpenSSH flags (`-l -p -J -F -i -o`), shared with the other
    /// front-ends.
    #[command(flatten)]
    pub ssh: crate::ssh_opts::SshArgs,
}

/// Arguments of `tether ping`.
#[derive(Debug, Args)]
pub struct PingArgs {
    /// The hosts: a node set (`web[01-10]`, `@group`, `^FILE`); with -C,
    /// some of the cluster's.
    #[arg(short = 'H', long = "hosts", required_unless_present = "cluster")]
    pub hosts: Option<String>,
    /// A cluster from the config file.
    #[arg(short = 'C', long)]
    pub cluster: Option<String>,
    /// The window and how hosts are reached, as `tether exec` takes them.
    #[command(flatten)]
    pub fleet: FleetArgs,
    /// How to print: text (a line per host as it answers) or json (one
    /// object per host, at the end).
    #[arg(long, value_enum, default_value_t = PingOutput::Text)]
    pub output: PingOutput,
    /// The OpenSSH flags (`-l -p -J -F -i -o`), as `tether exec` takes them.
    #[command(flatten)]
    pub ssh: crate::ssh_opts::SshArgs,
}

/// How `tether ping` prints.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum PingOutput {
    /// A line per host as it answers.
    Text,
    /// One JSON object per host, at the end.
    Json,
}

/// Arguments of `tether cp`.
#[derive(Debug, Args)]
#[command(
    // As scp spells it: -P for the port, since -p keeps modes and times.
    mut_arg("port", |port| port.short('P')),
    after_help = "Push: tether cp [-r] [-p] SRC... HOSTS:DEST. Pull: tether cp [-r] [-p] HOSTS:SRC... LOCAL_DIR, each host's copies in LOCAL_DIR/HOST/. HOSTS is a node set (web[01-10], @group); `:DEST` and `:SRC` take the hosts from -H or -C instead. An operand is remote when a `:` comes before any `/` (outside brackets): write ./a:b for a local file named a:b, and give ports with -P or ssh_config. DEST is a directory to copy into when it exists as one, ends with `/`, or several sources are given; else it is the new name of the one source. Every file is written under a temporary name beside its real one (.NAME.tether-XXXXXXXXXXXX) and renamed into place when whole. Exit codes (--exit-code): max (default) is the largest host's code: 0 copied, 1 a file could not be copied, 255 the host could not be reached or was lost; all-zero is 0 when every host copied everything, else 1; first is the first host's."
)]
pub struct CpArgs {
    /// The sources, then the destination (see below).
    #[arg(required = true, num_args = 2.., value_name = "SRC... DEST")]
    pub operands: Vec<std::ffi::OsString>,
    /// Copy directories, with what they hold (links as links; special
    /// files are skipped with a note).
    #[arg(short = 'r', long)]
    pub recursive: bool,
    /// Keep modes and modification times.
    #[arg(short = 'p', long)]
    pub preserve: bool,
    /// Create the destination's missing directories (push), or LOCAL_DIR
    /// (pull).
    #[arg(long)]
    pub mkdir: bool,
    /// The hosts, for operands written `:PATH`: a node set; with -C, some
    /// of the cluster's.
    #[arg(short = 'H', long = "hosts")]
    pub hosts: Option<String>,
    /// A cluster from the config file, for operands written `:PATH`.
    #[arg(short = 'C', long)]
    pub cluster: Option<String>,
    /// The window and how hosts are reached, as `tether exec` takes them.
    #[command(flatten)]
    pub fleet: FleetArgs,
    /// How to print: text (a line per host as it finishes) or json (one
    /// object per host, at the end).
    #[arg(long, value_enum, default_value_t = CpOutput::Text)]
    pub output: CpOutput,
    /// What failures do, as `tether exec` takes it.
    #[command(flatten)]
    pub failures: FailureArgs,
    /// One Ctrl-C cancels, as `tether exec` takes it.
    #[command(flatten)]
    pub cancel: BatchArg,
    /// The OpenSSH flags (`-l -P -J -F -i -o`), as scp spells them (the
    /// port's `-P` is set above).
    #[command(flatten)]
    pub ssh: crate::ssh_opts::SshArgs,
}

/// What `tether exec` and `tether cp` take alike about their hosts: the
/// window, tether's config, and connecting.
#[derive(Debug, Args)]
pub struct FleetArgs {
    /// Most hosts connected at once, 1 or more (default: the config's,
    /// else 64).
    #[arg(short = 'f', long, value_parser = at_least_one)]
    pub fanout: Option<usize>,
    /// tether's config file (default ~/.config/tether/config.toml).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Seconds to connect, authenticate and check the host key (default:
    /// ConnectTimeout from ssh_config, else 10).
    #[arg(short = 't', long = "connect-timeout", value_parser = positive_seconds)]
    pub connect_timeout: Option<f64>,
    /// Ask for a password once and use it for every host (default: once
    /// per host).
    #[arg(long)]
    pub same_password: bool,
    /// Hosts taken away, and patterns every host must match.
    #[command(flatten)]
    pub narrow: NarrowArgs,
    /// Connection steps on stderr, as `tether shell` takes them.
    #[command(flatten)]
    pub steps: StepsArg,
}

/// `-b` on every door that runs on many hosts (`exec`, `cp`, `shell`).
#[derive(Debug, Args, Default, Clone, Copy)]
pub struct BatchArg {
    /// One Ctrl-C cancels (pdsh -b): exec and cp stop every host at once,
    /// instead of first saying which hosts still run; shell ends the line
    /// on every node (INT, then QUIT, TERM and KILL while it runs), instead of
    /// INT alone.
    #[arg(short = 'b', long)]
    pub batch: bool,
}

/// `-v` on every door that reaches many hosts (`exec`, `cp`, `ping`,
/// `shell`).
#[derive(Debug, Args, Default, Clone, Copy)]
pub struct StepsArg {
    /// Verbose (-vv the same): each host's connection steps on stderr,
    /// with the time since the run began: resolving, connecting, the host
    /// key, authentication (exec, cp, ping; shell: each node's resolution,
    /// the steps of the link the daemon made to it, and when its shell
    /// answered or why it could not).
    #[arg(short = 'v', long, action = clap::ArgAction::Count)]
    pub verbose: u8,
}

/// What narrows the hosts a run names (pdsh's `-x`, ClusterShell's `-x`
/// and `--filter`-like globs).
#[derive(Debug, Args, Default, Clone)]
pub struct NarrowArgs {
    /// Leave out these hosts: a node set (`n[1-3]`, `@group`, `^FILE`);
    /// repeatable.
    #[arg(short = 'x', long = "exclude", value_name = "EXPR")]
    pub exclude: Vec<String>,
    /// Keep only the hosts matching PATTERN: a glob on names (`web*`,
    /// `n?`) or a node set; repeatable (each must match).
    #[arg(long, value_name = "PATTERN")]
    pub filter: Vec<String>,
}

impl NarrowArgs {
    /// As the config's selection takes it.
    pub fn narrow(&self) -> tether_cluster::select::Narrow<'_> {
        tether_cluster::select::Narrow {
            exclude: &self.exclude,
            filter: &self.filter,
        }
    }
}

/// What `tether exec` and `tether cp` take alike about failures: the exit
/// code, and failing fast.
#[derive(Debug, Args)]
pub struct FailureArgs {
    /// The exit-code policy: max, all-zero, first.
    #[arg(long = "exit-code", value_enum, default_value_t = ExitPolicy::Max)]
    pub exit_code: ExitPolicy,
    /// After the first failure, start no more hosts and cancel those running.
    #[arg(long)]
    pub fail_fast: bool,
}

/// A number of seconds more than 0 (and finite), for a flag.
fn positive_seconds(arg: &str) -> Result<f64, String> {
    match arg.parse::<f64>() {
        Ok(s) if s.is_finite() && s > 0.0 => Ok(s),
        _ => Err(format!("{arg:?} is not a number of seconds more than 0")),
    }
}

/// A count of 1 or more, for a flag.
fn at_least_one(arg: &str) -> Result<usize, String> {
    match arg.parse::<usize>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(format!("{arg:?} is not a whole number of 1 or more")),
    }
}

/// `tether cp --output`.
#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
pub enum CpOutput {
    /// A line per host as it finishes (failures on stderr).
    Text,
    /// One JSON object per host, at the end.
    Json,
}

/// `tether exec --output`.
#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
pub enum OutputMode {
    /// `host: line` as lines arrive (stderr lines on stderr).
    Stream,
    /// Identical results folded under one node-set header, at the end.
    Gather,
    /// One JSON object per host, at the end.
    Json,
    /// `DIR/HOST.stdout`, `.stderr` and `.status`.
    Dir,
    /// A unified diff of each group of identical outputs against the
    /// largest group's, at the end (`clush --diff`).
    Diff,
}

/// `tether exec --exit-code` and `tether cp --exit-code`.
#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
pub enum ExitPolicy {
    /// The largest exit code (failures count as 255).
    Max,
    /// 0 when every host exited 0, else 1.
    AllZero,
    /// The first host's.
    First,
}

/// Arguments of `tether hosts`.
#[derive(Debug, Args)]
#[command(
    after_help = "Syntax: web[01-10] (ranges keep their padding), n[1-9/2] (steps), rack[1-2]-n[1-3] (several ranges), a,b (union), a!b (difference), a&b (intersection), a^b (symmetric difference), evaluated left to right; whitespace between terms is a union; user@host:port and [IPv6] are host names. Groups: @name (the config's [groups], else ClusterShell's default source), @source:name, @* and @source:* (every node), @@source (the group names), from ClusterShell's groups.conf where ClusterShell reads it."
)]
pub struct HostsArgs {
    /// Print every host, separated by spaces.
    #[arg(short, long, group = "form")]
    pub expand: bool,
    /// Print the folded set (the default).
    #[arg(short, long, group = "form")]
    pub fold: bool,
    /// Print how many hosts.
    #[arg(short, long, group = "form")]
    pub count: bool,
    /// tether's config file, for `@groups` and `[group_sources]` (default
    /// ~/.config/tether/config.toml).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Hosts taken away, and patterns every host must match.
    #[command(flatten)]
    pub narrow: NarrowArgs,
    /// List the groups of every source (tether's [groups], ClusterShell's
    /// groups.conf): name as typed, size, source, nodes; given node sets,
    /// only the groups holding any of their nodes, with those nodes (a
    /// source's `reverse` upcall finds them where it has one).
    #[arg(long, group = "list", conflicts_with_all = ["expand", "fold", "count"])]
    pub list_groups: bool,
    /// List the config's clusters: name, size, node set.
    #[arg(long, group = "list", conflicts_with_all = ["expand", "fold", "count"])]
    pub list_clusters: bool,
    /// The node sets (several are joined as a union; `^FILE` reads a host
    /// file).
    #[arg(required_unless_present = "list")]
    pub sets: Vec<String>,
}

/// Arguments of `tether completions`.
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to complete in.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// Arguments of `tether term`.
#[derive(Debug, Args)]
pub struct TermArgs {
    /// What to produce.
    #[arg(value_enum)]
    pub mode: TermMode,
    /// The byte stream to read; stdin when absent.
    pub file: Option<PathBuf>,
}

/// Outputs of `tether term`.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum TermMode {
    /// The text a program would read (controls applied, sequences removed).
    Project,
    /// The stream with leaked terminal replies removed, byte for byte.
    Filter,
    /// The terminal modes left on at the end, and the bytes that undo them.
    Modes,
    /// Every sequence the scanner found, one per line.
    Scan,
}

/// The shell dialects `--shell` takes: the engine's, with what each is.
fn shell_names() -> PossibleValuesParser {
    PossibleValuesParser::new(
        tether_shell::dialect::KNOWN
            .iter()
            .map(|(name, what)| PossibleValue::new(*name).help(*what)),
    )
}

/// Arguments of `tether mcp`.
#[derive(Debug, Args)]
pub struct McpArgs {
    /// Start sessions without the user's start-up files.
    #[arg(long)]
    pub norc: bool,
    /// Whether tether may run on the hosts the tools' `host` names.
    #[command(flatten)]
    pub far: crate::host_route::FarArgs,
    /// The confinement of every session the agent starts, and the least
    /// its calls may ask (they may tighten it, never loosen it).
    #[command(flatten)]
    pub confine: crate::confine_args::ConfineArgs,
}
