//! `--output stream` once the live view has left: the output it kept,
//! printed as the stream prints it, host after host: a host's bytes
//! shown escaped on a terminal, as the view showed them
//! (`crate::host_text`).

use std::io::Write;

use anyhow::Result;
use tether_cluster::exec::{HostResult, Kept};

use crate::host_text::{HostBytes, Shown};

/// `--output stream` after the view: each host's lines as the stream
/// prints them (`host: line`, stdout's on stdout and stderr's on stderr),
/// host after host in the node set's order, then its error or signal;
/// each stream gets a host's bytes as `shown` says.
pub fn print_streams(results: &[HostResult], prefix: bool, shown: Shown) -> Result<()> {
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
        lines(&r.stdout, head.as_bytes(), shown.stdout, &mut out)?;
        let note = match (&r.error, &r.signal) {
            (Some(e), _) => Some(e.to_string()),
            (None, Some(sig)) => Some(format!("killed by signal {sig}")),
            (None, None) => None,
        };
        if r.stderr.is_empty() && note.is_none() {
            continue;
        }
        out.flush()?;
        lines(&r.stderr, head.as_bytes(), shown.stderr, &mut err)?;
        if let Some(note) = note {
            let line = format!("tether: {}: {note}", r.host);
            writeln!(err, "{}", crate::exec_output::printable(&line))?;
        }
        err.flush()?;
    }
    out.flush()?;
    Ok(())
}

/// `kept`'s lines to `w`, each after `head`, the last one ended; the
/// host's bytes as `bytes` says (escaped: one escaper across the pieces,
/// so a character cut between two is whole).
fn lines(kept: &Kept, head: &[u8], bytes: HostBytes, w: &mut impl Write) -> Result<()> {
    let mut at_start = true;
    let mut escaper = tether_term::printable::Escaper::new(true);
    let mut buf = Vec::new();
    let mut put = |w: &mut dyn Write, piece: &[u8]| -> std::io::Result<()> {
        match bytes {
            HostBytes::Exact => w.write_all(piece),
            HostBytes::Escaped => {
                buf.clear();
                escaper.push(piece, &mut buf);
                w.write_all(&buf)
            }
        }
    };
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
            put(w, &rest[..cut])?;
            at_start = rest[cut - 1] == b'\n';
            rest = &rest[cut..];
        }
        Ok(())
    })?;
    if !at_start {
        // The escaper's held bytes (a CR, a cut character) before the end.
        put(w, b"\n")?;
    }
    Ok(())
}
