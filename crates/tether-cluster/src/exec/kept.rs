//! A host's whole output, kept for `--output gather|json|dir` and MCP:
//! the first [`MEMORY_CAP`] bytes in memory, the rest in a private file
//! (no name, mode 0600, gone when the last copy is dropped), so a hundred
//! hosts printing 30 MB each cost disk, not memory. Read back in pieces.

use std::fs::File;
use std::io::{self, Read};
use std::os::unix::fs::FileExt;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// Bytes of one stream of one host held in memory before the rest goes
/// to the run's spill file.
pub const MEMORY_CAP: usize = 1 << 20;

/// Bytes of all the hosts' streams of one run held in memory at most;
/// past it every stream spills.
pub const RUN_MEMORY_CAP: usize = 32 << 20;

/// The spill file and its length, or the failure to make it.
type SpillState = Result<(Arc<File>, u64), ()>;

/// One run's spill file, shared by its hosts (one descriptor however
/// many hosts spill): created when first needed, appended to, read back
/// by offset; it has no name and goes when the last [`Kept`] is dropped.
#[derive(Debug, Default)]
pub struct Spill {
    /// The file and its length, once made (`Err`: it could not be).
    file: Mutex<Option<SpillState>>,
    /// Bytes held in memory by the run's streams.
    in_memory: AtomicUsize,
}

impl Spill {
    /// A run's spill, nothing in it yet.
    pub fn new() -> Arc<Spill> {
        Arc::new(Spill::default())
    }

    /// Appends `bytes`: the file and where they went, or `None` when the
    /// file cannot be made or written.
    fn append(&self, bytes: &[u8]) -> Option<(Arc<File>, u64)> {
        let mut guard = self.file.lock().unwrap_or_else(|p| p.into_inner());
        let state =
            guard.get_or_insert_with(|| private_file().map(|f| (Arc::new(f), 0)).map_err(|_| ()));
        let Ok((file, end)) = state else {
            return None;
        };
        let at = *end;
        file.write_all_at(bytes, at).ok()?;
        *end += bytes.len() as u64;
        Some((Arc::clone(file), at))
    }
}

/// One stream's bytes, in memory and then in the run's spill file.
#[derive(Clone, Default)]
pub struct Kept {
    head: Vec<u8>,
    /// The run's spill, where bytes past the caps go.
    spill: Option<Arc<Spill>>,
    /// The spill file, once used, and this stream's pieces in it
    /// (offset, length), in order.
    file: Option<Arc<File>>,
    pieces: Vec<(u64, u64)>,
    /// Bytes that could not be kept (the spill file could not be made or
    /// written: a full disk).
    lost: u64,
}

impl Kept {
    /// Bytes held in memory only (tests, small outputs).
    pub fn from_bytes(bytes: &[u8]) -> Kept {
        Kept {
            head: bytes.to_vec(),
            ..Kept::default()
        }
    }

    /// An empty stream that spills into `spill` past the caps.
    pub fn spilling_to(spill: &Arc<Spill>) -> Kept {
        Kept {
            spill: Some(Arc::clone(spill)),
            ..Kept::default()
        }
    }

    /// Appends `bytes`: in memory up to [`MEMORY_CAP`] (while the run
    /// holds less than [`RUN_MEMORY_CAP`]), then to the spill file.
    pub fn push(&mut self, mut bytes: &[u8]) {
        let Some(spill) = &self.spill else {
            self.head.extend_from_slice(bytes);
            return;
        };
        if self.pieces.is_empty() && self.lost == 0 {
            let run_room = RUN_MEMORY_CAP.saturating_sub(spill.in_memory.load(Ordering::Relaxed));
            let now = (MEMORY_CAP - self.head.len().min(MEMORY_CAP))
                .min(run_room)
                .min(bytes.len());
            self.head.extend_from_slice(&bytes[..now]);
            spill.in_memory.fetch_add(now, Ordering::Relaxed);
            bytes = &bytes[now..];
        }
        if bytes.is_empty() {
            return;
        }
        match spill.append(bytes) {
            Some((file, at)) => {
                let len = bytes.len() as u64;
                match self.pieces.last_mut() {
                    Some((start, n)) if *start + *n == at => *n += len,
                    _ => self.pieces.push((at, len)),
                }
                self.file = Some(file);
            }
            None => self.lost += bytes.len() as u64,
        }
    }

    /// Bytes kept.
    pub fn len(&self) -> u64 {
        self.head.len() as u64 + self.pieces.iter().map(|p| p.1).sum::<u64>()
    }

    /// True when nothing was kept.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes that could not be kept (the spill file could not be made or
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
            "Kept({} bytes, {} in memory, {} lost)",
            self.len(),
            self.head.len(),
            self.lost
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
        let Some(file) = &self.kept.file else {
            return Ok(0);
        };
        // The piece `at` falls in.
        let mut skip = self.at - head;
        for &(start, len) in &self.kept.pieces {
            if skip >= len {
                skip -= len;
                continue;
            }
            let want = usize::try_from(len - skip)
                .unwrap_or(usize::MAX)
                .min(buf.len());
            let n = file.read_at(&mut buf[..want], start + skip)?;
            if n == 0 {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "the spill file is shorter than what was written to it",
                ));
            }
            self.at += n as u64;
            return Ok(n);
        }
        Ok(0)
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
        let spill = Spill::new();
        let mut k = Kept::spilling_to(&spill);
        let mut interleaved = Kept::spilling_to(&spill);
        let piece: Vec<u8> = (0..=255u8).cycle().take(300_000).collect();
        for _ in 0..5 {
            k.push(&piece);
            interleaved.push(&piece);
        }
        assert_eq!(k.len(), 1_500_000);
        assert!(k.file.is_some() && k.pieces.len() > 1, "{:?}", k.pieces);
        assert!(interleaved.same_as(&k));
        let all = k.to_vec().unwrap();
        assert_eq!(all.len(), 1_500_000);
        assert!(all.chunks(300_000).all(|c| c == piece.as_slice()));
        let copy = k.clone();
        assert!(copy.same_as(&k));
        let mut other = Kept::spilling_to(&spill);
        other.push(&all[..all.len() - 1]);
        other.push(b"?");
        assert!(!other.same_as(&k));
        assert!(Kept::from_bytes(b"ab").same_as(&Kept::from_bytes(b"ab")));
    }
}
