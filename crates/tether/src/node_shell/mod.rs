//! `tether shell -H EXPR`: many nodes, one prompt. Each node has a
//! persistent shell in the daemon (the engine over SSH, as `tether run
//! --host`), in a namespace of the session's name, so `!detach` leaves
//! them all running and `tether shell --attach NAME` comes back to them.
//! Lines go to the active nodes and their output comes back prefixed by
//! node (or gathered); `!` commands choose nodes, list them, broadcast,
//! and attach a full terminal to one node's shell. A line's life (its
//! continuation prompt, its end shown once) is `lines.rs`; which ends are
//! still owed, for a client that comes back, `journal.rs`. The pure parts
//! (the `!` parser, the prompt, the summaries) are `tether_cluster::multi`.
//! Each node is resolved here, as `tether exec` resolves it with the same
//! flags (a cluster's settings with `-C`), and its route goes with its
//! `run` requests (`host_route.rs`). `!add` and `!drop` grow and shrink a
//! live session (`grow.rs`); the shells `!drop --keep` left running apart
//! are listed in `apart.rs`.

mod apart;
mod editor;
mod grow;
mod journal;
mod lines;
mod meta;
mod nodes;
mod printer;
mod runner;
mod settings;
mod worker;

use std::sync::mpsc;
use std::time::Instant;

use anyhow::{Result, bail};
use rustyline::error::ReadlineError;
use rustyline::history::FileHistory;
use tether_cluster::NodeSet;
use tether_cluster::multi::{self, Line, Meta, NodeState, Outcome};
use tether_daemon::protocol::{ListReply, Request};

use crate::cli::ShellArgs;
use crate::host_route::Reach;
use crate::ssh_opts;
use apart::Apart;
use journal::Journal;
use nodes::Node;
use runner::{Event, Pool};

/// The session's namespace in the daemon.
fn namespace(name: &str) -> String {
    format!("shell-{name}")
}

/// The multi-node session.
struct MultiShell {
    name: String,
    ns: String,
    nodes: Vec<Node>,
    names: Vec<String>,
    look: settings::Look,
    config: tether_cluster::config::Config,
    /// A worker per node, kept from line to line, and their jobs.
    pool: Pool,
    /// The lines whose end was not shown yet, for a client that comes back.
    journal: Journal,
    /// How the session's nodes are reached (and `!add`'s are).
    reach: Reach,
    /// The nodes `!drop --keep` left running apart.
    apart: Apart,
    /// `-v`: when the session began.
    steps: Option<Instant>,
}

pub fn run(args: ShellArgs) -> Result<i32> {
    let t0 = (args.steps.verbose > 0).then(Instant::now);
    let config = ssh_opts::load_config(args.config.as_deref())?;
    // The settings are the cluster's with -C, else the defaults, as
    // `tether exec` takes them.
    // `--attach NAME` alone finds the nodes in this machine's daemon; with
    // -H or -C (another machine: the shells live in tether on the nodes)
    // the nodes are those named, their sessions found there by name.
    let (name, names, settings) = match (&args.attach, &args.hosts, &args.cluster) {
        (Some(_), None, None)
            if !(args.narrow.exclude.is_empty() && args.narrow.filter.is_empty()) =>
        {
            bail!(
                "-x and --filter narrow -H or -C; --attach NAME alone comes back to the nodes the session has"
            )
        }
        (Some(name), None, None) => (
            name.clone(),
            existing_nodes(name, &mut Apart::load(&namespace(name)))?,
            config.defaults.clone(),
        ),
        (attach, hosts, cluster) if hosts.is_some() || cluster.is_some() => {
            let (set, settings) = config.select_narrowed(
                cluster.as_deref(),
                hosts.as_deref(),
                args.narrow.narrow(),
            )?;
            let name = attach.clone().or_else(|| args.name.clone());
            let default = match (cluster, hosts) {
                (Some(c), None) => c.clone(),
                _ => set.fold(),
            };
            (name.unwrap_or(default), set.names(), settings)
        }
        _ => bail!("name the nodes with -H or a cluster with -C, or a session with --attach"),
    };
    // (-H and -C name hosts: `select` refused an empty set.)
    if names.is_empty() {
        bail!("the node set names no hosts");
    }
    if name.is_empty() || name.contains('/') || name.chars().any(char::is_control) {
        bail!("--name {name:?}: give a name without '/' or control characters");
    }
    let look = settings::Look::new(
        &config.shell_settings(args.cluster.as_deref()),
        &args,
        &name,
    )?;
    let (reach, hosts) = routes(&args, &settings, &names)?;
    for (n, host) in names.iter().zip(&hosts) {
        grow::step(t0, n, &grow::resolved(host));
    }
    let mut apart = Apart::load(&namespace(&name));
    // A session started again with -H or -C takes back the nodes it names;
    // shells closed since are forgotten.
    apart.take_back(&names);
    if !apart.nodes.is_empty()
        && let Ok(list) = worker::connect(&namespace(&name))
            .and_then(|mut c| c.request::<ListReply>(&Request::List { all: false }))
    {
        apart.forget_closed(&list.sessions);
    }
    let journal = Journal::new(&namespace(&name));
    // Lines a client before this one sent whose end it did not show.
    let owed = journal.load();
    let nodes = names
        .iter()
        .map(|n| {
            let mut node = Node::new(n.clone());
            if let Some(line) = owed.get(n) {
                node.line = Some(line.clone());
                node.last = Some(Outcome::Running);
            }
            node
        })
        .collect();
    // Asked before anything starts, so the prompt is the only thing shown.
    let sudo = args.sudo.sudo()?;
    let mut sh = MultiShell {
        pool: Pool::new(namespace(&name), hosts, args.cancel.batch).with_sudo(sudo),
        ns: namespace(&name),
        name,
        nodes,
        names,
        look,
        config,
        journal,
        reach,
        apart,
        steps: t0,
    };
    watch_ctrl_c(sh.pool.interrupts());
    sh.session_loop()
}

/// How each node is reached, resolved here as `tether exec` resolves it
/// (a mistake in the OpenSSH client config stops the session before it
/// starts; a node that cannot be resolved is a node that cannot be
/// reached). A node's session keeps the route it started with.
fn routes(
    args: &ShellArgs,
    settings: &tether_cluster::config::Settings,
    names: &[String],
) -> Result<(
    Reach,
    Vec<Result<tether_daemon::protocol::HostRoute, String>>,
)> {
    let reach = crate::host_route::reach(&args.ssh, args.far, settings)?;
    if let Some(first) = names
        .first()
        .and_then(|n| tether_cluster::exec::HostSpec::parse(n).ok())
    {
        ssh_opts::check_ssh_config(&reach.ov, &first.host)?;
    }
    let hosts = names
        .iter()
        .map(|n| crate::host_route::resolve(n, &reach))
        .collect();
    Ok((reach, hosts))
}

/// The nodes of an existing multi-node session `name`: the shells of its
/// namespace, less those kept `apart` (which forgets the shells closed
/// since).
fn existing_nodes(name: &str, apart: &mut Apart) -> Result<Vec<String>> {
    let mut client = worker::connect(&namespace(name))?;
    let list: ListReply = client.request(&Request::List { all: false })?;
    apart.forget_closed(&list.sessions);
    let mut set = NodeSet::new();
    for s in list
        .sessions
        .iter()
        .filter(|s| !apart.nodes.contains(&s.name))
    {
        set.insert(&s.name);
    }
    if set.is_empty() {
        let kept: Vec<String> = list
            .sessions
            .iter()
            .filter(|s| apart.nodes.contains(&s.name))
            .map(|s| s.address.clone())
            .collect();
        let kept = if kept.is_empty() {
            String::new()
        } else {
            format!(
                " (shells kept apart by !drop --keep: {}; `tether attach ADDRESS` shows one)",
                kept.join(", ")
            )
        };
        bail!(
            "there is no tether shell named {name:?}{kept}; start one with `tether shell -H NODES --name {name}`"
        );
    }
    Ok(set.names())
}

/// Ctrl-C while a line runs (the terminal is not raw then) becomes an
/// event; at the prompt the editor reads it as a key.
fn watch_ctrl_c(tx: mpsc::Sender<Event>) {
    let watched = crate::run_interrupt::on_own_thread("ctrl-c", async move {
        use tokio::signal::unix::{SignalKind, signal};
        let Ok(mut int) = signal(SignalKind::interrupt()) else {
            return;
        };
        while int.recv().await.is_some() {
            if tx.send(Event::Interrupt).is_err() {
                return;
            }
        }
    });
    if let Err(e) = watched {
        eprintln!("tether: Ctrl-C will end tether shell, not the commands ({e})");
    }
}

impl MultiShell {
    fn session_loop(&mut self) -> Result<i32> {
        outln!(
            "tether shell {}: {} nodes ({}); {}help lists the commands",
            self.name,
            self.nodes.len(),
            fold(&self.names),
            self.look.prefix
        );
        self.tell_apart();
        self.resume();
        let history = self.look.history.clone();
        let config = rustyline::Config::builder()
            .auto_add_history(false)
            .history_ignore_space(true)
            .max_history_size(10_000)?
            .build();
        let mut rl: rustyline::Editor<editor::Complete, FileHistory> =
            rustyline::Editor::with_config(config)?;
        rl.set_helper(Some(editor::Complete {
            prefix: self.look.prefix,
            nodes: self.names.clone(),
        }));
        if let Some(file) = &history {
            let _ = rl.load_history(file);
        }
        loop {
            // (`!add` and `!drop` change the nodes completion offers.)
            if let Some(h) = rl.helper_mut()
                && h.nodes != self.names
            {
                h.nodes.clone_from(&self.names);
            }
            let prompt = self.prompt();
            // (The editor keeps what it read past a line, with the
            // buffer-redux feature: lines typed ahead are not lost.)
            let line = match rl.readline(&prompt) {
                Ok(line) => line,
                Err(ReadlineError::Interrupted) => continue,
                Err(ReadlineError::Eof) => {
                    if self.confirm_exit(&mut rl)? {
                        self.close_all();
                        return Ok(0);
                    }
                    continue;
                }
                Err(e) => return Err(e.into()),
            };
            let parsed = multi::parse(&line, self.look.prefix);
            // A command line goes to the history whole, with the lines
            // typed at the continuation prompt; others as typed.
            let targets: Option<(String, Vec<usize>)> = match &parsed {
                Ok(Line::Run(command)) => Some((
                    command.clone(),
                    (0..self.nodes.len())
                        .filter(|&i| self.nodes[i].selected)
                        .collect(),
                )),
                Ok(Line::Meta(Meta::Broadcast(command))) => {
                    Some((command.clone(), (0..self.nodes.len()).collect()))
                }
                _ => None,
            };
            let mut typed = line.clone();
            if let Some((command, targets)) = targets {
                typed.push_str(&self.run_line(&mut rl, command, &targets)?);
            }
            if !typed.trim().is_empty() {
                let _ = rl.add_history_entry(typed.as_str());
                if let Some(file) = &history {
                    let _ = rl.save_history(file);
                }
            }
            let parsed = match parsed {
                Ok(p) => p,
                Err(e) => {
                    eprintln!("tether: {e}");
                    continue;
                }
            };
            match parsed {
                Line::Empty | Line::Run(_) | Line::Meta(Meta::Broadcast(_)) => {}
                Line::Meta(meta) => {
                    if let Some(code) = self.meta(meta)? {
                        return Ok(code);
                    }
                }
            }
        }
    }

    fn prompt(&self) -> String {
        let states: Vec<(&str, NodeState)> = self
            .nodes
            .iter()
            .map(|n| (n.name.as_str(), n.state()))
            .collect();
        let active: Vec<&Node> = self
            .nodes
            .iter()
            .filter(|n| n.selected && n.down.is_none())
            .collect();
        let cwd = active.first().and_then(|first| {
            let cwd = first.cwd.as_deref()?;
            active
                .iter()
                .all(|n| n.cwd.as_deref() == Some(cwd))
                .then_some(cwd)
        });
        let failed = active
            .iter()
            .filter(|n| {
                !matches!(
                    n.last,
                    None | Some(
                        Outcome::Exit(0)
                            | Outcome::Running
                            | Outcome::Waiting(_)
                            | Outcome::Away(_)
                    )
                )
            })
            .count();
        multi::render(&states, cwd, failed, &self.look.prompt)
    }

    fn confirm_exit(
        &self,
        rl: &mut rustyline::Editor<editor::Complete, FileHistory>,
    ) -> Result<bool> {
        let busy: Vec<String> = self
            .nodes
            .iter()
            .filter(|n| n.pending())
            .map(|n| n.name.clone())
            .collect();
        if busy.is_empty() {
            return Ok(true);
        }
        let question = format!(
            "{} still run a command; exit and close every node's shell? [y/N] ",
            fold(&busy)
        );
        Ok(match rl.readline(&question) {
            Ok(answer) => matches!(answer.trim(), "y" | "Y" | "yes"),
            Err(_) => true,
        })
    }

    /// `!exit`: every node's shell closed (not those kept apart).
    fn close_all(&self) {
        self.journal.remove();
        self.close(&self.names);
        self.tell_apart();
    }
}

/// The folded node set of `names`.
fn fold(names: &[String]) -> String {
    let mut set = NodeSet::new();
    for n in names {
        set.insert(n);
    }
    set.fold()
}
