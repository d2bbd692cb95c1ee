//! The streaming redactor: replaces secret values with `[redacted]`, also
//! when a secret is split across chunks.
//!
//! Only bytes that can still become a secret are held until the next chunk
//! decides them: the longest tail of the stream that is a proper prefix of
//! some secret (so always less than the longest secret's length), and a
//! complete match that a longer secret could still extend. A secret never
//! leaks in pieces, and output that cannot become one is never withheld.
//! Matching is leftmost-longest, as one pass over the whole stream would
//! do, whatever the chunking.
//!
//! [`Redactor::flush`] releases what is held at a result boundary (a reader
//! is waiting for it); the stream then goes on as if it had started there.
//!
//! It is meant for text (the projection's output). On a raw terminal stream
//! a secret right after an ESC would leave `ESC [redacted]`, which a
//! terminal reads as a control sequence.

use std::sync::Arc;

use aho_corasick::{AhoCorasick, Input, MatchKind};

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
    secrets: Arc<[Vec<u8>]>,
    carry: Vec<u8>,
    count: u64,
}

impl Redactor {
    /// A redactor for `secrets` (each non-empty).
    pub fn new<S: AsRef<[u8]>>(secrets: &[S]) -> Result<Self, TermError> {
        if secrets.iter().any(|s| s.as_ref().is_empty()) {
            return Err(TermError::EmptySecret);
        }
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
            secrets: secrets.iter().map(|s| s.as_ref().to_vec()).collect(),
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
            secrets: Arc::clone(&self.secrets),
            carry: Vec::new(),
            count: 0,
        }
    }

    /// The secrets this redactor replaces.
    pub fn secrets(&self) -> &[Vec<u8>] {
        &self.secrets
    }

    /// Bytes held back because they may still become a secret (always less
    /// than the longest secret's length).
    pub fn pending(&self) -> usize {
        self.carry.len()
    }

    /// The bytes held back (see [`Redactor::pending`]).
    pub fn held(&self) -> &[u8] {
        &self.carry
    }

    /// How many secrets have been replaced so far.
    pub fn redactions(&self) -> u64 {
        self.count
    }

    /// Redacts one chunk, appending what is decided to `out`; only a tail
    /// that may still become a secret is held for the next call.
    pub fn feed(&mut self, input: &[u8], out: &mut Vec<u8>) {
        let Some(matcher) = &self.matcher else {
            out.extend_from_slice(input);
            return;
        };
        self.carry.extend_from_slice(input);
        let buf = std::mem::take(&mut self.carry);
        // Everything before `hold` is decided: no secret starting there can
        // reach past the end of what we have (else the tail from that start
        // would be a proper prefix of a secret, and longer than ours).
        let mut hold = buf.len() - open_prefix(&self.secrets, &buf, 0);
        let mut done = 0;
        while let Some(m) = matcher.find(Input::new(&buf).span(done..buf.len())) {
            if m.start() >= hold {
                break;
            }
            out.extend_from_slice(&buf[done..m.start()]);
            out.extend_from_slice(REDACTED.as_bytes());
            self.count += 1;
            done = m.end();
            if done > hold {
                hold = buf.len() - open_prefix(&self.secrets, &buf, done);
            }
        }
        let hold = hold.max(done);
        out.extend_from_slice(&buf[done..hold]);
        self.carry = buf;
        self.carry.drain(..hold);
    }

    /// Releases everything held (decided as if the stream ended here), at a
    /// result boundary; the stream may go on.
    pub fn flush(&mut self, out: &mut Vec<u8>) {
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

    /// Ends the stream: decides and appends everything held.
    pub fn finish(&mut self, out: &mut Vec<u8>) {
        self.flush(out);
    }
}

/// The length of the longest tail of `buf`, starting at or after `from`,
/// that is a proper prefix of one of `secrets` (0 if none).
fn open_prefix(secrets: &[Vec<u8>], buf: &[u8], from: usize) -> usize {
    let room = buf.len() - from.min(buf.len());
    let mut best = 0;
    for s in secrets {
        let Some(&first) = s.first() else { continue };
        let most = (s.len() - 1).min(room);
        // Longest first: only tails that begin with the secret's first byte.
        for k in (best + 1..=most).rev() {
            let tail = &buf[buf.len() - k..];
            if tail[0] == first && s.starts_with(tail) {
                best = k;
                break;
            }
        }
    }
    best
}
