//! What a push sends, found before any host is reached: each local source
//! walked once (directories with `-r`, links kept as links inside a tree,
//! special files noted and skipped), so a missing source or a directory
//! without `-r` is one error and nothing is written anywhere.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use super::names::NOT_UTF8_HELP;
use crate::ClusterError;

/// One thing to create on each host.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum What {
    /// A directory (created before what it holds; its mode and time set
    /// after).
    Dir {
        /// Permission bits.
        mode: u32,
        /// Modification time.
        mtime: u32,
    },
    /// A regular file.
    File {
        /// Its size when walked.
        size: u64,
        /// Permission bits.
        mode: u32,
        /// Modification time.
        mtime: u32,
    },
    /// A symbolic link, copied as a link.
    Link {
        /// What it points to.
        target: String,
    },
}

/// One entry of the plan.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// Which source it belongs to (an index into [`Plan::roots`]).
    pub root: usize,
    /// Its path under that source (`""` for the source itself).
    pub rel: String,
    /// Where it is here.
    pub local: PathBuf,
    /// What it is.
    pub what: What,
}

/// The sources of a push, walked.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Plan {
    /// Each source's name (its last component), in the order given.
    pub roots: Vec<String>,
    /// Every entry, each directory before what it holds.
    pub entries: Vec<Entry>,
    /// The bytes of all files.
    pub bytes: u64,
    /// The number of files.
    pub files: u64,
    /// What was skipped, one note each (special files in a tree).
    pub skipped: Vec<String>,
}

fn bad(path: &Path, problem: impl Into<String>) -> ClusterError {
    ClusterError::CopySource {
        path: path.to_path_buf(),
        problem: problem.into(),
    }
}

fn utf8_name(path: &Path, name: &std::ffi::OsStr) -> Result<String, ClusterError> {
    name.to_str()
        .map(str::to_owned)
        .ok_or_else(|| bad(path, format!("its name is not UTF-8, and {NOT_UTF8_HELP}")))
}

fn mtime(m: &std::fs::Metadata) -> u32 {
    u32::try_from(m.mtime().max(0)).unwrap_or(u32::MAX)
}

fn kind_name(ft: std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if ft.is_fifo() {
        "a FIFO"
    } else if ft.is_socket() {
        "a socket"
    } else if ft.is_block_device() {
        "a block device"
    } else if ft.is_char_device() {
        "a character device"
    } else {
        "not a file, directory or link"
    }
}

impl Plan {
    /// Walks `sources` (each followed when it is a link itself; `-r` walks
    /// directories). Any source that cannot be copied is an error.
    pub fn walk(sources: &[PathBuf], recursive: bool) -> Result<Plan, ClusterError> {
        let mut plan = Plan::default();
        for src in sources {
            let meta = std::fs::metadata(src).map_err(|e| match e.kind() {
                std::io::ErrorKind::NotFound => bad(src, "no such file or directory"),
                _ => bad(src, e.to_string()),
            })?;
            let name = match src.file_name() {
                Some(n) => utf8_name(src, n)?,
                None => {
                    return Err(bad(
                        src,
                        "it has no name to give the copy (name the directory itself, not `.`, `..` or `/`)",
                    ));
                }
            };
            if plan.roots.contains(&name) {
                return Err(bad(src, format!("another source is also named {name:?}")));
            }
            let root = plan.roots.len();
            plan.roots.push(name);
            if meta.is_dir() {
                if !recursive {
                    return Err(bad(src, "it is a directory: use -r to copy directories"));
                }
                plan.dir(root, String::new(), src, &meta)?;
            } else if meta.is_file() {
                plan.file(root, String::new(), src, &meta);
            } else {
                return Err(bad(
                    src,
                    format!(
                        "it is {}: only files, directories and links are copied",
                        kind_name(meta.file_type())
                    ),
                ));
            }
        }
        Ok(plan)
    }

    fn file(&mut self, root: usize, rel: String, local: &Path, m: &std::fs::Metadata) {
        self.bytes += m.len();
        self.files += 1;
        self.entries.push(Entry {
            root,
            rel,
            local: local.to_path_buf(),
            what: What::File {
                size: m.len(),
                mode: m.permissions().mode() & 0o7777,
                mtime: mtime(m),
            },
        });
    }

    fn dir(
        &mut self,
        root: usize,
        rel: String,
        local: &Path,
        m: &std::fs::Metadata,
    ) -> Result<(), ClusterError> {
        self.entries.push(Entry {
            root,
            rel: rel.clone(),
            local: local.to_path_buf(),
            what: What::Dir {
                mode: m.permissions().mode() & 0o7777,
                mtime: mtime(m),
            },
        });
        let mut children: Vec<(String, PathBuf)> = Vec::new();
        for e in std::fs::read_dir(local).map_err(|e| bad(local, e.to_string()))? {
            let e = e.map_err(|e| bad(local, e.to_string()))?;
            let path = e.path();
            children.push((utf8_name(&path, &e.file_name())?, path));
        }
        children.sort();
        for (name, path) in children {
            let rel = if rel.is_empty() {
                name
            } else {
                format!("{rel}/{name}")
            };
            let m = std::fs::symlink_metadata(&path).map_err(|e| bad(&path, e.to_string()))?;
            let ft = m.file_type();
            if ft.is_symlink() {
                let target = std::fs::read_link(&path).map_err(|e| bad(&path, e.to_string()))?;
                let target = target
                    .to_str()
                    .ok_or_else(|| {
                        bad(
                            &path,
                            format!("the link's target is not UTF-8, and {NOT_UTF8_HELP}"),
                        )
                    })?
                    .to_owned();
                self.entries.push(Entry {
                    root,
                    rel,
                    local: path,
                    what: What::Link { target },
                });
            } else if ft.is_dir() {
                self.dir(root, rel, &path, &m)?;
            } else if ft.is_file() {
                self.file(root, rel, &path, &m);
            } else {
                self.skipped.push(format!(
                    "skipped {}: {} (special files are not copied)",
                    path.display(),
                    kind_name(ft)
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trees_are_walked_in_order_with_links_and_special_files_noted() {
        let dir = std::env::temp_dir().join(format!("tether-plan-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("t/sub/empty")).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(dir.join("t/b"), "bb").unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(dir.join("t/sub/a"), "a").unwrap_or_else(|e| panic!("{e}"));
        std::os::unix::fs::symlink("sub/a", dir.join("t/l")).unwrap_or_else(|e| panic!("{e}"));
        let fifo = dir.join("t/fifo");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        let plan = Plan::walk(&[dir.join("t")], true).unwrap_or_else(|e| panic!("{e}"));
        let rels: Vec<&str> = plan.entries.iter().map(|e| e.rel.as_str()).collect();
        assert_eq!(rels, ["", "b", "l", "sub", "sub/a", "sub/empty"]);
        assert_eq!((plan.bytes, plan.files), (3, 2));
        assert_eq!(
            plan.entries[2].what,
            What::Link {
                target: "sub/a".into()
            }
        );
        if made.is_ok_and(|s| s.success()) {
            assert_eq!(plan.skipped.len(), 1, "{:?}", plan.skipped);
            assert!(plan.skipped[0].contains("a FIFO"), "{:?}", plan.skipped);
        }
        let e = Plan::walk(&[dir.join("t")], false).unwrap_err();
        assert!(e.to_string().contains("use -r"), "{e}");
        let e = Plan::walk(&[dir.join("missing")], true).unwrap_err();
        assert!(e.to_string().contains("no such file"), "{e}");
        let e = Plan::walk(&[dir.join("t/b"), dir.join("t/sub/../b")], true).unwrap_err();
        assert!(e.to_string().contains("also named"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
