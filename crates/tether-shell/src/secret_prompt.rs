//! Telling a prompt for a secret (`[sudo] password for ann:`, `Password:`,
//! `Enter passphrase for key`) from any other prompt, by its text: the last
//! line a program waiting for input printed. The engine never types into a
//! program unless asked; a result that says `secret` tells the caller what
//! it would be typing.

/// Words a secret's prompt holds (in lower case).
const WORDS: &[&str] = &[
    "password",
    "passphrase",
    "passcode",
    "pin:",
    "pin for",
    "otp",
];

/// Whether `output`'s last line that is not blank asks for a secret.
pub(crate) fn asks_secret(output: &str) -> bool {
    let Some(last) = output.lines().rev().find(|l| !l.trim().is_empty()) else {
        return false;
    };
    let last = last.to_lowercase();
    WORDS.iter().any(|w| last.contains(w))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prompts_for_secrets_are_told_from_others() {
        for p in [
            "[sudo] password for ann: ",
            "Password: ",
            "Enter passphrase for key '/home/a/.ssh/id_ed25519': ",
            "ann@host's password:",
            "some output\nPassword:\n",
            "Enter PIN for 'token': ",
        ] {
            assert!(asks_secret(p), "{p:?}");
        }
        for p in ["name? ", "", "Continue? [y/N] ", "password set\n>>> "] {
            assert!(!asks_secret(p), "{p:?}");
        }
    }
}
