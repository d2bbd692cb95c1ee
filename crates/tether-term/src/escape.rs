//! The ssh-style escape of a person's keyboard input: `~` typed at the
//! start of a line begins an escape. `~.` detaches, `~^Z` (Ctrl-Z) suspends,
//! `~?` asks for help, `~~` sends one `~`; `~` followed by anything else
//! sends both bytes. A line starts at the beginning and after Enter (CR or
//! LF).

/// What the person's input means.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Keyed {
    /// Bytes to send on to the session.
    Send(Vec<u8>),
    /// `~.`: leave.
    Detach,
    /// `~?`: list the escapes.
    Help,
    /// `~^Z`: suspend (stop tether as Ctrl-Z stops a program, until `fg`).
    Suspend,
}

/// Ctrl-Z, which after the escape character suspends.
const CTRL_Z: u8 = 0x1a;

/// The help text for `~?` (CRLF line ends, for a terminal in raw mode).
pub const ESCAPE_HELP: &str = "\r\nSupported escape sequences:\r\n ~.  detach (the session keeps running)\r\n ~^Z suspend tether (fg resumes)\r\n ~?  this help\r\n ~~  send one ~\r\n";

/// Splits input into bytes to send and escapes, across reads.
#[derive(Clone, Debug)]
pub struct EscapeScanner {
    line_start: bool,
    tilde: bool,
    /// The escape character (`~`); `None`: no escapes, every byte is sent.
    escape: Option<u8>,
}

impl Default for EscapeScanner {
    fn default() -> Self {
        EscapeScanner {
            line_start: true,
            tilde: false,
            escape: Some(b'~'),
        }
    }
}

impl EscapeScanner {
    /// A scanner at the start of a line, with `~` as the escape character.
    pub fn new() -> Self {
        Self::default()
    }

    /// A scanner with `escape` as the escape character (ssh's `-e`);
    /// `None` turns escapes off (`-e none`).
    pub fn with_escape(escape: Option<u8>) -> Self {
        EscapeScanner {
            escape,
            ..Self::default()
        }
    }

    /// Interprets `input`, in order.
    pub fn feed(&mut self, input: &[u8]) -> Vec<Keyed> {
        let mut out = Vec::new();
        let mut bytes = Vec::with_capacity(input.len());
        let Some(esc) = self.escape else {
            if !input.is_empty() {
                out.push(Keyed::Send(input.to_vec()));
            }
            return out;
        };
        for &b in input {
            if self.tilde {
                self.tilde = false;
                match b {
                    b'.' | b'?' | CTRL_Z => {
                        if !bytes.is_empty() {
                            out.push(Keyed::Send(std::mem::take(&mut bytes)));
                        }
                        out.push(match b {
                            b'.' => Keyed::Detach,
                            b'?' => Keyed::Help,
                            _ => Keyed::Suspend,
                        });
                        continue;
                    }
                    b if b == esc => bytes.push(esc),
                    other => bytes.extend_from_slice(&[esc, other]),
                }
            } else if self.line_start && b == esc {
                self.tilde = true;
                continue;
            } else {
                bytes.push(b);
            }
            self.line_start = matches!(bytes.last(), Some(b'\r' | b'\n'));
        }
        if !bytes.is_empty() {
            out.push(Keyed::Send(bytes));
        }
        out
    }

    /// True while a `~` is held back, waiting for the next byte.
    pub fn holding(&self) -> bool {
        self.tilde
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn all(chunks: &[&[u8]]) -> Vec<Keyed> {
        let mut s = EscapeScanner::new();
        chunks.iter().flat_map(|c| s.feed(c)).collect()
    }

    #[test]
    fn tilde_dot_after_enter_detaches_even_across_reads() {
        assert_eq!(
            all(&[b"ls\r~", b"."]),
            [Keyed::Send(b"ls\r".to_vec()), Keyed::Detach]
        );
        assert_eq!(all(&[b"~."]), [Keyed::Detach]);
        assert_eq!(
            all(&[b"echo\n~?"]),
            [Keyed::Send(b"echo\n".to_vec()), Keyed::Help]
        );
    }

    #[test]
    fn a_tilde_elsewhere_or_doubled_is_sent() {
        assert_eq!(all(&[b"a~."]), [Keyed::Send(b"a~.".to_vec())]);
        assert_eq!(all(&[b"~~."]), [Keyed::Send(b"~.".to_vec())]);
        assert_eq!(all(&[b"~x"]), [Keyed::Send(b"~x".to_vec())]);
        // After `~x` the line has started: a later `~.` is text.
        assert_eq!(all(&[b"~x~."]), [Keyed::Send(b"~x~.".to_vec())]);
        assert_eq!(
            all(&[b"~\r~."]),
            [Keyed::Send(b"~\r".to_vec()), Keyed::Detach]
        );
    }

    #[test]
    fn tilde_ctrl_z_suspends_and_the_line_goes_on_after_it() {
        assert_eq!(
            all(&[b"ls\r~\x1a"]),
            [Keyed::Send(b"ls\r".to_vec()), Keyed::Suspend]
        );
        assert_eq!(
            all(&[b"~", b"\x1a", b"~."]),
            [Keyed::Suspend, Keyed::Detach]
        );
        // Ctrl-Z elsewhere, or after `~~`, is sent like any key.
        assert_eq!(all(&[b"a~\x1a"]), [Keyed::Send(b"a~\x1a".to_vec())]);
        assert_eq!(all(&[b"~~\x1a"]), [Keyed::Send(b"~\x1a".to_vec())]);
        let mut s = EscapeScanner::with_escape(Some(b'%'));
        assert_eq!(
            s.feed(b"~\x1a\r%\x1a"),
            [Keyed::Send(b"~\x1a\r".to_vec()), Keyed::Suspend]
        );
    }

    #[test]
    fn another_escape_character_or_none() {
        let mut s = EscapeScanner::with_escape(Some(b'%'));
        assert_eq!(
            s.feed(b"~.\r%%\r%."),
            [Keyed::Send(b"~.\r%\r".to_vec()), Keyed::Detach]
        );
        let mut s = EscapeScanner::with_escape(None);
        assert_eq!(s.feed(b"~.~?"), [Keyed::Send(b"~.~?".to_vec())]);
    }
}
