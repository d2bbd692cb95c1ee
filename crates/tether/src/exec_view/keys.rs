//! The keys the live view knows, read from what the terminal sends
//! (`tether_term::keys` cuts the input into keys; the terminal is in the
//! legacy keyboard baseline the setup plan puts it in). What a key does is
//! the model's.

use tether_term::keys::{KeyKind, KeyReader, meaning};

/// One key, as the view reads it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Key {
    /// Up arrow.
    Up,
    /// Down arrow.
    Down,
    /// Page Up.
    PageUp,
    /// Page Down.
    PageDown,
    /// Home.
    Home,
    /// End.
    End,
    /// Return or Enter.
    Enter,
    /// Tab.
    Tab,
    /// Escape.
    Esc,
    /// Ctrl-C (the terminal is raw: it is a key here, not a signal).
    CtrlC,
    /// A printable character.
    Char(char),
    /// Anything else.
    Other,
}

/// Cuts typed bytes into [`Key`]s, across reads.
#[derive(Default)]
pub struct Keys {
    reader: KeyReader,
}

impl Keys {
    /// The keys in `input` (an unfinished sequence is held).
    pub fn feed(&mut self, input: &[u8]) -> Vec<Key> {
        let mut keys = Vec::new();
        self.reader.feed(input, |raw| keys.push(key_of(raw)));
        keys
    }

    /// A held unfinished key (a lone ESC) as a key.
    pub fn flush(&mut self) -> Vec<Key> {
        let mut keys = Vec::new();
        self.reader.flush(|raw| keys.push(key_of(raw)));
        keys
    }

    /// Bytes held as an unfinished key.
    pub fn pending(&self) -> usize {
        self.reader.pending()
    }
}

/// The key with these exact bytes.
fn key_of(raw: &[u8]) -> Key {
    match raw {
        b"\x1b[A" | b"\x1bOA" => Key::Up,
        b"\x1b[B" | b"\x1bOB" => Key::Down,
        b"\x1b[5~" => Key::PageUp,
        b"\x1b[6~" => Key::PageDown,
        b"\x1b[H" | b"\x1bOH" | b"\x1b[1~" | b"\x1b[7~" => Key::Home,
        b"\x1b[F" | b"\x1bOF" | b"\x1b[4~" | b"\x1b[8~" => Key::End,
        [0x03] => Key::CtrlC,
        [b'\t'] => Key::Tab,
        [0x1b] => Key::Esc,
        _ => match meaning(raw) {
            KeyKind::Return => Key::Enter,
            KeyKind::Char(c) if !c.is_control() => Key::Char(c),
            KeyKind::Char('\x03') => Key::CtrlC,
            KeyKind::Char(_) | KeyKind::Transparent | KeyKind::Other => Key::Other,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arrows_letters_and_ctrl_c_across_reads() {
        let mut k = Keys::default();
        assert_eq!(k.feed(b"j\x1b["), [Key::Char('j')]);
        assert_eq!(
            k.feed(b"A\x1bOB\r\t\x03"),
            [Key::Up, Key::Down, Key::Enter, Key::Tab, Key::CtrlC]
        );
        assert_eq!(k.feed(b"\x1b[5~\x1b[6~\x1b"), [Key::PageUp, Key::PageDown]);
        assert_eq!(k.pending(), 1);
        assert_eq!(k.flush(), [Key::Esc]);
        // Kitty's disambiguated Ctrl-C, should a terminal send it.
        assert_eq!(k.feed(b"\x1b[99;5u"), [Key::CtrlC]);
    }
}
