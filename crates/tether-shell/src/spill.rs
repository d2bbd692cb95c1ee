//! A session's saved outputs (the spill files) and the cap on the disk
//! they use: when a spill grows past the cap, the oldest other spills are
//! removed first (and the next result says which); a spill that alone
//! would pass the cap is not saved whole (its result says so).

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The default cap on one session's saved output: 64 MiB.
pub const DEFAULT_SPILL_CAP: u64 = 64 << 20;

/// How many removed files a note names (the rest are counted).
const NAMED: usize = 3;

/// The spill files of one session, oldest first, with their sizes.
#[derive(Debug)]
pub struct Spills {
    cap: u64,
    ledger: Mutex<Ledger>,
}

#[derive(Debug, Default)]
struct Ledger {
    files: VecDeque<(PathBuf, u64)>,
    total: u64,
    /// Removed to make room, not yet told.
    removed: Vec<PathBuf>,
}

/// A spill that alone would pass the cap.
#[derive(Debug)]
pub struct OverCap {
    /// The cap it would pass.
    pub cap: u64,
}

impl Spills {
    /// Spills of a session whose saved output may use `cap` bytes.
    pub fn new(cap: u64) -> Spills {
        Spills {
            cap,
            ledger: Mutex::new(Ledger::default()),
        }
    }

    fn ledger(&self) -> std::sync::MutexGuard<'_, Ledger> {
        self.ledger.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Makes room for `n` more bytes of the spill at `path` (the newest
    /// one), removing the oldest others as needed; refuses when `path`
    /// alone would pass the cap (the caller then drops it: [`Spills::forget`]).
    pub fn grow(&self, path: &Path, n: u64) -> Result<(), OverCap> {
        let mut l = self.ledger();
        if !l.files.iter().any(|(p, _)| p == path) {
            l.files.push_back((path.to_path_buf(), 0));
        }
        let own = l.files.iter().find(|(p, _)| p == path).map_or(0, |f| f.1);
        if own.saturating_add(n) > self.cap {
            return Err(OverCap { cap: self.cap });
        }
        while l.total.saturating_add(n) > self.cap {
            let Some(at) = l.files.iter().position(|(p, _)| p != path) else {
                break;
            };
            let Some((old, size)) = l.files.remove(at) else {
                break;
            };
            let _ = std::fs::remove_file(&old);
            l.total -= size;
            l.removed.push(old);
        }
        if let Some(f) = l.files.iter_mut().find(|(p, _)| p == path) {
            f.1 += n;
        }
        l.total += n;
        Ok(())
    }

    /// The spill at `path` now has `len` bytes (rewritten).
    pub fn resized(&self, path: &Path, len: u64) {
        let mut l = self.ledger();
        if let Some(at) = l.files.iter().position(|(p, _)| p == path) {
            let old = std::mem::replace(&mut l.files[at].1, len);
            l.total = l.total - old + len;
        }
    }

    /// The spill at `path` is gone (removed by its owner).
    pub fn forget(&self, path: &Path) {
        let mut l = self.ledger();
        if let Some(at) = l.files.iter().position(|(p, _)| p == path)
            && let Some((_, size)) = l.files.remove(at)
        {
            l.total -= size;
        }
    }

    /// Bytes the session's spills use now.
    pub fn used(&self) -> u64 {
        self.ledger().total
    }

    /// The note for spills removed to make room since the last one, if
    /// any.
    pub fn take_note(&self) -> Option<String> {
        let removed = std::mem::take(&mut self.ledger().removed);
        if removed.is_empty() {
            return None;
        }
        let mut named: Vec<String> = removed
            .iter()
            .take(NAMED)
            .map(|p| p.display().to_string())
            .collect();
        if removed.len() > NAMED {
            named.push(format!("and {} more", removed.len() - NAMED));
        }
        let (count, verb) = match removed.len() {
            1 => ("1 earlier command".to_owned(), "was"),
            n => (format!("{n} earlier commands"), "were"),
        };
        Some(format!(
            "tether: the saved output of {count} {verb} removed to keep this session's saved output within its cap of {} (TETHER_SPILL_CAP): {}",
            size_text(self.cap),
            named.join(", ")
        ))
    }
}

/// A byte count for messages: `1.5 MiB`, `64 MiB`, `900 bytes`.
pub fn size_text(bytes: u64) -> String {
    let units = [(1u64 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")];
    for (unit, name) in units {
        if bytes >= unit {
            let tenths = bytes * 10 / unit;
            return match tenths % 10 {
                0 => format!("{} {name}", tenths / 10),
                d => format!("{}.{d} {name}", tenths / 10),
            };
        }
    }
    format!("{bytes} bytes")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_oldest_go_first_and_a_spill_alone_over_the_cap_is_refused() {
        let dir = std::env::temp_dir().join(format!("tether-spills-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = |n: u32| dir.join(format!("out-{n}.txt"));
        for n in 1..=3 {
            std::fs::write(path(n), b"x").unwrap();
        }
        let s = Spills::new(100);
        s.grow(&path(1), 40).unwrap();
        s.grow(&path(2), 40).unwrap();
        assert_eq!(s.take_note(), None);
        s.grow(&path(3), 30).unwrap();
        assert!(!path(1).exists() && path(2).exists());
        let note = s.take_note().unwrap();
        assert!(note.contains("1 earlier command was") && note.contains("out-1.txt"));
        assert_eq!(s.used(), 70);
        assert!(s.grow(&path(3), 71).is_err());
        assert!(
            path(2).exists(),
            "removed for a spill that cannot fit anyway"
        );
        s.forget(&path(3));
        assert_eq!(s.used(), 40);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn sizes_read_as_people_write_them() {
        assert_eq!(size_text(64 << 20), "64 MiB");
        assert_eq!(size_text(3 << 19), "1.5 MiB");
        assert_eq!(size_text(900), "900 bytes");
    }
}
