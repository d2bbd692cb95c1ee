//! The bubblewrap command line for a fence. Binds are given in order and
//! later ones win: the root read-only, then the writable roots and the
//! temp directory, then what stays read-only inside them, then what is
//! hidden.

use std::ffi::OsString;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use crate::error::ConfineError;

/// What a confined program may write.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Nothing but the session's temp directory.
    ReadOnly,
    /// Only inside these roots (and the temp directory), `.git` kept
    /// read-only in each.
    Workspace {
        /// The writable roots.
        roots: Vec<PathBuf>,
    },
}

/// A fence: a mode, the session's temp directory, and what is kept
/// read-only, hidden or shown again besides.
#[derive(Clone, Debug)]
pub struct Fence {
    mode: Mode,
    /// Writable after the hiding: the temp directory, the session's files.
    writable: Vec<PathBuf>,
    read_only: Vec<PathBuf>,
    hidden: Vec<PathBuf>,
    /// Read-only again after the hiding (the session's own directory).
    shown: Vec<PathBuf>,
    /// bubblewrap makes a user namespace (for a user who is not root).
    userns: bool,
}

impl Fence {
    /// A fence for `mode`, writing also in `temp` (which must exist).
    pub fn new(mode: Mode, temp: &Path) -> Result<Fence, ConfineError> {
        directory(temp)?;
        if let Mode::Workspace { roots } = &mode {
            for root in roots {
                directory(root)?;
                if root.parent().is_none() {
                    return Err(ConfineError::WholeRoot);
                }
            }
        }
        Ok(Fence {
            mode,
            writable: vec![temp.to_owned()],
            read_only: Vec::new(),
            hidden: Vec::new(),
            shown: Vec::new(),
            userns: !running_as_root(),
        })
    }

    /// For a program that will run as a user who is not root (this
    /// process drops its privileges before bubblewrap runs).
    pub fn unprivileged(mut self) -> Fence {
        self.userns = true;
        self
    }

    /// Keeps `path` read-only inside a writable root.
    pub fn read_only(mut self, path: &Path) -> Result<Fence, ConfineError> {
        self.read_only.push(absolute(path)?);
        Ok(self)
    }

    /// Hides `path` (a file or a directory) from the program: it reads as
    /// empty. A path that does not exist now is skipped. Hiding wins over
    /// the roots: a denied path inside a root stays hidden.
    pub fn hide(mut self, path: &Path) -> Result<Fence, ConfineError> {
        self.hidden.push(absolute(path)?);
        Ok(self)
    }

    /// Shows `path` again, read-only, even inside a hidden directory (the
    /// session's own directory inside tether's runtime directory).
    pub fn show(mut self, path: &Path) -> Result<Fence, ConfineError> {
        self.shown.push(absolute(path)?);
        Ok(self)
    }

    /// Makes `path` (an existing file or directory) writable, even inside
    /// a hidden or shown directory: the files the session's shell writes.
    pub fn writable(mut self, path: &Path) -> Result<Fence, ConfineError> {
        let path = absolute(path)?;
        if std::fs::symlink_metadata(&path).is_err() {
            return Err(ConfineError::NotADirectory(path));
        }
        self.writable.push(path);
        Ok(self)
    }

    /// `bwrap` and its arguments to run `program` with `args` inside the
    /// fence.
    pub fn command(
        &self,
        program: &Path,
        args: &[OsString],
    ) -> Result<(PathBuf, Vec<OsString>), ConfineError> {
        let bwrap = find_bwrap(std::env::var_os("PATH").as_deref())?;
        let mut a = Args::default();
        // No --die-with-parent: it would SIGKILL the program the moment
        // bubblewrap ends, before the shell's own exit trap (which saves
        // its exports for the next shell) has run. The program ends as an
        // unconfined one does, by the hangup of its terminal when its
        // session leader (bubblewrap) goes, and with its tree (the marker).
        a.flag("--unshare-net");
        if self.userns {
            // Namespaces for a user who is not root; the uid inside is the
            // user's own, with no capability.
            a.flag("--unshare-user");
        } else {
            // bubblewrap run by root keeps root's capabilities unless told:
            // with them, the program could unmount what hides the deny list.
            a.flag("--cap-drop");
            a.flag("ALL");
        }
        a.pair("--ro-bind", "/", "/")?;
        // A fresh /dev (no disks) with a devpts instance of its own: no
        // other terminal of the user's is there to read or write. The
        // session's own terminal stays the shell's (its descriptors and
        // its controlling terminal, `/dev/tty`, are kept), though its name
        // under the host's /dev/pts is not there.
        a.one("--dev", "/dev")?;
        // The host's process ids: tether reads the shell's processes in
        // /proc, and ends them, as for any session.
        a.one("--proc", "/proc")?;
        let roots = match &self.mode {
            Mode::ReadOnly => Vec::new(),
            Mode::Workspace { roots } => roots.clone(),
        };
        for root in &roots {
            a.pair("--bind", root, root)?;
        }
        let git = roots.iter().map(|r| r.join(".git"));
        for path in git.chain(self.read_only.iter().cloned()) {
            if path.exists() {
                a.pair("--ro-bind", &path, &path)?;
            }
        }
        let mut hidden_dirs = Vec::new();
        for path in &self.hidden {
            match std::fs::metadata(path) {
                Ok(m) if m.is_dir() => {
                    a.one("--tmpfs", path)?;
                    hidden_dirs.push(path);
                }
                Ok(_) => a.pair("--ro-bind", "/dev/null", path)?,
                Err(_) => {}
            }
        }
        for path in &self.shown {
            a.pair("--ro-bind", path, path)?;
        }
        for path in &self.writable {
            a.pair("--bind", path, path)?;
        }
        // Read-only once the mount points inside them are made.
        for path in hidden_dirs {
            a.one("--remount-ro", path)?;
        }
        a.flag("--");
        a.0.push(program.as_os_str().to_owned());
        a.0.extend(args.iter().cloned());
        Ok((bwrap, a.0))
    }
}

/// bubblewrap's arguments, built in order.
#[derive(Default)]
struct Args(Vec<OsString>);

impl Args {
    fn flag(&mut self, f: &str) {
        self.0.push(f.into());
    }

    fn one(&mut self, f: &str, p: impl AsRef<Path>) -> Result<(), ConfineError> {
        self.flag(f);
        self.0.push(usable(p.as_ref())?);
        Ok(())
    }

    fn pair(
        &mut self,
        f: &str,
        from: impl AsRef<Path>,
        to: impl AsRef<Path>,
    ) -> Result<(), ConfineError> {
        self.one(f, from)?;
        self.0.push(usable(to.as_ref())?);
        Ok(())
    }
}

fn usable(p: &Path) -> Result<OsString, ConfineError> {
    if p.as_os_str().as_encoded_bytes().contains(&0) {
        return Err(ConfineError::Unusable(p.to_owned()));
    }
    Ok(p.as_os_str().to_owned())
}

fn absolute(p: &Path) -> Result<PathBuf, ConfineError> {
    if !p.is_absolute() {
        return Err(ConfineError::Relative(p.to_owned()));
    }
    Ok(p.to_owned())
}

fn directory(p: &Path) -> Result<(), ConfineError> {
    let p = absolute(p)?;
    if !p.is_dir() {
        return Err(ConfineError::NotADirectory(p));
    }
    Ok(())
}

/// `bwrap` on `path` (a PATH value).
fn find_bwrap(path: Option<&std::ffi::OsStr>) -> Result<PathBuf, ConfineError> {
    let path = path.ok_or(ConfineError::NoBwrap)?;
    std::env::split_paths(path)
        .map(|d| d.join("bwrap"))
        .find(|p| p.is_file())
        .ok_or(ConfineError::NoBwrap)
}

/// This process runs as root (the owner of its own /proc entry).
fn running_as_root() -> bool {
    std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_relative_or_missing_root_is_refused() {
        let e = Fence::new(Mode::ReadOnly, Path::new("tmp")).unwrap_err();
        assert!(e.to_string().contains("absolute"), "{e}");
        let missing = Mode::Workspace {
            roots: vec!["/no/such/root".into()],
        };
        let e = Fence::new(missing, Path::new("/tmp")).unwrap_err();
        assert!(e.to_string().contains("not a directory"), "{e}");
        let f = Fence::new(Mode::ReadOnly, Path::new("/tmp")).unwrap();
        assert!(f.hide(Path::new("rel")).is_err());
    }

    #[test]
    fn without_bwrap_there_is_no_fence_and_the_error_says_what_to_install() {
        let e = find_bwrap(Some(std::ffi::OsStr::new("/nonexistent:/also/not"))).unwrap_err();
        assert!(matches!(e, ConfineError::NoBwrap));
        assert!(e.to_string().contains("apt-get install bubblewrap"), "{e}");
        assert!(matches!(find_bwrap(None), Err(ConfineError::NoBwrap)));
    }
}
