//! SFTP on a connection: the one module that uses `russh-sftp` (pinned). It
//! opens the `sftp` subsystem on a channel and offers what a copy needs:
//! stat, directories, links, renames, and files written and read with many
//! requests outstanding at once (as OpenSSH's sftp does), within a window of
//! requests the caller shares between files. Paths are UTF-8 strings here
//! (the crate's types: a name the server sends that is not UTF-8 arrives
//! changed, which [`maybe_not_utf8`] tells); every failure is an
//! [`SshError::Sftp`] that says what was being done, to which path, and
//! why.

use std::sync::Arc;

use russh_sftp::client::RawSftpSession;
use russh_sftp::client::error::Error as RawError;
use russh_sftp::protocol::{FileAttributes, OpenFlags, StatusCode};

use crate::connect::Connection;

mod channel;
mod pipe;
use crate::error::{SftpProblem, SshError};
pub use pipe::{Reader, Writer};

/// How long one request may wait for its answer before the host is taken
/// for gone.
const REQUEST_TIMEOUT_S: u64 = 60;

/// The largest piece written or read per request when the server states
/// its limits (`limits@openssh.com`: OpenSSH's sftp-server takes 255 KiB):
/// fewer, larger requests cost the server less per byte. The answer to a
/// read of this much still fits the client's 256 KiB packet bound.
const MAX_CHUNK: u64 = 255 * 1024;

/// The piece for a server that does not state its limits: 32 KiB, which
/// every server must take.
const SAFE_CHUNK: u64 = 32 * 1024;

/// What a path is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A regular file.
    File,
    /// A directory.
    Dir,
    /// A symbolic link.
    Symlink,
    /// Anything else: a FIFO, a socket, a device.
    Other,
}

/// A path's attributes, as the server gives them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Attrs {
    /// Its kind.
    pub kind: Kind,
    /// Its size in bytes.
    pub size: u64,
    /// Its permission bits (`0o7777`).
    pub mode: u32,
    /// Its modification time (seconds since the epoch).
    pub mtime: Option<u32>,
}

impl From<&FileAttributes> for Attrs {
    fn from(a: &FileAttributes) -> Attrs {
        let full = a.permissions.unwrap_or(0);
        let kind = match full & 0o170000 {
            0o100000 => Kind::File,
            0o040000 => Kind::Dir,
            0o120000 => Kind::Symlink,
            _ => Kind::Other,
        };
        Attrs {
            kind,
            size: a.size.unwrap_or(0),
            mode: full & 0o7777,
            mtime: a.mtime,
        }
    }
}

/// True when `name` (from a listing or a link) may not be the name the
/// server has: `russh-sftp` decodes a name that is not UTF-8 lossily, each
/// bad sequence as U+FFFD, so such a name cannot be asked for again; a name
/// that holds U+FFFD itself cannot be told from one.
pub fn maybe_not_utf8(name: &str) -> bool {
    name.contains(char::REPLACEMENT_CHARACTER)
}

/// One name in a directory listing (never `.` or `..`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DirEntry {
    /// The name, as the server sent it (not checked here; see
    /// [`maybe_not_utf8`]).
    pub name: String,
    /// Its attributes (not following a link).
    pub attrs: Attrs,
}

/// An SFTP session on one connection.
pub struct Sftp {
    raw: Arc<RawSftpSession>,
    /// The subsystem's end and why, once it has ended.
    ended: channel::Ended,
    host: String,
    posix_rename: bool,
    chunk: u64,
}

impl std::fmt::Debug for Sftp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sftp")
            .field("host", &self.host)
            .finish_non_exhaustive()
    }
}

impl Connection {
    /// Starts the `sftp` subsystem on a new channel.
    pub async fn sftp(&self) -> Result<Sftp, SshError> {
        let mut channel = self.session_channel(&[]).await?;
        if let Err(e) = channel.request_subsystem(true, "sftp").await {
            return Err(self
                .channel_failed("cannot ask for the SFTP subsystem", e)
                .await);
        }
        loop {
            match channel.wait().await {
                Some(russh::ChannelMsg::Success) => break,
                None if self.is_closed() => {
                    let what = "the connection ended before the SFTP subsystem started";
                    return Err(self.channel_failed(what, russh::Error::Disconnect).await);
                }
                Some(russh::ChannelMsg::Failure) | Some(russh::ChannelMsg::Close) | None => {
                    return Err(self.protocol(
                        "the server has no SFTP subsystem (sshd_config needs `Subsystem sftp …`); \
                         tether cp copies over SFTP only"
                            .into(),
                    ));
                }
                Some(_) => {}
            }
        }
        let config = russh_sftp::client::Config {
            request_timeout_secs: REQUEST_TIMEOUT_S,
            ..Default::default()
        };
        let (stream, ended) = channel::pump(channel);
        let raw = RawSftpSession::new_with_config(stream, config);
        let host = self.host.clone();
        let version = match guarded(&ended, raw.init()).await {
            Ok(v) => v,
            Err(e) => return Err(fail(&host, &ended, "start SFTP", "", e)),
        };
        let has = |name: &str| version.extensions.contains_key(name);
        let mut chunk = SAFE_CHUNK;
        if has("limits@openssh.com")
            && let Ok(l) = raw.limits().await
        {
            chunk = MAX_CHUNK;
            for limit in [l.max_write_len, l.max_read_len] {
                if limit > 0 {
                    chunk = chunk.min(limit);
                }
            }
        }
        Ok(Sftp {
            ended,
            posix_rename: has("posix-rename@openssh.com"),
            raw: Arc::new(raw),
            host,
            chunk,
        })
    }
}

/// `request`'s answer, or an error as soon as the subsystem has ended; a
/// failure that is the session breaking waits (briefly: the server sends
/// it right after) for the subsystem's end, so that its reason is known.
async fn guarded<T>(
    ended: &channel::Ended,
    request: impl std::future::Future<Output = Result<T, RawError>>,
) -> Result<T, RawError> {
    let mut watch = ended.clone();
    let r = tokio::select! {
        biased;
        r = request => r,
        _ = watch.wait_for(Option::is_some) => {
            Err(RawError::UnexpectedBehavior("the SFTP subsystem ended".into()))
        }
    };
    if let Err(RawError::IO(_) | RawError::UnexpectedBehavior(_) | RawError::UnexpectedPacket) = &r
    {
        let _ = tokio::time::timeout(
            std::time::Duration::from_secs(ENDING_S),
            watch.wait_for(|t| matches!(t, Some(channel::Trouble::Ended(_)))),
        )
        .await;
    }
    r
}

/// How long a broken session's end may take to arrive with its reason.
const ENDING_S: u64 = 3;

/// An SFTP failure as the crate's error: once the subsystem has ended,
/// every failure but the server's own answers is that end, with its
/// reason.
fn fail(host: &str, ended: &channel::Ended, op: &str, path: &str, e: RawError) -> SshError {
    let end = ended.borrow().clone();
    let (problem, reason) = match (&e, end) {
        (RawError::Status(_), _) | (_, None) => reason(&e),
        (_, Some(why)) => (SftpProblem::Lost, format!("the SFTP subsystem {why}")),
    };
    let what = if path.is_empty() {
        format!("cannot {op}")
    } else {
        format!("cannot {op} {path}")
    };
    SshError::Sftp {
        host: host.to_owned(),
        what,
        reason,
        problem,
    }
}

/// A failure's kind and words, the subsystem's end aside.
fn reason(e: &RawError) -> (SftpProblem, String) {
    match e {
        RawError::Status(s) => match s.status_code {
            StatusCode::NoSuchFile => (SftpProblem::NotFound, "no such file or directory".into()),
            StatusCode::PermissionDenied => {
                (SftpProblem::PermissionDenied, "permission denied".into())
            }
            StatusCode::OpUnsupported => (
                SftpProblem::Unsupported,
                "the server does not support it".into(),
            ),
            StatusCode::Failure => (
                SftpProblem::Failure,
                "the server reported a failure (a full disk, a read-only file system, \
                 a file too large, a name that exists, or an I/O error)"
                    .into(),
            ),
            _ => (SftpProblem::Other, format!("{e}")),
        },
        RawError::Timeout => (
            SftpProblem::Lost,
            format!("no answer within {REQUEST_TIMEOUT_S} s; the host or its link may be down"),
        ),
        RawError::UnexpectedBehavior(_) | RawError::IO(_) => (
            SftpProblem::Lost,
            format!("the SFTP session ended ({e}); the host or its sftp-server may have died"),
        ),
        _ => (SftpProblem::Other, e.to_string()),
    }
}

/// Attributes that set `mode` and, when given, the times.
fn set_attrs(mode: Option<u32>, mtime: Option<u32>) -> FileAttributes {
    let mut a = FileAttributes::empty();
    a.permissions = mode;
    if let Some(t) = mtime {
        a.atime = Some(t);
        a.mtime = Some(t);
    }
    a
}

impl Sftp {
    pub(super) fn fail(&self, op: &str, path: &str, e: RawError) -> SshError {
        fail(&self.host, &self.ended, op, path, e)
    }

    /// `request`'s answer, or an error as soon as the subsystem ended.
    pub(super) async fn ask<T>(
        &self,
        request: impl std::future::Future<Output = Result<T, RawError>>,
    ) -> Result<T, RawError> {
        guarded(&self.ended, request).await
    }

    /// The piece size for writes and reads.
    pub fn chunk(&self) -> usize {
        usize::try_from(self.chunk).unwrap_or(32 * 1024)
    }

    /// `path`'s attributes, following links; `None` when it does not exist.
    pub async fn stat(&self, path: &str) -> Result<Option<Attrs>, SshError> {
        match self.ask(self.raw.stat(path)).await {
            Ok(a) => Ok(Some(Attrs::from(&a.attrs))),
            Err(RawError::Status(s)) if s.status_code == StatusCode::NoSuchFile => Ok(None),
            Err(e) => Err(self.fail("look at", path, e)),
        }
    }

    /// `path`'s own attributes (a link is a link); `None` when it does not
    /// exist.
    pub async fn lstat(&self, path: &str) -> Result<Option<Attrs>, SshError> {
        match self.ask(self.raw.lstat(path)).await {
            Ok(a) => Ok(Some(Attrs::from(&a.attrs))),
            Err(RawError::Status(s)) if s.status_code == StatusCode::NoSuchFile => Ok(None),
            Err(e) => Err(self.fail("look at", path, e)),
        }
    }

    /// Creates the directory `path` with `mode` (the server's umask applies).
    pub async fn mkdir(&self, path: &str, mode: u32) -> Result<(), SshError> {
        self.ask(self.raw.mkdir(path, set_attrs(Some(mode), None)))
            .await
            .map(drop)
            .map_err(|e| self.fail("create the directory", path, e))
    }

    /// Sets `path`'s mode and, when given, its times (following links).
    pub async fn set(
        &self,
        path: &str,
        mode: Option<u32>,
        mtime: Option<u32>,
    ) -> Result<(), SshError> {
        self.ask(self.raw.setstat(path, set_attrs(mode, mtime)))
            .await
            .map(drop)
            .map_err(|e| self.fail("set the mode or time of", path, e))
    }

    /// Makes `link` a symbolic link to `target`.
    pub async fn symlink(&self, link: &str, target: &str) -> Result<(), SshError> {
        // OpenSSH's sftp-server takes the target first (its documented
        // deviation from the draft), and it is the server everyone runs;
        // russh-sftp sends its first field first.
        self.ask(self.raw.symlink(target, link))
            .await
            .map(drop)
            .map_err(|e| self.fail("create the link", link, e))
    }

    /// What the link `path` points to (see [`maybe_not_utf8`]).
    pub async fn readlink(&self, path: &str) -> Result<String, SshError> {
        let name = self
            .ask(self.raw.readlink(path))
            .await
            .map_err(|e| self.fail("read the link", path, e))?;
        Ok(name
            .files
            .into_iter()
            .next()
            .map(|f| f.filename)
            .unwrap_or_default())
    }

    /// Renames `from` to `to`, replacing `to` at once when it exists
    /// (`posix-rename@openssh.com`); a server without it gets `to` removed
    /// first, so there is a moment without it.
    pub async fn rename_over(&self, from: &str, to: &str) -> Result<(), SshError> {
        let r = if self.posix_rename {
            let mut data = Vec::with_capacity(8 + from.len() + to.len());
            for s in [from, to] {
                data.extend_from_slice(&u32::try_from(s.len()).unwrap_or(u32::MAX).to_be_bytes());
                data.extend_from_slice(s.as_bytes());
            }
            match self
                .ask(self.raw.extended("posix-rename@openssh.com", data))
                .await
            {
                Ok(russh_sftp::protocol::Packet::Status(s)) if s.status_code == StatusCode::Ok => {
                    Ok(())
                }
                Ok(russh_sftp::protocol::Packet::Status(s)) => Err(RawError::Status(s)),
                Ok(_) => Err(RawError::UnexpectedPacket),
                Err(e) => Err(e),
            }
        } else {
            if let Ok(Some(a)) = self.lstat(to).await
                && a.kind != Kind::Dir
            {
                let _ = self.ask(self.raw.remove(to)).await;
            }
            self.ask(self.raw.rename(from, to)).await.map(drop)
        };
        r.map_err(|e| self.fail("put in place", to, e))
    }

    /// Removes the file or link `path`.
    pub async fn remove(&self, path: &str) -> Result<(), SshError> {
        self.ask(self.raw.remove(path))
            .await
            .map(drop)
            .map_err(|e| self.fail("remove", path, e))
    }

    /// Every name in the directory `path` but `.` and `..`.
    pub async fn read_dir(&self, path: &str) -> Result<Vec<DirEntry>, SshError> {
        let handle = self
            .ask(self.raw.opendir(path))
            .await
            .map_err(|e| self.fail("list", path, e))?
            .handle;
        let mut all = Vec::new();
        let listed = loop {
            match self.ask(self.raw.readdir(handle.as_str())).await {
                Ok(name) => all.extend(
                    name.files
                        .into_iter()
                        .filter(|f| f.filename != "." && f.filename != "..")
                        .map(|f| DirEntry {
                            attrs: Attrs::from(&f.attrs),
                            name: f.filename,
                        }),
                ),
                Err(RawError::Status(s)) if s.status_code == StatusCode::Eof => break Ok(all),
                Err(e) => break Err(self.fail("list", path, e)),
            }
        };
        let _ = self.ask(self.raw.close(handle)).await;
        listed
    }

    /// Creates `path` (which must not exist) for writing, with `mode` (the
    /// server's umask applies).
    pub async fn create(&self, path: &str, mode: u32) -> Result<Handle, SshError> {
        let flags = OpenFlags::CREATE | OpenFlags::EXCLUDE | OpenFlags::WRITE;
        let h = self
            .ask(self.raw.open(path, flags, set_attrs(Some(mode), None)))
            .await
            .map_err(|e| self.fail("create", path, e))?;
        Ok(Handle {
            handle: Arc::from(h.handle),
            path: path.to_owned(),
        })
    }

    /// Opens `path` for reading.
    pub async fn open(&self, path: &str) -> Result<Handle, SshError> {
        let h = self
            .ask(
                self.raw
                    .open(path, OpenFlags::READ, FileAttributes::empty()),
            )
            .await
            .map_err(|e| self.fail("open", path, e))?;
        Ok(Handle {
            handle: Arc::from(h.handle),
            path: path.to_owned(),
        })
    }

    /// Sets an open file's mode and, when given, its times.
    pub async fn fset(
        &self,
        h: &Handle,
        mode: Option<u32>,
        mtime: Option<u32>,
    ) -> Result<(), SshError> {
        self.ask(self.raw.fsetstat(h.handle.as_ref(), set_attrs(mode, mtime)))
            .await
            .map(drop)
            .map_err(|e| self.fail("set the mode or time of", &h.path, e))
    }

    /// Closes a file (for a written one, the server's last word on it).
    pub async fn close(&self, h: Handle) -> Result<(), SshError> {
        self.ask(self.raw.close(h.handle.as_ref()))
            .await
            .map(drop)
            .map_err(|e| self.fail("close", &h.path, e))
    }
}

/// An open remote file.
#[derive(Debug)]
pub struct Handle {
    handle: Arc<str>,
    path: String,
}
