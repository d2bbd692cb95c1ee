//! This tether, as a host should have it: the binary to copy (this
//! process's own, read through `/proc/self/exe` where there is one,
//! unless the pool was given another) and its SHA-256,
//! computed once per process and path (a debug build is hundreds of MB).
//! The hash is `ring`'s (already here for russh): its assembly is fast in
//! a debug build too.

use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

/// A binary and its hash.
#[derive(Debug)]
pub(crate) struct Identity {
    /// Where it is here.
    pub path: PathBuf,
    /// Its SHA-256, lower-case hex.
    pub sha256: String,
}

impl Identity {
    /// The first 16 hex digits: the cache's directory for this build.
    pub fn short(&self) -> &str {
        self.sha256.get(..16).unwrap_or(&self.sha256)
    }
}

/// This process's own binary, where the system shows it (Linux).
const SELF_EXE: &str = "/proc/self/exe";

/// The identities computed so far, by path.
static KNOWN: OnceLock<Mutex<HashMap<PathBuf, Arc<Identity>>>> = OnceLock::new();

/// The identity of `path`, or of this process's own binary; the reason it
/// cannot be had (the binary unreadable) otherwise.
pub(crate) async fn identity(path: Option<&Path>) -> Result<Arc<Identity>, String> {
    let path = match path {
        Some(p) => p.to_owned(),
        // The running image itself, even when its file was replaced or
        // removed since (an upgrade, a rebuild): the copy is what runs
        // here, byte for byte.
        None if Path::new(SELF_EXE).exists() => PathBuf::from(SELF_EXE),
        None => std::env::current_exe()
            .map_err(|e| format!("this tether cannot find its own binary: {e}"))?,
    };
    let known = KNOWN.get_or_init(Mutex::default);
    if let Some(id) = known.lock().unwrap_or_else(|p| p.into_inner()).get(&path) {
        return Ok(Arc::clone(id));
    }
    // Two first contacts at once may both hash it: the same answer.
    let at = path.clone();
    let sha256 = tokio::task::spawn_blocking(move || sha256_of(&at))
        .await
        .map_err(|e| format!("hashing this tether's binary failed: {e}"))?
        .map_err(|e| format!("cannot read this tether's binary {}: {e}", path.display()))?;
    let id = Arc::new(Identity {
        path: path.clone(),
        sha256,
    });
    known
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert(path, Arc::clone(&id));
    Ok(id)
}

/// The SHA-256 of the file at `path`, lower-case hex.
pub(crate) fn sha256_of(path: &Path) -> std::io::Result<String> {
    let mut file = std::fs::File::open(path)?;
    let mut ctx = ring::digest::Context::new(&ring::digest::SHA256);
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = match file.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        ctx.update(buf.get(..n).unwrap_or_default());
    }
    Ok(hex(ctx.finish().as_ref()))
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    bytes.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hash_is_sha256_in_hex() {
        let dir = std::env::temp_dir().join(format!("tether-far-id-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("abc");
        std::fs::write(&f, b"abc").unwrap();
        assert_eq!(
            sha256_of(&f).unwrap(),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[tokio::test]
    async fn this_process_is_its_running_image_hashed_once() {
        let id = identity(None).await.unwrap();
        let exe = std::env::current_exe().unwrap();
        assert_eq!(id.sha256, sha256_of(&exe).unwrap());
        assert_eq!(id.short(), &id.sha256[..16]);
        let again = identity(None).await.unwrap();
        assert!(Arc::ptr_eq(&id, &again));
    }
}
