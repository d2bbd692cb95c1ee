//! A host's whole output, kept for `--output gather|json|dir` and MCP:
//! the first [`MEMORY_CAP`] bytes in memory, the rest in a private file
//! (no name, mode 0600, gone when the last copy is dropped), so a hundred
//! hosts printing 30 MB each cost disk, not memory. Read back in pieces.

use std::fs::File;
use std::io::{self, Read};
use std::os::unix::fs::FileExt;
use std::sync::Arc;

/// Bytes of one stream of one host held in memory before the rest goes
/// to a file.
pub const MEMORY_CAP: usize = 1 << 20;

/// One stream's bytes, in memory and then in a private file.
#[derive(Clone, Default)]
pub struct Kept {
    head: Vec<u8>,
    /// The bytes past the cap, and how many.
    spill: Option<(Arc<File>, u64)>,
    /// Set when the file could not be written: the bytes lost.
    lost: u64,
}

impl Kept {
    /// Bytes held in memory only (tests, small outputs).
    pub fn from_bytes(bytes: &[u8]) -> Kept {
        let mut k = Kept::default();
        k.push(bytes);
        k
    }

    /// Appends `bytes`, to the file once memory holds [`MEMORY_CAP`].
    pub fn push(&mut self, mut bytes: &[u8]) {
        if self.spill.is_none() {
            let room = MEMORY_CAP - self.head.len();
            let now = room.min(bytes.len());
            self.head.extend_from_slice(&bytes[..now]);
            bytes = &bytes[now..];
            if bytes.is_empty() {
                return;
            }
            match private_file() {
                Ok(f) => self.spill = Some((Arc::new(f), 0)),
                Err(_) => {
                    self.lost += bytes.len() as u64;
                    return;
                }
            }
        }
        if let Some((file, len)) = &mut self.spill {
            if file.write_all_at(bytes, *len).is_ok() {
                *len += bytes.len() as u64;
            } else {
                self.lost += bytes.len() as u64;
            }
        }
    }

    /// Bytes kept.
    pub fn len(&self) -> u64 {
        self.head.len() as u64 + self.spill.as_ref().map_or(0, |s| s.1)
    }

    /// True when nothing was kept.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes that could not be kept (the private file could not be
    /// written: a full disk); 0 normally.
    pub fn lost(&self) -> u64 {
        self.lost
    }

    /// A reader of every byte kept, from the first.
    pub fn reader(&self) -> KeptReader<'_> {
        KeptReader { kept: self, at: 0 }
    }

    /// Calls `f` with every byte kept, in pieces.
    pub fn each(&self, mut f: impl FnMut(&[u8]) -> io::Result<()>) -> io::Result<()> {
        let mut r = self.reader();
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            let n = r.read(&mut buf)?;
            if n == 0 {
                return Ok(());
            }
            f(&buf[..n])?;
        }
    }

    /// Every byte kept, in memory (for what needs it whole: keep to small
    /// outputs).
    pub fn to_vec(&self) -> io::Result<Vec<u8>> {
        let mut v = Vec::with_capacity(usize::try_from(self.len()).unwrap_or(0));
        self.reader().read_to_end(&mut v)?;
        Ok(v)
    }

    /// True when both hold the same bytes (read back to compare; an error
    /// reading counts as different).
    pub fn same_as(&self, other: &Kept) -> bool {
        if self.len() != other.len() || self.lost != other.lost {
            return false;
        }
        let (mut a, mut b) = (self.reader(), other.reader());
        let (mut x, mut y) = (vec![0u8; 64 * 1024], vec![0u8; 64 * 1024]);
        loop {
            let Ok(n) = read_full(&mut a, &mut x) else {
                return false;
            };
            let Ok(m) = read_full(&mut b, &mut y) else {
                return false;
            };
            if n != m || x[..n] != y[..m] {
                return false;
            }
            if n == 0 {
                return true;
            }
        }
    }
}

fn read_full(r: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..])? {
            0 => break,
            k => n += k,
        }
    }
    Ok(n)
}

impl PartialEq for Kept {
    fn eq(&self, other: &Self) -> bool {
        self.same_as(other)
    }
}

impl Eq for Kept {}

impl std::fmt::Debug for Kept {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Kept({} bytes, {} in a file)",
            self.len(),
            self.spill.as_ref().map_or(0, |s| s.1)
        )
    }
}

/// Reads a [`Kept`] from its first byte (the file at an offset of its
/// own, so copies read independently).
pub struct KeptReader<'a> {
    kept: &'a Kept,
    at: u64,
}

impl Read for KeptReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let head = self.kept.head.len() as u64;
        if self.at < head {
            let from = usize::try_from(self.at).unwrap_or(usize::MAX);
            let n = (self.kept.head.len() - from).min(buf.len());
            buf[..n].copy_from_slice(&self.kept.head[from..from + n]);
            self.at += n as u64;
            return Ok(n);
        }
        let Some((file, len)) = &self.kept.spill else {
            return Ok(0);
        };
        let off = self.at - head;
        if off >= *len {
            return Ok(0);
        }
        let want = usize::try_from(len - off)
            .unwrap_or(usize::MAX)
            .min(buf.len());
        let n = file.read_at(&mut buf[..want], off)?;
        self.at += n as u64;
        Ok(n)
    }
}

/// A file only this process can reach: no name (`O_TMPFILE`) in the
/// temporary directory, mode 0600; where the file system cannot, a new
/// file (`O_EXCL`, not through a symlink) removed at once.
fn private_file() -> io::Result<File> {
    use rustix::fs::{Mode, OFlags};
    let dir = std::env::temp_dir();
    let mode = Mode::RUSR | Mode::WUSR;
    match rustix::fs::open(&dir, OFlags::TMPFILE | OFlags::RDWR | OFlags::CLOEXEC, mode) {
        Ok(fd) => return Ok(File::from(fd)),
        Err(e) if e == rustix::io::Errno::OPNOTSUPP || e == rustix::io::Errno::ISDIR => {}
        Err(e) => return Err(e.into()),
    }
    let mut id = [0u8; 12];
    getrandom::fill(&mut id).map_err(|e| io::Error::other(e.to_string()))?;
    let name: String = id.iter().map(|b| format!("{b:02x}")).collect();
    let path = dir.join(format!(".tether-exec-{name}"));
    let fd = rustix::fs::open(
        &path,
        OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::RDWR | OFlags::CLOEXEC,
        mode,
    )?;
    let _ = std::fs::remove_file(&path);
    Ok(File::from(fd))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn past_the_cap_bytes_go_to_a_file_and_read_back_whole() {
        let mut k = Kept::default();
        let piece: Vec<u8> = (0..=255u8).cycle().take(300_000).collect();
        for _ in 0..5 {
            k.push(&piece);
        }
        assert_eq!(k.len(), 1_500_000);
        assert!(k.spill.is_some());
        let all = k.to_vec().unwrap();
        assert_eq!(all.len(), 1_500_000);
        assert!(all.chunks(300_000).all(|c| c == piece.as_slice()));
        let copy = k.clone();
        assert!(copy.same_as(&k));
        let mut other = Kept::from_bytes(&all[..all.len() - 1]);
        other.push(b"?");
        assert!(!other.same_as(&k));
        assert!(Kept::from_bytes(b"ab").same_as(&Kept::from_bytes(b"ab")));
    }
}
