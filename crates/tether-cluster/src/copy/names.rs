//! Paths on the hosts (SFTP paths: UTF-8, `/`-separated, relative to the
//! login directory) and the names a copy gives: the temporary name a file
//! is written under beside its real one, and the check that a name from a
//! host's listing stays inside its directory.

/// A path as typed, as the server takes it: `~` and `~/` (the login
/// directory, where SFTP starts) dropped, an empty path the login
/// directory, trailing `/` removed (but from `/` itself).
pub fn remote(path: &str) -> String {
    let p = if path == "~" {
        ""
    } else {
        path.strip_prefix("~/").unwrap_or(path)
    };
    let trimmed = p.trim_end_matches('/');
    match (trimmed.is_empty(), p.starts_with('/')) {
        (true, true) => "/".to_owned(),
        (true, false) => ".".to_owned(),
        (false, _) => trimmed.to_owned(),
    }
}

/// `name` in the directory `dir`.
pub fn join(dir: &str, name: &str) -> String {
    match dir {
        "." => name.to_owned(),
        d if d.ends_with('/') => format!("{d}{name}"),
        d => format!("{d}/{name}"),
    }
}

/// A path's directory and last name (`a/b` → `a`, `b`; `b` → `.`, `b`;
/// `/b` → `/`, `b`).
pub fn split(path: &str) -> (String, String) {
    match path.rsplit_once('/') {
        Some(("", name)) => ("/".to_owned(), name.to_owned()),
        Some((dir, name)) => (dir.to_owned(), name.to_owned()),
        None => (".".to_owned(), path.to_owned()),
    }
}

/// The temporary name a file named `name` is written under, beside it:
/// hidden, marked as tether's, unpredictable, and at most 255 bytes.
pub fn temp_name(name: &str) -> String {
    let mut random = [0u8; 6];
    // getrandom does not fail on Linux; the name is then only less random,
    // and the file is created exclusively anyway.
    let _ = getrandom::fill(&mut random);
    let suffix: String = random.iter().map(|b| format!("{b:02x}")).collect();
    let mut keep = name.len().min(255 - 1 - 8 - suffix.len() - 1);
    while !name.is_char_boundary(keep) {
        keep -= 1;
    }
    format!(".{}.tether-{suffix}", &name[..keep])
}

/// What to do about a name that is not UTF-8, said by every error that
/// meets one (SFTP paths are UTF-8 here: see `tether_ssh::maybe_not_utf8`).
pub const NOT_UTF8_HELP: &str = "tether cp names files over SFTP in UTF-8 only: rename it, \
     or copy its directory as a tar archive through tether exec \
     (push: tar cf - DIR | tether exec -H HOSTS --stdin -- tar xf -; \
     pull: tether exec -H HOSTS --output dir --dir D -- tar cf - DIR, each host's in D/HOST.stdout)";

/// True when `name` from a host's listing names an entry of that directory
/// and nothing else: not empty, not `.` or `..`, no `/` and no NUL.
pub fn safe_name(name: &str) -> bool {
    !name.is_empty() && name != "." && name != ".." && !name.contains(['/', '\0'])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_taken_as_sftp_takes_them() {
        assert_eq!(remote(""), ".");
        assert_eq!(remote("~"), ".");
        assert_eq!(remote("~/"), ".");
        assert_eq!(remote("~/etc/"), "etc");
        assert_eq!(remote("/"), "/");
        assert_eq!(remote("//"), "/");
        assert_eq!(remote("/etc/app/"), "/etc/app");
        assert_eq!(join(".", "a"), "a");
        assert_eq!(join("/", "a"), "/a");
        assert_eq!(join("d", "a"), "d/a");
        assert_eq!(split("a/b"), ("a".into(), "b".into()));
        assert_eq!(split("b"), (".".into(), "b".into()));
        assert_eq!(split("/b"), ("/".into(), "b".into()));
    }

    #[test]
    fn temporary_names_are_hidden_bounded_and_differ() {
        let t = temp_name("app.conf");
        assert!(
            t.starts_with(".app.conf.tether-") && t.len() == ".app.conf.tether-".len() + 12,
            "{t}"
        );
        assert_ne!(t, temp_name("app.conf"));
        assert!(temp_name(&"é".repeat(200)).len() <= 255);
    }

    #[test]
    fn only_plain_names_are_safe() {
        for bad in ["", ".", "..", "../x", "a/b", "/etc", "a\0b"] {
            assert!(!safe_name(bad), "{bad:?}");
        }
        for good in ["a", "..a", "a..", ".hidden", "é x"] {
            assert!(safe_name(good), "{good:?}");
        }
    }
}
