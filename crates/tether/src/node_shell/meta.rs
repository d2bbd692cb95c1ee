//! The `!` commands of `tether shell`: choosing nodes, listing them, the
//! session's status, attaching to one node's shell, leaving (adding and
//! dropping nodes: `grow.rs`).

use anyhow::Result;
use tether_cluster::multi::{COMMANDS, Meta, NodeState, Outcome};

use super::nodes::Node;
use super::{MultiShell, fold};

impl MultiShell {
    /// A `!` command; `Some(code)` when the session is left.
    pub(super) fn meta(&mut self, meta: Meta) -> Result<Option<i32>> {
        match meta {
            Meta::List => self.list(),
            Meta::Use(expr) | Meta::Select(expr) => self.select(&expr),
            Meta::All => self.nodes.iter_mut().for_each(|n| n.selected = true),
            Meta::Add(expr) => self.add(&expr),
            Meta::Drop { expr, keep } => self.drop_nodes(&expr, keep),
            // (Run by the loop, with its continuation lines.)
            Meta::Broadcast(_) => {}
            Meta::Gather(on) => self.look.gather = on,
            Meta::Send(text) => self.answer(&text),
            Meta::Status => self.status(),
            Meta::Attach(node) => self.attach(&node),
            Meta::Help => {
                for (name, arg, what) in COMMANDS {
                    let usage = format!("{}{name} {arg}", self.look.prefix);
                    outln!("  {usage:<20} {what}");
                }
                outln!(
                    "  {:<20} make NODE (or a node set) the active nodes",
                    format!("{}NODE", self.look.prefix)
                );
                outln!("  other lines run on the active nodes; Ctrl-C interrupts them there");
            }
            Meta::Exit => {
                self.close_all();
                return Ok(Some(0));
            }
            Meta::Detach => {
                outln!(
                    "detached; every node's shell keeps running: `tether shell --attach {}` comes back",
                    self.name
                );
                return Ok(Some(0));
            }
        }
        Ok(None)
    }

    fn list(&self) {
        let width = self.names.iter().map(String::len).max().unwrap_or(4).max(4);
        outln!(
            "{:<width$}  {:<8}  {:<5}  {:>8}  CWD",
            "NODE",
            "STATE",
            "LAST",
            "TIME"
        );
        for n in &self.nodes {
            let state = match n.state() {
                NodeState::Active => "active",
                NodeState::Inactive => "inactive",
                NodeState::Down => "down",
                NodeState::Away => "away",
            };
            let last = match &n.last {
                Some(Outcome::Exit(c)) => c.to_string(),
                Some(Outcome::Running) => "running".into(),
                Some(Outcome::Waiting(_)) => "waiting".into(),
                Some(Outcome::Signal(s)) => s.clone(),
                Some(Outcome::Away(_)) => "away".into(),
                Some(_) => "-".into(),
                None => "-".into(),
            };
            let time = n
                .last_ms
                .map_or_else(|| "-".into(), |ms| format!("{ms} ms"));
            let cwd = n.cwd.as_deref().unwrap_or("-");
            out!(
                "{:<width$}  {state:<8}  {last:<5}  {time:>8}  {cwd}",
                n.name
            );
            if let Some(d) = &n.down {
                out!("  ({})", d.why);
            }
            outln!();
        }
    }

    fn status(&self) {
        let pick = |f: &dyn Fn(&Node) -> bool| -> String {
            let names: Vec<String> = self
                .nodes
                .iter()
                .filter(|n| f(n))
                .map(|n| n.name.clone())
                .collect();
            if names.is_empty() {
                "none".into()
            } else {
                fold(&names)
            }
        };
        outln!("session {} (daemon namespace {})", self.name, self.ns);
        outln!("  nodes:   {} ({})", fold(&self.names), self.nodes.len());
        outln!("  active:  {}", pick(&|n| n.selected));
        outln!("  down:    {}", pick(&|n| n.down.is_some()));
        outln!(
            "  away:    {}",
            pick(&|n| n.down.is_none() && matches!(n.last, Some(Outcome::Away(_))))
        );
        outln!("  running: {}", pick(&|n| n.pending()));
        let apart: Vec<String> = self.apart.nodes.iter().cloned().collect();
        outln!(
            "  apart:   {}",
            if apart.is_empty() {
                "none".into()
            } else {
                fold(&apart)
            }
        );
        outln!("  gather:  {}", if self.look.gather { "on" } else { "off" });
    }

    fn select(&mut self, expr: &str) {
        let set = match self.config.nodes(expr) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("tether: {e:#}");
                return;
            }
        };
        let unknown: Vec<String> = set
            .names()
            .into_iter()
            .filter(|n| !self.names.contains(n))
            .collect();
        if !unknown.is_empty() {
            eprintln!(
                "tether: {} not in this session (its nodes: {}); {}add {} adds it",
                fold(&unknown),
                fold(&self.names),
                self.look.prefix,
                fold(&unknown)
            );
            return;
        }
        for n in &mut self.nodes {
            n.selected = set.contains(&n.name);
        }
    }

    /// `!attach NODE`: a node of the session, or one kept apart.
    fn attach(&mut self, node: &str) {
        if !self.names.iter().any(|n| n == node) && !self.apart.nodes.contains(node) {
            eprintln!(
                "tether: {node} is not in this session (its nodes: {})",
                fold(&self.names)
            );
            return;
        }
        outln!("attaching to {node}'s shell; ~. comes back here");
        let args = crate::cli::AttachArgs {
            session: format!("{}/{node}", self.ns),
            host: None,
            ssh: Default::default(),
        };
        if let Err(e) = crate::attach_cmd::run(args) {
            eprintln!("tether: {e:#}");
        }
    }
}
