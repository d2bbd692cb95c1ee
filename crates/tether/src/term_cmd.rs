//! `tether term`: run a recorded byte stream through `tether-term`.

use std::io::{Read, Write};

use anyhow::{Context, Result};
use tether_term::{
    Baseline, Captured, ResponseFilter, Scanner, ScreenTracker, TextProjector, Token, plan_restore,
};

use crate::cli::{TermArgs, TermMode};

/// Chunk size used to feed the stream, so the streaming paths are exercised.
const CHUNK: usize = 4096;

pub fn run(args: TermArgs) -> Result<()> {
    let input = match &args.file {
        Some(path) => std::fs::read(path)
            .with_context(|| format!("cannot read {}: check the path", path.display()))?,
        None => {
            let mut buf = Vec::new();
            std::io::stdin()
                .read_to_end(&mut buf)
                .context("cannot read stdin")?;
            buf
        }
    };
    let mut stdout = std::io::stdout().lock();
    match args.mode {
        TermMode::Project => {
            let mut projector = TextProjector::new();
            let mut text = String::new();
            for chunk in input.chunks(CHUNK) {
                projector.feed(chunk, &mut text);
            }
            projector.finish(&mut text);
            stdout.write_all(text.as_bytes())?;
        }
        TermMode::Filter => {
            let mut filter = ResponseFilter::new();
            let mut out = Vec::with_capacity(input.len());
            for chunk in input.chunks(CHUNK) {
                filter.feed(chunk, &mut out);
            }
            filter.flush(&mut out);
            stdout.write_all(&out)?;
            eprintln!(
                "tether: removed {} terminal replies",
                filter.replies_dropped()
            );
        }
        TermMode::Modes => {
            let mut tracker = ScreenTracker::new();
            for chunk in input.chunks(CHUNK) {
                tracker.written(chunk);
            }
            let state = tracker.state();
            writeln!(stdout, "{state:#?}")?;
            // What undoes that state, for a terminal that began as a plain shell.
            let plan = plan_restore(&Baseline::Captured(Captured::default()), state);
            writeln!(
                stdout,
                "restore: {}",
                String::from_utf8_lossy(&plan).escape_debug()
            )?;
        }
        TermMode::Scan => {
            let mut scanner = Scanner::new();
            let mut lines = String::new();
            for chunk in input.chunks(CHUNK) {
                scanner.feed(chunk, |ev| describe(&ev.token, ev.raw, &mut lines));
            }
            scanner.flush(|ev| describe(&ev.token, ev.raw, &mut lines));
            stdout.write_all(lines.as_bytes())?;
        }
    }
    Ok(())
}

fn describe(token: &Token<'_>, raw: &[u8], out: &mut String) {
    let kind = match token {
        Token::Text(_) => "text",
        Token::Control(_) => "control",
        Token::Esc { .. } => "esc",
        Token::SingleShift { .. } => "single-shift",
        Token::Csi(_) => "csi",
        Token::Str { .. } => "string",
        Token::Cancelled => "cancelled",
        Token::Overflow => "overflow",
    };
    let shown: String = String::from_utf8_lossy(raw).escape_debug().collect();
    out.push_str(&format!("{kind:<12} {shown}\n"));
}
