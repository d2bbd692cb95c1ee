//! One command's output on its way to a result: projected to text,
//! redacted, counted, clipped head+tail, and kept whole in a spill file
//! (created only once the output outgrows the clip, so small results cost
//! no file).
//!
//! A spill that cannot be kept whole (the session's cap on saved output,
//! [`crate::spill::Spills`], or a write error such as a full disk) is
//! removed at once, and its result says so and why: the output is never
//! claimed whole when it is not, and the command itself is not failed.
//!
//! The spill file holds the exact bytes the program wrote between the
//! marks (binary, invalid UTF-8, control sequences), except secret values,
//! which are replaced by `[redacted]` at byte level. Every result boundary
//! ([`Capture::take`]) releases what the text redactor holds, so a result
//! never withholds output that is not a secret.

use std::fs::File;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use tether_term::utf8::Utf8Decoder;
use tether_term::{HeadTailClip, Redactor, TextProjector};

use crate::result::Truncation;
use crate::spill::{Spills, size_text};

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
    spill_redactor: Redactor,
    spill_path: PathBuf,
    /// The session's spills, for the cap.
    spills: Arc<Spills>,
    /// Bytes written to the spill file.
    spill_len: u64,
    /// Secrets learned after the output was redacted (the command itself
    /// exported them): applied once more to what is returned.
    late: Option<Redactor>,
    text: String,
    scratch: String,
    raw_scratch: Vec<u8>,
    shown_partial: String,
    /// Where followers read the text as it comes.
    tap: Option<crate::follow::Tap>,
    /// `Some` when the spill takes back the CR the terminal put before
    /// each LF (fish forces ONLCR): `true` while a CR is held.
    crlf: Option<bool>,
}

/// Where the whole output goes: memory until it outgrows the clip, then
/// the spill file.
#[derive(Debug)]
enum Spill {
    Memory(Vec<u8>),
    /// Being written.
    File(File),
    /// Complete and closed.
    Saved,
    /// Not saved whole (the file was removed); the note says why.
    Lost(String),
}

impl Capture {
    /// A capture keeping at most `limit` bytes of text, redacting with
    /// `redactor` (a fresh clone of the session's), spilling to
    /// `spill_path` within the session's `spills` cap.
    pub fn new(limit: usize, redactor: Redactor, spill_path: PathBuf, spills: Arc<Spills>) -> Self {
        Capture {
            projector: TextProjector::new(),
            spill_redactor: redactor.fresh(),
            redactor,
            decoder: Utf8Decoder::new(),
            clip: HeadTailClip::halves(limit),
            limit,
            chars: 0,
            spill: Spill::Memory(Vec::new()),
            spill_path,
            spills,
            spill_len: 0,
            late: None,
            text: String::new(),
            scratch: String::new(),
            raw_scratch: Vec::new(),
            shown_partial: String::new(),
            tap: None,
            crlf: None,
        }
    }

    /// Saves `\n` for each `\r\n` in the spill: the bytes the program
    /// wrote, when the terminal added the CR.
    pub(crate) fn undoing_crlf(mut self) -> Self {
        self.crlf = Some(false);
        self
    }

    /// `raw` without the CR of each CR LF (a last CR is held over), or
    /// as it is when the terminal added none.
    fn without_crlf<'r>(&mut self, raw: &'r [u8]) -> std::borrow::Cow<'r, [u8]> {
        let Some(mut held) = self.crlf else {
            return std::borrow::Cow::Borrowed(raw);
        };
        let mut out = Vec::with_capacity(raw.len() + 1);
        for &b in raw {
            if held && b != b'\n' {
                out.push(b'\r');
            }
            held = b == b'\r';
            if !held {
                out.push(b);
            }
        }
        self.crlf = Some(held);
        std::borrow::Cow::Owned(out)
    }

    /// Also writes the text it accepts to `tap`, for followers.
    pub(crate) fn with_tap(mut self, tap: crate::follow::Tap) -> Self {
        self.tap = Some(tap);
        self
    }

    /// The command's start mark came: its followers are told.
    pub(crate) fn started(&self) {
        if let Some(t) = &self.tap {
            t.started();
        }
    }

    /// Adds raw output bytes of the command.
    pub fn push(&mut self, raw: &[u8]) {
        let mut bytes = std::mem::take(&mut self.raw_scratch);
        let kept = self.without_crlf(raw);
        self.spill_redactor.feed(&kept, &mut bytes);
        self.spilled(&bytes);
        bytes.clear();
        self.raw_scratch = bytes;
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
        if let Some(t) = &self.tap {
            t.push(s);
        }
        self.clip.push(s);
    }

    /// Appends redacted raw bytes to the spill (memory, then the file once
    /// they outgrow the clip).
    fn spilled(&mut self, bytes: &[u8]) {
        if bytes.is_empty() {
            return;
        }
        match &mut self.spill {
            Spill::Memory(buf) => {
                buf.extend_from_slice(bytes);
                if buf.len() > self.limit {
                    self.spill_to_file();
                }
            }
            Spill::File(_) => self.write_spill(bytes),
            Spill::Saved | Spill::Lost(_) => {}
        }
    }

    /// Moves the spill from memory to its file (private to the user).
    fn spill_to_file(&mut self) {
        let Spill::Memory(buf) = &mut self.spill else {
            return;
        };
        let buf = std::mem::take(buf);
        match create_private(&self.spill_path) {
            Ok(f) => {
                self.spill = Spill::File(f);
                self.write_spill(&buf);
            }
            Err(e) => self.lose(format!(
                "{} could not be created ({e}); make room in its directory, or redirect the command's output to a file elsewhere",
                self.spill_path.display()
            )),
        }
    }

    /// Appends to the spill file, within the session's cap.
    fn write_spill(&mut self, bytes: &[u8]) {
        if let Err(over) = self.spills.grow(&self.spill_path, bytes.len() as u64) {
            self.lose(format!(
                "it passed this session's cap of {} for saved output (TETHER_SPILL_CAP); redirect the command's output to a file to keep all of it",
                size_text(over.cap)
            ));
            return;
        }
        let Spill::File(f) = &mut self.spill else {
            return;
        };
        match f.write_all(bytes) {
            Ok(()) => self.spill_len += bytes.len() as u64,
            Err(e) => self.lose(format!(
                "writing {} failed after {} ({e}); free space there, or redirect the command's output to a file elsewhere",
                self.spill_path.display(),
                size_text(self.spill_len)
            )),
        }
    }

    /// Gives up the spill file: removes what there is of it (so a full
    /// disk gets its space back at once) and keeps why, for the result.
    fn lose(&mut self, why: String) {
        self.spill = Spill::Lost(format!(
            "the output was not saved whole and its file was removed: {why}"
        ));
        let _ = std::fs::remove_file(&self.spill_path);
        self.spills.forget(&self.spill_path);
    }

    /// Releases what the text redactor holds (a result boundary). The
    /// spill's redactor keeps its tail (a proper prefix of a secret, never
    /// more) until the output ends, so a secret split across two results
    /// still never reaches the file in pieces.
    fn release(&mut self) {
        let mut rest = Vec::new();
        self.redactor.flush(&mut rest);
        self.decoded(&rest);
        if let Spill::File(f) = &mut self.spill {
            let _ = f.flush();
        }
    }

    /// Ends the command's output: flushes the last partial line.
    pub fn finish(&mut self) {
        let mut tail = String::new();
        self.projector.finish(&mut tail);
        self.redacted(tail.as_bytes());
        let mut raw = Vec::new();
        if self.crlf == Some(true) {
            self.crlf = Some(false);
            self.spill_redactor.feed(b"\r", &mut raw);
        }
        self.spill_redactor.finish(&mut raw);
        self.spilled(&raw);
        self.release();
        let mut last = String::new();
        self.decoder.finish(&mut |s| last.push_str(s));
        self.accept(&last);
    }

    /// Redacts the output once more with `redactor` (more secrets than
    /// this capture started with: ones the command itself set), in the
    /// spill and in what [`Capture::take`] returns. Call after
    /// [`Capture::finish`].
    pub fn learn(&mut self, redactor: &Redactor) {
        match &mut self.spill {
            Spill::Memory(buf) => {
                let mut out = Vec::with_capacity(buf.len());
                let mut r = redactor.fresh();
                r.feed(buf, &mut out);
                r.finish(&mut out);
                *buf = out;
            }
            Spill::File(_) | Spill::Saved => {
                // Closed first: the rewrite replaces the file.
                self.spill = Spill::Saved;
                match redact_file(&self.spill_path, redactor) {
                    Ok(len) => self.spills.resized(&self.spill_path, len),
                    // Never leave a spill file that may hold a secret.
                    Err(e) => self.lose(format!(
                        "it could not be rewritten with the secrets the command set redacted ({e})"
                    )),
                }
            }
            Spill::Lost(_) => {}
        }
        self.late = Some(redactor.fresh());
    }

    /// The output since the last `take` (plus the unfinished line,
    /// redacted), and the truncation when clipped. Starts a fresh clip for
    /// what follows.
    pub fn take(&mut self) -> (String, Option<Truncation>) {
        self.release();
        let clipped = self.clip.clipped();
        let mut pending = redact_once(&self.redactor, &self.projector.current_line());
        let total_chars = self.chars;
        let kept = (clipped.head.chars().count() + clipped.tail.chars().count()) as u64;
        if !clipped.is_complete() {
            self.spill_to_file();
        }
        let (full_output_path, note) = match &self.spill {
            Spill::Lost(why) => (None, Some(why.clone())),
            _ => (Some(self.spill_path.clone()), None),
        };
        let truncation = (!clipped.is_complete()).then(|| Truncation {
            omitted_chars: total_chars - kept,
            total_chars,
            full_output_path,
            note,
        });
        let omitted = truncation.as_ref().map_or(0, |t| t.omitted_chars);
        let mut output = clipped.render(|_| tether_term::omitted_marker(omitted));
        if let Some(late) = &self.late {
            output = redact_once(late, &output);
            pending = redact_once(late, &pending);
        }
        output.push_str(&pending);
        if let Some(t) = &self.tap {
            t.partial(&pending);
        }
        // An unfinished line (a prompt) returned last time is not repeated
        // when it is finished or extended.
        if let Some(rest) = output.strip_prefix(self.shown_partial.as_str()) {
            output = rest.to_owned();
        }
        self.shown_partial = pending;
        self.clip = HeadTailClip::halves(self.limit);
        self.chars = 0;
        (output, truncation)
    }
}

/// Creates `path`, which must not exist (`O_EXCL`, never through a
/// symlink), readable only by the user (0600 whatever the umask).
fn create_private(path: &Path) -> std::io::Result<File> {
    crate::private::create_file(path)
}

/// Rewrites the file at `path` with `redactor` applied (streamed through a
/// private temporary file renamed over it); returns its new length. The
/// temporary file does not outlive a failure.
fn redact_file(path: &Path, redactor: &Redactor) -> std::io::Result<u64> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".redact");
    let tmp = PathBuf::from(tmp);
    let done = rewrite(path, &tmp, redactor);
    if done.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    done
}

fn rewrite(path: &Path, tmp: &Path, redactor: &Redactor) -> std::io::Result<u64> {
    let mut input = File::open(path)?;
    let mut output = create_private(tmp)?;
    let mut r = redactor.fresh();
    let mut buf = vec![0u8; 64 * 1024];
    let mut out = Vec::new();
    loop {
        let n = input.read(&mut buf)?;
        if n == 0 {
            break;
        }
        r.feed(&buf[..n], &mut out);
        output.write_all(&out)?;
        out.clear();
    }
    r.finish(&mut out);
    output.write_all(&out)?;
    output.flush()?;
    let len = output.metadata()?.len();
    std::fs::rename(tmp, path)?;
    Ok(len)
}

/// Redacts one short string on its own, with a fresh copy of `redactor`.
fn redact_once(redactor: &Redactor, text: &str) -> String {
    let mut r = redactor.fresh();
    let mut out = Vec::new();
    r.feed(text.as_bytes(), &mut out);
    r.finish(&mut out);
    String::from_utf8_lossy(&out).into_owned()
}
