//! Private directories, trusted only when proven.
//!
//! Everything tether keeps on this machine (the daemon's socket, lock and
//! log, the sessions' directories with their command, input, environment
//! and spill files) lives in directories only the user can use. tether
//! creates such a directory with mode 0700 and its files with 0600,
//! whatever the umask. One that exists already is checked, never repaired:
//! a symlink, another owner, access for group or others (or, for a file,
//! a second hard link) is refused with a message naming what to remove,
//! since what is inside may have been planted or read by someone else.
//! The directories on the way to it must be changeable only by the user
//! or root (or be sticky, as `/tmp` is), so nobody can swap it afterwards.
//! Entries are opened under the verified directory's descriptor
//! (`openat`), never through a symlink (`O_NOFOLLOW`), and new files are
//! created exclusively (`O_EXCL`).

use std::ffi::OsStr;
use std::fs::File;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use nix::errno::Errno;
use nix::fcntl::{AtFlags, OFlag, open, openat};
use nix::sys::stat::{FileStat, Mode, SFlag, fchmod, fstat, fstatat, mkdirat};

use crate::error::ShellError;

/// What an entry of a private directory must be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A directory (0700).
    Dir,
    /// A regular file with one name (0600).
    File,
    /// A unix socket (its mode is free: the daemon checks each peer's uid).
    Socket,
}

/// A directory proven private: ours, a real directory, no access for
/// anyone else. Holds it open, so its entries are reached through it.
#[derive(Debug)]
pub struct PrivateDir {
    fd: OwnedFd,
    path: PathBuf,
}

/// How a directory is come by.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Create {
    /// It must exist.
    No,
    /// Made when missing.
    IfMissing,
    /// Made now: one that exists is an error.
    New,
}

/// The user's uid.
pub fn uid() -> u32 {
    nix::unistd::getuid().as_raw()
}

impl PrivateDir {
    /// The private directory at `path`, created (0700, and its missing
    /// parents) when missing, else checked; and the directories on the way
    /// to it checked too.
    pub fn root(path: &Path) -> Result<PrivateDir, ShellError> {
        open_root(path, Create::IfMissing)
    }

    /// Like [`PrivateDir::root`] for a directory that must exist already.
    pub fn existing_root(path: &Path) -> Result<PrivateDir, ShellError> {
        open_root(path, Create::No)
    }

    /// Its path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The private subdirectory `name`, created when missing, else checked.
    pub fn dir(&self, name: &str) -> Result<PrivateDir, ShellError> {
        open_dir_at(
            &self.fd,
            self.path.join(name),
            OsStr::new(name),
            Create::IfMissing,
        )
    }

    /// A new private subdirectory `name` (one that exists is an error).
    pub fn new_dir(&self, name: &str) -> Result<PrivateDir, ShellError> {
        open_dir_at(
            &self.fd,
            self.path.join(name),
            OsStr::new(name),
            Create::New,
        )
    }

    /// The private subdirectory `name` when it exists (checked).
    pub fn existing_dir(&self, name: &str) -> Result<Option<PrivateDir>, ShellError> {
        if !self.check(name, Kind::Dir)? {
            return Ok(None);
        }
        open_dir_at(&self.fd, self.path.join(name), OsStr::new(name), Create::No).map(Some)
    }

    /// The file `name` opened for appending: created 0600 when missing,
    /// else checked (a symlink, a FIFO, someone else's or a shared file is
    /// refused, never written through).
    pub fn file(&self, name: &str) -> Result<File, ShellError> {
        let path = self.path.join(name);
        let flags = OFlag::O_WRONLY | OFlag::O_APPEND | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
        let new = OFlag::O_CREAT | OFlag::O_EXCL;
        match openat(&self.fd, name, flags | new, file_mode()) {
            Ok(fd) => {
                fchmod(&fd, file_mode()).map_err(io("make private", &path))?;
                Ok(File::from(fd))
            }
            Err(Errno::EEXIST) => {
                // Checked before it is opened: opening a FIFO would block.
                self.check(name, Kind::File)?;
                let fd = openat(&self.fd, name, flags | OFlag::O_NONBLOCK, Mode::empty())
                    .map_err(|e| opened_badly(&self.fd, OsStr::new(name), &path, Kind::File, e))?;
                verify(
                    &path,
                    &fstat(&fd).map_err(io("inspect", &path))?,
                    Kind::File,
                )?;
                Ok(File::from(fd))
            }
            Err(e) => Err(io("create", &path)(e)),
        }
    }

    /// A fresh private file `name` holding `bytes`: created exclusively,
    /// 0600 whatever the umask, never through a symlink; an entry left
    /// under that name is removed first.
    pub fn write_new(&self, name: &str, bytes: &[u8]) -> Result<(), ShellError> {
        use std::io::Write;
        let path = || self.path.join(name);
        let flags =
            OFlag::O_WRONLY | OFlag::O_CREAT | OFlag::O_EXCL | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
        let fd = match openat(&self.fd, name, flags, file_mode()) {
            Err(Errno::EEXIST) => {
                self.remove(name);
                openat(&self.fd, name, flags, file_mode())
            }
            other => other,
        }
        .map_err(io("create", &path()))?;
        fchmod(&fd, file_mode()).map_err(io("make private", &path()))?;
        File::from(fd)
            .write_all(bytes)
            .map_err(|source| ShellError::Files {
                what: "write",
                path: path(),
                source,
            })
    }

    /// Removes the file `name` (best effort: one already gone is fine).
    pub fn remove(&self, name: &str) {
        let _ = nix::unistd::unlinkat(&self.fd, name, nix::unistd::UnlinkatFlags::NoRemoveDir);
    }

    /// The regular file `name` opened for reading, never through a symlink
    /// nor a FIFO (that would block); `None` when it is neither there nor
    /// such a file.
    pub fn open_regular(&self, name: &str) -> Option<File> {
        let flags = OFlag::O_RDONLY | OFlag::O_NOFOLLOW | OFlag::O_NONBLOCK | OFlag::O_CLOEXEC;
        let fd = openat(&self.fd, name, flags, Mode::empty()).ok()?;
        let st = fstat(&fd).ok()?;
        let format = SFlag::from_bits_truncate(st.st_mode & SFlag::S_IFMT.bits());
        (format == SFlag::S_IFREG).then(|| File::from(fd))
    }

    /// Checks the entry `name` when it exists: it must be a `kind`, ours,
    /// and (but for a socket) private. Returns whether it exists.
    pub fn check(&self, name: &str, kind: Kind) -> Result<bool, ShellError> {
        let path = self.path.join(name);
        match fstatat(&self.fd, name, AtFlags::AT_SYMLINK_NOFOLLOW) {
            Ok(st) => verify(&path, &st, kind).map(|()| true),
            Err(Errno::ENOENT) => Ok(false),
            Err(e) => Err(io("inspect", &path)(e)),
        }
    }
}

/// Creates `path`, which must not exist, as a file only the user can read
/// and write (0600 whatever the umask), never through a symlink.
pub fn create_file(path: &Path) -> std::io::Result<File> {
    let flags =
        OFlag::O_WRONLY | OFlag::O_CREAT | OFlag::O_EXCL | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
    let fd = open(path, flags, file_mode())?;
    fchmod(&fd, file_mode())?;
    Ok(File::from(fd))
}

/// Writes `bytes` to a fresh private file at `path`, in a private
/// directory of ours: a file of that name (only ours can be there) is
/// removed first, never written through.
pub fn write_file(path: &Path, bytes: &[u8]) -> Result<(), ShellError> {
    use std::io::Write;
    let err = |what| {
        let path = path.to_path_buf();
        move |source| ShellError::Files { what, path, source }
    };
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(err("replace")(e)),
        _ => {}
    }
    let mut f = create_file(path).map_err(err("create"))?;
    f.write_all(bytes).map_err(err("write"))
}

/// The directory `path` inside a private directory of ours: created 0700
/// when missing, else checked.
pub fn ensure_dir(path: &Path) -> Result<(), ShellError> {
    let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
        return Err(refuse(
            path,
            "is not a directory name: use a path that ends in one",
        ));
    };
    let flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC;
    let parent_fd = open(parent, flags, Mode::empty()).map_err(io("open", parent))?;
    open_dir_at(&parent_fd, path.to_path_buf(), name, Create::IfMissing).map(drop)
}

fn file_mode() -> Mode {
    Mode::S_IRUSR | Mode::S_IWUSR
}

fn refuse(path: &Path, problem: impl Into<String>) -> ShellError {
    ShellError::NotPrivate {
        path: path.to_path_buf(),
        problem: problem.into(),
    }
}

fn io(what: &'static str, path: &Path) -> impl FnOnce(Errno) -> ShellError {
    let path = path.to_path_buf();
    move |e| ShellError::Files {
        what,
        path,
        source: std::io::Error::from(e),
    }
}

fn open_root(path: &Path, create: Create) -> Result<PrivateDir, ShellError> {
    let path = std::path::absolute(path).map_err(|source| ShellError::Files {
        what: "find",
        path: path.to_path_buf(),
        source,
    })?;
    let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
        return Err(refuse(
            &path,
            "is not a directory name: use a path that ends in one",
        ));
    };
    if create != Create::No {
        use std::os::unix::fs::DirBuilderExt;
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(parent)
            .map_err(|source| ShellError::Files {
                what: "create",
                path: parent.to_path_buf(),
                source,
            })?;
    }
    check_ancestors(&path, parent)?;
    let flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC;
    let parent_fd = open(parent, flags, Mode::empty()).map_err(io("open", parent))?;
    open_dir_at(&parent_fd, path.clone(), name, create)
}

/// The directories on the way to `private` (the parent's path as written,
/// and as resolved) must be changeable only by us or root, or sticky.
fn check_ancestors(private: &Path, parent: &Path) -> Result<(), ShellError> {
    let mut on_the_way = Vec::new();
    let mut prefix = PathBuf::new();
    for c in parent.components() {
        prefix.push(c);
        on_the_way.push(prefix.clone());
    }
    let real = std::fs::canonicalize(parent).map_err(|source| ShellError::Files {
        what: "resolve",
        path: parent.to_path_buf(),
        source,
    })?;
    on_the_way.extend(real.ancestors().map(Path::to_path_buf));
    let me = uid();
    let trusted = |owner: u32| owner == me || owner == 0;
    let advice = "; set TETHER_DIR to a directory whose parents only you or root can change";
    for p in on_the_way {
        let inspect = |source| ShellError::Files {
            what: "inspect",
            path: p.clone(),
            source,
        };
        let link = std::fs::symlink_metadata(&p).map_err(inspect)?;
        if link.file_type().is_symlink() && !trusted(link.uid()) {
            return Err(refuse(
                private,
                format!(
                    "{} on the way to it is a symlink of uid {}, who could point it elsewhere{advice}",
                    p.display(),
                    link.uid()
                ),
            ));
        }
        let meta = std::fs::metadata(&p).map_err(inspect)?;
        if !trusted(meta.uid()) {
            return Err(refuse(
                private,
                format!(
                    "the directory {} on the way to it belongs to uid {}, who could replace what is in it{advice}",
                    p.display(),
                    meta.uid()
                ),
            ));
        }
        let mode = meta.mode() & 0o7777;
        if mode & 0o022 != 0 && mode & 0o1000 == 0 {
            return Err(refuse(
                private,
                format!(
                    "the directory {} on the way to it can be written by other users (mode {mode:04o}, not sticky), so they could replace it{advice}",
                    p.display()
                ),
            ));
        }
    }
    Ok(())
}

fn open_dir_at(
    parent: &impl AsFd,
    path: PathBuf,
    name: &OsStr,
    create: Create,
) -> Result<PrivateDir, ShellError> {
    let created = match create {
        Create::No => false,
        Create::IfMissing | Create::New => match mkdirat(parent, name, Mode::S_IRWXU) {
            Ok(()) => true,
            Err(Errno::EEXIST) if create == Create::IfMissing => false,
            Err(e) => return Err(io("create", &path)(e)),
        },
    };
    let flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
    let fd = openat(parent, name, flags, Mode::empty())
        .map_err(|e| opened_badly(parent, name, &path, Kind::Dir, e))?;
    if created {
        fchmod(&fd, Mode::S_IRWXU).map_err(io("make private", &path))?;
    }
    verify(&path, &fstat(&fd).map_err(io("inspect", &path))?, Kind::Dir)?;
    Ok(PrivateDir { fd, path })
}

/// The error for an entry that could not be opened: what is wrong with it
/// when it is the wrong kind or someone else's, else what the OS said.
fn opened_badly(parent: &impl AsFd, name: &OsStr, path: &Path, kind: Kind, e: Errno) -> ShellError {
    if let Ok(st) = fstatat(parent, name, AtFlags::AT_SYMLINK_NOFOLLOW)
        && let Err(refused) = verify(path, &st, kind)
    {
        return refused;
    }
    io("open", path)(e)
}

/// Checks what `st` describes is a `kind`, ours and private.
fn verify(path: &Path, st: &FileStat, kind: Kind) -> Result<(), ShellError> {
    let remove = "remove it and run the command again";
    let format = SFlag::from_bits_truncate(st.st_mode & SFlag::S_IFMT.bits());
    let is = match format {
        SFlag::S_IFDIR => Some(Kind::Dir),
        SFlag::S_IFREG => Some(Kind::File),
        SFlag::S_IFSOCK => Some(Kind::Socket),
        _ => None,
    };
    if is != Some(kind) {
        let what = match format {
            SFlag::S_IFLNK => "a symlink (tether never follows one here)",
            SFlag::S_IFDIR => "a directory",
            SFlag::S_IFREG => "a file",
            SFlag::S_IFSOCK => "a socket",
            SFlag::S_IFIFO => "a named pipe",
            _ => "a device",
        };
        let wanted = match kind {
            Kind::Dir => "a directory",
            Kind::File => "a file",
            Kind::Socket => "a socket",
        };
        return Err(refuse(
            path,
            format!("it is {what}, not {wanted}: {remove}"),
        ));
    }
    let me = uid();
    if st.st_uid != me {
        return Err(refuse(
            path,
            format!(
                "it belongs to uid {}, not to you (uid {me}), so another user may have planted it: {remove} (as root if need be), or set TETHER_DIR to a directory of your own",
                st.st_uid
            ),
        ));
    }
    let mode = st.st_mode & 0o7777;
    if kind != Kind::Socket && mode & 0o077 != 0 {
        return Err(refuse(
            path,
            format!(
                "other users may use it (mode {mode:04o}), so what is in it may have been planted or read; tether does not repair it: check it, {remove}"
            ),
        ));
    }
    if kind == Kind::File && st.st_nlink != 1 {
        return Err(refuse(
            path,
            format!(
                "it has {} names (hard links), so it may be another file of yours: {remove}",
                st.st_nlink
            ),
        ));
    }
    Ok(())
}
