//! After an end mark, the session learns the secret-named values it
//! exported (the snapshot the shell writes, read as its place reads it; a
//! shell of another user writes its own in its own directory), so the
//! command that set them gets its own result redacted with them.

use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use super::Session;

/// The most of a snapshot read from another user's directory.
const SNAPSHOT_MAX: u64 = 16 << 20;

impl Session {
    /// After an end mark: learns the secret-named values the session has
    /// exported, and redacts the current command's output with them too.
    pub(super) async fn learn_exports(&mut self) {
        let redactor = match self.level_dir() {
            Some(dir) => snapshot_in(dir).and_then(|s| self.redactor.learn(&s)),
            None => self.place.learn_exports(&self.redactor).await,
        };
        if let Some(redactor) = redactor {
            self.shared.lock().learn(&redactor);
        }
    }
}

/// The exports snapshot a shell of another user wrote in `dir`: a regular
/// file, never followed through a link that user may have planted.
fn snapshot_in(dir: &Path) -> Option<Vec<u8>> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        // A FIFO put there does not block the read.
        .custom_flags((nix::fcntl::OFlag::O_NOFOLLOW | nix::fcntl::OFlag::O_NONBLOCK).bits())
        .open(dir.join("env"))
        .ok()?;
    if !file.metadata().ok()?.is_file() {
        return None;
    }
    let mut bytes = Vec::new();
    file.take(SNAPSHOT_MAX).read_to_end(&mut bytes).ok()?;
    Some(bytes)
}
