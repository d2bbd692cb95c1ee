//! A local session's files on the command path, reached through the
//! session directory's descriptor, proven private once when the session
//! starts (the directory is the user's alone, so nobody can swap it
//! afterwards): a command file costs a create, a write and a removal, not
//! a new walk from the root each time; and the exports snapshot the shell
//! rewrites at every end mark (`>|` truncates the same file) is read
//! through a descriptor kept open.

use std::fs::File;
use std::os::unix::fs::{FileExt, MetadataExt};

use crate::error::ShellError;
use crate::private::PrivateDir;

/// The snapshot's name in the session directory (the dialects write it).
const ENV: &str = "env";

/// The files of a local session.
#[derive(Debug)]
pub(crate) struct LocalFiles {
    dir: PrivateDir,
    /// The last command's file name, while the shell may still read it.
    last_command: Option<String>,
    /// The exports snapshot, open; reopened when it was replaced.
    env: Option<File>,
    /// The last snapshot read (its buffer is reused).
    snapshot: Vec<u8>,
}

impl LocalFiles {
    pub(crate) fn new(dir: PrivateDir) -> Self {
        LocalFiles {
            dir,
            last_command: None,
            env: None,
            snapshot: Vec::new(),
        }
    }

    /// Writes a command's file `name`, to be removed once the next
    /// command starts (the shell has read it by then).
    pub(crate) fn write_command(&mut self, name: &str, bytes: &[u8]) -> Result<(), ShellError> {
        self.dir.write_new(name, bytes)?;
        self.last_command = Some(name.to_owned());
        Ok(())
    }

    /// Removes the last command's file: call when no command is in flight,
    /// so a session holds one at most.
    pub(crate) fn remove_last_command(&mut self) {
        if let Some(name) = self.last_command.take() {
            self.dir.remove(&name);
        }
    }

    /// The exports snapshot as the shell last wrote it, `None` when there
    /// is none (yet).
    pub(crate) fn read_env(&mut self) -> Option<&[u8]> {
        // Removed or replaced (no name left): open the new one.
        let size = match self.env.as_ref().map(File::metadata) {
            Some(Ok(m)) if m.nlink() > 0 => m.len(),
            _ => {
                let file = self.dir.open_regular(ENV)?;
                let size = file.metadata().ok()?.len();
                self.env = Some(file);
                size
            }
        };
        let file = self.env.as_ref()?;
        // One byte more than its size: a short read is the end of it.
        let mut want = usize::try_from(size).ok()?.saturating_add(1);
        loop {
            self.snapshot.resize(want, 0);
            let n = file.read_at(&mut self.snapshot, 0).ok()?;
            if n < want {
                self.snapshot.truncate(n);
                return Some(&self.snapshot);
            }
            // It grew meanwhile.
            want = want.saturating_mul(2);
        }
    }
}
