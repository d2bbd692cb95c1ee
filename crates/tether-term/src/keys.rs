//! Keys as a person's terminal sends them, in every encoding a program on
//! the far side can turn on: plain bytes (legacy), the Kitty keyboard
//! protocol's `CSI code[:shifted[:base]] ; mods[:event] ; text u` under any
//! flags (disambiguate, event types, alternate keys, every key as an
//! escape code, associated text), xterm's modifyOtherKeys 1 and 2
//! (`CSI 27 ; mods ; code ~`, and `CSI code ; mods u` under
//! formatOtherKeys=1), and the application keypad's Enter (`ESC O M`).
//!
//! [`KeyReader`] cuts input into keys, each with its exact bytes, across
//! reads (a key cut by a read is held until its end, or until
//! [`KeyReader::flush`]); [`meaning`] tells what one key is, as far as the
//! escapes and a command line need it. Memory: at most [`MAX_KEY`] bytes
//! held.

/// The longest key sequence read as one key; a longer one is passed on as
/// it came, unread.
pub const MAX_KEY: usize = 128;

/// What one key is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyKind {
    /// A key that produces this character (a control character for
    /// Ctrl with a letter, DEL for Backspace, ESC for Escape).
    Char(char),
    /// Return or Enter (CR, LF, the keypad's Enter), with any modifiers.
    Return,
    /// No key typed: a release, a modifier or lock key alone, a focus
    /// report.
    Transparent,
    /// Any other key or sequence.
    Other,
}

/// Kitty's key codes for modifier and lock keys (reported alone under
/// flag 8): Caps, Scroll and Num Lock, then Left Shift to ISO Level 5 Shift.
const LOCK_KEYS: std::ops::RangeInclusive<u32> = 57358..=57360;
const MODIFIER_KEYS: std::ops::RangeInclusive<u32> = 57441..=57452;
/// Kitty's code for the keypad's Enter.
const KP_ENTER: u32 = 57414;
/// The first of Kitty's private-use codes for functional keys.
const FUNCTIONAL: u32 = 57344;

/// Splits input into keys, across reads.
#[derive(Clone, Debug, Default)]
pub struct KeyReader {
    /// An unfinished key sequence (it starts with ESC).
    held: Vec<u8>,
}

impl KeyReader {
    /// A reader between keys.
    pub fn new() -> Self {
        Self::default()
    }

    /// Bytes held as an unfinished key.
    pub fn pending(&self) -> usize {
        self.held.len()
    }

    /// Cuts `input` into keys, calling `key` with each key's exact bytes.
    pub fn feed(&mut self, input: &[u8], mut key: impl FnMut(&[u8])) {
        for &b in input {
            if self.held.is_empty() {
                if b == 0x1b {
                    self.held.push(b);
                } else {
                    key(&[b]);
                }
                continue;
            }
            match step(&self.held, b) {
                Step::More => self.held.push(b),
                Step::Done => {
                    self.held.push(b);
                    key(&self.held);
                    self.held.clear();
                }
                Step::Apart => {
                    // What is held is a key of its own (a lone ESC, an
                    // unfinished sequence); `b` starts the next.
                    key(&self.held);
                    self.held.clear();
                    if b == 0x1b {
                        self.held.push(b);
                    } else {
                        key(&[b]);
                    }
                }
            }
            if self.held.len() >= MAX_KEY {
                key(&self.held);
                self.held.clear();
            }
        }
    }

    /// Releases a held unfinished key as one key (a lone ESC is the
    /// Escape key).
    pub fn flush(&mut self, mut key: impl FnMut(&[u8])) {
        if !self.held.is_empty() {
            key(&self.held);
            self.held.clear();
        }
    }
}

enum Step {
    /// `b` belongs to the key and it goes on.
    More,
    /// `b` ends the key.
    Done,
    /// `b` is not part of the key.
    Apart,
}

/// Where byte `b` goes after `held` (which starts with ESC).
fn step(held: &[u8], b: u8) -> Step {
    match held {
        [_] => match b {
            b'[' | b'O' => Step::More,
            // Alt with a printable key.
            0x20..=0x7e => Step::Done,
            _ => Step::Apart,
        },
        // SS3: one more byte.
        [_, b'O'] => match b {
            0x20..=0x7e => Step::Done,
            _ => Step::Apart,
        },
        // An X10 mouse report: `CSI M` and three bytes.
        [_, b'[', b'M', rest @ ..] => {
            if rest.len() == 2 {
                Step::Done
            } else {
                Step::More
            }
        }
        _ => match b {
            0x20..=0x3f => Step::More,
            b'M' if held.len() == 2 => Step::More,
            0x40..=0x7e => Step::Done,
            _ => Step::Apart,
        },
    }
}

/// What the key with these exact bytes is.
pub fn meaning(raw: &[u8]) -> KeyKind {
    match raw {
        [b'\r' | b'\n'] => KeyKind::Return,
        [b] if b.is_ascii() => KeyKind::Char(char::from(*b)),
        [0x1b, b'O', b'M'] => KeyKind::Return,
        [0x1b, b'[', b'I' | b'O'] => KeyKind::Transparent,
        [0x1b, b'[', body @ .., fin @ (b'u' | b'~')] => csi_key(body, *fin),
        _ => KeyKind::Other,
    }
}

/// A `CSI … u` or `CSI 27 ; mods ; code ~` key.
fn csi_key(body: &[u8], fin: u8) -> KeyKind {
    if !body.first().is_some_and(u8::is_ascii_digit) {
        return KeyKind::Other;
    }
    let Ok(body) = std::str::from_utf8(body) else {
        return KeyKind::Other;
    };
    let fields: Vec<Vec<Option<u32>>> = body
        .split(';')
        .map(|f| f.split(':').map(|n| n.parse().ok()).collect())
        .collect();
    let num = |field: usize, sub: usize| fields.get(field).and_then(|f| f.get(sub)).copied();
    if fin == b'~' {
        // modifyOtherKeys: the code is the character the key produced.
        return match (fields.len(), num(0, 0)) {
            (3, Some(Some(27))) => match (num(1, 0), num(2, 0)) {
                (Some(Some(mods)), Some(Some(code))) => xterm_key(code, mods),
                _ => KeyKind::Other,
            },
            _ => KeyKind::Other,
        };
    }
    let Some(Some(code)) = num(0, 0) else {
        return KeyKind::Other;
    };
    let mods = num(1, 0).flatten().unwrap_or(1);
    let event = num(1, 1).flatten().unwrap_or(1);
    if event == 3 || LOCK_KEYS.contains(&code) || MODIFIER_KEYS.contains(&code) {
        return KeyKind::Transparent;
    }
    if code == 13 || code == KP_ENTER {
        return KeyKind::Return;
    }
    // Associated text (flag 16): what the key typed.
    if let Some(text) = fields.get(2) {
        return match text[..] {
            [Some(cp)] => char::from_u32(cp).map_or(KeyKind::Other, KeyKind::Char),
            _ => KeyKind::Other,
        };
    }
    let m = mods.saturating_sub(1);
    let (shift, ctrl, caps) = (m & 1 != 0, m & 4 != 0, m & 64 != 0);
    // Alt, Super, Hyper, Meta: no escape is typed with them.
    if m & (2 | 8 | 16 | 32) != 0 || code >= FUNCTIONAL {
        return KeyKind::Other;
    }
    if ctrl {
        return control(code);
    }
    let produced = if shift {
        match num(0, 1).flatten() {
            Some(shifted) => shifted,
            // No alternate key reported: the key as shifted on a US layout,
            // the only reading there is.
            None => us_shifted(code),
        }
    } else if caps && (u32::from(b'a')..=u32::from(b'z')).contains(&code) {
        code - 32
    } else {
        code
    };
    char::from_u32(produced).map_or(KeyKind::Other, KeyKind::Char)
}

/// A modifyOtherKeys key: `code` typed with `mods`.
fn xterm_key(code: u32, mods: u32) -> KeyKind {
    if code == 13 {
        return KeyKind::Return;
    }
    let m = mods.saturating_sub(1);
    if m & (2 | 8 | 16 | 32) != 0 {
        return KeyKind::Other;
    }
    if m & 4 != 0 {
        return control(code);
    }
    char::from_u32(code).map_or(KeyKind::Other, KeyKind::Char)
}

/// Ctrl with `code`: the control character it types, for letters and
/// `@[\]^_`.
fn control(code: u32) -> KeyKind {
    match u8::try_from(code) {
        Ok(c @ (b'a'..=b'z' | b'@'..=b'_')) => KeyKind::Char(char::from(c & 0x1f)),
        _ => KeyKind::Other,
    }
}

/// What Shift makes of `code` on a US keyboard.
fn us_shifted(code: u32) -> u32 {
    const PLAIN: &[u8] = b"`1234567890-=[]\\;',./";
    const SHIFTED: &[u8] = b"~!@#$%^&*()_+{}|:\"<>?";
    let Ok(c) = u8::try_from(code) else {
        return code;
    };
    if c.is_ascii_lowercase() {
        return u32::from(c.to_ascii_uppercase());
    }
    PLAIN
        .iter()
        .position(|&p| p == c)
        .map_or(code, |i| u32::from(SHIFTED[i]))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn keys(chunks: &[&[u8]]) -> Vec<Vec<u8>> {
        let mut r = KeyReader::new();
        let mut out = Vec::new();
        for c in chunks {
            r.feed(c, |k| out.push(k.to_vec()));
        }
        r.flush(|k| out.push(k.to_vec()));
        out
    }

    #[test]
    fn keys_are_cut_whole_at_every_split() {
        let input: &[u8] =
            b"a\x1b[13u\x1b[96:126;2:3u\x1bOM\x1b\r\x1bx\x1b[M ab\x1b[<0;1;2M\x1b[A.";
        let whole = keys(&[input]);
        assert_eq!(whole.concat(), input);
        assert_eq!(whole.len(), 11, "{whole:?}");
        for i in 0..=input.len() {
            assert_eq!(keys(&[&input[..i], &input[i..]]), whole, "split at {i}");
        }
    }

    #[test]
    fn what_keys_mean() {
        use KeyKind::*;
        for (raw, want) in [
            (&b"\r"[..], Return),
            (b"\n", Return),
            (b"\x1bOM", Return),
            (b"\x1b[13u", Return),
            (b"\x1b[13;1u", Return),
            (b"\x1b[13;1:1u", Return),
            (b"\x1b[57414u", Return),
            (b"\x1b[27;2;13~", Return),
            (b"\x1b[13;1:3u", Transparent),
            (b"\x1b[57441;2u", Transparent),
            (b"\x1b[57441;2:3u", Transparent),
            (b"\x1b[I", Transparent),
            (b"\x1b[96:126;2u", Char('~')),
            (b"\x1b[96;2u", Char('~')),
            (b"\x1b[96;2;126u", Char('~')),
            (b"\x1b[96:126;2;126u", Char('~')),
            (b"\x1b[126;2u", Char('~')),
            (b"\x1b[27;2;126~", Char('~')),
            (b"\x1b[46u", Char('.')),
            (b"\x1b[46;1:2u", Char('.')),
            (b"\x1b[47:63;2u", Char('?')),
            (b"\x1b[99;2u", Char('C')),
            (b"\x1b[99;65u", Char('C')),
            (b"\x1b[51;2u", Char('#')),
            (b"\x1b[55:38;2u", Char('&')),
            (b"\x1b[122;5u", Char('\x1a')),
            (b"\x1b[27;5;122~", Char('\x1a')),
            (b"\x1b[99;5u", Char('\x03')),
            (b"\x1b[127u", Char('\x7f')),
            (b"\x1b[27u", Char('\x1b')),
            (b"\x1b", Char('\x1b')),
            (b".", Char('.')),
            (b"\x1b[46;3u", Other),
            (b"\x1b[A", Other),
            (b"\x1b[15~", Other),
            (b"\x1b[57399u", Other),
            (b"\x1b[?1u", Other),
            (b"\x1bx", Other),
            (b"\xc3", Other),
        ] {
            assert_eq!(meaning(raw), want, "{}", raw.escape_ascii());
        }
    }

    #[test]
    fn a_runaway_sequence_is_passed_on_bounded() {
        let long = [b"\x1b[".as_slice(), &[b'1'; 300]].concat();
        let out = keys(&[&long]);
        assert_eq!(out.concat(), long);
        assert!(out.iter().all(|k| k.len() <= MAX_KEY));
    }
}
