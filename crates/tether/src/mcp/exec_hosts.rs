//! The `exec_hosts` tool: one command on many hosts over SSH, answered as
//! groups of hosts with identical results, so two hundred identical
//! answers cost one. The answer is bounded however many hosts differ: the
//! `max_groups` largest groups come whole; the rest are folded by status
//! alone (exit code, signal, error kind), their outputs left out.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tether_cluster::exec::{self, ExecOptions, HostSpec, Overrides};

use crate::ssh_opts;

fn default_timeout() -> f64 {
    tether_shell::Timeout::default_secs()
}
fn default_limit() -> usize {
    4000
}
fn default_max_groups() -> usize {
    20
}

/// Parameters of `exec_hosts`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ExecHostsParams {
    /// The hosts: a cluster name from tether's config, or a node-set expression (`web[01-20]`, `db1,db2`, `@group`, `user@host:port`, with `!` to exclude).
    pub hosts: String,
    /// The shell command to run on each host (stdin is closed).
    pub command: String,
    /// Seconds each host's command may run.
    #[serde(default = "default_timeout")]
    pub timeout_s: f64,
    /// Most characters of output per distinct result (head and tail kept).
    #[serde(default = "default_limit")]
    pub output_limit: usize,
    /// Most groups given with their output (the largest); the hosts of the
    /// others are folded by exit code, signal and error kind alone.
    #[serde(default = "default_max_groups")]
    pub max_groups: usize,
}

/// Where a group's output was clipped.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Clipped {
    /// Characters left out between head and tail.
    pub omitted_chars: usize,
    /// Characters of output in all.
    pub total_chars: usize,
}

/// Hosts that gave the same result.
#[derive(Debug, Serialize, JsonSchema)]
pub struct HostGroup {
    /// The hosts, folded (`web[01-20]`).
    pub hosts: String,
    /// Their exit code (null when they did not exit: error or signal).
    pub exit_code: Option<u32>,
    /// The signal that ended the command.
    pub signal: Option<String>,
    /// Why the command did not run or finish (connection, host key, auth, timeout).
    pub error: Option<String>,
    /// The kind of that error (null when none).
    pub error_kind: Option<ErrorKind>,
    /// After a timeout: `ended` when the host confirmed the command's end,
    /// `may_still_run` when it confirmed nothing (null otherwise).
    pub halt: Option<&'static str>,
    /// stdout, then stderr.
    pub output: String,
    /// Null, or where the output was clipped.
    pub truncated: Option<Clipped>,
    /// Null when every host here gave this result. Else how many different
    /// results were folded here by status alone (past `max_groups`): the
    /// output is left out and `error` is the first host's; ask again for
    /// fewer hosts to see them.
    pub differing: Option<usize>,
}

/// The kinds of per-host errors.
#[derive(Clone, Copy, Debug, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// Cancelled before or while running.
    Cancelled,
    /// The command outlived its timeout.
    Timeout,
    /// The host could not be resolved (ssh_config, tether's config).
    Resolve,
    /// Connecting, the host key, authentication or the channel failed.
    Ssh,
    /// A file could not be copied (copies only; a command never has it).
    Copy,
    /// The command's channel ended without an exit status (its connection
    /// lost): its end is unknown.
    ConnectionLost,
    /// sudo refused a password (the CLI's `--sudo` only: this tool never
    /// types one).
    SudoRefused,
}

impl From<exec::HostErrorKind> for ErrorKind {
    fn from(k: exec::HostErrorKind) -> Self {
        match k {
            exec::HostErrorKind::Cancelled => Self::Cancelled,
            exec::HostErrorKind::Timeout => Self::Timeout,
            exec::HostErrorKind::Resolve => Self::Resolve,
            exec::HostErrorKind::Ssh => Self::Ssh,
            exec::HostErrorKind::Copy => Self::Copy,
            exec::HostErrorKind::ConnectionLost => Self::ConnectionLost,
            exec::HostErrorKind::SudoRefused => Self::SudoRefused,
        }
    }
}

/// The result of `exec_hosts`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ExecHostsResult {
    /// Hosts in the set.
    pub hosts_total: usize,
    /// Hosts whose command exited 0.
    pub succeeded: usize,
    /// The others.
    pub failed: usize,
    /// Hosts with identical results, one entry each.
    pub groups: Vec<HostGroup>,
}

/// `text` clipped as every result's output is (the engine's clip: head
/// and tail, `limit` bytes in all, whole characters), and where.
fn clip(text: String, limit: usize) -> (String, Option<Clipped>) {
    let mut clip = tether_term::HeadTailClip::halves(limit);
    clip.push(&text);
    let kept = clip.clipped();
    if kept.is_complete() {
        return (text, None);
    }
    let total = text.chars().count();
    let omitted = total - kept.head.chars().count() - kept.tail.chars().count();
    (
        kept.render(|_| tether_term::omitted_marker(omitted as u64)),
        Some(Clipped {
            omitted_chars: omitted,
            total_chars: total,
        }),
    )
}

/// The text of a host's output, as the terminal projection reads it
/// (sequences removed, `\r` and backspaces applied).
fn project(kept: &exec::Kept) -> String {
    let mut projector = tether_term::TextProjector::new();
    let mut out = String::new();
    let _ = kept.each(|b| {
        projector.feed(b, &mut out);
        Ok(())
    });
    projector.finish(&mut out);
    out
}

/// The answer's groups: the `max` largest of `gathered` whole (their
/// output projected and clipped to `limit`), in the order of their first
/// host; then the others folded by status (exit code, signal, error kind
/// and halt), one group per status with its hosts, the first host's error
/// and how many different results it holds.
fn bounded(gathered: Vec<exec::Group>, max: usize, limit: usize) -> Vec<HostGroup> {
    let mut by_size: Vec<usize> = (0..gathered.len()).collect();
    by_size.sort_by_key(|&i| (std::cmp::Reverse(gathered[i].hosts.len()), i));
    let mut whole = vec![false; gathered.len()];
    for &i in by_size.iter().take(max) {
        whole[i] = true;
    }
    let mut groups = Vec::new();
    type Status = (
        Option<u32>,
        Option<String>,
        Option<exec::HostErrorKind>,
        Option<exec::Halt>,
    );
    let mut rest: Vec<(Status, tether_cluster::NodeSet, Option<String>, usize)> = Vec::new();
    for (g, whole) in gathered.into_iter().zip(whole) {
        let halt = g.error.as_ref().and_then(exec::HostError::halt);
        if !whole {
            let status = (
                g.exit_code,
                g.signal,
                g.error.as_ref().map(|e| e.kind()),
                halt,
            );
            match rest.iter_mut().find(|r| r.0 == status) {
                Some(r) => {
                    r.1.union(&g.hosts);
                    r.3 += 1;
                }
                None => rest.push((status, g.hosts, g.error.map(|e| e.to_string()), 1)),
            }
            continue;
        }
        // As `shell_run` gives it: the text a program reads, the hosts'
        // escape sequences (an OSC 52 clipboard write, say) removed.
        let mut text = project(&g.stdout);
        text.push_str(&project(&g.stderr));
        let (output, truncated) = clip(text, limit);
        groups.push(HostGroup {
            hosts: g.hosts.fold(),
            exit_code: g.exit_code,
            signal: g.signal,
            error_kind: g.error.as_ref().map(|e| e.kind().into()),
            halt: halt.map(exec::Halt::as_str),
            error: g.error.map(|e| e.to_string()),
            output,
            truncated,
            differing: None,
        });
    }
    for ((exit_code, signal, kind, halt), hosts, error, n) in rest {
        groups.push(HostGroup {
            hosts: hosts.fold(),
            exit_code,
            signal,
            error,
            error_kind: kind.map(Into::into),
            halt: halt.map(exec::Halt::as_str),
            output: String::new(),
            truncated: None,
            differing: Some(n),
        });
    }
    groups
}

/// Runs the tool; the error is the message for a tool error.
pub async fn run(p: ExecHostsParams) -> Result<(ExecHostsResult, String), String> {
    let timeout =
        tether_shell::Timeout::from_secs("timeout_s", p.timeout_s).map_err(|e| e.to_string())?;
    let config = crate::ssh_opts::load_config(None).map_err(|e| format!("{e:#}"))?;
    let (set, settings) = config
        .select(tether_cluster::config::Selection::ClusterOrNodes(&p.hosts))
        .map_err(|e| e.to_string())?;
    let hosts: Vec<HostSpec> = set
        .names()
        .iter()
        .map(|n| HostSpec::parse(n))
        .collect::<Result<_, _>>()
        .map_err(|e| e.to_string())?;
    // As `tether exec` with no flags, in batch mode (no terminal to ask on).
    let ov = ssh_opts::overrides(
        &ssh_opts::SshArgs::default(),
        Overrides::default(),
        &settings,
    )
    .map_err(|e| format!("{e:#}"))?;
    let opts = ExecOptions {
        fanout: settings.fanout_or(None),
        resolve: exec::resolver(ov),
        command_timeout: Some(timeout.duration()),
        fail_fast: false,
        stop: None,
        keep_output: true,
        host_stops: None,
        stdin: None,
        sudo: None,
    };
    let results = exec::run(hosts, &p.command, opts, |_| {}).await;
    let succeeded = results.iter().filter(|r| r.succeeded()).count();
    let total = results.len();
    let gathered = exec::gather(&results);
    drop(results);
    let groups = bounded(gathered, p.max_groups.max(1), p.output_limit.max(1));
    let mut text = format!(
        "[{total} hosts: {succeeded} succeeded, {} failed]\n",
        total - succeeded
    );
    for g in &groups {
        let status = match (&g.error, g.exit_code, &g.signal) {
            (Some(e), _, _) => e.clone(),
            (None, Some(c), _) => format!("exit {c}"),
            (None, None, Some(s)) => format!("signal {s}"),
            _ => "unknown".into(),
        };
        let folded = match g.differing {
            Some(n) => format!(" [{n} different results, outputs left out]"),
            None => String::new(),
        };
        text.push_str(&format!("--- {} ({status}){folded}\n{}", g.hosts, g.output));
        if !g.output.is_empty() && !g.output.ends_with('\n') {
            text.push('\n');
        }
    }
    Ok((
        ExecHostsResult {
            hosts_total: total,
            succeeded,
            failed: total - succeeded,
            groups,
        },
        text,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Clipped like a shell result: `limit` bytes, whole characters, the
    /// characters left out counted.
    #[test]
    fn output_is_clipped_like_a_shell_result() {
        let (out, cut) = clip("0123456789".into(), 4);
        assert_eq!(out, "01\n[… 6 characters omitted …]\n89");
        let cut = cut.map(|c| (c.omitted_chars, c.total_chars));
        assert_eq!(cut, Some((6, 10)));
        let (out, cut) = clip("ééééé".into(), 4);
        assert_eq!(out, "é\n[… 3 characters omitted …]\né");
        assert_eq!(cut.map(|c| c.omitted_chars), Some(3));
        let (out, cut) = clip("short".into(), 5);
        assert_eq!((out.as_str(), cut.is_none()), ("short", true));
    }
}
