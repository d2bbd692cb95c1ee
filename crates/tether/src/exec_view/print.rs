//! `--output stream` once the live view has left: the output it kept,
//! printed as the stream prints it, host after host.

use std::io::Write;

use anyhow::Result;
use tether_cluster::exec::{HostResult, Kept};

/// `--output stream` after the view: each host's lines as the stream
/// prints them (`host: line`, stdout's on stdout and stderr's on stderr),
/// host after host in the node set's order, then its error or signal.
pub fn print_streams(results: &[HostResult], prefix: bool) -> Result<()> {
    // Buffered (a line a write cost more than the view itself); stdout is
    // flushed before a host's stderr, so each host's lines keep their order.
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let mut err = std::io::BufWriter::new(std::io::stderr().lock());
    for r in results {
        let name = crate::exec_output::printable(&r.host);
        let head = if prefix {
            format!("{name}: ")
        } else {
            String::new()
        };
        lines(&r.stdout, head.as_bytes(), &mut out)?;
        let note = match (&r.error, &r.signal) {
            (Some(e), _) => Some(e.to_string()),
            (None, Some(sig)) => Some(format!("killed by signal {sig}")),
            (None, None) => None,
        };
        if r.stderr.is_empty() && note.is_none() {
            continue;
        }
        out.flush()?;
        lines(&r.stderr, head.as_bytes(), &mut err)?;
        if let Some(note) = note {
            let line = format!("tether: {}: {note}", r.host);
            writeln!(err, "{}", crate::exec_output::printable(&line))?;
        }
        err.flush()?;
    }
    out.flush()?;
    Ok(())
}

/// `kept`'s lines to `w`, each after `head`, the last one ended.
fn lines(kept: &Kept, head: &[u8], w: &mut impl Write) -> Result<()> {
    let mut at_start = true;
    kept.each(|chunk| {
        let mut rest = chunk;
        while !rest.is_empty() {
            if at_start {
                w.write_all(head)?;
            }
            let cut = rest
                .iter()
                .position(|b| *b == b'\n')
                .map_or(rest.len(), |i| i + 1);
            w.write_all(&rest[..cut])?;
            at_start = rest[cut - 1] == b'\n';
            rest = &rest[cut..];
        }
        Ok(())
    })?;
    if !at_start {
        w.write_all(b"\n")?;
    }
    Ok(())
}
