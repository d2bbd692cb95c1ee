//! Named keys, as the bytes a terminal sends for them.

use crate::error::ShellError;

/// The bytes for a key name such as `C-c`, `Enter` or `Up`.
pub fn key_bytes(name: &str) -> Result<&'static [u8], ShellError> {
    Ok(match name {
        "C-c" => b"\x03",
        "C-d" => b"\x04",
        "C-z" => b"\x1a",
        "C-\\" => b"\x1c",
        "C-l" => b"\x0c",
        "C-u" => b"\x15",
        "Enter" => b"\r",
        "Tab" => b"\t",
        "Esc" => b"\x1b",
        "Up" => b"\x1b[A",
        "Down" => b"\x1b[B",
        "Right" => b"\x1b[C",
        "Left" => b"\x1b[D",
        "Backspace" => b"\x7f",
        _ => return Err(ShellError::UnknownKey(name.to_owned())),
    })
}
