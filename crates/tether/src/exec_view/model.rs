//! The live view's state, fed by a run's events ([`Progress`]) and the
//! person's keys: every host's state (waiting, connecting, running, done,
//! failed, cancelled), the last lines of its output, the groups of
//! identical results as they form, what is selected and followed, the diff
//! view, and the question being asked. Pure: no terminal, no clock of its
//! own (key handling takes the time), so tests drive it alone. What it
//! draws like is `render.rs`'s.

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hasher};
use std::time::{Duration, Instant};

use tether_cluster::NodeSet;
use tether_cluster::exec::{HostError, HostResult, Progress};

use super::keys::Key;
use super::tail::{Line, Tail};

/// Two Ctrl-C within this cancel every host (as without the view).
const DOUBLE_CTRL_C: Duration = Duration::from_secs(1);

/// Where a host is in the run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum State {
    /// Not started yet: waiting for a place in the window.
    Waiting,
    /// Connecting (resolving, TCP, key exchange, authentication).
    Connecting,
    /// Connected: its command runs.
    Running,
    /// Its command exited 0.
    Done,
    /// It failed: a non-zero exit, a signal, an error.
    Failed,
    /// It was cancelled (this host alone, Ctrl-C, fail fast).
    Cancelled,
}

impl State {
    /// Every state, in the order the view lists them.
    pub const ALL: [State; 6] = [
        State::Waiting,
        State::Connecting,
        State::Running,
        State::Done,
        State::Failed,
        State::Cancelled,
    ];

    /// Its name on screen.
    pub fn label(self) -> &'static str {
        match self {
            State::Waiting => "waiting",
            State::Connecting => "connecting",
            State::Running => "running",
            State::Done => "done",
            State::Failed => "failed",
            State::Cancelled => "cancelled",
        }
    }

    /// True once the host is over.
    pub fn is_over(self) -> bool {
        matches!(self, State::Done | State::Failed | State::Cancelled)
    }
}

/// One host as the view shows it.
#[derive(Clone, Debug)]
pub struct Host {
    /// Its name, as the node set gives it.
    pub name: String,
    /// Where it is.
    pub state: State,
    /// Its latest output.
    pub tail: Tail,
    /// How it ended, in a few words (`exit 2`, the error's line).
    pub status: Option<String>,
}

/// What makes two results the same, as `--output gather` compares them
/// (the outputs by length and hash here; the printing at the end compares
/// them byte for byte).
#[derive(Clone, Debug, PartialEq, Eq)]
struct Sameness {
    exit_code: Option<u32>,
    signal: Option<String>,
    error: Option<HostError>,
    stdout: (u64, u64),
    stderr: (u64, u64),
}

/// Hosts whose results are the same, as they form.
#[derive(Clone, Debug)]
pub struct Group {
    /// Its hosts.
    pub hosts: NodeSet,
    /// The first host's index, whose output the group shows.
    pub first: usize,
    /// Their status (`exit 0`, `exit 2`, an error's line).
    pub status: String,
    same: Sameness,
}

/// Which list has the selection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pane {
    /// One row per host.
    Hosts,
    /// One row per group of identical results.
    Groups,
}

/// A question the view asks before acting.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ask {
    /// Cancel this host?
    CancelHost(String),
    /// Cancel every host still running or waiting?
    CancelAll,
}

/// What the runner is asked to do after a key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    /// Stop this host alone.
    CancelHost(String),
    /// Stop every host (the run then ends as a double Ctrl-C ends it).
    CancelAll,
}

/// The whole view.
#[derive(Clone, Debug)]
pub struct Model {
    /// The command run, for the title.
    pub command: String,
    /// Every host, in the node set's order.
    pub hosts: Vec<Host>,
    index: HashMap<String, usize>,
    /// The groups of the hosts over, in the order they formed.
    pub groups: Vec<Group>,
    /// Which list has the selection.
    pub pane: Pane,
    /// The host selected in the hosts list.
    pub host_row: usize,
    /// The group selected in the groups list.
    pub group_row: usize,
    /// Lines scrolled back from the output's end; 0 follows its end.
    pub scroll: usize,
    /// The diff view: the selection's output against the largest group's.
    pub diff: bool,
    /// The question asked, if any.
    pub ask: Option<Ask>,
    /// A note for the footer (`press Ctrl-C again…`).
    pub note: Option<String>,
    /// One Ctrl-C cancels every host (`-b`), as without the view.
    pub batch: bool,
    last_ctrl_c: Option<Instant>,
    /// True when something changed since [`Model::take_dirty`].
    dirty: bool,
    /// Each state's number of hosts and their node set folded, as of the
    /// last [`Model::prepare`].
    summary: Vec<(State, usize, String)>,
    /// A host changed state since.
    summary_stale: bool,
}

impl Model {
    /// The view of a run of `command` on `hosts` (in order), all waiting.
    pub fn new(command: &str, hosts: &[String]) -> Model {
        Model {
            command: command.to_owned(),
            hosts: hosts
                .iter()
                .map(|h| Host {
                    name: h.clone(),
                    state: State::Waiting,
                    tail: Tail::default(),
                    status: None,
                })
                .collect(),
            index: hosts
                .iter()
                .enumerate()
                .map(|(i, h)| (h.clone(), i))
                .collect(),
            groups: Vec::new(),
            pane: Pane::Hosts,
            host_row: 0,
            group_row: 0,
            scroll: 0,
            diff: false,
            ask: None,
            note: None,
            batch: false,
            last_ctrl_c: None,
            dirty: true,
            summary: Vec::new(),
            summary_stale: true,
        }
    }

    /// Folds each state's hosts again when one changed state (before a
    /// drawing: folding 500 names at every output line would cost more
    /// than the rest of the view).
    pub fn prepare(&mut self) {
        if !std::mem::take(&mut self.summary_stale) {
            return;
        }
        self.summary = self
            .by_state()
            .into_iter()
            .map(|(s, set)| {
                let folded = if set.is_empty() {
                    String::new()
                } else {
                    set.fold()
                };
                (s, set.len(), folded)
            })
            .collect();
    }

    /// Each state's number of hosts and their node set folded, as of the
    /// last [`Model::prepare`].
    pub fn summary(&self) -> &[(State, usize, String)] {
        &self.summary
    }

    /// How many hosts are in `states`, as of the last [`Model::prepare`].
    pub fn count(&self, states: &[State]) -> usize {
        self.summary
            .iter()
            .filter(|(s, _, _)| states.contains(s))
            .map(|(_, n, _)| n)
            .sum()
    }

    /// True (once) when the view changed since the last call: the drawing
    /// is redone only then.
    pub fn take_dirty(&mut self) -> bool {
        std::mem::take(&mut self.dirty)
    }

    /// Marks the view to be drawn again (a resize).
    pub fn touch(&mut self) {
        self.dirty = true;
    }

    /// Takes one event of the run.
    pub fn feed(&mut self, p: &Progress) {
        match p {
            Progress::Started(h) => self.set(h, State::Connecting),
            Progress::Connected(h) => self.set(h, State::Running),
            Progress::Line(h, stream, bytes) => {
                if let Some(&i) = self.index.get(h) {
                    self.hosts[i].tail.push(Line {
                        stream: *stream,
                        bytes: bytes.clone(),
                    });
                    // Only the output shown is on screen.
                    self.dirty |= self.shown() == Some(i);
                }
            }
            Progress::Done(r) => self.done(r),
        }
    }

    fn set(&mut self, host: &str, state: State) {
        if let Some(&i) = self.index.get(host) {
            self.hosts[i].state = state;
            self.dirty = true;
            self.summary_stale = true;
        }
    }

    fn done(&mut self, r: &HostResult) {
        let Some(&i) = self.index.get(&r.host) else {
            return;
        };
        let (state, status) = match (&r.error, &r.signal, r.exit_code) {
            (Some(e @ HostError::Cancelled { .. }), _, _) => (State::Cancelled, e.to_string()),
            (Some(e), _, _) => (State::Failed, e.to_string()),
            (None, Some(sig), _) => (State::Failed, format!("signal {sig}")),
            (None, None, Some(0)) => (State::Done, "exit 0".to_owned()),
            (None, None, Some(c)) => (State::Failed, format!("exit {c}")),
            (None, None, None) => (State::Failed, "no exit status".to_owned()),
        };
        let host = &mut self.hosts[i];
        host.state = state;
        self.summary_stale = true;
        host.status = Some(status.clone());
        let same = Sameness {
            exit_code: r.exit_code,
            signal: r.signal.clone(),
            error: r.error.clone(),
            stdout: (r.stdout.len(), digest(&r.stdout)),
            stderr: (r.stderr.len(), digest(&r.stderr)),
        };
        match self.groups.iter_mut().find(|g| g.same == same) {
            Some(g) => g.hosts.insert(&r.host),
            None => {
                let mut hosts = NodeSet::new();
                hosts.insert(&r.host);
                self.groups.push(Group {
                    hosts,
                    first: i,
                    status,
                    same,
                });
            }
        }
        self.dirty = true;
    }

    /// The hosts in each state, folded, with their numbers.
    pub fn by_state(&self) -> Vec<(State, NodeSet)> {
        let mut sets: Vec<(State, NodeSet)> =
            State::ALL.iter().map(|s| (*s, NodeSet::new())).collect();
        for h in &self.hosts {
            if let Some((_, set)) = sets.iter_mut().find(|(s, _)| *s == h.state) {
                set.insert(&h.name);
            }
        }
        sets
    }

    /// The host whose output the output pane shows: the selected host, or
    /// the selected group's first.
    pub fn shown(&self) -> Option<usize> {
        match self.pane {
            Pane::Hosts => (!self.hosts.is_empty()).then_some(self.host_row),
            Pane::Groups => self.groups.get(self.group_row).map(|g| g.first),
        }
    }

    /// The title of what the output pane shows.
    pub fn shown_title(&self) -> String {
        match self.pane {
            Pane::Hosts => self
                .hosts
                .get(self.host_row)
                .map(|h| h.name.clone())
                .unwrap_or_default(),
            Pane::Groups => self
                .groups
                .get(self.group_row)
                .map(|g| format!("{} ({})", g.hosts, g.hosts.len()))
                .unwrap_or_default(),
        }
    }

    /// The group the largest number of hosts share (the diff's base), and
    /// the selection's group, when both exist.
    pub fn diff_pair(&self) -> Option<(&Group, &Group)> {
        let base = self
            .groups
            .iter()
            .enumerate()
            .max_by_key(|(i, g)| (g.hosts.len(), std::cmp::Reverse(*i)))
            .map(|(_, g)| g)?;
        let selected = match self.pane {
            Pane::Groups => self.groups.get(self.group_row)?,
            Pane::Hosts => {
                let name = &self.hosts.get(self.host_row)?.name;
                self.groups.iter().find(|g| g.hosts.contains(name))?
            }
        };
        Some((base, selected))
    }

    /// Takes one key; the action for the runner, if any.
    pub fn key(&mut self, key: Key, now: Instant) -> Option<Action> {
        self.dirty = true;
        if key != Key::CtrlC {
            self.note = None;
        }
        if let Some(ask) = self.ask.take() {
            return match key {
                Key::Char('y' | 'Y') => Some(match ask {
                    Ask::CancelHost(h) => Action::CancelHost(h),
                    Ask::CancelAll => Action::CancelAll,
                }),
                // Anything else keeps the hosts running.
                _ => None,
            };
        }
        let rows = match self.pane {
            Pane::Hosts => self.hosts.len(),
            Pane::Groups => self.groups.len(),
        };
        let row = match self.pane {
            Pane::Hosts => &mut self.host_row,
            Pane::Groups => &mut self.group_row,
        };
        let before = *row;
        match key {
            Key::Up | Key::Char('k') => *row = row.saturating_sub(1),
            Key::Down | Key::Char('j') => *row = (*row + 1).min(rows.saturating_sub(1)),
            Key::Home | Key::Char('g') => *row = 0,
            Key::Char('G') => *row = rows.saturating_sub(1),
            Key::PageUp => self.scroll += 10,
            Key::PageDown => self.scroll = self.scroll.saturating_sub(10),
            Key::End | Key::Enter | Key::Char('f') => self.scroll = 0,
            Key::Tab => {
                self.pane = match self.pane {
                    Pane::Hosts => Pane::Groups,
                    Pane::Groups => Pane::Hosts,
                };
                self.scroll = 0;
            }
            Key::Char('d') => self.diff = !self.diff,
            Key::Char('c') => {
                if let Some(h) = self
                    .hosts
                    .get(self.host_row)
                    .filter(|_| self.pane == Pane::Hosts)
                {
                    if h.state.is_over() {
                        self.note = Some(format!("{} is over already", h.name));
                    } else {
                        self.ask = Some(Ask::CancelHost(h.name.clone()));
                    }
                } else {
                    self.note = Some("select a host to cancel (Tab: the hosts list)".into());
                }
            }
            Key::Char('C' | 'q') => self.ask = Some(Ask::CancelAll),
            Key::CtrlC => {
                if self.batch
                    || self
                        .last_ctrl_c
                        .is_some_and(|t| now.duration_since(t) <= DOUBLE_CTRL_C)
                {
                    return Some(Action::CancelAll);
                }
                self.last_ctrl_c = Some(now);
                self.note = Some("press Ctrl-C again within 1 s to cancel every host".into());
            }
            Key::Esc | Key::Char(_) | Key::Other => {}
        }
        let moved = match self.pane {
            Pane::Hosts => self.host_row != before,
            Pane::Groups => self.group_row != before,
        };
        if moved {
            self.scroll = 0;
        }
        None
    }
}

/// A hash of every byte kept (0 when it cannot be read back).
fn digest(kept: &tether_cluster::exec::Kept) -> u64 {
    let mut h = DefaultHasher::new();
    match kept.each(|b| {
        h.write(b);
        Ok(())
    }) {
        Ok(()) => h.finish(),
        Err(_) => 0,
    }
}

#[cfg(test)]
#[path = "model_tests.rs"]
mod tests;
