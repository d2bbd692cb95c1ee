//! Names a caller controls, checked before any use, as OpenSSH checks
//! them (`ssh.c`'s `valid_hostname` and `valid_ruser`, since its fix for
//! shell injection through `%h` and `%r`, CVE-2023-51385).
//!
//! A host name and a user are data. They reach a shell through ssh_config's
//! `%` tokens (`ProxyCommand`, `LocalCommand`, `KnownHostsCommand`, `Match
//! exec`), and file names, session names and logs through tether. So a
//! destination that holds a character a host name cannot hold is refused
//! before ssh_config is even read, with OpenSSH's reason; the tokens that
//! still reach a shell are quoted for `sh` as well
//! ([`crate::percent::Tokens::expand_for_shell`]).
//!
//! This module decides nothing about reachability: a name that passes may
//! still not resolve.

/// Characters that neither a host name nor a user may hold: each means
/// something to `sh` (OpenSSH's list).
const SHELL: &str = "'`\";&<>|(){}";

/// Characters a host name may not hold besides [`SHELL`]: `$` and `\`
/// (OpenSSH's list; blanks and controls are refused too).
const HOST_ONLY: &str = "$\\";

/// Why a host name or user was refused. The messages begin as OpenSSH's
/// ("hostname contains invalid characters") and say which character.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NameProblem {
    /// The host name is empty.
    #[error("the host name is empty")]
    EmptyHost,
    /// The host name begins with `-` (it would read as an option).
    #[error("hostname contains invalid characters (a leading '-' would read as an option)")]
    HostDash,
    /// The host name holds a shell character, a blank or a control
    /// character.
    #[error("hostname contains invalid characters ({0}): a host name is data, never shell")]
    HostCharacter(Shown),
    /// The user begins with `-`, or a blank in it is followed by `-`.
    #[error(
        "remote username contains invalid characters (a '-' at its start or after a blank would read as an option)"
    )]
    UserDash,
    /// The user holds a shell character or a control character.
    #[error("remote username contains invalid characters ({0}): a user name is data, never shell")]
    UserCharacter(Shown),
    /// The user ends with `\` (it would escape what follows it).
    #[error("remote username contains invalid characters (a '\\' at its end)")]
    UserBackslash,
}

/// One refused character, shown so that a control character is visible.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shown(pub char);

impl std::fmt::Display for Shown {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            ' ' => f.write_str("a blank"),
            c if c.is_whitespace() || c.is_control() => {
                write!(f, "the control character U+{:04X}", u32::from(c))
            }
            '\'' => f.write_str("\"'\""),
            c => write!(f, "'{c}'"),
        }
    }
}

/// Whether `host` may be used as a host name: not empty, no leading `-`,
/// no shell character (`'` `` ` `` `"` `$` `\` `;` `&` `<` `>` `|` `(` `)`
/// `{` `}`), no blank and no control character.
pub fn check_host(host: &str) -> Result<(), NameProblem> {
    if host.is_empty() {
        return Err(NameProblem::EmptyHost);
    }
    if host.starts_with('-') {
        return Err(NameProblem::HostDash);
    }
    match host.chars().find(|&c| {
        SHELL.contains(c) || HOST_ONLY.contains(c) || c.is_whitespace() || c.is_control()
    }) {
        Some(c) => Err(NameProblem::HostCharacter(Shown(c))),
        None => Ok(()),
    }
}

/// Whether `user` may be used as a remote user: no leading `-` and none
/// after a blank, no shell character (`$` and `\` may appear, as in
/// OpenSSH, but not `\` last), no control character (OpenSSH lets a
/// newline through; `sh` reads one as the end of a command).
pub fn check_user(user: &str) -> Result<(), NameProblem> {
    if user.starts_with('-') {
        return Err(NameProblem::UserDash);
    }
    let chars: Vec<char> = user.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if SHELL.contains(c) || c.is_control() {
            return Err(NameProblem::UserCharacter(Shown(c)));
        }
        if c.is_whitespace() && chars.get(i + 1) == Some(&'-') {
            return Err(NameProblem::UserDash);
        }
    }
    if user.ends_with('\\') {
        return Err(NameProblem::UserBackslash);
    }
    Ok(())
}

/// `value` as one word for `sh`: as it is when every character is one
/// `sh` reads literally in any place of a word, else in single quotes
/// (each `'` as `'\''`).
pub fn sh_word(value: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "._-+:@%/,=".contains(c);
    if !value.is_empty() && value.chars().all(plain) {
        return value.to_owned();
    }
    format!("'{}'", value.replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_are_refused_as_openssh_refuses_them() {
        for bad in [
            "a;touch X",
            "pcx$(touch X)",
            "a`id`",
            "a\nb",
            "a|b",
            "a&b",
            "a'b",
            "a\"b",
            "-oProxyCommand=x",
            "a b",
            "a\tb",
            "a\\b",
            "a<b",
            "a>b",
            "a{b}",
            "a\u{1b}b",
            "",
        ] {
            assert!(check_host(bad).is_err(), "{bad:?}");
        }
        // As OpenSSH: these pass (a name that does not resolve fails later).
        for good in [
            "web01",
            "web01.example.com",
            "::1",
            "fe80::1%eth0",
            "a*b",
            "a~b",
            "a[b",
            "a,b",
            "xn--bcher-kva.de",
        ] {
            assert_eq!(check_host(good), Ok(()), "{good:?}");
        }
    }

    #[test]
    fn users_are_refused_as_openssh_refuses_them() {
        for bad in [
            "a;b", "-l", "a -b", "a\\", "a`id`", "a(b)", "a|b", "a\nb", "a'b", "a\"b",
        ] {
            assert!(check_user(bad).is_err(), "{bad:?}");
        }
        for good in ["root", "a$b", "first.last", "a b", "DOMAIN\\user", "u@corp"] {
            assert_eq!(check_user(good), Ok(()), "{good:?}");
        }
    }

    #[test]
    fn the_reasons_name_the_character_visibly() {
        let e = check_host("a;b").unwrap_err().to_string();
        assert!(
            e.starts_with("hostname contains invalid characters (';')"),
            "{e}"
        );
        let e = check_host("a\nb").unwrap_err().to_string();
        assert!(e.contains("U+000A"), "{e}");
        assert!(!e.contains('\n'), "{e}");
        let e = check_host("a'b").unwrap_err().to_string();
        assert!(e.contains(r#"("'")"#), "{e}");
        let e = check_host("a b").unwrap_err().to_string();
        assert!(e.contains("a blank"), "{e}");
    }

    #[test]
    fn sh_words_are_plain_or_single_quoted() {
        assert_eq!(sh_word("web01.example.com"), "web01.example.com");
        assert_eq!(sh_word("22"), "22");
        assert_eq!(sh_word("a$b"), "'a$b'");
        assert_eq!(sh_word("it's"), r"'it'\''s'");
        assert_eq!(sh_word(""), "''");
        assert_eq!(sh_word("a b"), "'a b'");
        assert_eq!(sh_word("a*b"), "'a*b'");
    }
}
