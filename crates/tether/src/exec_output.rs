//! How `tether exec` prints results: `host: line` as lines come
//! (stream), identical results folded under one header (gather), one JSON
//! object per host (json), or files per host (dir).

use std::io::Write;

use anyhow::{Context, Result};
use serde_json::json;
use tether_cluster::exec::{self, HostResult, Progress, Stream};

use crate::host_text::{HostBytes, Shown};

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

/// `host: line`, stdout lines on stdout and stderr lines on stderr (each
/// as `shown` says that stream gets a host's bytes); errors and signals as
/// one line on stderr. An error: the stream that could not be written.
pub fn stream(p: &Progress, prefix: bool, shown: Shown) -> Result<(), Closed> {
    let host = |h: &str| if prefix { Some(h.to_owned()) } else { None };
    match p {
        // Bytes go out as they came on a pipe (no re-encoding), one whole
        // line per write.
        Progress::Line(h, Stream::Stdout, line) => {
            prefixed(&mut std::io::stdout().lock(), host(h), line, shown.stdout)
                .map_err(|_| Closed::Stdout)
        }
        Progress::Line(h, Stream::Stderr, line) => {
            prefixed(&mut std::io::stderr().lock(), host(h), line, shown.stderr)
                .map_err(|_| Closed::Stderr)
        }
        Progress::Done(r) => {
            let line = if let Some(e) = &r.error {
                format!("tether: {}: {e}", r.host)
            } else if let Some(sig) = &r.signal {
                format!("tether: {}: killed by signal {sig}", r.host)
            } else {
                return Ok(());
            };
            // The host's name and the message (which may quote it) escaped.
            let line = format!("{}\n", printable(&line));
            std::io::stderr()
                .write_all(line.as_bytes())
                .map_err(|_| Closed::Stderr)
        }
        Progress::Started(_) | Progress::Connected(_) => Ok(()),
    }
}

/// A host's name as a message shows it: control and bidi characters
/// escaped.
pub fn printable(host: &str) -> std::borrow::Cow<'_, str> {
    tether_term::printable::escaped(host, false)
}

/// `host: line` and its newline, in one write.
pub fn prefixed(
    out: &mut impl Write,
    host: Option<String>,
    line: &[u8],
    bytes: HostBytes,
) -> std::io::Result<()> {
    let mut buf = Vec::with_capacity(line.len() + 64);
    if let Some(host) = host {
        buf.extend_from_slice(printable(&host).as_bytes());
        buf.extend_from_slice(b": ");
    }
    let at = buf.len();
    buf.extend_from_slice(line);
    buf.push(b'\n');
    if bytes == HostBytes::Escaped {
        // With its newline, so a CRLF end passes as it is.
        let escaped = bytes.shown(&buf[at..]).into_owned();
        buf.truncate(at);
        buf.extend_from_slice(&escaped);
    }
    out.write_all(&buf)
}

/// `--output gather`: each group's header, then its stdout and stderr as
/// stdout gets a host's bytes (`shown`).
pub fn gather(results: &[HostResult], shown: Shown) -> Result<()> {
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
        let header = printable(&header);
        let rule = "-".repeat(header.chars().count().clamp(15, 79));
        writeln!(out, "{rule}\n{header}\n{rule}")?;
        shown.stdout.write_kept(&g.stdout, &mut out)?;
        shown.stdout.write_kept(&g.stderr, &mut out)?;
    }
    Ok(())
}

/// `--output diff`: the groups of identical results, largest first (then
/// by first host, as ClusterShell orders them); each group's stdout as a
/// unified diff against the first's, headed by the two node sets (with
/// their sizes past one host), as `clush --diff` prints it. Nothing when
/// every host printed the same. A group's status, when not a plain exit 0,
/// goes to stderr. The diff's lines as stdout gets a host's bytes
/// (`shown_as`).
pub fn diff(results: &[HostResult], shown_as: Shown) -> Result<()> {
    let mut groups = exec::gather(results);
    groups.sort_by_cached_key(|g| {
        (
            std::cmp::Reverse(g.hosts.len()),
            g.hosts.names().first().cloned(),
        )
    });
    let text = |k: &exec::Kept| -> Result<String> {
        let mut bytes = Vec::new();
        k.each(|b| {
            bytes.extend_from_slice(b);
            Ok(())
        })?;
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    };
    let name = |g: &exec::Group| {
        let set = printable(&g.hosts.fold()).into_owned();
        if g.hosts.len() > 1 {
            format!("{set} ({})", g.hosts.len())
        } else {
            set
        }
    };
    let mut out = std::io::stdout().lock();
    let Some((first, rest)) = groups.split_first() else {
        return Ok(());
    };
    let reference = text(&first.stdout)?;
    for g in rest {
        let other = text(&g.stdout)?;
        let d = similar::TextDiff::from_lines(&reference, &other);
        let mut unified = d.unified_diff();
        let text_diff = unified
            .context_radius(3)
            .missing_newline_hint(false)
            .header(&name(first), &name(g))
            .to_string();
        out.write_all(&shown_as.stdout.shown(text_diff.as_bytes()))?;
    }
    for g in &groups {
        let status = match (&g.error, &g.signal, g.exit_code) {
            (Some(e), _, _) => e.to_string(),
            (None, Some(s), _) => format!("signal {s}"),
            (None, None, Some(c)) if c != 0 => format!("exit {c}"),
            _ => continue,
        };
        eprintln!("tether: {}: {}", name(g), printable(&status));
    }
    Ok(())
}

/// One JSON object per host. Its outputs are written as they are read
/// back (a spilled output never whole in memory), as JSON strings of their
/// text (invalid UTF-8 as U+FFFD).
pub fn json_lines(results: &[HostResult]) -> Result<()> {
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    for r in results {
        let v = json!({
            "host": r.host, "exit_code": r.exit_code, "signal": r.signal,
            "error": r.error.as_ref().map(ToString::to_string),
            "error_kind": r.error.as_ref().map(|e| e.kind().as_str()),
            // An SSH failure's kind, as tether-ssh typed it.
            "host_failure": r.error.as_ref().and_then(|e| e.failure()).map(|f| f.as_str()),
            "halt": r.error.as_ref().and_then(exec::HostError::halt).map(exec::Halt::as_str),
            "connect_ms": r.connect_ms, "total_ms": r.total_ms,
            "output_lost_bytes": r.stdout.lost() + r.stderr.lost(),
        });
        let small = v.to_string();
        out.write_all(&small.as_bytes()[..small.len() - 1])?;
        for (key, kept) in [("stdout", &r.stdout), ("stderr", &r.stderr)] {
            write!(out, ",\"{key}\":\"")?;
            json_text(&mut out, kept)?;
            out.write_all(b"\"")?;
        }
        out.write_all(b"}\n")?;
    }
    out.flush()?;
    Ok(())
}

/// `kept`'s text, escaped for inside a JSON string, piece by piece.
fn json_text(out: &mut impl Write, kept: &exec::Kept) -> std::io::Result<()> {
    let mut decoder = tether_term::utf8::Utf8Decoder::new();
    let mut failed = Ok(());
    let mut emit = |s: &str| {
        if failed.is_ok() {
            let q = serde_json::Value::from(s).to_string();
            failed = out.write_all(&q.as_bytes()[1..q.len() - 1]);
        }
    };
    kept.each(|b| {
        decoder.decode(b, &mut emit);
        Ok(())
    })?;
    decoder.finish(&mut emit);
    failed
}

/// The base of a host's files in `--output dir` (`/` becomes `_`).
fn file_base(host: &str) -> String {
    host.replace('/', "_")
}

/// For `--output dir`, before anything runs: two hosts whose files would
/// be the same (`x/1` and `x_1` both write `x_1.*`), as a message.
pub fn dir_clash(hosts: &[exec::HostSpec]) -> Option<String> {
    let mut seen = std::collections::HashMap::new();
    for h in hosts {
        if let Some(other) = seen.insert(file_base(&h.name), &h.name) {
            return Some(format!(
                "--output dir: the hosts {} and {} would write the same files ({}.stdout, .stderr, .status); name them apart or use another --output",
                printable(other),
                printable(&h.name),
                printable(&file_base(&h.name))
            ));
        }
    }
    None
}

pub fn dir(dir: &std::path::Path, results: &[HostResult]) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    for r in results {
        let base = file_base(&r.host);
        let status = match (&r.error, r.exit_code, &r.signal) {
            (Some(e), _, _) => format!("error {e}\n"),
            (None, Some(c), _) => format!("exit {c}\n"),
            (None, None, Some(s)) => format!("signal {s}\n"),
            _ => "unknown\n".to_owned(),
        };
        let status = exec::Kept::from_bytes(status.as_bytes());
        for (ext, kept) in [
            ("stdout", &r.stdout),
            ("stderr", &r.stderr),
            ("status", &status),
        ] {
            let path = dir.join(format!("{base}.{ext}"));
            let write = || -> std::io::Result<()> {
                let mut f = std::io::BufWriter::new(std::fs::File::create(&path)?);
                kept.each(|b| f.write_all(b))?;
                f.flush()
            };
            write().with_context(|| format!("cannot write {}", path.display()))?;
        }
    }
    Ok(())
}
