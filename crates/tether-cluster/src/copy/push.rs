//! A push to one host: where each source lands (decided from the
//! destination before anything is written), then directories in order,
//! files and links a few at a time, each under a temporary name renamed
//! into place, and the directories' modes and times last.

use std::os::unix::fs::FileExt;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use tether_ssh::Kind;

use super::names::{self, join};
use super::tasks::Tasks;
use super::{Ctx, FILES_AT_ONCE, Plan, What};
use crate::exec::HostError;

fn copy_err(m: String) -> HostError {
    HostError::Copy(m)
}

/// Creates the directory `path` and the missing ones above it.
async fn mkdir_p(ctx: &Ctx, path: &str) -> Result<(), HostError> {
    let mut missing = Vec::new();
    let mut at = path.to_owned();
    loop {
        match ctx.sftp.stat(&at).await.map_err(|e| ctx.err(e))? {
            Some(a) if a.kind == Kind::Dir => break,
            Some(_) => {
                return Err(copy_err(format!(
                    "{at} is not a directory on the host; cannot create {path} under it"
                )));
            }
            None => missing.push(at.clone()),
        }
        let (parent, _) = names::split(&at);
        if parent == at {
            break;
        }
        at = parent;
    }
    for dir in missing.iter().rev() {
        ctx.sftp.mkdir(dir, 0o777).await.map_err(|e| ctx.err(e))?;
        ctx.dirs.fetch_add(1, Ordering::Relaxed);
    }
    Ok(())
}

/// Where the sources land: inside `dest` (a directory), or as `dest`.
async fn target(ctx: &Ctx, plan: &Plan, typed: &str) -> Result<(String, bool), HostError> {
    let dest = names::remote(typed);
    let want_dir = typed.ends_with('/') || plan.roots.len() > 1;
    let root_is_dir = plan
        .entries
        .first()
        .is_some_and(|e| matches!(e.what, What::Dir { .. }));
    let mkdir = ctx.opts.mkdir;
    match ctx.sftp.stat(&dest).await.map_err(|e| ctx.err(e))? {
        Some(a) if a.kind == Kind::Dir => Ok((dest, true)),
        Some(_) if want_dir => Err(copy_err(format!(
            "{dest} is a file on the host, not a directory; name a directory to copy into"
        ))),
        Some(_) if root_is_dir => Err(copy_err(format!(
            "{dest} is a file on the host; a directory cannot replace it (remove it, or name another destination)"
        ))),
        Some(_) => Ok((dest, false)),
        None if want_dir && mkdir => {
            mkdir_p(ctx, &dest).await?;
            Ok((dest, true))
        }
        None if want_dir => Err(copy_err(format!(
            "the directory {dest} does not exist on the host; create it, or pass --mkdir"
        ))),
        None => {
            let (parent, _) = names::split(&dest);
            match ctx.sftp.stat(&parent).await.map_err(|e| ctx.err(e))? {
                Some(a) if a.kind == Kind::Dir => {}
                Some(_) => {
                    return Err(copy_err(format!(
                        "{parent} is a file on the host, not a directory"
                    )));
                }
                None if mkdir => mkdir_p(ctx, &parent).await?,
                None => {
                    return Err(copy_err(format!(
                        "the directory {parent} does not exist on the host; create it, or pass --mkdir"
                    )));
                }
            }
            Ok((dest, false))
        }
    }
}

/// Pushes `plan` to `dest` on this host.
pub(super) async fn push(ctx: &Arc<Ctx>, plan: &Plan, dest: &str) -> Result<(), HostError> {
    let (dest, into) = target(ctx, plan, dest).await?;
    let roots: Vec<String> = plan
        .roots
        .iter()
        .map(|name| {
            if into {
                join(&dest, name)
            } else {
                dest.clone()
            }
        })
        .collect();
    // A file does not replace a directory: said once per source, before
    // anything is written.
    for e in plan.entries.iter().filter(|e| e.rel.is_empty()) {
        if matches!(e.what, What::File { .. })
            && into
            && let Some(a) = ctx
                .sftp
                .lstat(&roots[e.root])
                .await
                .map_err(|er| ctx.err(er))?
            && a.kind == Kind::Dir
        {
            return Err(copy_err(format!(
                "{} is a directory on the host; a file cannot replace it",
                roots[e.root]
            )));
        }
    }
    let mut tasks = Tasks::new(FILES_AT_ONCE);
    let mut dirs = Vec::new();
    for e in &plan.entries {
        let path = if e.rel.is_empty() {
            roots[e.root].clone()
        } else {
            join(&roots[e.root], &e.rel)
        };
        match &e.what {
            What::Dir { mode, mtime } => {
                make_dir(ctx, &path, *mode).await?;
                dirs.push((path, *mode, *mtime));
            }
            What::File { mode, mtime, .. } => {
                let job = send_file(Arc::clone(ctx), e.local.clone(), path, *mode, *mtime);
                tasks.spawn(job).await?;
            }
            What::Link { target } => {
                tasks
                    .spawn(send_link(Arc::clone(ctx), path, target.clone()))
                    .await?;
            }
        }
    }
    tasks.finish().await?;
    // Modes and times last: a directory's time changes as entries are made
    // in it, and a read-only one could not have taken them.
    for (path, mode, mtime) in dirs.iter().rev() {
        if ctx.opts.preserve {
            ctx.sftp
                .set(path, Some(*mode), Some(*mtime))
                .await
                .map_err(|e| ctx.err(e))?;
        } else if mode & 0o700 != 0o700 {
            ctx.sftp
                .set(path, Some(mode & 0o777), None)
                .await
                .map_err(|e| ctx.err(e))?;
        }
    }
    Ok(())
}

/// Makes a directory (writable by us while the copy fills it); one that
/// is there already is used.
async fn make_dir(ctx: &Ctx, path: &str, mode: u32) -> Result<(), HostError> {
    match ctx.sftp.mkdir(path, (mode | 0o700) & 0o777).await {
        Ok(()) => {
            ctx.dirs.fetch_add(1, Ordering::Relaxed);
            Ok(())
        }
        Err(e) => match ctx.sftp.lstat(path).await {
            Ok(Some(a)) if a.kind == Kind::Dir => Ok(()),
            Ok(Some(_)) => Err(copy_err(format!(
                "{path} is a file on the host; a directory cannot replace it"
            ))),
            _ => Err(ctx.err(e)),
        },
    }
}

/// The temporary name beside `path`.
fn temp_for(path: &str) -> String {
    let (dir, name) = names::split(path);
    join(&dir, &names::temp_name(&name))
}

async fn send_file(
    ctx: Arc<Ctx>,
    local: PathBuf,
    path: String,
    mode: u32,
    mtime: u32,
) -> Result<(), HostError> {
    let file = std::fs::File::open(&local)
        .map_err(|e| copy_err(format!("cannot read {}: {e}", local.display())))?;
    let tmp = temp_for(&path);
    ctx.temp_started(&tmp);
    let sftp = &ctx.sftp;
    let h = sftp
        .create(&tmp, mode & 0o777)
        .await
        .map_err(|e| ctx.err(e))?;
    let mut w = sftp.writer(&h, Arc::clone(&ctx.window));
    let chunk = sftp.chunk();
    let mut offset = 0u64;
    loop {
        // Read in place: one piece from the page cache takes microseconds,
        // less than a hop to a blocking pool would.
        let mut buf = vec![0u8; chunk];
        let n = file
            .read_at(&mut buf, offset)
            .map_err(|e| copy_err(format!("cannot read {}: {e}", local.display())))?;
        if n == 0 {
            break;
        }
        buf.truncate(n);
        offset += n as u64;
        w.write(buf).await.map_err(|e| ctx.err(e))?;
        ctx.copied(n);
    }
    w.finish().await.map_err(|e| ctx.err(e))?;
    if ctx.opts.preserve {
        sftp.fset(&h, Some(mode), Some(mtime))
            .await
            .map_err(|e| ctx.err(e))?;
    }
    sftp.close(h).await.map_err(|e| ctx.err(e))?;
    sftp.rename_over(&tmp, &path)
        .await
        .map_err(|e| ctx.err(e))?;
    ctx.temp_done(&tmp);
    ctx.files.fetch_add(1, Ordering::Relaxed);
    Ok(())
}

async fn send_link(ctx: Arc<Ctx>, path: String, target: String) -> Result<(), HostError> {
    let tmp = temp_for(&path);
    ctx.temp_started(&tmp);
    ctx.sftp
        .symlink(&tmp, &target)
        .await
        .map_err(|e| ctx.err(e))?;
    ctx.sftp
        .rename_over(&tmp, &path)
        .await
        .map_err(|e| ctx.err(e))?;
    ctx.temp_done(&tmp);
    ctx.links.fetch_add(1, Ordering::Relaxed);
    Ok(())
}
