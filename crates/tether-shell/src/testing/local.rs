//! A place like this machine's for the fake shell (see [`super`]).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use tether_term::Redactor;
use tether_transport::{BoxFuture, Terminal};

use super::FakeHost;
use crate::dialect::Dialect;
use crate::error::ShellError;
use crate::place::{Echo, Place, ShellStart, Staged, SyntaxCheck};
use crate::pump::Shared;
use crate::secrets::Secrets;

/// A place like this machine: the fake shell's terminal shows its
/// foreground (as the kernel shows a local PTY's), so readiness and
/// interrupts take the local paths (`reading_terminal`, INT, TERM, KILL
/// to the verified foreground); its files are kept in the host's memory.
pub(crate) struct FakeLocal {
    host: FakeHost,
    dir: PathBuf,
}

impl FakeLocal {
    /// The place, with its files and terminals kept by `host`.
    pub(crate) fn new(host: &FakeHost) -> FakeLocal {
        FakeLocal {
            host: host.clone(),
            dir: PathBuf::from("/fake/local/s1"),
        }
    }
}

impl Place for FakeLocal {
    fn host_name(&self) -> Option<&str> {
        None
    }

    fn dir(&self) -> &Path {
        &self.dir
    }

    fn remote_dir(&self) -> Option<&Path> {
        None
    }

    fn cannot_enter(&self, _dir: &Path) -> Option<String> {
        None
    }

    fn remove_file<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, ()> {
        self.host.world().files.remove(path);
        Box::pin(async {})
    }

    fn write_files(&self, files: Vec<(PathBuf, Vec<u8>)>) -> BoxFuture<'_, Result<(), ShellError>> {
        self.host.world().files.extend(files);
        Box::pin(async { Ok(()) })
    }

    fn inline_command(&self, _: &dyn Dialect, _: &Path, _: &str) -> Option<String> {
        None
    }

    fn write_command(
        &self,
        file: PathBuf,
        text: String,
        _deadline: std::time::Instant,
    ) -> BoxFuture<'_, Result<Staged, ShellError>> {
        self.host.world().files.insert(file, text.into_bytes());
        Box::pin(async { Ok(Staged::Written) })
    }

    fn command_over(&self) {}

    fn learn_exports<'a>(&'a self, _secrets: &'a Secrets) -> BoxFuture<'a, Option<Redactor>> {
        Box::pin(async { None })
    }

    fn open_terminal<'a>(
        &'a self,
        start: ShellStart<'a>,
    ) -> BoxFuture<'a, Result<Arc<dyn Terminal>, ShellError>> {
        let opened = self.host.open(start.size, true).map_err(ShellError::from);
        Box::pin(async move { opened })
    }

    fn check_syntax<'a>(
        &'a self,
        _check: SyntaxCheck<'a>,
    ) -> BoxFuture<'a, Result<String, ShellError>> {
        Box::pin(async { Ok(String::new()) })
    }

    fn echo(&self) -> Arc<dyn Echo> {
        Arc::new(NoEcho)
    }
}

/// Echo that never changes (no person attaches in these tests).
struct NoEcho;

impl Echo for NoEcho {
    fn set(&self, _on: bool, _terminal: &dyn Terminal, _shared: &Arc<Shared>) -> bool {
        false
    }
}
