//! A pull from one host into `DIR/HOST/`: each source stat'd, directories
//! walked (with `-r`) and every name in a listing checked before it is
//! used, so a host cannot name a path outside its directory (`../x`, `a/b`);
//! files written under a temporary name and renamed into place; never a
//! write through a link (directories are made and checked to be real
//! directories; a rename replaces a link instead of following it).

use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, UNIX_EPOCH};

use tether_ssh::{Attrs, Kind, maybe_not_utf8};

use super::glob;
use super::names::{self, NOT_UTF8_HELP, safe_name};
use super::tasks::Tasks;
use super::{Ctx, FILES_AT_ONCE};
use crate::exec::HostError;

fn copy_err(m: String) -> HostError {
    HostError::Copy(m)
}

/// `path` on the host, whose name (or link target) is not UTF-8 there.
fn not_utf8(path: &str, what: &str) -> HostError {
    copy_err(format!(
        "{path} on the host: {what} is not UTF-8 there (shown here with U+FFFD), and {NOT_UTF8_HELP}; \
         refusing it and everything after it from this host"
    ))
}

fn local_err(path: &Path, e: std::io::Error) -> HostError {
    copy_err(format!("cannot write {}: {e}", path.display()))
}

/// Makes the local directory `path` (or takes the one there), refusing
/// anything but a real directory: a link there is never followed.
fn local_dir(ctx: &Ctx, path: &Path, mode: u32) -> Result<(), HostError> {
    match std::fs::DirBuilder::new()
        .mode((mode | 0o700) & 0o777)
        .create(path)
    {
        Ok(()) => {
            ctx.dirs.fetch_add(1, Ordering::Relaxed);
            Ok(())
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            match std::fs::symlink_metadata(path) {
                Ok(m) if m.is_dir() => Ok(()),
                _ => Err(copy_err(format!(
                    "{} is there and is not a directory (a file or a link); remove it, or pull into another directory",
                    path.display()
                ))),
            }
        }
        Err(e) => Err(local_err(path, e)),
    }
}

/// Sets an open file's time (when given) and mode (`-p`).
fn keep_attrs(
    file: &std::fs::File,
    path: &Path,
    mode: u32,
    mtime: Option<u32>,
) -> Result<(), HostError> {
    if let Some(t) = mtime {
        let t = UNIX_EPOCH + Duration::from_secs(u64::from(t));
        let times = std::fs::FileTimes::new().set_accessed(t).set_modified(t);
        file.set_times(times).map_err(|e| local_err(path, e))?;
    }
    file.set_permissions(std::fs::Permissions::from_mode(mode & 0o777))
        .map_err(|e| local_err(path, e))
}

/// [`keep_attrs`] for a directory this copy made (still ours to open).
fn keep_dir_attrs(path: &Path, mode: u32, mtime: Option<u32>) -> Result<(), HostError> {
    let dir = std::fs::File::open(path).map_err(|e| local_err(path, e))?;
    keep_attrs(&dir, path, mode, mtime)
}

/// The directory a host's files go to: its name as the node set has it.
fn host_dir(dir: &Path, host: &str) -> Result<PathBuf, HostError> {
    if !safe_name(host) {
        return Err(copy_err(format!(
            "the host name {host:?} cannot name a directory in {}",
            dir.display()
        )));
    }
    Ok(dir.join(host))
}

/// Pulls `sources` from this host into `dir/HOST/`.
pub(super) async fn pull(ctx: &Arc<Ctx>, sources: &[String], dir: &Path) -> Result<(), HostError> {
    let base = host_dir(dir, &ctx.host)?;
    // Patterns become the paths they match on this host.
    let mut paths = Vec::new();
    for src in sources {
        let path = names::remote(src);
        if !glob::has_magic(&path) {
            paths.push((src, path));
            continue;
        }
        let found = expand(ctx, &path).await?;
        if found.is_empty() {
            return Err(copy_err(format!("nothing on the host matches {path}")));
        }
        paths.extend(found.into_iter().map(|p| (src, p)));
    }
    // Every source is looked at before anything is written.
    let mut roots = Vec::new();
    for (src, path) in paths {
        let (_, name) = names::split(&path);
        if !safe_name(&name) {
            return Err(copy_err(format!(
                "{src} has no name to give the copy; name the file or directory itself (not `.`, `..` or `/`)"
            )));
        }
        let Some(attrs) = ctx.sftp.stat(&path).await.map_err(|e| ctx.err(e))? else {
            return Err(copy_err(format!("{path} does not exist on the host")));
        };
        match attrs.kind {
            Kind::Dir if !ctx.opts.recursive => {
                return Err(copy_err(format!(
                    "{path} is a directory on the host: use -r to copy directories"
                )));
            }
            Kind::Other => {
                return Err(copy_err(format!(
                    "{path} is a special file on the host: only files, directories and links are copied"
                )));
            }
            _ => {}
        }
        if roots
            .iter()
            .any(|(_, _, n): &(String, Attrs, String)| *n == name)
        {
            return Err(copy_err(format!(
                "two sources are named {name:?}; pull them in two runs"
            )));
        }
        roots.push((path, attrs, name));
    }
    local_dir(ctx, &base, 0o755)?;
    let mut tasks = Tasks::new(FILES_AT_ONCE);
    let mut dirs = Vec::new();
    // Depth first, each listing in name order: (remote, attrs, local).
    let mut stack: Vec<(String, Attrs, PathBuf)> = roots
        .into_iter()
        .rev()
        .map(|(path, attrs, name)| (path, attrs, base.join(name)))
        .collect();
    while let Some((remote, attrs, local)) = stack.pop() {
        match attrs.kind {
            Kind::File => {
                tasks
                    .spawn(fetch_file(Arc::clone(ctx), remote, attrs, local))
                    .await?;
            }
            Kind::Symlink => {
                tasks
                    .spawn(fetch_link(Arc::clone(ctx), remote, local))
                    .await?
            }
            Kind::Dir => {
                local_dir(ctx, &local, attrs.mode)?;
                let mut listing = ctx.sftp.read_dir(&remote).await.map_err(|e| ctx.err(e))?;
                if let Some(bad) = listing.iter().find(|e| !safe_name(&e.name)) {
                    return Err(copy_err(format!(
                        "the listing of {remote} names {:?}, which is not a name in that directory; \
                         refusing it and everything after it from this host",
                        bad.name
                    )));
                }
                if let Some(bad) = listing.iter().find(|e| maybe_not_utf8(&e.name)) {
                    return Err(not_utf8(&names::join(&remote, &bad.name), "its name"));
                }
                listing.sort_by(|a, b| b.name.cmp(&a.name));
                for e in listing {
                    let child_local = local.join(&e.name);
                    stack.push((names::join(&remote, &e.name), e.attrs, child_local));
                }
                dirs.push((local, attrs));
            }
            Kind::Other => ctx.skip(format!(
                "skipped {remote}: a special file on the host (special files are not copied)"
            )),
        }
    }
    tasks.finish().await?;
    for (local, attrs) in dirs.iter().rev() {
        if ctx.opts.preserve {
            keep_dir_attrs(local, attrs.mode, attrs.mtime)?;
        } else if attrs.mode & 0o700 != 0o700 {
            keep_dir_attrs(local, attrs.mode, None)?;
        }
    }
    Ok(())
}

/// The paths `pattern` matches on this host, each component's matches in
/// name order. A directory that cannot be listed matches nothing; a name
/// that is not a plain name is refused.
async fn expand(ctx: &Ctx, pattern: &str) -> Result<Vec<String>, HostError> {
    let start = if pattern.starts_with('/') { "/" } else { "." };
    let mut found = vec![start.to_owned()];
    for comp in pattern.split('/').filter(|c| !c.is_empty()) {
        let mut next = Vec::new();
        for dir in &found {
            if !glob::has_magic(comp) {
                next.push(names::join(dir, &glob::unescape(comp)));
                continue;
            }
            let listing = match ctx.sftp.read_dir(dir).await {
                Ok(l) => l,
                Err(tether_ssh::SshError::Sftp { problem, .. })
                    if problem != tether_ssh::SftpProblem::Lost =>
                {
                    continue;
                }
                Err(e) => return Err(ctx.err(e)),
            };
            let mut matched: Vec<String> = listing
                .into_iter()
                .map(|e| e.name)
                .filter(|n| glob::matches(comp, n))
                .collect();
            if let Some(bad) = matched.iter().find(|n| !safe_name(n)) {
                return Err(copy_err(format!(
                    "the listing of {dir} names {bad:?}, which is not a name in that directory; \
                     refusing it and everything after it from this host"
                )));
            }
            if let Some(bad) = matched.iter().find(|n| maybe_not_utf8(n)) {
                return Err(not_utf8(&names::join(dir, bad), "its name"));
            }
            matched.sort();
            next.extend(matched.iter().map(|n| names::join(dir, n)));
        }
        found = next;
    }
    Ok(found)
}

/// The temporary path beside `local`, and `local`'s directory.
fn temp_for(local: &Path) -> Result<PathBuf, HostError> {
    let name = local
        .file_name()
        .and_then(|n| n.to_str())
        .ok_or_else(|| copy_err(format!("{} has no name", local.display())))?;
    Ok(local.with_file_name(names::temp_name(name)))
}

async fn fetch_file(
    ctx: Arc<Ctx>,
    remote: String,
    attrs: Attrs,
    local: PathBuf,
) -> Result<(), HostError> {
    let tmp = temp_for(&local)?;
    let tmp_str = tmp.to_string_lossy().into_owned();
    ctx.temp_started(&tmp_str);
    // Created exclusively (never through a link), with the host's mode
    // bits (the umask applies).
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(attrs.mode & 0o777)
        .open(&tmp)
        .map_err(|e| local_err(&tmp, e))?;
    let sftp = &ctx.sftp;
    let h = sftp.open(&remote).await.map_err(|e| ctx.err(e))?;
    let mut reader = sftp.reader(&h, attrs.size, Arc::clone(&ctx.window));
    loop {
        let piece = reader.next().await.map_err(|e| ctx.err(e));
        let piece = match piece {
            Ok(Some(p)) => p,
            Ok(None) => break,
            Err(e) => return Err(e),
        };
        // Written in place: a page-cache write of one piece takes
        // microseconds.
        file.write_all(&piece).map_err(|e| local_err(&tmp, e))?;
        ctx.copied(piece.len());
    }
    drop(reader);
    sftp.close(h).await.map_err(|e| ctx.err(e))?;
    if ctx.opts.preserve {
        keep_attrs(&file, &tmp, attrs.mode, attrs.mtime)?;
    }
    drop(file);
    std::fs::rename(&tmp, &local).map_err(|e| local_err(&local, e))?;
    ctx.temp_done(&tmp_str);
    ctx.files.fetch_add(1, Ordering::Relaxed);
    Ok(())
}

async fn fetch_link(ctx: Arc<Ctx>, remote: String, local: PathBuf) -> Result<(), HostError> {
    let target = ctx.sftp.readlink(&remote).await.map_err(|e| ctx.err(e))?;
    if maybe_not_utf8(&target) {
        return Err(not_utf8(&remote, &format!("the link's target ({target})")));
    }
    let tmp = temp_for(&local)?;
    let tmp_str = tmp.to_string_lossy().into_owned();
    ctx.temp_started(&tmp_str);
    std::os::unix::fs::symlink(&target, &tmp).map_err(|e| local_err(&tmp, e))?;
    std::fs::rename(&tmp, &local).map_err(|e| local_err(&local, e))?;
    ctx.temp_done(&tmp_str);
    ctx.links.fetch_add(1, Ordering::Relaxed);
    Ok(())
}
