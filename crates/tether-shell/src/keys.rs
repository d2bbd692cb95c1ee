//! Named keys, as the bytes a terminal sends for them. [`KEYS`] is the one
//! list: the engine accepts exactly these names, and the front-ends' help,
//! schemas and the README list them from here.

use crate::error::ShellError;

/// Every key name a caller may press, with the bytes a terminal sends for
/// it, in the order front-ends list them.
pub const KEYS: &[(&str, &[u8])] = &[
    ("Enter", b"\r"),
    ("Tab", b"\t"),
    ("Esc", b"\x1b"),
    ("Backspace", b"\x7f"),
    ("Up", b"\x1b[A"),
    ("Down", b"\x1b[B"),
    ("Right", b"\x1b[C"),
    ("Left", b"\x1b[D"),
    ("C-c", b"\x03"),
    ("C-d", b"\x04"),
    ("C-z", b"\x1a"),
    ("C-\\", b"\x1c"),
    ("C-l", b"\x0c"),
    ("C-u", b"\x15"),
];

/// The key names of [`KEYS`], in order.
pub fn names() -> impl Iterator<Item = &'static str> {
    KEYS.iter().map(|(name, _)| *name)
}

/// The key names joined with `", "`, for messages and help.
pub fn names_list() -> String {
    names().collect::<Vec<_>>().join(", ")
}

/// The bytes for a key name such as `C-c`, `Enter` or `Up`.
pub fn key_bytes(name: &str) -> Result<&'static [u8], ShellError> {
    KEYS.iter()
        .find(|(n, _)| *n == name)
        .map(|(_, bytes)| *bytes)
        .ok_or_else(|| ShellError::UnknownKey(name.to_owned()))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn every_listed_key_is_accepted_and_names_are_unique() {
        for (name, bytes) in KEYS {
            assert_eq!(key_bytes(name).unwrap(), *bytes);
        }
        let mut seen: Vec<&str> = names().collect();
        seen.sort_unstable();
        seen.dedup();
        assert_eq!(seen.len(), KEYS.len());
        let e = key_bytes("F13").unwrap_err().to_string();
        assert!(e.contains("C-l") && e.contains("C-u"), "{e}");
    }
}
