//! Folding hosts with identical results into groups (like `clush -b` and
//! `dshbak -c`), so a hundred identical answers read, and cost, as one.

use super::{HostError, HostResult, Kept};
use crate::NodeSet;

/// Hosts that gave the same result.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Group {
    /// The hosts, folded (`web[01-20]`).
    pub hosts: NodeSet,
    /// Their exit code.
    pub exit_code: Option<u32>,
    /// Their signal.
    pub signal: Option<String>,
    /// Their error.
    pub error: Option<HostError>,
    /// Their stdout.
    pub stdout: Kept,
    /// Their stderr.
    pub stderr: Kept,
}

/// The groups of `results`: identical stdout, stderr, exit code, signal and
/// error share one (outputs compared byte for byte, read back from where
/// they are kept); groups come in the order of their first host. An error
/// never names its host, so hosts that failed alike group.
pub fn gather(results: &[HostResult]) -> Vec<Group> {
    let mut groups: Vec<Group> = Vec::new();
    for r in results {
        let same = groups.iter_mut().find(|g| {
            g.exit_code == r.exit_code
                && g.signal == r.signal
                && g.error == r.error
                && g.stdout.len() == r.stdout.len()
                && g.stderr.len() == r.stderr.len()
                && g.stdout.same_as(&r.stdout)
                && g.stderr.same_as(&r.stderr)
        });
        match same {
            Some(g) => g.hosts.insert(&r.host),
            None => {
                let mut hosts = NodeSet::new();
                hosts.insert(&r.host);
                groups.push(Group {
                    hosts,
                    exit_code: r.exit_code,
                    signal: r.signal.clone(),
                    error: r.error.clone(),
                    stdout: r.stdout.clone(),
                    stderr: r.stderr.clone(),
                });
            }
        }
    }
    groups
}
