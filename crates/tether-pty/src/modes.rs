//! [`LineModes`] as termios flags on a local PTY: the flags and control
//! characters of `tether_transport::FLAGS` and `CONTROL_CHARS`, each
//! mapped to its termios bit here (a test checks that the host's `stty`
//! sets the same ones).

use nix::sys::termios::{InputFlags, LocalFlags, OutputFlags, SpecialCharacterIndices, Termios};
use tether_transport::{CONTROL_CHARS, FLAGS, LineModes};

/// One termios bit.
enum Bit {
    In(InputFlags),
    Out(OutputFlags),
    Local(LocalFlags),
}

/// The termios bit of a `stty` flag name in [`FLAGS`].
fn bit(name: &str) -> Option<Bit> {
    Some(match name {
        "icrnl" => Bit::In(InputFlags::ICRNL),
        "inlcr" => Bit::In(InputFlags::INLCR),
        "igncr" => Bit::In(InputFlags::IGNCR),
        "istrip" => Bit::In(InputFlags::ISTRIP),
        "iutf8" => Bit::In(InputFlags::IUTF8),
        "onlcr" => Bit::Out(OutputFlags::ONLCR),
        "opost" => Bit::Out(OutputFlags::OPOST),
        "icanon" => Bit::Local(LocalFlags::ICANON),
        "isig" => Bit::Local(LocalFlags::ISIG),
        "iexten" => Bit::Local(LocalFlags::IEXTEN),
        "echo" => Bit::Local(LocalFlags::ECHO),
        "echonl" => Bit::Local(LocalFlags::ECHONL),
        "noflsh" => Bit::Local(LocalFlags::NOFLSH),
        "tostop" => Bit::Local(LocalFlags::TOSTOP),
        _ => return None,
    })
}

/// The index of a control character's `stty` name in [`CONTROL_CHARS`].
fn control(name: &str) -> Option<SpecialCharacterIndices> {
    Some(match name {
        "intr" => SpecialCharacterIndices::VINTR,
        "quit" => SpecialCharacterIndices::VQUIT,
        "erase" => SpecialCharacterIndices::VERASE,
        "kill" => SpecialCharacterIndices::VKILL,
        "eof" => SpecialCharacterIndices::VEOF,
        "susp" => SpecialCharacterIndices::VSUSP,
        _ => return None,
    })
}

fn set(t: &mut Termios, name: &str, on: bool) {
    match bit(name) {
        Some(Bit::In(f)) => t.input_flags.set(f, on),
        Some(Bit::Out(f)) => t.output_flags.set(f, on),
        Some(Bit::Local(f)) => t.local_flags.set(f, on),
        None => {}
    }
}

/// `t` with `modes` applied (everything else as it was).
pub(crate) fn applied(t: &Termios, modes: LineModes) -> Termios {
    let mut t = t.clone();
    for (name, on) in FLAGS {
        set(&mut t, name, *on);
    }
    set(&mut t, "opost", modes.output_processing);
    set(&mut t, "echo", modes.echo);
    for (name, byte) in CONTROL_CHARS {
        if let Some(i) = control(name) {
            t.control_chars[i as usize] = *byte;
        }
    }
    t.control_chars[SpecialCharacterIndices::VMIN as usize] = 1;
    t.control_chars[SpecialCharacterIndices::VTIME as usize] = 0;
    t
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn every_listed_mode_has_a_termios_bit() {
        for (name, _) in FLAGS {
            assert!(bit(name).is_some(), "{name}");
        }
        for name in ["opost", "echo"] {
            assert!(bit(name).is_some(), "{name}");
        }
        for (name, _) in CONTROL_CHARS {
            assert!(control(name).is_some(), "{name}");
        }
    }
}
