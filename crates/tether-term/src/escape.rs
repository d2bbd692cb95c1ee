//! The ssh-style escape of a person's keyboard input: the escape character
//! (`~`) typed at the start of a line begins an escape. `~.` leaves, `~^Z`
//! (Ctrl-Z) suspends, `~?` asks for help, `~~` sends one `~`, and where the
//! door offers them `~C` opens a command line, `~#` lists forwarded
//! connections, `~&` goes to the background; `~` followed by anything else
//! sends both keys. A line starts at the beginning and after Return.
//!
//! Keys are read in whatever encoding the far program turned on in the
//! person's terminal ([`crate::keys`]): `~.` typed as Kitty's
//! `CSI 13 u`, `CSI 96:126;2 u`, `CSI 46 u` (releases and modifier keys
//! between them ignored), or as xterm's `CSI 27;2;126~` under
//! modifyOtherKeys, is an escape as the plain bytes are. An escape's keys
//! are consumed; every other byte is sent exactly as it came, whatever the
//! reads' boundaries. Keys are decoded whatever mode the terminal is in
//! (not only while a tracked mode is on): a key that is not part of an
//! escape passes unchanged, so decoding always costs nothing but a lone
//! ESC held until its next byte or [`EscapeScanner::flush`], and it keeps
//! working when the tracker could not see a mode turned on. Modifier keys
//! and releases before the escape character or after the escape's letter
//! are sent on as they came (a program that asked for them may see a
//! release without its press).

use crate::keys::{KeyKind, KeyReader, meaning};

/// What the person's input means.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Keyed {
    /// Bytes to send on to the far end.
    Send(Vec<u8>),
    /// `~.`: leave.
    Detach,
    /// `~?`: list the escapes.
    Help,
    /// `~^Z`: suspend (stop tether as Ctrl-Z stops a program, until `fg`).
    Suspend,
    /// `~C`: open a command line; the keys that follow come as
    /// [`Keyed::Line`] until Enter or a cancel, and reach no far end.
    CommandLine,
    /// A key typed on the `~C` command line.
    Line(LineKey),
    /// `~#`: list the forwarded connections.
    Forwards,
    /// `~&`: go to the background.
    Background,
}

/// A key typed on the `~C` command line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LineKey {
    /// A printable character.
    Char(char),
    /// Backspace (DEL or BS).
    Backspace,
    /// Enter: run the line.
    Enter,
    /// Ctrl-C or Escape: drop the line.
    Cancel,
}

/// The escapes beyond `~.`, `~^Z`, `~?` and `~~` that a door offers; the
/// others are sent as typed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EscapeSet {
    /// `~C`.
    pub command_line: bool,
    /// `~#`.
    pub forwards: bool,
    /// `~&`.
    pub background: bool,
}

impl EscapeSet {
    /// Every escape (`tether ssh`).
    pub const ALL: EscapeSet = EscapeSet {
        command_line: true,
        forwards: true,
        background: true,
    };
    /// Only `~.`, `~^Z`, `~?` and `~~` (`tether attach`).
    pub const BASIC: EscapeSet = EscapeSet {
        command_line: false,
        forwards: false,
        background: false,
    };
}

/// Ctrl-Z, which after the escape character suspends.
const CTRL_Z: char = '\x1a';

/// Most bytes held while an escape waits for its letter (releases and
/// modifier keys pile up); past it the escape is given up and the bytes
/// are sent.
const MAX_HELD: usize = 1024;

/// The `~?` help for the escape character `escape` (a control character
/// shown as `^X`), the escapes `set`, and what `~.` does (`leave`), with
/// CRLF line ends for a terminal in raw mode.
pub fn escape_help(escape: u8, set: EscapeSet, leave: &str) -> String {
    let e = if escape.is_ascii_control() {
        format!("^{}", char::from(escape ^ 0x40))
    } else {
        char::from(escape).to_string()
    };
    let mut lines = vec![format!("{e}.  {leave}")];
    if set.command_line {
        lines.push(format!(
            "{e}C  open a command line (-L, -R, -D, -KL, -KR, -KD)"
        ));
    }
    lines.push(format!("{e}^Z suspend tether (fg resumes)"));
    if set.forwards {
        lines.push(format!("{e}#  list forwarded connections"));
    }
    if set.background {
        lines.push(format!(
            "{e}&  background (when waiting for connections to end)"
        ));
    }
    lines.push(format!("{e}?  this help"));
    lines.push(format!("{e}{e}  send one {e}"));
    let mut help = String::from("\r\nSupported escape sequences:\r\n");
    for line in lines {
        help.push(' ');
        help.push_str(&line);
        help.push_str("\r\n");
    }
    help.push_str("(Escapes are recognised only right after Return.)\r\n");
    help
}

/// Splits input into bytes to send and escapes, across reads.
#[derive(Clone, Debug)]
pub struct EscapeScanner {
    keys: KeyReader,
    line_start: bool,
    /// The escape character (`~`); `None`: no escapes, every byte is sent.
    escape: Option<u8>,
    set: EscapeSet,
    /// While an escape waits for its letter: the bytes held since the
    /// escape character, whose own key is the first `escape_len`.
    held: Option<Vec<u8>>,
    escape_len: usize,
    /// A `~C` line is being typed.
    in_line: bool,
}

impl Default for EscapeScanner {
    fn default() -> Self {
        Self::with_escapes(Some(b'~'), EscapeSet::BASIC)
    }
}

impl EscapeScanner {
    /// A scanner at the start of a line, with `~` as the escape character
    /// and the basic escapes.
    pub fn new() -> Self {
        Self::default()
    }

    /// A scanner with `escape` as the escape character (ssh's `-e`) and
    /// the basic escapes; `None` turns escapes off (`-e none`).
    pub fn with_escape(escape: Option<u8>) -> Self {
        Self::with_escapes(escape, EscapeSet::BASIC)
    }

    /// A scanner with `escape` as the escape character and the escapes of
    /// `set` beside the basic ones.
    pub fn with_escapes(escape: Option<u8>, set: EscapeSet) -> Self {
        EscapeScanner {
            keys: KeyReader::new(),
            line_start: true,
            escape,
            set,
            held: None,
            escape_len: 0,
            in_line: false,
        }
    }

    /// Interprets `input`, in order.
    pub fn feed(&mut self, input: &[u8]) -> Vec<Keyed> {
        let mut out = Vec::new();
        if self.escape.is_none() {
            if !input.is_empty() {
                out.push(Keyed::Send(input.to_vec()));
            }
            return out;
        }
        let mut bytes = Vec::with_capacity(input.len());
        let mut keys = std::mem::take(&mut self.keys);
        keys.feed(input, |k| self.key(k, &mut bytes, &mut out));
        self.keys = keys;
        if !bytes.is_empty() {
            out.push(Keyed::Send(bytes));
        }
        out
    }

    /// Bytes held as an unfinished key sequence (a lone ESC may be the
    /// Escape key): [`EscapeScanner::flush`] them after a short wait.
    pub fn pending(&self) -> usize {
        self.keys.pending()
    }

    /// Takes a held unfinished key sequence as a key of its own.
    pub fn flush(&mut self) -> Vec<Keyed> {
        let (mut out, mut bytes) = (Vec::new(), Vec::new());
        let mut keys = std::mem::take(&mut self.keys);
        keys.flush(|k| self.key(k, &mut bytes, &mut out));
        self.keys = keys;
        if !bytes.is_empty() {
            out.push(Keyed::Send(bytes));
        }
        out
    }

    /// True while an escape character is held back, waiting for the next
    /// key.
    pub fn holding(&self) -> bool {
        self.held.is_some()
    }

    /// One key, with its exact bytes.
    fn key(&mut self, raw: &[u8], bytes: &mut Vec<u8>, out: &mut Vec<Keyed>) {
        let kind = meaning(raw);
        if self.in_line {
            let line_key = match kind {
                KeyKind::Return => LineKey::Enter,
                KeyKind::Char('\x7f' | '\x08') => LineKey::Backspace,
                KeyKind::Char('\x03' | '\x1b') => LineKey::Cancel,
                KeyKind::Char(c) if !c.is_control() => LineKey::Char(c),
                _ => return,
            };
            if matches!(line_key, LineKey::Enter | LineKey::Cancel) {
                self.in_line = false;
                self.line_start = true;
            }
            out.push(Keyed::Line(line_key));
            return;
        }
        let esc = self.escape.map(char::from);
        let Some(mut held) = self.held.take() else {
            match kind {
                KeyKind::Transparent => {}
                KeyKind::Char(c) if self.line_start && Some(c) == esc => {
                    self.held = Some(raw.to_vec());
                    self.escape_len = raw.len();
                    return;
                }
                KeyKind::Return => self.line_start = true,
                _ => self.line_start = false,
            }
            bytes.extend_from_slice(raw);
            return;
        };
        let escape = match kind {
            KeyKind::Transparent if held.len() + raw.len() <= MAX_HELD => {
                held.extend_from_slice(raw);
                self.held = Some(held);
                return;
            }
            KeyKind::Char(c) if Some(c) == esc => {
                // `~~`: one escape character, as the second was typed.
                bytes.extend_from_slice(&held[self.escape_len..]);
                bytes.extend_from_slice(raw);
                self.line_start = false;
                return;
            }
            KeyKind::Char('.') => Keyed::Detach,
            KeyKind::Char('?') => Keyed::Help,
            KeyKind::Char(CTRL_Z) => Keyed::Suspend,
            KeyKind::Char('C') if self.set.command_line => {
                self.in_line = true;
                Keyed::CommandLine
            }
            KeyKind::Char('#') if self.set.forwards => Keyed::Forwards,
            KeyKind::Char('&') if self.set.background => Keyed::Background,
            _ => {
                bytes.extend_from_slice(&held);
                bytes.extend_from_slice(raw);
                self.line_start = kind == KeyKind::Return;
                return;
            }
        };
        if !bytes.is_empty() {
            out.push(Keyed::Send(std::mem::take(bytes)));
        }
        out.push(escape);
    }
}

#[cfg(test)]
#[path = "escape_tests.rs"]
mod tests;
