//! One command's output on its way to a result: projected to text,
//! redacted, counted, clipped head+tail, and written whole to a spill file.

use std::fs::File;
use std::io::Write;
use std::path::PathBuf;

use tether_term::utf8::Utf8Decoder;
use tether_term::{HeadTailClip, Redactor, TextProjector};

use crate::error::ShellError;
use crate::result::Truncation;

/// The streaming pipeline for one call's output.
#[derive(Debug)]
pub struct Capture {
    projector: TextProjector,
    redactor: Redactor,
    secrets: Vec<String>,
    decoder: Utf8Decoder,
    clip: HeadTailClip,
    limit: usize,
    chars: u64,
    spill: Option<File>,
    spill_path: PathBuf,
    text: String,
    shown_partial: String,
}

impl Capture {
    /// A capture keeping at most `limit` bytes of text, redacting
    /// `secrets` (non-empty), spilling everything to `spill_path`.
    pub fn new(
        limit: usize,
        secrets: Vec<String>,
        spill_path: PathBuf,
    ) -> Result<Self, ShellError> {
        let redactor = Redactor::new(&secrets)?;
        let spill = File::create(&spill_path).map_err(|source| ShellError::Files {
            what: "create the spill file",
            path: spill_path.clone(),
            source,
        })?;
        let spill = Some(spill);
        Ok(Capture {
            projector: TextProjector::new(),
            redactor,
            secrets,
            decoder: Utf8Decoder::new(),
            clip: HeadTailClip::new(limit / 2, limit - limit / 2),
            limit,
            chars: 0,
            spill,
            spill_path,
            text: String::new(),
            shown_partial: String::new(),
        })
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
        let (clip, chars, spill) = (&mut self.clip, &mut self.chars, &mut self.spill);
        self.decoder.decode(bytes, &mut |s| {
            *chars += s.chars().count() as u64;
            clip.push(s);
            if let Some(f) = spill.as_mut() {
                let _ = f.write_all(s.as_bytes());
            }
        });
    }

    /// Ends the command's output: flushes the last partial line.
    pub fn finish(&mut self) {
        let mut tail = String::new();
        self.projector.finish(&mut tail);
        self.redacted(tail.as_bytes());
        let mut rest = Vec::new();
        self.redactor.finish(&mut rest);
        self.decoded(&rest);
        let (clip, chars, spill) = (&mut self.clip, &mut self.chars, &mut self.spill);
        self.decoder.finish(&mut |s| {
            *chars += s.chars().count() as u64;
            clip.push(s);
            if let Some(f) = spill.as_mut() {
                let _ = f.write_all(s.as_bytes());
            }
        });
        if let Some(f) = self.spill.as_mut() {
            let _ = f.flush();
        }
    }

    /// The output since the last `take` (plus the unfinished line,
    /// redacted), and the truncation when clipped. Starts a fresh clip for
    /// what follows.
    pub fn take(&mut self) -> (String, Option<Truncation>) {
        let clipped = self.clip.clipped();
        let pending = redact_once(&self.secrets, &self.projector.current_line());
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

/// Redacts one short string on its own.
fn redact_once(secrets: &[String], text: &str) -> String {
    let Ok(mut r) = Redactor::new(secrets) else {
        return text.to_owned();
    };
    let mut out = Vec::new();
    r.feed(text.as_bytes(), &mut out);
    r.finish(&mut out);
    String::from_utf8_lossy(&out).into_owned()
}
