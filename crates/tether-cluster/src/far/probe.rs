//! One command on the host tells what tether needs to know before it uses
//! or copies itself there: the system and machine (`uname -sm`), the login
//! user's uid, the cache directory (`${XDG_CACHE_HOME:-$HOME/.cache}`),
//! and, for the binary's place, what is there (owner, mode, kind, its
//! directory's, its SHA-256). [`Probe::trust`] decides from that whether a
//! binary found there may run: only the user's own (or, at a path the
//! config gives, root's), not writable by group or others (nor its
//! directory), with this tether's hash.

use super::{posix, sh_quote};

/// The SHA-256 of stdin, hex first, on the host: coreutils' and
/// busybox's `sha256sum`, else Perl's `shasum`.
pub(crate) const SHA256: &str = "{ sha256sum || shasum -a 256; } 2>/dev/null";

/// A regular file's seal on the host: device, inode, size and change
/// time. Any write, chmod, chown or link changes it.
pub(crate) const SEAL: &str = "stat -c '%d %i %s %z' --";

/// The owner, mode and kind of a path on the host (`stat -c '%u %a %F'`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Stat {
    pub uid: u32,
    pub mode: u32,
    /// `regular file`, `directory`, `symbolic link`, …
    pub kind: String,
}

/// What the host said.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Probe {
    /// `uname -sm`.
    pub os: String,
    /// The login user's uid.
    pub uid: u32,
    /// The binary's place, as the host expands it.
    pub path: String,
    /// The place's directory, when it exists.
    pub dir: Option<Stat>,
    /// What is at the place, when anything is.
    pub file: Option<Stat>,
    /// The SHA-256 of a regular file there (empty when unreadable); not
    /// computed when its seal is the one verified before.
    pub sha256: Option<String>,
    /// A regular file's seal ([`SEAL`]); the change time in it cannot be
    /// set back but by the clock.
    pub seal: Option<String>,
}

/// A binary whose hash was checked on the host, and its seal then.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Verified {
    /// Its path there.
    pub path: String,
    /// Its seal when it was hashed (taken before the hash).
    pub seal: String,
}

/// Why a binary found on the host may not run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Untrusted {
    /// What is wrong, after "it" (`is owned by uid 0, …`).
    pub why: String,
    /// It is its directory that is wrong (remove that, not the file).
    pub dir: bool,
}

/// The probe's command line for the binary's place: `place` as the
/// config gives it (`~/` is the home directory), else the cache's
/// `tether/bin/SHORT/tether`. One line for `/bin/sh`, so that any login
/// shell runs it.
///
/// The seal of a regular file is printed first; its SHA-256 follows
/// unless the seal is `verified`'s (the same file as hashed before).
pub(crate) fn command(place: Option<&str>, short: &str, verified: Option<&Verified>) -> String {
    let file = match place {
        Some(p) => match p.strip_prefix("~/") {
            Some(rest) => format!("\"$HOME\"/{}", sh_quote(rest)),
            None => sh_quote(p),
        },
        None => format!("\"$c\"/tether/bin/{}/tether", sh_quote(short)),
    };
    let stat = "stat -c '%u %a %F' --";
    let seen = sh_quote(verified.map_or("", |v| v.seal.as_str()));
    let script = format!(
        "printf 'os %s\\n' \"$(uname -sm)\"; printf 'uid %s\\n' \"$(id -u)\"; \
         c=\"${{XDG_CACHE_HOME:-$HOME/.cache}}\"; f={file}; d=$(dirname -- \"$f\"); \
         printf 'path %s\\n' \"$f\"; \
         if [ -d \"$d\" ]; then printf 'dir %s\\n' \"$({stat} \"$d\")\"; fi; \
         if [ -e \"$f\" ] || [ -L \"$f\" ]; then printf 'file %s\\n' \"$({stat} \"$f\")\"; \
         if [ -f \"$f\" ] && [ ! -L \"$f\" ]; then s=$({SEAL} \"$f\"); \
         printf 'seal %s\\n' \"$s\"; if [ -z \"$s\" ] || [ \"$s\" != {seen} ]; then \
         printf 'sha %s\\n' \"$({SHA256} < \"$f\" | cut -c1-64)\"; fi; fi; fi"
    );
    posix(&script)
}

/// Reads the probe's output; `None` when it is not what the command
/// prints (a path with a newline in it, a missing tool).
pub(crate) fn parse(out: &str) -> Option<Probe> {
    let mut p = Probe::default();
    let mut seen = (false, false, false);
    for line in out.lines() {
        let (tag, rest) = line.split_once(' ').unwrap_or((line, ""));
        match tag {
            "os" => {
                p.os = rest.trim().to_owned();
                seen.0 = true;
            }
            "uid" => {
                p.uid = rest.trim().parse().ok()?;
                seen.1 = true;
            }
            "path" => {
                p.path = rest.to_owned();
                seen.2 = true;
            }
            "dir" => p.dir = Some(stat(rest)?),
            "file" => p.file = Some(stat(rest)?),
            "sha" => p.sha256 = Some(rest.trim().to_owned()),
            "seal" => p.seal = (!rest.trim().is_empty()).then(|| rest.to_owned()),
            _ => return None,
        }
    }
    (seen == (true, true, true) && !p.path.is_empty()).then_some(p)
}

fn stat(text: &str) -> Option<Stat> {
    let mut words = text.splitn(3, ' ');
    let uid = words.next()?.parse().ok()?;
    let mode = u32::from_str_radix(words.next()?, 8).ok()?;
    let kind = words.next()?.to_owned();
    Some(Stat { uid, mode, kind })
}

/// The directory of `path` (as `dirname` says it).
pub(crate) fn dir_of(path: &str) -> &str {
    match path.trim_end_matches('/').rsplit_once('/') {
        Some(("", _)) => "/",
        Some((d, _)) => d,
        None => ".",
    }
}

impl Probe {
    /// Whether the directory may hold tether's binary: the user's own
    /// (or root's, at a path the config gives) and not writable by group
    /// or others; what is wrong otherwise.
    pub fn dir_problem(&self, root_ok: bool) -> Option<Untrusted> {
        let dir = self.dir.as_ref()?;
        let d = dir_of(&self.path);
        owner_or_mode(dir, self.uid, root_ok).map(|p| Untrusted {
            why: format!("its directory {d} {p}"),
            dir: true,
        })
    }

    /// Why the binary found at the place may not run (`None`: it may):
    /// it is not a regular file, not the user's own, writable by group
    /// or others (or its directory is), or its hash is not `sha256` (a
    /// file whose seal is `verified`'s was hashed before: it passes).
    pub fn trust(
        &self,
        sha256: &str,
        root_ok: bool,
        verified: Option<&Verified>,
    ) -> Option<Untrusted> {
        let file = self.file.as_ref()?;
        let of_file = |why: String| Some(Untrusted { why, dir: false });
        if file.kind != "regular file" {
            return of_file(format!("is a {}, not a regular file", file.kind));
        }
        if let Some(p) = owner_or_mode(file, self.uid, root_ok) {
            return of_file(p);
        }
        if let Some(p) = self.dir_problem(root_ok) {
            return Some(p);
        }
        if self.sha256.is_none() && self.seal.is_some() && self.verified().as_ref() == verified {
            return None;
        }
        match self.sha256.as_deref() {
            Some(h) if h == sha256 => None,
            Some(h) if h.len() == 64 => of_file(format!(
                "has the SHA-256 {h}, not this tether's {sha256} (another build, or changed)"
            )),
            _ => of_file("cannot be read to check its SHA-256".to_owned()),
        }
    }
}

impl Probe {
    /// The file as verified now (its path and seal), once [`Probe::trust`]
    /// passed it.
    pub fn verified(&self) -> Option<Verified> {
        Some(Verified {
            path: self.path.clone(),
            seal: self.seal.clone()?,
        })
    }
}

fn owner_or_mode(s: &Stat, uid: u32, root_ok: bool) -> Option<String> {
    if s.uid != uid && !(root_ok && s.uid == 0) {
        return Some(format!("is owned by uid {}, not by you (uid {uid})", s.uid));
    }
    if s.mode & 0o022 != 0 {
        return Some(format!(
            "is writable by its group or others (mode {:04o})",
            s.mode
        ));
    }
    None
}

/// The system this tether is built for, as `uname -s` says it.
fn system() -> &'static str {
    match std::env::consts::OS {
        "linux" => "Linux",
        "macos" => "Darwin",
        "freebsd" => "FreeBSD",
        other => other,
    }
}

/// What this tether is built for, as `uname -sm` says it.
pub(crate) fn built_for() -> String {
    format!("{} {}", system(), std::env::consts::ARCH)
}

/// True when `uname -sm`'s answer is a system and machine this build runs
/// on (whether it starts there is checked too: `--version`).
pub(crate) fn os_matches(uname: &str) -> bool {
    let Some((sys, machine)) = uname.split_once(' ') else {
        return false;
    };
    let machine_ok = match std::env::consts::ARCH {
        "x86_64" => matches!(machine, "x86_64" | "amd64"),
        "aarch64" => matches!(machine, "aarch64" | "arm64"),
        "x86" => matches!(machine, "i386" | "i486" | "i586" | "i686"),
        "arm" => machine.starts_with("arm"),
        other => machine == other,
    };
    sys == system() && machine_ok
}

#[cfg(test)]
mod tests {
    use super::*;

    const SHA: &str = "ab00000000000000000000000000000000000000000000000000000000000000";

    fn found(file: &str, dir: &str, sha: &str) -> Probe {
        let out = format!(
            "os Linux x86_64\nuid 999\npath /h/.cache/tether/bin/ab/tether\ndir {dir}\nfile {file}\nsha {sha}\n"
        );
        parse(&out).unwrap()
    }

    #[test]
    fn reads_what_the_host_says() {
        let p = parse("os Linux x86_64\nuid 999\npath /h/x y/tether\n").unwrap();
        assert_eq!((p.os.as_str(), p.uid), ("Linux x86_64", 999));
        assert_eq!(p.path, "/h/x y/tether");
        assert_eq!((p.dir, p.file, p.sha256), (None, None, None));
        assert!(parse("os Linux x86_64\nuid 999\n").is_none());
        assert!(parse("os Linux\nuid 999\npath /a\nsurprise\n").is_none());
        let p = found("999 700 regular file", "999 700 directory", SHA);
        assert_eq!(p.file.as_ref().unwrap().kind, "regular file");
        assert_eq!(p.trust(SHA, false, None), None);
    }

    #[test]
    fn a_binary_is_trusted_only_when_ours_private_and_the_same() {
        let cases = [
            (
                "0 755 regular file",
                "999 700 directory",
                SHA,
                "owned by uid 0",
            ),
            (
                "999 770 regular file",
                "999 700 directory",
                SHA,
                "mode 0770",
            ),
            (
                "999 700 regular file",
                "999 777 directory",
                SHA,
                "its directory",
            ),
            (
                "999 777 symbolic link",
                "999 700 directory",
                SHA,
                "symbolic link",
            ),
            (
                "999 700 regular file",
                "999 700 directory",
                &SHA.replace("ab", "cd"),
                "not this tether's",
            ),
            (
                "999 700 regular file",
                "999 700 directory",
                "",
                "cannot be read",
            ),
        ];
        for (file, dir, sha, says) in cases {
            let why = found(file, dir, sha).trust(SHA, false, None).unwrap().why;
            assert!(why.contains(says), "{file} / {dir}: {why}");
        }
        // Root's own, at a path the config gives (installed by hand).
        assert_eq!(
            found("0 755 regular file", "0 755 directory", SHA).trust(SHA, true, None),
            None
        );
    }

    #[test]
    fn this_build_matches_its_own_uname_only() {
        let me = built_for();
        assert!(os_matches(&me), "{me}");
        assert!(!os_matches("Plan9 pdp11"));
        assert!(!os_matches(""));
    }

    #[test]
    fn the_command_quotes_the_place() {
        let c = command(Some("~/bin/it's"), "0123", None);
        assert!(c.starts_with("exec /bin/sh -c '"), "{c}");
        assert!(c.contains("\"$HOME\"/"), "{c}");
        assert_eq!(dir_of("/a/b/tether"), "/a/b");
        assert_eq!(dir_of("/tether"), "/");
        assert_eq!(dir_of("tether"), ".");
        assert_eq!(sh_quote("it's"), r"'it'\''s'");
    }

    /// The probe run by /bin/sh on a real file: hashed the first time;
    /// not again while its seal holds; hashed again (and refused) once it
    /// is written to, even with its old modification time put back.
    #[test]
    fn a_sealed_binary_is_hashed_once_and_again_when_it_changes() {
        use std::io::Write;
        let dir = std::env::temp_dir().join(format!("tether-probe-seal-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("tether");
        std::fs::write(&file, b"a binary").unwrap();
        let path = file.to_str().unwrap().to_owned();
        let run = |verified: Option<&Verified>| -> Probe {
            let out = std::process::Command::new("/bin/sh")
                .arg("-c")
                .arg(command(Some(&path), "x", verified))
                .output()
                .unwrap();
            parse(&String::from_utf8_lossy(&out.stdout)).unwrap()
        };
        // sha256 of "a binary".
        let sha = {
            let out = std::process::Command::new("sha256sum")
                .arg(&file)
                .output()
                .unwrap();
            String::from_utf8_lossy(&out.stdout)[..64].to_owned()
        };
        let first = run(None);
        assert_eq!(first.sha256.as_deref(), Some(sha.as_str()));
        assert_eq!(first.trust(&sha, true, None), None);
        let seen = first.verified().unwrap();
        let second = run(Some(&seen));
        assert_eq!(second.sha256, None, "not hashed again");
        assert_eq!(second.trust(&sha, true, Some(&seen)), None);
        // A seal from elsewhere proves nothing.
        let other = Verified {
            path: path.clone(),
            seal: "0 0 0 then".into(),
        };
        assert!(run(Some(&other)).sha256.is_some());
        // Written to, its modification time put back: hashed, refused.
        let mtime = std::fs::metadata(&file).unwrap().modified().unwrap();
        std::fs::OpenOptions::new()
            .append(true)
            .open(&file)
            .unwrap()
            .write_all(b"!")
            .unwrap();
        std::fs::File::options()
            .write(true)
            .open(&file)
            .unwrap()
            .set_modified(mtime)
            .unwrap();
        let third = run(Some(&seen));
        assert!(third.sha256.is_some(), "hashed again");
        let why = third.trust(&sha, true, Some(&seen)).unwrap().why;
        assert!(why.contains("not this tether's"), "{why}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
