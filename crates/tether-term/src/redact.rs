//! The streaming redactor: replaces secret values with `[redacted]`, also
//! when a secret is split across chunks.
//!
//! Bytes that might be the start of a secret are held until the next chunk
//! decides them (at most the longest secret's length minus one), so a
//! secret never leaks in pieces. Matching is leftmost-longest, as one pass
//! over the whole stream would do.
//!
//! It is meant for text (the projection's output). On a raw terminal stream
//! a secret right after an ESC would leave `ESC [redacted]`, which a
//! terminal reads as a control sequence.

use aho_corasick::{AhoCorasick, MatchKind};

use crate::error::TermError;

/// What a secret is replaced with.
pub const REDACTED: &str = "[redacted]";

/// Values shorter than this are not taken from the environment (redacting
/// every `1` or `on` would destroy the output); explicit secrets have no
/// minimum.
pub const MIN_ENV_SECRET_LEN: usize = 6;

/// True when an environment variable's name says its value is a secret:
/// it contains `TOKEN`, `SECRET`, `PASSWORD`, `PASSWD`, `PASSPHRASE`,
/// `CREDENTIAL`, `PRIVATE_KEY` or `API_KEY`, or ends in `_KEY` or `_PAT`
/// (case-insensitive).
pub fn is_secret_name(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    const PARTS: [&str; 8] = [
        "TOKEN",
        "SECRET",
        "PASSWORD",
        "PASSWD",
        "PASSPHRASE",
        "CREDENTIAL",
        "PRIVATE_KEY",
        "API_KEY",
    ];
    PARTS.iter().any(|p| upper.contains(p)) || upper.ends_with("_KEY") || upper.ends_with("_PAT")
}

/// Streaming replacement of secret values.
#[derive(Clone, Debug)]
pub struct Redactor {
    matcher: Option<AhoCorasick>,
    longest: usize,
    carry: Vec<u8>,
    count: u64,
}

impl Redactor {
    /// A redactor for `secrets` (each non-empty).
    pub fn new<S: AsRef<[u8]>>(secrets: &[S]) -> Result<Self, TermError> {
        if secrets.iter().any(|s| s.as_ref().is_empty()) {
            return Err(TermError::EmptySecret);
        }
        let longest = secrets.iter().map(|s| s.as_ref().len()).max().unwrap_or(0);
        let matcher = if secrets.is_empty() {
            None
        } else {
            let built = AhoCorasick::builder()
                .match_kind(MatchKind::LeftmostLongest)
                .build(secrets)
                .map_err(|e| TermError::Matcher {
                    count: secrets.len(),
                    reason: e.to_string(),
                })?;
            Some(built)
        };
        Ok(Redactor {
            matcher,
            longest,
            carry: Vec::new(),
            count: 0,
        })
    }

    /// A redactor for `extra` secrets plus the values of environment
    /// variables whose names look secret ([`is_secret_name`]) and that are
    /// at least [`MIN_ENV_SECRET_LEN`] bytes long.
    pub fn from_env<I, K, V>(vars: I, extra: &[String]) -> Result<Self, TermError>
    where
        I: IntoIterator<Item = (K, V)>,
        K: AsRef<str>,
        V: AsRef<str>,
    {
        let mut secrets: Vec<String> = extra.iter().filter(|s| !s.is_empty()).cloned().collect();
        for (name, value) in vars {
            let value = value.as_ref();
            if is_secret_name(name.as_ref()) && value.len() >= MIN_ENV_SECRET_LEN {
                secrets.push(value.to_owned());
            }
        }
        secrets.sort();
        secrets.dedup();
        Self::new(&secrets)
    }

    /// A copy with the same secrets and nothing held (the matcher is shared,
    /// so this is cheap).
    pub fn fresh(&self) -> Redactor {
        Redactor {
            matcher: self.matcher.clone(),
            longest: self.longest,
            carry: Vec::new(),
            count: 0,
        }
    }

    /// Bytes held back because they may begin a secret (always less than
    /// the longest secret's length).
    pub fn pending(&self) -> usize {
        self.carry.len()
    }

    /// How many secrets have been replaced so far.
    pub fn redactions(&self) -> u64 {
        self.count
    }

    /// Redacts one chunk, appending what is decided to `out`; bytes that may
    /// begin a secret are held for the next call.
    pub fn feed(&mut self, input: &[u8], out: &mut Vec<u8>) {
        let Some(matcher) = &self.matcher else {
            out.extend_from_slice(input);
            return;
        };
        self.carry.extend_from_slice(input);
        let buf = std::mem::take(&mut self.carry);
        // A match can only be decided when every secret starting there fits.
        let decidable = (buf.len() + 1).saturating_sub(self.longest);
        let mut done = 0;
        for m in matcher.find_iter(&buf) {
            if m.start() >= decidable {
                break;
            }
            out.extend_from_slice(&buf[done..m.start()]);
            out.extend_from_slice(REDACTED.as_bytes());
            self.count += 1;
            done = m.end();
        }
        let keep_from = decidable.max(done);
        out.extend_from_slice(&buf[done..keep_from]);
        self.carry = buf;
        self.carry.drain(..keep_from);
    }

    /// Ends the stream: decides and appends everything held.
    pub fn finish(&mut self, out: &mut Vec<u8>) {
        let buf = std::mem::take(&mut self.carry);
        let Some(matcher) = &self.matcher else {
            out.extend_from_slice(&buf);
            return;
        };
        let mut done = 0;
        for m in matcher.find_iter(&buf) {
            out.extend_from_slice(&buf[done..m.start()]);
            out.extend_from_slice(REDACTED.as_bytes());
            self.count += 1;
            done = m.end();
        }
        out.extend_from_slice(&buf[done..]);
    }
}
