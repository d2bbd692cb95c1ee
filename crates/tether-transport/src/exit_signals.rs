//! The signals a host names when a program ends by one (SSH's
//! `exit-signal` carries the name without `SIG`: every name OpenSSH's sshd
//! sends; any other signal it sends as `SIG@openssh.com`, which names
//! none), with their Linux numbers: one list, for every exit code that is
//! 128+N and every name a `128+N` status stands for.

/// Each signal's name (without `SIG`) and its Linux number.
pub const EXIT_SIGNALS: [(&str, i32); 13] = [
    ("HUP", 1),
    ("INT", 2),
    ("QUIT", 3),
    ("ILL", 4),
    ("ABRT", 6),
    ("FPE", 8),
    ("KILL", 9),
    ("USR1", 10),
    ("SEGV", 11),
    ("USR2", 12),
    ("PIPE", 13),
    ("ALRM", 14),
    ("TERM", 15),
];

/// The Linux number of the signal named `name` (`KILL`, `SIGKILL`);
/// `None` for a name not in [`EXIT_SIGNALS`].
pub fn exit_signal_number(name: &str) -> Option<i32> {
    let bare = name.strip_prefix("SIG").unwrap_or(name);
    EXIT_SIGNALS
        .iter()
        .find(|(n, _)| *n == bare)
        .map(|(_, number)| *number)
}

/// The name (without `SIG`) of signal `number`; `None` for a number not in
/// [`EXIT_SIGNALS`].
pub fn exit_signal_name(number: i32) -> Option<&'static str> {
    EXIT_SIGNALS
        .iter()
        .find(|(_, n)| *n == number)
        .map(|(name, _)| *name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_openssh_sends_has_its_linux_number() {
        let want = [
            ("KILL", 9),
            ("TERM", 15),
            ("SEGV", 11),
            ("HUP", 1),
            ("INT", 2),
            ("QUIT", 3),
            ("ABRT", 6),
            ("ALRM", 14),
            ("FPE", 8),
            ("ILL", 4),
            ("PIPE", 13),
            ("USR1", 10),
            ("USR2", 12),
        ];
        for (name, n) in want {
            assert_eq!(exit_signal_number(name), Some(n), "{name}");
            assert_eq!(exit_signal_number(&format!("SIG{name}")), Some(n));
            assert_eq!(exit_signal_name(n), Some(name));
        }
        assert_eq!(exit_signal_number("WINCH"), None);
        assert_eq!(exit_signal_name(64), None);
    }
}
