//! Incremental UTF-8 decoding: a character split across chunks is joined,
//! and each invalid sequence becomes one U+FFFD exactly as
//! [`String::from_utf8_lossy`] would replace it in the unsplit stream.

/// Holds at most three bytes of an unfinished character between chunks.
#[derive(Clone, Debug, Default)]
pub struct Utf8Decoder {
    pending: [u8; 4],
    len: usize,
}

impl Utf8Decoder {
    /// A decoder with nothing pending.
    pub fn new() -> Self {
        Self::default()
    }

    /// True while bytes of an unfinished character are held.
    pub fn has_pending(&self) -> bool {
        self.len > 0
    }

    /// Decodes `bytes`, calling `emit` with each decoded piece in order.
    pub fn decode(&mut self, mut bytes: &[u8], emit: &mut impl FnMut(&str)) {
        if self.len > 0 {
            bytes = self.finish_pending(bytes, emit);
        }
        loop {
            match std::str::from_utf8(bytes) {
                Ok(s) => {
                    if !s.is_empty() {
                        emit(s);
                    }
                    return;
                }
                Err(e) => {
                    let (valid, rest) = bytes.split_at(e.valid_up_to());
                    if !valid.is_empty() {
                        // Cannot fail: the first `valid_up_to` bytes are valid UTF-8.
                        emit(std::str::from_utf8(valid).unwrap_or_default());
                    }
                    match e.error_len() {
                        Some(n) => {
                            emit("\u{FFFD}");
                            bytes = &rest[n..];
                        }
                        None => {
                            self.pending[..rest.len()].copy_from_slice(rest);
                            self.len = rest.len();
                            return;
                        }
                    }
                }
            }
        }
    }

    /// Ends the stream: an unfinished character becomes U+FFFD.
    pub fn finish(&mut self, emit: &mut impl FnMut(&str)) {
        if self.len > 0 {
            self.len = 0;
            emit("\u{FFFD}");
        }
    }

    /// Completes (or rejects) the held character with the first bytes of
    /// `bytes`; returns the bytes not used.
    fn finish_pending<'b>(&mut self, bytes: &'b [u8], emit: &mut impl FnMut(&str)) -> &'b [u8] {
        let take = (4 - self.len).min(bytes.len());
        let mut tmp = self.pending;
        tmp[self.len..self.len + take].copy_from_slice(&bytes[..take]);
        let joined = &tmp[..self.len + take];
        let held = self.len;
        match std::str::from_utf8(joined) {
            Ok(s) => {
                // Only possible when the whole of `joined` is one or more chars.
                let first = s.chars().next().map_or(0, char::len_utf8);
                emit(&s[..first]);
                self.len = 0;
                &bytes[first - held..]
            }
            Err(e) if e.valid_up_to() > 0 => {
                let first = e.valid_up_to().min(
                    std::str::from_utf8(&joined[..e.valid_up_to()])
                        .ok()
                        .and_then(|s| s.chars().next())
                        .map_or(0, char::len_utf8),
                );
                emit(std::str::from_utf8(&joined[..first]).unwrap_or_default());
                self.len = 0;
                &bytes[first - held..]
            }
            Err(e) => match e.error_len() {
                None => {
                    self.pending[held..held + take].copy_from_slice(&bytes[..take]);
                    self.len = held + take;
                    &bytes[take..]
                }
                Some(n) => {
                    // The held bytes were a valid prefix, so the maximal
                    // invalid subpart is the held bytes plus any new bytes
                    // that extended that prefix.
                    emit("\u{FFFD}");
                    self.len = 0;
                    &bytes[n.saturating_sub(held)..]
                }
            },
        }
    }
}
