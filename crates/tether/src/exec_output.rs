//! How `tether exec` prints results: `host: line` as lines come
//! (stream), identical results folded under one header (gather), one JSON
//! object per host (json), or files per host (dir).

use std::io::Write;

use anyhow::{Context, Result};
use serde_json::json;
use tether_cluster::exec::{self, HostResult, Progress, Stream};

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Which of tether's own streams could not be written (closed by the
/// reader, as `| head -1` closes it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Closed {
    /// stdout.
    Stdout,
    /// stderr.
    Stderr,
}

impl Closed {
    pub fn as_str(self) -> &'static str {
        match self {
            Closed::Stdout => "stdout",
            Closed::Stderr => "stderr",
        }
    }
}

/// `host: line`, stdout lines on stdout and stderr lines on stderr; errors
/// and signals as one line on stderr. An error: the stream that could not
/// be written.
pub fn stream(p: &Progress) -> Result<(), Closed> {
    match p {
        // Bytes go out as they came (no re-encoding), one whole line per write.
        Progress::Line(host, Stream::Stdout, line) => {
            prefixed(&mut std::io::stdout().lock(), host, line).map_err(|_| Closed::Stdout)
        }
        Progress::Line(host, Stream::Stderr, line) => {
            prefixed(&mut std::io::stderr().lock(), host, line).map_err(|_| Closed::Stderr)
        }
        Progress::Done(r) => {
            let host = printable(&r.host);
            let line = if let Some(e) = &r.error {
                format!("tether: {host}: {e}\n")
            } else if let Some(sig) = &r.signal {
                format!("tether: {host}: killed by signal {sig}\n")
            } else {
                return Ok(());
            };
            std::io::stderr()
                .write_all(line.as_bytes())
                .map_err(|_| Closed::Stderr)
        }
        Progress::Started(_) => Ok(()),
    }
}

/// A host's name as a message shows it: control and bidi characters
/// escaped.
pub fn printable(host: &str) -> std::borrow::Cow<'_, str> {
    tether_term::printable::escaped(host, false)
}

fn prefixed(out: &mut impl Write, host: &str, line: &[u8]) -> std::io::Result<()> {
    let host = printable(host);
    let mut buf = Vec::with_capacity(host.len() + line.len() + 3);
    buf.extend_from_slice(host.as_bytes());
    buf.extend_from_slice(b": ");
    buf.extend_from_slice(line);
    buf.push(b'\n');
    out.write_all(&buf)
}

pub fn gather(results: &[HostResult]) -> Result<()> {
    let mut out = std::io::stdout().lock();
    for g in exec::gather(results) {
        let mut status = Vec::new();
        if let Some(e) = &g.error {
            status.push(e.to_string());
        } else if let Some(s) = &g.signal {
            status.push(format!("signal {s}"));
        } else if let Some(c) = g.exit_code.filter(|c| *c != 0) {
            status.push(format!("exit {c}"));
        }
        let header = format!(
            "{} ({}){}",
            g.hosts,
            g.hosts.len(),
            if status.is_empty() {
                String::new()
            } else {
                format!(" {}", status.join(", "))
            }
        );
        let rule = "-".repeat(header.chars().count().clamp(15, 79));
        writeln!(out, "{rule}\n{header}\n{rule}")?;
        out.write_all(&g.stdout)?;
        if !g.stderr.is_empty() {
            out.write_all(&g.stderr)?;
        }
    }
    Ok(())
}

pub fn json_lines(results: &[HostResult]) -> Result<()> {
    let mut out = std::io::stdout().lock();
    for r in results {
        let v = json!({
            "host": r.host, "exit_code": r.exit_code, "signal": r.signal,
            "stdout": text(&r.stdout), "stderr": text(&r.stderr),
            "error": r.error.as_ref().map(ToString::to_string),
            "error_kind": r.error.as_ref().map(|e| e.kind().as_str()),
            "halt": r.error.as_ref().and_then(exec::HostError::halt).map(exec::Halt::as_str),
            "connect_ms": r.connect_ms, "total_ms": r.total_ms,
        });
        writeln!(out, "{v}")?;
    }
    Ok(())
}

pub fn dir(dir: &std::path::Path, results: &[HostResult]) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    for r in results {
        let base = r.host.replace('/', "_");
        let status = match (&r.error, r.exit_code, &r.signal) {
            (Some(e), _, _) => format!("error {e}\n"),
            (None, Some(c), _) => format!("exit {c}\n"),
            (None, None, Some(s)) => format!("signal {s}\n"),
            _ => "unknown\n".to_owned(),
        };
        for (ext, bytes) in [
            ("stdout", r.stdout.as_slice()),
            ("stderr", r.stderr.as_slice()),
            ("status", status.as_bytes()),
        ] {
            let path = dir.join(format!("{base}.{ext}"));
            std::fs::write(&path, bytes)
                .with_context(|| format!("cannot write {}", path.display()))?;
        }
    }
    Ok(())
}
