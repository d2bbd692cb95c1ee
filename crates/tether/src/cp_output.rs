//! How `tether cp` reports: a line per host as it finishes (text) or one
//! JSON object per host at the end (json), and on a terminal a live line
//! with the bytes copied, the rate and the hosts done.

use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use anyhow::Result;
use indicatif::HumanBytes;
use serde_json::json;
use tether_cluster::copy::CopyResult;
use tether_term::printable::escaped;

use crate::fleet_cmd::Tally;

fn plural(n: u64, one: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {one}s")
    }
}

/// What a host copied, in words: `3 files, 1 dir, 2 links (1.50 MiB)`.
fn summary(r: &CopyResult) -> String {
    let mut parts = vec![plural(r.files, "file")];
    if r.dirs > 0 {
        parts.push(plural(r.dirs, "new dir"));
    }
    if r.links > 0 {
        parts.push(plural(r.links, "link"));
    }
    format!("{} ({})", parts.join(", "), HumanBytes(r.bytes))
}

/// A host's line: copied on stdout; notes, and the error, on stderr.
/// Names a host gave are escaped for the terminal.
pub fn text(r: &CopyResult) {
    for note in &r.skipped {
        eprintln!(
            "tether: {}: {}",
            escaped(&r.host, false),
            escaped(note, true)
        );
    }
    match &r.error {
        None => {
            let secs = r.total_ms as f64 / 1000.0;
            let line = format!(
                "{}: copied {} in {secs:.2} s\n",
                escaped(&r.host, false),
                summary(r)
            );
            let _ = std::io::stdout().lock().write_all(line.as_bytes());
        }
        Some(e) => {
            let done = if r.files + r.links > 0 {
                format!(" ({} copied before)", summary(r))
            } else {
                String::new()
            };
            eprintln!(
                "tether: {}: {}{done}",
                escaped(&r.host, false),
                escaped(&e.to_string(), true)
            );
        }
    }
}

/// One JSON object per host, in the hosts' order.
pub fn json_lines(results: &[CopyResult]) -> Result<()> {
    let mut out = std::io::stdout().lock();
    for r in results {
        let v = json!({
            "host": r.host, "ok": r.succeeded(), "bytes": r.bytes, "files": r.files,
            "dirs": r.dirs, "links": r.links, "skipped": r.skipped,
            "error": r.error.as_ref().map(ToString::to_string),
            "error_kind": r.error.as_ref().map(|e| e.kind().as_str()),
            // An SSH failure's kind, as tether-ssh typed it.
            "host_failure": r.error.as_ref().and_then(|e| e.failure()).map(|f| f.as_str()),
            "connect_ms": r.connect_ms, "duration_ms": r.total_ms,
        });
        writeln!(out, "{v}")?;
    }
    Ok(())
}

/// The live line on a terminal (stderr): bytes, rate, hosts done, failed
/// and running. Hidden when stderr is not a terminal; no colours.
pub struct ProgressLine {
    bar: indicatif::ProgressBar,
    total_hosts: usize,
}

impl ProgressLine {
    /// For `hosts` hosts and `bytes` in all, when known.
    pub fn new(hosts: usize, bytes: Option<u64>) -> ProgressLine {
        let bar = indicatif::ProgressBar::with_draw_target(
            bytes,
            indicatif::ProgressDrawTarget::stderr(),
        );
        let template = if bytes.is_some() {
            "{bytes}/{total_bytes} {bytes_per_sec} {msg}"
        } else {
            "{bytes} {bytes_per_sec} {msg}"
        };
        if let Ok(style) = indicatif::ProgressStyle::with_template(template) {
            bar.set_style(style);
        }
        ProgressLine {
            bar,
            total_hosts: hosts,
        }
    }

    /// The hosts' counts and the ones still running.
    pub fn hosts(&self, tally: &Tally) {
        self.bar.set_message(format!(
            "[{}/{} hosts done, {} failed] {}",
            tally.done,
            self.total_hosts,
            tally.failed,
            tally.running_folded(50)
        ));
    }

    /// Prints above the line, never through it.
    pub fn above(&self, f: impl FnOnce()) {
        if self.bar.is_hidden() {
            f();
        } else {
            self.bar.suspend(f);
        }
    }

    /// Clears it.
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

/// Moves the line to the bytes copied so far, five times a second.
pub async fn tick(line: Arc<ProgressLine>, copied: Arc<AtomicU64>) {
    if line.bar.is_hidden() {
        return;
    }
    let mut every = tokio::time::interval(Duration::from_millis(200));
    loop {
        every.tick().await;
        line.bar.set_position(copied.load(Ordering::Relaxed));
    }
}
