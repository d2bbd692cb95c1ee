//! One command's output on its way to a result: projected to text,
//! redacted, counted, clipped head+tail, and kept whole in a spill file
//! (created only once the output outgrows the clip, so small results cost
//! no file).

use std::fs::File;
use std::io::Write;
use std::path::PathBuf;

use tether_term::utf8::Utf8Decoder;
use tether_term::{HeadTailClip, Redactor, TextProjector};

use crate::result::Truncation;

/// The streaming pipeline for one call's output.
#[derive(Debug)]
pub struct Capture {
    projector: TextProjector,
    redactor: Redactor,
    decoder: Utf8Decoder,
    clip: HeadTailClip,
    limit: usize,
    chars: u64,
    spill: Spill,
    spill_path: PathBuf,
    text: String,
    scratch: String,
    shown_partial: String,
}

/// Where the whole output goes: memory until it outgrows the clip, then
/// the spill file.
#[derive(Debug)]
enum Spill {
    Memory(String),
    File(Option<File>),
}

impl Capture {
    /// A capture keeping at most `limit` bytes of text, redacting with
    /// `redactor` (a fresh clone of the session's), spilling to `spill_path`.
    pub fn new(limit: usize, redactor: Redactor, spill_path: PathBuf) -> Self {
        Capture {
            projector: TextProjector::new(),
            redactor,
            decoder: Utf8Decoder::new(),
            clip: HeadTailClip::new(limit / 2, limit - limit / 2),
            limit,
            chars: 0,
            spill: Spill::Memory(String::new()),
            spill_path,
            text: String::new(),
            scratch: String::new(),
            shown_partial: String::new(),
        }
    }

    /// Adds raw output bytes of the command.
    pub fn push(&mut self, raw: &[u8]) {
        let mut projected = std::mem::take(&mut self.text);
        self.projector.feed(raw, &mut projected);
        self.redacted(projected.as_bytes());
        projected.clear();
        self.text = projected;
    }

    fn redacted(&mut self, text: &[u8]) {
        let mut clean = Vec::new();
        self.redactor.feed(text, &mut clean);
        self.decoded(&clean);
    }

    fn decoded(&mut self, bytes: &[u8]) {
        let mut text = std::mem::take(&mut self.scratch);
        self.decoder.decode(bytes, &mut |s| text.push_str(s));
        self.accept(&text);
        text.clear();
        self.scratch = text;
    }

    fn accept(&mut self, s: &str) {
        if s.is_empty() {
            return;
        }
        self.chars += s.chars().count() as u64;
        self.clip.push(s);
        match &mut self.spill {
            Spill::Memory(buf) => {
                buf.push_str(s);
                if buf.len() > self.limit {
                    let mut file = File::create(&self.spill_path).ok();
                    if let Some(f) = file.as_mut()
                        && f.write_all(buf.as_bytes()).is_err()
                    {
                        file = None;
                    }
                    self.spill = Spill::File(file);
                }
            }
            Spill::File(Some(f)) => {
                if f.write_all(s.as_bytes()).is_err() {
                    self.spill = Spill::File(None);
                }
            }
            Spill::File(None) => {}
        }
    }

    /// Ends the command's output: flushes the last partial line.
    pub fn finish(&mut self) {
        let mut tail = String::new();
        self.projector.finish(&mut tail);
        self.redacted(tail.as_bytes());
        let mut rest = Vec::new();
        self.redactor.finish(&mut rest);
        self.decoded(&rest);
        let mut last = String::new();
        self.decoder.finish(&mut |s| last.push_str(s));
        self.accept(&last);
        if let Spill::File(Some(f)) = &mut self.spill {
            let _ = f.flush();
        }
    }

    /// The output since the last `take` (plus the unfinished line,
    /// redacted), and the truncation when clipped. Starts a fresh clip for
    /// what follows.
    pub fn take(&mut self) -> (String, Option<Truncation>) {
        let clipped = self.clip.clipped();
        let pending = redact_once(&self.redactor, &self.projector.current_line());
        let total_chars = self.chars;
        let kept = (clipped.head.chars().count() + clipped.tail.chars().count()) as u64;
        let truncation = (!clipped.is_complete()).then(|| Truncation {
            omitted_chars: total_chars - kept,
            total_chars,
            full_output_path: self.spill_path.clone(),
        });
        let omitted = truncation.as_ref().map_or(0, |t| t.omitted_chars);
        let mut output = clipped.render(|_| format!("\n[… {omitted} characters omitted …]\n"));
        output.push_str(&pending);
        // An unfinished line (a prompt) returned last time is not repeated
        // when it is finished or extended.
        if let Some(rest) = output.strip_prefix(self.shown_partial.as_str()) {
            output = rest.to_owned();
        }
        self.shown_partial = pending;
        self.clip = HeadTailClip::new(self.limit / 2, self.limit - self.limit / 2);
        self.chars = 0;
        (output, truncation)
    }
}

/// Redacts one short string on its own, with a fresh copy of `redactor`.
fn redact_once(redactor: &Redactor, text: &str) -> String {
    let mut r = redactor.fresh();
    let mut out = Vec::new();
    r.feed(text.as_bytes(), &mut out);
    r.finish(&mut out);
    String::from_utf8_lossy(&out).into_owned()
}
