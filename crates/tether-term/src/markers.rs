//! The marker scanner: finds OSC 133 shell-integration marks and the
//! engine's own nonce-bearing marks in a shell's output.
//!
//! Engine marks are `OSC 6973 ; <nonce> ; <kind> [; key=value]* ST|BEL`.
//! Only a real OSC sequence counts: input echoed by a terminal shows an
//! ESC as text (`^[` or a literal `\033` in the command line), never as the
//! byte, and a program cannot print a mark it has not been told the nonce
//! of. The nonce is a session secret the shell read from a private file,
//! followed by each command's sequence number ([`MarkerScanner::set_sequence`]):
//! only the number is ever typed, so a process that reads the terminal's
//! input learns nothing it could forge a mark with.

use crate::error::TermError;
use crate::scan::Scanner;
use crate::token::{StringKind, Token};

/// The OSC number of the engine's own marks.
pub const ENGINE_OSC: &str = "6973";

/// Shortest nonce accepted, in characters.
pub const MIN_NONCE_LEN: usize = 16;

/// A mark found in the stream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Marker {
    /// OSC 133 A: a prompt begins.
    PromptStart,
    /// OSC 133 B: the prompt ends, command input begins.
    CommandStart,
    /// OSC 133 C: the command's output begins.
    OutputStart,
    /// OSC 133 D: the command finished, with its exit status if given.
    CommandEnd {
        /// The exit status in `D;<exit>`.
        exit: Option<i32>,
    },
    /// An engine mark carrying the expected nonce.
    Engine {
        /// The mark's kind, e.g. `start`, `end`, `prompt`.
        kind: String,
        /// `key=value` fields after the kind, in order.
        fields: Vec<(String, String)>,
    },
}

/// A mark and where its bytes are in the stream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MarkerEvent {
    /// What was found.
    pub marker: Marker,
    /// Stream offset of the mark's first byte (its ESC).
    pub start: u64,
    /// Stream offset just past the mark's last byte.
    pub end: u64,
    /// `Some(i)` when the mark carried the `i`-th nonce of
    /// [`MarkerScanner::watch_outer`] (an outer shell's), not the current
    /// one.
    pub outer: Option<usize>,
}

/// Streaming scanner for [`Marker`]s.
#[derive(Clone, Debug)]
pub struct MarkerScanner {
    scanner: Scanner,
    /// The nonce given to [`MarkerScanner::new`]: the session secret.
    base: String,
    nonce: String,
    /// Nonces of outer shells still accepted ([`MarkerScanner::watch_outer`]).
    outer: Vec<(String, String)>,
    offset: u64,
    forged: u64,
}

impl MarkerScanner {
    /// A scanner that accepts engine marks carrying `nonce`, which must be
    /// at least [`MIN_NONCE_LEN`] ASCII letters or digits.
    pub fn new(nonce: &str) -> Result<Self, TermError> {
        check_nonce(nonce)?;
        Ok(MarkerScanner {
            scanner: Scanner::escapes_only(),
            base: nonce.to_owned(),
            nonce: nonce.to_owned(),
            outer: Vec::new(),
            offset: 0,
            forged: 0,
        })
    }

    /// Accepts `nonce` from now on (the previous nonce no longer counts).
    pub fn set_nonce(&mut self, nonce: &str) -> Result<(), TermError> {
        check_nonce(nonce)?;
        nonce.clone_into(&mut self.nonce);
        Ok(())
    }

    /// Accepts the nonce given to [`MarkerScanner::new`] followed by
    /// `seq` in decimal from now on (one command's marks; the previous
    /// nonce no longer counts).
    pub fn set_sequence(&mut self, seq: u64) {
        self.nonce = format!("{}{seq}", self.base);
    }

    /// Keeps accepting the current nonce as an outer shell's (its marks
    /// come with [`MarkerEvent::outer`] set to its depth), and accepts
    /// `base` followed by the current sequence number from now on: a shell
    /// started inside the current command (`bash`, `sudo -i`) has a secret
    /// of its own, and the shell it runs in ends that command when it
    /// exits.
    pub fn watch_outer(&mut self, base: &str, seq: u64) -> Result<(), TermError> {
        check_nonce(base)?;
        let nonce = std::mem::take(&mut self.nonce);
        let outer_base = std::mem::replace(&mut self.base, base.to_owned());
        self.outer.push((outer_base, nonce));
        self.set_sequence(seq);
        Ok(())
    }

    /// Goes back to the outer shell at depth `depth` (0: the first one
    /// [`MarkerScanner::watch_outer`] kept): its nonce and its base are
    /// current again; those inside it are forgotten.
    pub fn leave_to(&mut self, depth: usize) {
        if depth < self.outer.len() {
            self.outer.truncate(depth + 1);
            if let Some((base, nonce)) = self.outer.pop() {
                self.base = base;
                self.nonce = nonce;
            }
        }
    }

    /// How many outer shells' nonces are accepted.
    pub fn depth(&self) -> usize {
        self.outer.len()
    }

    /// Bytes scanned so far: the stream offset of the next byte.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// Engine-style marks seen with a wrong nonce (ignored).
    pub fn forged(&self) -> u64 {
        self.forged
    }

    /// Scans one chunk, appending the marks it completes to `out`.
    pub fn feed(&mut self, input: &[u8], out: &mut Vec<MarkerEvent>) {
        let (nonce, outer, offset, forged) =
            (&self.nonce, &self.outer, &mut self.offset, &mut self.forged);
        self.scanner.feed(input, |ev| {
            let start = *offset;
            *offset += ev.raw.len() as u64;
            if let Token::Str {
                kind: StringKind::Osc,
                payload,
                ..
            } = ev.token
            {
                match parse_mark(payload, nonce, outer) {
                    Parsed::Mark(marker, outer) => out.push(MarkerEvent {
                        marker,
                        start,
                        end: *offset,
                        outer,
                    }),
                    Parsed::Forged => *forged += 1,
                    Parsed::None => {}
                }
            }
        });
    }
}

fn check_nonce(nonce: &str) -> Result<(), TermError> {
    if nonce.len() >= MIN_NONCE_LEN && nonce.bytes().all(|b| b.is_ascii_alphanumeric()) {
        Ok(())
    } else {
        Err(TermError::InvalidNonce {
            len: nonce.len(),
            min: MIN_NONCE_LEN,
        })
    }
}

enum Parsed {
    /// A mark, and the depth of the outer nonce it carried (if not the
    /// current one).
    Mark(Marker, Option<usize>),
    Forged,
    None,
}

fn parse_mark(payload: &[u8], nonce: &str, outer: &[(String, String)]) -> Parsed {
    let Ok(text) = std::str::from_utf8(payload) else {
        return Parsed::None;
    };
    let mut parts = text.split(';');
    match parts.next() {
        Some("133") => osc133(parts).map_or(Parsed::None, |m| Parsed::Mark(m, None)),
        Some(ENGINE_OSC) => {
            let given = parts.next();
            let depth = match given {
                Some(n) if n == nonce => None,
                Some(n) => match outer.iter().position(|(_, o)| o == n) {
                    Some(i) => Some(i),
                    None => return Parsed::Forged,
                },
                None => return Parsed::Forged,
            };
            let Some(kind) = parts.next().filter(|k| !k.is_empty()) else {
                return Parsed::Forged;
            };
            let fields = parts
                .map(|f| match f.split_once('=') {
                    Some((k, v)) => (k.to_owned(), v.to_owned()),
                    None => (f.to_owned(), String::new()),
                })
                .collect();
            Parsed::Mark(
                Marker::Engine {
                    kind: kind.to_owned(),
                    fields,
                },
                depth,
            )
        }
        _ => Parsed::None,
    }
}

fn osc133<'a>(mut parts: impl Iterator<Item = &'a str>) -> Option<Marker> {
    Some(match parts.next()? {
        "A" => Marker::PromptStart,
        "B" => Marker::CommandStart,
        "C" => Marker::OutputStart,
        "D" => Marker::CommandEnd {
            exit: parts.next().and_then(|s| s.parse().ok()),
        },
        _ => return None,
    })
}
