//! The line discipline a session's terminal is held to between commands:
//! one description, rendered as termios flags by a transport that can set
//! them (a local PTY) and as `stty` arguments for one that cannot (a
//! remote terminal, where the host's `stty` applies them).
//!
//! Programs change these (a TUI's raw mode, `stty -icanon`, a crash that
//! skips the restore); a shell's line is typed only in this mode, so the
//! line kill, signals and newlines mean what the engine relies on.

/// The modes a session's terminal is put back to before each typed line.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LineModes {
    /// Echo typed input (on only while a person is attached at the prompt).
    pub echo: bool,
    /// Output processing (OPOST).
    pub output_processing: bool,
}

/// The control characters the engine types (and a person expects), as
/// `(stty name, byte)`.
pub const CONTROL_CHARS: &[(&str, u8)] = &[
    ("intr", 0x03),
    ("quit", 0x1c),
    ("erase", 0x7f),
    ("kill", 0x15),
    ("eof", 0x04),
    ("susp", 0x1a),
];

/// Input, output and local flags held on (`true`) or off, by their `stty`
/// names. Echo and output processing follow [`LineModes`]; everything not
/// listed is left as the program set it.
pub const FLAGS: &[(&str, bool)] = &[
    // Input: CR is NL, nothing dropped or stripped, UTF-8 erase.
    ("icrnl", true),
    ("inlcr", false),
    ("igncr", false),
    ("istrip", false),
    ("iutf8", true),
    // Output: NL as CR NL when processing is on.
    ("onlcr", true),
    // Local: line mode with its editing characters, and signals.
    ("icanon", true),
    ("isig", true),
    ("iexten", true),
    ("echonl", false),
    ("noflsh", false),
    ("tostop", false),
];

impl LineModes {
    /// The same modes as `stty` arguments (each one word, none needing
    /// quotes but the control characters, which are given as `^X`).
    /// With `with_echo` false the echo setting is left alone.
    pub fn stty_args(&self, with_echo: bool) -> Vec<String> {
        let word = |name: &str, on: bool| {
            if on {
                name.to_owned()
            } else {
                format!("-{name}")
            }
        };
        let mut args: Vec<String> = FLAGS.iter().map(|(n, on)| word(n, *on)).collect();
        args.push(word("opost", self.output_processing));
        if with_echo {
            args.push(word("echo", self.echo));
        }
        for (name, byte) in CONTROL_CHARS {
            args.push((*name).to_owned());
            args.push(caret(*byte));
        }
        args.extend(["min", "1", "time", "0"].map(str::to_owned));
        args
    }
}

/// `^X` notation for a control character (`^?` for DEL), as `stty` reads it.
fn caret(byte: u8) -> String {
    match byte {
        0x7f => "^?".to_owned(),
        b => format!("^{}", char::from(b ^ 0x40)),
    }
}

/// What [`crate::Terminal::restore_modes`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ModesRestored {
    /// The terminal was already in those modes.
    Unchanged,
    /// A program had changed them; they are set again.
    Restored,
    /// This transport cannot see or set them (a remote terminal): the
    /// caller has the host apply [`LineModes::stty_args`].
    NotHere,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stty_args_name_every_mode_once() {
        let args = LineModes::default().stty_args(true);
        assert!(args.contains(&"-opost".to_owned()));
        assert!(args.contains(&"-echo".to_owned()));
        assert!(args.contains(&"icanon".to_owned()));
        let kill = args.iter().position(|a| a == "kill").unwrap_or(0);
        assert_eq!(args[kill + 1], "^U");
        let erase = args.iter().position(|a| a == "erase").unwrap_or(0);
        assert_eq!(args[erase + 1], "^?");
        let quit = args.iter().position(|a| a == "quit").unwrap_or(0);
        assert_eq!(args[quit + 1], "^\\");
        let on = LineModes {
            echo: true,
            output_processing: true,
        };
        let args = on.stty_args(false);
        assert!(args.contains(&"opost".to_owned()));
        assert!(!args.iter().any(|a| a.ends_with("echo")));
    }
}
