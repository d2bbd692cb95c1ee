//! A live session's node set grows and shrinks (ClusterShell's `+NODES`
//! and `-NODES`): `!add EXPR` resolves new nodes exactly as the session's
//! own were resolved (the same SSH flags, tether's config and cluster
//! settings; `-x` and `--filter` narrow the start's node set only, never
//! an explicit `!add`) and starts their shells as the others' started;
//! `!drop EXPR` closes their shells, or with `--keep` leaves them running
//! apart ([`Apart`](super::apart::Apart)). Unlike clush, whose set may go
//! empty and then run lines nowhere, the last node is not dropped: `!exit`
//! or `!detach` ends the session. Also `-v`'s lines: how each node
//! resolved, the steps of the connection the daemon made to it, and when
//! its shell answered.

use std::time::Instant;

use tether_daemon::DaemonError;
use tether_daemon::protocol::{FailureKind, HostRoute, Request, Status};

use super::nodes::Node;
use super::runner::Ended;
use super::{MultiShell, fold, worker};

impl MultiShell {
    /// `!add EXPR`.
    pub(super) fn add(&mut self, expr: &str) {
        let set = match self.config.nodes(expr) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("tether: {e:#}");
                return;
            }
        };
        let (present, new): (Vec<String>, Vec<String>) = set
            .names()
            .into_iter()
            .partition(|n| self.names.contains(n));
        if !present.is_empty() {
            eprintln!(
                "tether: {} already in this session: not added again",
                fold(&present)
            );
        }
        if new.is_empty() {
            return;
        }
        // Each new node goes where the node set's order puts it.
        let mut all = tether_cluster::NodeSet::new();
        self.names.iter().chain(&new).for_each(|n| all.insert(n));
        let mut added = Vec::new();
        for (at, name) in all.names().iter().enumerate() {
            if !new.contains(name) {
                continue;
            }
            let at = at.min(self.names.len());
            let host = crate::host_route::resolve(name, &self.reach);
            self.step(name, &resolved(&host));
            self.pool.insert(at, host);
            self.nodes.insert(at, Node::new(name.clone()));
            self.names.insert(at, name.clone());
            added.push(at);
        }
        self.apart.take_back(&new);
        // Their shells start (or, kept apart before, answer) as the
        // session's did.
        self.execute("true", &added, false);
        let down: Vec<String> = added
            .iter()
            .filter(|&&i| self.nodes[i].down.is_some())
            .map(|&i| self.names[i].clone())
            .collect();
        outln!("added {} ({} nodes now)", fold(&new), self.nodes.len());
        if !down.is_empty() {
            outln!(
                "{} could not be reached: shown down, tried again at later lines; {}drop {} takes it out",
                fold(&down),
                self.look.prefix,
                fold(&down)
            );
        }
    }

    /// `!drop [--keep] EXPR`.
    pub(super) fn drop_nodes(&mut self, expr: &str, keep: bool) {
        let set = match self.config.nodes(expr) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("tether: {e:#}");
                return;
            }
        };
        let gone = set.names();
        let unknown: Vec<String> = gone
            .iter()
            .filter(|n| !self.names.contains(n))
            .cloned()
            .collect();
        if !unknown.is_empty() {
            eprintln!(
                "tether: {} not in this session (its nodes: {}); nothing dropped",
                fold(&unknown),
                fold(&self.names)
            );
            return;
        }
        if self.names.iter().all(|n| gone.contains(n)) {
            eprintln!(
                "tether: that would leave the session without nodes: {p}exit closes every shell, {p}detach leaves them running",
                p = self.look.prefix
            );
            return;
        }
        let mut kept = Vec::new();
        let mut closed = Vec::new();
        for i in (0..self.names.len()).rev() {
            if !gone.contains(&self.names[i]) {
                continue;
            }
            let name = self.names.remove(i);
            let node = self.nodes.remove(i);
            self.pool.remove(i);
            // A node never reached has no shell to keep or close.
            if keep && node.down.is_none() {
                kept.push(name);
            } else {
                closed.push(name);
            }
        }
        self.close(&closed);
        if !kept.is_empty() {
            self.apart.nodes.extend(kept.iter().cloned());
            self.apart.save();
        }
        self.save_journal();
        if !self.nodes.iter().any(|n| n.selected) {
            self.nodes.iter_mut().for_each(|n| n.selected = true);
            outln!("no node left was active: every node is now");
        }
        if !closed.is_empty() {
            outln!(
                "dropped {}: its shell closed ({} nodes now)",
                fold(&closed),
                self.nodes.len()
            );
        }
        if !kept.is_empty() {
            let one = &kept[0];
            outln!(
                "dropped {}: kept running apart, not in the session ({} nodes now); `tether attach {}/{one}` shows it, {}add {} takes it back",
                fold(&kept),
                self.nodes.len(),
                self.ns,
                self.look.prefix,
                fold(&kept)
            );
        }
    }

    /// The shells of `names` closed (in parallel; a node never reached has
    /// none, and is not waited for long).
    pub(super) fn close(&self, names: &[String]) {
        let threads: Vec<_> = names
            .iter()
            .map(|n| {
                let (ns, session) = (self.ns.clone(), n.clone());
                std::thread::spawn(move || {
                    let closed = worker::connect(&ns).and_then(|mut c| {
                        c.call(&Request::Close {
                            session: session.clone(),
                        })
                    });
                    match closed {
                        Ok(_) => {}
                        // (Never reached: no shell.)
                        Err(DaemonError::Refused(f)) if f.kind == FailureKind::UnknownSession => {}
                        Err(e) => eprintln!(
                            "tether: {session}: its shell could not be closed ({e}); `tether close -s {ns}/{session}` closes it"
                        ),
                    }
                })
            })
            .collect();
        for t in threads {
            let _ = t.join();
        }
    }

    /// The shells `!drop --keep` left running apart, and how to reach them.
    pub(super) fn tell_apart(&self) {
        if let Some(first) = self.apart.nodes.first() {
            let names: Vec<String> = self.apart.nodes.iter().cloned().collect();
            outln!(
                "kept running apart (!drop --keep), not in the session: {}; `tether attach {}/{first}` shows one, {}add takes one back",
                fold(&names),
                self.ns,
                self.look.prefix
            );
        }
    }

    /// `-v`: one line on stderr about node `name`, with the time since the
    /// session began.
    pub(super) fn step(&self, name: &str, what: &str) {
        step(self.steps, name, what);
    }
}

/// `-v`'s line, when `-v` was given (`t0`: when the session began).
pub(super) fn step(t0: Option<Instant>, name: &str, what: &str) {
    if let Some(t0) = t0 {
        say(t0.elapsed().as_millis(), name, what);
    }
}

fn say(ms: u128, name: &str, what: &str) {
    let line = format!("+{ms} ms {name}: {what}");
    eprintln!("tether: {}", tether_term::printable::escaped(&line, false));
}

/// `-v`: how node `name`'s start ended, after the steps of the connection
/// the daemon made for it (each at its time since `t0`, the daemon's clock
/// being this machine's).
pub(super) fn told_end(t0: Option<Instant>, name: &str, end: &Ended) {
    let Some(t0) = t0 else { return };
    if let Ended::Result(r) = end {
        let now_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis());
        let elapsed = t0.elapsed().as_millis();
        for s in &r.link_steps {
            let ago = now_ms.saturating_sub(u128::from(s.at_ms));
            // (The step's text names its host already.)
            let line = format!("+{} ms {}", elapsed.saturating_sub(ago), s.text);
            eprintln!("tether: {}", tether_term::printable::escaped(&line, false));
        }
    }
    say(t0.elapsed().as_millis(), name, &started(end));
}

/// How a node resolved, for `-v`.
pub(super) fn resolved(host: &Result<HostRoute, String>) -> String {
    let route = match host {
        Ok(r) => &r.route,
        Err(why) => return format!("cannot be resolved: {why}"),
    };
    let t = &route.target;
    let mut line = format!("resolved to {}@{} port {}", t.user, t.hostname, t.port);
    let jumps: Vec<&str> = route
        .options
        .jumps
        .iter()
        .map(|j| j.target.host.as_str())
        .collect();
    if !jumps.is_empty() {
        line.push_str(&format!(" through {}", jumps.join(",")));
    }
    line.push_str(match route.options.address_family {
        tether_ssh::AddressFamily::Any => "",
        tether_ssh::AddressFamily::Inet => ", IPv4 only",
        tether_ssh::AddressFamily::Inet6 => ", IPv6 only",
    });
    line.push_str("; the daemon connects (its steps follow)");
    line
}

/// How a node's start ended, for `-v`.
pub(super) fn started(end: &Ended) -> String {
    match end {
        Ended::Result(r) if r.status == Status::Exited && r.link_steps.is_empty() => {
            "its shell answered (on a link already up)".into()
        }
        Ended::Result(r) if r.status == Status::Exited => "its shell answered".into(),
        Ended::Result(r) => format!("its shell answered: {:?}", r.status),
        Ended::Unreachable(why) => format!("not reached: {why}"),
        Ended::Refused(why) | Ended::Lost(why) => format!("failed: {why}"),
        Ended::Busy => "its shell answered: a command from before still runs there".into(),
    }
}
