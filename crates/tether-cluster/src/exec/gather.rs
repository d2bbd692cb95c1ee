//! Folding hosts with identical results into groups (like `clush -b` and
//! `dshbak -c`), so a hundred identical answers read, and cost, as one.

use std::collections::BTreeMap;

use super::{HostError, HostResult};
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
    pub stdout: Vec<u8>,
    /// Their stderr.
    pub stderr: Vec<u8>,
}

type Key = (
    Vec<u8>,
    Vec<u8>,
    Option<u32>,
    Option<String>,
    Option<HostError>,
);

/// The groups of `results`: identical stdout, stderr, exit code, signal and
/// error share one; groups come in the order of their first host. An error
/// never names its host, so hosts that failed alike group.
pub fn gather(results: &[HostResult]) -> Vec<Group> {
    let mut order: Vec<Key> = Vec::new();
    let mut groups: BTreeMap<Key, NodeSet> = BTreeMap::new();
    for r in results {
        let key = (
            r.stdout.clone(),
            r.stderr.clone(),
            r.exit_code,
            r.signal.clone(),
            r.error.clone(),
        );
        if !groups.contains_key(&key) {
            order.push(key.clone());
        }
        groups.entry(key).or_default().insert(&r.host);
    }
    order
        .into_iter()
        .filter_map(|k| {
            let hosts = groups.remove(&k)?;
            let (stdout, stderr, exit_code, signal, error) = k;
            Some(Group {
                hosts,
                exit_code,
                signal,
                error,
                stdout,
                stderr,
            })
        })
        .collect()
}
