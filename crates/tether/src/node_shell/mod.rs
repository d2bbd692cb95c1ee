//! `tether shell -H EXPR`: many nodes, one prompt. Each node has a
//! persistent shell in the daemon (the engine over SSH, as `tether run
//! --host`), in a namespace of the session's name, so `!detach` leaves
//! them all running and `tether shell --attach NAME` comes back to them.
//! Lines go to the active nodes and their output comes back prefixed by
//! node (or gathered); `!` commands choose nodes, list them, broadcast,
//! and attach a full terminal to one node's shell. The pure parts (the
//! `!` parser, the prompt, the summary) are `tether_cluster::multi`.

mod editor;
mod meta;
mod nodes;
mod printer;
mod runner;
mod settings;

use std::sync::mpsc;
use std::time::Instant;

use anyhow::{Result, bail};
use rustyline::error::ReadlineError;
use rustyline::history::FileHistory;
use tether_cluster::NodeSet;
use tether_cluster::multi::{self, Line, NodeState, Outcome};
use tether_daemon::protocol::{ListReply, Request};

use crate::cli::ShellArgs;
use crate::ssh_opts;
use nodes::Node;
use printer::Printer;
use runner::{Ask, Ended, Event, Pool};

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
}

pub fn run(args: ShellArgs) -> Result<i32> {
    let config = ssh_opts::load_config(args.config.as_deref())?;
    let (name, names) = match (&args.attach, &args.hosts, &args.cluster) {
        (Some(name), None, None) => (name.clone(), existing_nodes(name)?),
        (None, Some(expr), None) => {
            let set = config.nodes(expr)?;
            (args.name.clone().unwrap_or_else(|| set.fold()), set.names())
        }
        (None, None, Some(cluster)) => {
            let (set, _) = config.cluster(cluster)?;
            (
                args.name.clone().unwrap_or_else(|| cluster.clone()),
                set.names(),
            )
        }
        _ => bail!("name the nodes with -H or a cluster with -C, or a session with --attach"),
    };
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
    let mut sh = MultiShell {
        pool: Pool::new(namespace(&name), names.len()),
        ns: namespace(&name),
        name,
        nodes: names.iter().cloned().map(Node::new).collect(),
        names,
        look,
        config,
    };
    watch_ctrl_c(sh.pool.interrupts());
    sh.session_loop()
}

/// The nodes of an existing multi-node session `name`.
fn existing_nodes(name: &str) -> Result<Vec<String>> {
    let mut client = runner::connect(&namespace(name))?;
    let list: ListReply = client.request(&Request::List { all: false })?;
    let mut set = NodeSet::new();
    for s in &list.sessions {
        set.insert(&s.name);
    }
    if set.is_empty() {
        bail!(
            "there is no tether shell named {name:?}; start one with `tether shell -H NODES --name {name}`"
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
        let all: Vec<usize> = (0..self.nodes.len()).collect();
        println!(
            "tether shell {}: {} nodes ({}); {}help lists the commands",
            self.name,
            self.nodes.len(),
            fold(&self.names),
            self.look.prefix
        );
        self.execute("true", &all, false);
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
            if !line.trim().is_empty() {
                let _ = rl.add_history_entry(line.as_str());
                if let Some(file) = &history {
                    let _ = rl.save_history(file);
                }
            }
            let parsed = match multi::parse(&line, self.look.prefix) {
                Ok(p) => p,
                Err(e) => {
                    eprintln!("tether: {e}");
                    continue;
                }
            };
            match parsed {
                Line::Empty => {}
                Line::Run(command) => {
                    let active: Vec<usize> = (0..self.nodes.len())
                        .filter(|&i| self.nodes[i].selected)
                        .collect();
                    self.execute(&command, &active, true);
                }
                Line::Meta(meta) => {
                    if let Some(code) = self.meta(meta)? {
                        return Ok(code);
                    }
                }
            }
        }
    }

    /// Runs `command` on `targets`; `summary`: print the outcome line.
    fn execute(&mut self, command: &str, targets: &[usize], summary: bool) {
        self.pool.settle();
        let now = Instant::now();
        // A node that could not be reached waits for its next try (the
        // prompt shows it down; `!list` says why).
        let go: Vec<usize> = targets
            .iter()
            .copied()
            .filter(|&i| self.nodes[i].reachable_now(now))
            .collect();
        // A command left running on a node is collected first: by the
        // job that ran it when that job was left running (a second
        // Ctrl-C), else (it waited for input) by a new one.
        let pending: Vec<usize> = go
            .iter()
            .copied()
            .filter(|&i| self.nodes[i].pending())
            .collect();
        if !pending.is_empty() {
            for &i in &pending {
                if !self.pool.busy(i) {
                    self.pool.start(i, self.names[i].clone(), Ask::Collect);
                }
            }
            let mut printer = self.printer();
            let ends = self.wait(&pending, &mut printer);
            self.record(ends);
        }
        let go: Vec<usize> = go
            .into_iter()
            .filter(|&i| {
                let busy = self.nodes[i].pending();
                if busy {
                    eprintln!(
                        "tether: {} still runs its last command; not sent there ({}attach {} to see it)",
                        self.names[i], self.look.prefix, self.names[i]
                    );
                }
                !busy
            })
            .collect();
        if go.is_empty() {
            return;
        }
        for &i in &go {
            self.pool
                .start(i, self.names[i].clone(), Ask::Run(command.to_owned()));
        }
        let mut printer = self.printer();
        let ends = self.wait(&go, &mut printer);
        let results = self.record(ends);
        if summary {
            self.report(&results);
        }
    }

    /// Waits for `targets`, printing what they print; a node left running
    /// (a second Ctrl-C) keeps its job for the next line.
    fn wait(&mut self, targets: &[usize], printer: &mut Printer) -> Vec<(usize, Option<Ended>)> {
        self.pool.wait(&self.names, targets, printer)
    }

    /// The summary line of a line's outcomes, and how to answer the nodes
    /// waiting for input.
    fn report(&self, results: &[(usize, Outcome)]) {
        if !results.is_empty() {
            let named: Vec<(&str, Outcome)> = results
                .iter()
                .map(|(i, o)| (self.names[*i].as_str(), o.clone()))
                .collect();
            let line = multi::summary(&named);
            if self.look.color {
                println!("\x1b[2m{line}\x1b[0m");
            } else {
                println!("{line}");
            }
        }
        if !self.look.waiting_hint {
            return;
        }
        let waiting: Vec<String> = results
            .iter()
            .filter(|(_, o)| matches!(o, Outcome::Waiting(_)))
            .map(|(i, _)| self.names[*i].clone())
            .collect();
        if let Some(first) = waiting.first() {
            println!(
                "{} {} for input: {p}send TEXT types a line there, {p}attach {first} shows one",
                fold(&waiting),
                if waiting.len() == 1 { "waits" } else { "wait" },
                p = self.look.prefix
            );
        }
    }

    /// Takes each node's end into its state; returns the outcomes.
    fn record(&mut self, ends: Vec<(usize, Option<Ended>)>) -> Vec<(usize, Outcome)> {
        let now = Instant::now();
        let mut out = Vec::new();
        for (i, end) in ends {
            let node = &mut self.nodes[i];
            let outcome = match &end {
                None => Outcome::Running,
                Some(e) => e.outcome(),
            };
            match end {
                Some(Ended::Result(r)) => {
                    if r.shell_restarted && node.last.is_some() {
                        eprintln!(
                            "tether: {}: a fresh shell (the last one ended, or its connection was lost); its cwd and exported variables were restored",
                            node.name
                        );
                    }
                    node.down = None;
                    if r.cwd.is_some() {
                        node.cwd = r.cwd;
                    }
                    node.last_ms = Some(r.duration_ms);
                }
                Some(Ended::Unreachable(why)) if node.failed(why.clone(), now) => {
                    let why = why
                        .strip_prefix(&format!("{}: ", node.name))
                        .unwrap_or(&why);
                    eprintln!(
                        "tether: {}: cannot reach it: {why} (tried again later, less and less often)",
                        node.name
                    );
                }
                Some(Ended::Refused(why) | Ended::Lost(why)) => {
                    eprintln!("tether: {}: {why}", node.name);
                }
                Some(Ended::Unreachable(_)) | None => {}
            }
            node.last = Some(outcome.clone());
            out.push((i, outcome));
        }
        out
    }

    /// `!send TEXT`: the line typed into every node waiting for input.
    fn answer(&mut self, text: &str) {
        let waiting: Vec<usize> = (0..self.nodes.len())
            .filter(|&i| matches!(self.nodes[i].last, Some(Outcome::Waiting(_))))
            .collect();
        if waiting.is_empty() {
            eprintln!("tether: no node is waiting for input");
            return;
        }
        self.pool.settle();
        for &i in &waiting {
            self.pool
                .start(i, self.names[i].clone(), Ask::Answer(text.to_owned()));
        }
        let mut printer = self.printer();
        let ends = self.wait(&waiting, &mut printer);
        let results = self.record(ends);
        self.report(&results);
    }

    fn printer(&self) -> Printer {
        Printer::new(
            &self.names,
            self.look.color,
            self.look.gather,
            self.look.timestamps.then(Instant::now),
        )
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
                    None | Some(Outcome::Exit(0) | Outcome::Running | Outcome::Waiting(_))
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

    /// `!exit`: every node's shell closed.
    fn close_all(&self) {
        let threads: Vec<_> = self
            .names
            .iter()
            .map(|n| {
                let (ns, session) = (self.ns.clone(), n.clone());
                std::thread::spawn(move || {
                    let _ =
                        runner::connect(&ns).and_then(|mut c| c.call(&Request::Close { session }));
                })
            })
            .collect();
        for t in threads {
            let _ = t.join();
        }
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
