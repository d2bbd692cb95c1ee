//! Folding hosts with identical results into groups (like `clush -b` and
//! `dshbak -c`), so a hundred identical answers read, and cost, as one.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};

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
/// never names its host, so hosts that failed alike group. A result is
/// compared only with the groups whose digest it shares (its status, the
/// outputs' lengths and first 64 KiB), so a hundred thousand different
/// results take as long as a hundred thousand equal ones.
pub fn gather(results: &[HostResult]) -> Vec<Group> {
    let mut groups: Vec<Group> = Vec::new();
    let mut by_digest: HashMap<u64, Vec<usize>> = HashMap::new();
    let mut head = Vec::new();
    for r in results {
        let bucket = by_digest.entry(digest(r, &mut head)).or_default();
        let same = bucket.iter().copied().find(|&i| {
            let g = &groups[i];
            g.exit_code == r.exit_code
                && g.signal == r.signal
                && g.error == r.error
                && g.stdout.len() == r.stdout.len()
                && g.stderr.len() == r.stderr.len()
                && g.stdout.same_as(&r.stdout)
                && g.stderr.same_as(&r.stderr)
        });
        match same {
            Some(i) => groups[i].hosts.insert(&r.host),
            None => {
                bucket.push(groups.len());
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

/// How much of each output the digest reads.
const DIGEST_HEAD: usize = 64 * 1024;

/// Equal for results [`gather`] puts together: the status, the outputs'
/// lengths and their first [`DIGEST_HEAD`] bytes.
fn digest(r: &HostResult, head: &mut Vec<u8>) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    (&r.exit_code, &r.signal, &r.error).hash(&mut h);
    for kept in [&r.stdout, &r.stderr] {
        kept.len().hash(&mut h);
        // Gathered whole before hashing, so however the pieces are cut the
        // same bytes give the same digest. A read error leaves the head
        // short: `same_as` still decides.
        head.clear();
        let _ = kept.each(|b| {
            let n = b.len().min(DIGEST_HEAD - head.len());
            head.extend_from_slice(&b[..n]);
            if head.len() == DIGEST_HEAD {
                Err(std::io::Error::other("read enough"))
            } else {
                Ok(())
            }
        });
        h.write(head);
    }
    h.finish()
}
