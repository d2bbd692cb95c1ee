//! A line's life at the multi-node prompt: sent to the nodes (whole: a
//! line every node finds unfinished, as a heredoc's first line, waits for
//! more at the continuation prompt), followed, and its end shown once per
//! node. A node whose earlier line has not ended (left running by a second
//! Ctrl-C, waiting for input, or found running by a client that came back)
//! gets that line collected first, its end shown as the earlier line's
//! (`earlier line `…`: node2: 3`). Which lines still owe an end is kept in
//! the session's [`Journal`](super::journal::Journal) for a client that
//! comes back. `!send` types only into a node still waiting, checked by
//! the daemon when it types.

use std::collections::BTreeMap;
use std::time::Instant;

use anyhow::Result;
use rustyline::error::ReadlineError;
use rustyline::history::FileHistory;
use tether_cluster::multi::{self, Outcome};

use super::printer::Printer;
use super::runner::{Ask, Ended};
use super::{MultiShell, editor, fold};

/// The prompt for the rest of an unfinished line (bash's `PS2`).
const CONTINUATION: &str = "> ";

/// What became of a line sent to the nodes.
pub(super) enum Sent {
    /// It ran (or was refused) on every node it went to.
    Done,
    /// Every node found it unfinished (an open quote, a heredoc, a
    /// block): nothing ran; more of it is needed.
    Unfinished,
}

impl MultiShell {
    /// Runs `command` on `targets`, reading more at the continuation
    /// prompt while every node finds it unfinished; Ctrl-C there drops it,
    /// Ctrl-D refuses it. Returns what was typed after the first line.
    pub(super) fn run_line(
        &mut self,
        rl: &mut rustyline::Editor<editor::Complete, FileHistory>,
        mut command: String,
        targets: &[usize],
    ) -> Result<String> {
        let mut more = String::new();
        loop {
            if let Sent::Done = self.execute(&command, targets, true) {
                return Ok(more);
            }
            match rl.readline(CONTINUATION) {
                Ok(next) => {
                    for text in [&mut command, &mut more] {
                        text.push('\n');
                        text.push_str(&next);
                    }
                }
                Err(ReadlineError::Interrupted) => return Ok(more),
                Err(ReadlineError::Eof) => {
                    eprintln!(
                        "tether: the line is unfinished (an open quote, a heredoc or a block): not run"
                    );
                    return Ok(more);
                }
                Err(e) => return Err(e.into()),
            }
        }
    }

    /// At the start: the lines a client before this one left owing an
    /// end are looked at once (output not yet shown, their end if they
    /// ended); then every other node's shell is started.
    pub(super) fn resume(&mut self) {
        let owed: Vec<usize> = (0..self.nodes.len())
            .filter(|&i| self.nodes[i].line.is_some())
            .collect();
        if !owed.is_empty() {
            self.collect(&owed, || Ask::Look);
        }
        let rest: Vec<usize> = (0..self.nodes.len())
            .filter(|&i| !self.nodes[i].pending())
            .collect();
        self.execute("true", &rest, false);
    }

    /// Runs `command` on `targets`; `summary`: a line the person typed
    /// (its outcome shown, its end owed until shown).
    pub(super) fn execute(&mut self, command: &str, targets: &[usize], summary: bool) -> Sent {
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
            self.collect(&pending, || Ask::Collect);
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
            return Sent::Done;
        }
        if summary {
            for &i in &go {
                self.nodes[i].line = Some(command.to_owned());
            }
            self.save_journal();
        }
        for &i in &go {
            self.pool
                .start(i, self.names[i].clone(), Ask::Run(command.to_owned()));
        }
        let mut printer = self.printer();
        // (`-v` says when each node's shell answered at its start.)
        let told = if summary { None } else { self.steps };
        let ends = self.pool.wait(&self.names, &go, &mut printer, told);
        let unfinished = ends
            .iter()
            .all(|(_, e)| matches!(e.as_ref().map(Ended::outcome), Some(Outcome::Incomplete)));
        if unfinished && summary {
            for &i in &go {
                self.nodes[i].line = None;
            }
            self.save_journal();
            return Sent::Unfinished;
        }
        let results = self.record(ends);
        if summary {
            self.report(&results);
        }
        self.settle_lines(&results);
        Sent::Done
    }

    /// Collects the earlier lines of `nodes` (`ask`: how), showing their
    /// output and their ends as the earlier lines'.
    fn collect(&mut self, nodes: &[usize], ask: fn() -> Ask) {
        for &i in nodes {
            if !self.pool.busy(i) {
                self.pool.start(i, self.names[i].clone(), ask());
            }
        }
        let mut printer = self.printer();
        let ends = self.pool.wait(&self.names, nodes, &mut printer, None);
        let results = self.record(ends);
        self.report_earlier(&results);
        self.settle_lines(&results);
    }

    /// `!send TEXT`: the line typed into every node waiting for input,
    /// and every node whose command from before was not followed yet (a
    /// client that came back cannot tell a wait from a run at a glance),
    /// each checked by the daemon when it types: a node that does not wait
    /// gets nothing, is said so, and is looked at once (its end shown if it
    /// came; else the next line there follows it).
    pub(super) fn answer(&mut self, text: &str) {
        let waiting: Vec<usize> = (0..self.nodes.len())
            .filter(|&i| match self.nodes[i].last {
                Some(Outcome::Waiting(_)) => true,
                Some(Outcome::Running) => !self.pool.busy(i),
                _ => false,
            })
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
        let ends = self.pool.wait(&self.names, &waiting, &mut printer, None);
        let results = self.record(ends);
        self.report(&results);
        self.settle_lines(&results);
    }

    /// The summary line of a line's outcomes, and how to answer the nodes
    /// waiting for input.
    fn report(&self, results: &[(usize, Outcome)]) {
        if !results.is_empty() {
            let named: Vec<(&str, Outcome)> = results
                .iter()
                .map(|(i, o)| (self.names[*i].as_str(), o.clone()))
                .collect();
            self.dim(&multi::summary(&named));
        }
        self.hint(results);
    }

    /// The outcomes of earlier lines, one summary per line.
    fn report_earlier(&self, results: &[(usize, Outcome)]) {
        let mut by_line: BTreeMap<Option<&str>, Vec<(&str, Outcome)>> = BTreeMap::new();
        for (i, o) in results {
            by_line
                .entry(self.nodes[*i].line.as_deref())
                .or_default()
                .push((self.names[*i].as_str(), o.clone()));
        }
        for (line, named) in by_line {
            self.dim(&multi::earlier(line, &named));
        }
        self.hint(results);
    }

    fn dim(&self, line: &str) {
        if self.look.color {
            outln!("\x1b[2m{line}\x1b[0m");
        } else {
            outln!("{line}");
        }
    }

    /// How to answer the nodes waiting for input.
    fn hint(&self, results: &[(usize, Outcome)]) {
        if !self.look.waiting_hint {
            return;
        }
        let waiting: Vec<String> = results
            .iter()
            .filter(|(_, o)| matches!(o, Outcome::Waiting(_)))
            .map(|(i, _)| self.names[*i].clone())
            .collect();
        if let Some(first) = waiting.first() {
            outln!(
                "{} {} for input: {p}send TEXT types a line there (if it still waits), {p}attach {first} shows one",
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
                    // The daemon's message names the host once, in front.
                    eprintln!(
                        "tether: cannot reach {why} (tried again later, less and less often)"
                    );
                }
                Some(Ended::Busy) => {
                    // A command from before (this client lost track of it)
                    // holds the shell; the next line there collects it.
                    let this = if node.line.take().is_some() {
                        "this line was not run there: "
                    } else {
                        ""
                    };
                    eprintln!(
                        "tether: {}: {this}a command from before still runs there; the next line sent there first shows its end",
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

    /// The lines whose end was just shown owe nothing more.
    fn settle_lines(&mut self, results: &[(usize, Outcome)]) {
        let mut changed = false;
        for (i, _) in results {
            let node = &mut self.nodes[*i];
            if !node.pending() && node.line.is_some() {
                node.line = None;
                changed = true;
            }
        }
        if changed {
            self.save_journal();
        }
    }

    pub(super) fn save_journal(&self) {
        let owed = self
            .nodes
            .iter()
            .filter_map(|n| Some((n.name.clone(), n.line.clone()?)))
            .collect();
        self.journal.save(&owed);
    }

    pub(super) fn printer(&self) -> Printer {
        Printer::new(
            &self.names,
            self.look.color,
            self.look.gather,
            self.look.timestamps.then(Instant::now),
        )
    }
}
