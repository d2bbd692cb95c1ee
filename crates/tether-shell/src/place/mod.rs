//! Where a session's shell lives: this machine ([`local`]) or another one
//! behind a [`RemoteHost`] ([`remote`]). Everything that differs between
//! the two is a behaviour of the [`Place`] here: the shell's directory and
//! its files (a local one's through the directory's descriptor), its
//! terminal, the syntax check, ending its process tree, who sets its line
//! modes, its echo for a person attached, its environment, the exports
//! snapshot. What only one of them can do is an optional capability, a
//! method returning `Option` ([`Place::prober`]: a host's `/proc`). The
//! rest of the engine asks its place and never branches on a host.

mod host;
mod local;
pub(crate) mod look;
pub(crate) mod probe;
mod remote;
mod syntax;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tether_term::Redactor;
use tether_transport::{BoxFuture, RemoteHost, TermSize, Terminal};

use crate::dialect::Dialect;
use crate::error::ShellError;
use crate::private::PrivateDir;
use crate::pump::Shared;
use crate::secrets::Secrets;
use probe::Prober;

pub(crate) use host::end_tree;
pub(crate) use syntax::SyntaxCheck;

/// How a shell is started (the dialect's argv and environment, already
/// resolved).
pub(crate) struct ShellStart<'a> {
    pub(crate) program: &'a str,
    pub(crate) args: &'a [String],
    pub(crate) env: &'a [(String, String)],
    pub(crate) cwd: Option<&'a Path>,
    pub(crate) size: TermSize,
    pub(crate) output_processing: bool,
    /// `program` is a launcher whose one child is the shell (bubblewrap).
    pub(crate) launcher: bool,
}

/// What became of files written before a command is typed.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Staged {
    /// They were written.
    Written,
    /// The host stopped answering past the call's deadline: they were
    /// given up, and nothing was typed.
    LinkHung,
}

/// How long a remote host has to answer a round trip, once something is
/// missing (an interrupt got nothing back, a write outlived its call's
/// deadline), before its link is called hung.
pub(crate) const LINK_GRACE: Duration = Duration::from_secs(5);

/// Where a session's shell runs; see the module docs. The provided
/// methods are this machine's case (the terminal does it all); a host
/// overrides each.
pub(crate) trait Place: Send + Sync {
    /// The host's name, `None` for this machine.
    fn host_name(&self) -> Option<&str>;

    /// The directory the shell reads its files from (setup, command files,
    /// the exports snapshot): the session's own directory here, a private
    /// one on a host.
    fn dir(&self) -> &Path;

    /// The shell's directory when it is on a host (`None` here).
    fn remote_dir(&self) -> Option<&Path>;

    /// Why a start directory cannot be entered, when this place can tell
    /// before the shell starts (`None`: it can, or only the shell can say).
    fn cannot_enter(&self, dir: &Path) -> Option<String>;

    /// Removes a file of the shell's (best effort).
    fn remove_file<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, ()>;

    /// Writes private files where the shell reads them.
    fn write_files(&self, files: Vec<(PathBuf, Vec<u8>)>) -> BoxFuture<'_, Result<(), ShellError>>;

    /// Writes `files` (a command too long to type, a command's stdin)
    /// before its line is typed, bounded by the call's `deadline`: once it
    /// passes, one round trip within [`LINK_GRACE`] decides, and a hung
    /// link gives the write up ([`Staged::LinkHung`]). A slow link that
    /// answers goes on writing (a large stdin takes its time).
    fn write_before_typing(
        &self,
        files: Vec<(PathBuf, Vec<u8>)>,
        deadline: Instant,
    ) -> BoxFuture<'_, Result<Staged, ShellError>> {
        Box::pin(async move {
            let write = self.write_files(files);
            tokio::pin!(write);
            let mut check = tokio::time::Instant::from_std(deadline);
            loop {
                tokio::select! {
                    r = &mut write => return r.map(|()| Staged::Written),
                    _ = tokio::time::sleep_until(check) => {
                        if self.link_hung(LINK_GRACE).await {
                            return Ok(Staged::LinkHung);
                        }
                        check = tokio::time::Instant::now() + LINK_GRACE;
                    }
                }
            }
        })
    }

    /// The typed command that writes a command's file on the wrapper's
    /// own line (saving a host a round trip), or `None`: then
    /// [`Place::write_command`] writes it first.
    fn inline_command(&self, dialect: &dyn Dialect, file: &Path, text: &str) -> Option<String>;

    /// Writes a command's file where the shell reads it, by `deadline`
    /// (as [`Place::write_before_typing`]).
    fn write_command(
        &self,
        file: PathBuf,
        text: String,
        deadline: Instant,
    ) -> BoxFuture<'_, Result<Staged, ShellError>>;

    /// No command is in flight: the last command's file has been read
    /// (removed here, so a session holds one; a host's stay in its
    /// directory until the session ends: removing each would cost a
    /// process there per command).
    fn command_over(&self);

    /// After an end mark: learns the secret-named values of the exports
    /// snapshot the shell wrote, when reading it is worth it here; the
    /// redactor with them when any was new.
    fn learn_exports<'a>(&'a self, secrets: &'a Secrets) -> BoxFuture<'a, Option<Redactor>>;

    /// Starts the shell on a fresh terminal.
    fn open_terminal<'a>(
        &'a self,
        start: ShellStart<'a>,
    ) -> BoxFuture<'a, Result<Arc<dyn Terminal>, ShellError>>;

    /// Runs the check where it is cheapest: here when this machine has
    /// the same program (it parses alike), else where the shell is.
    fn check_syntax<'a>(
        &'a self,
        check: SyntaxCheck<'a>,
    ) -> BoxFuture<'a, Result<String, ShellError>>;

    /// Ends the shell's whole process tree where it runs (a terminal's own
    /// kill reaches only what is on it remotely) and, with `remove`, its
    /// directory. Locally the terminal's kill does all of it.
    fn end_tree(&self, _remove: bool) -> BoxFuture<'_, ()> {
        Box::pin(async {})
    }

    /// Ends what a lost shell of an earlier session left in `dir` (its
    /// processes, its directory), when this place can reach it.
    fn sweep<'a>(&'a self, _dir: &'a Path) -> BoxFuture<'a, ()> {
        Box::pin(async {})
    }

    /// [`Place::end_tree`] with removal, in the background (from `Drop`).
    fn end_tree_later(&self) {}

    /// What the host says of process `pid` in the shell's terminal, where
    /// the terminal is not inspected on this machine (`None` here).
    fn look_at(&self, _pid: i32) -> BoxFuture<'_, Option<look::Looked>> {
        Box::pin(async { None })
    }

    /// Evidence about a quiet foreground beyond the terminal's own
    /// inspection (a host's `/proc`); `None` when the terminal inspects
    /// itself.
    fn prober(&self) -> Option<&dyn Prober> {
        None
    }

    /// True when the link to the shell stopped answering within `within`
    /// (then it is dropped: see [`RemoteHost::link_hung`]); never here.
    fn link_hung(&self, _within: Duration) -> BoxFuture<'_, bool> {
        Box::pin(async { false })
    }

    /// True when the link to the shell ended because it hung (see
    /// [`RemoteHost::link_ended_hung`]); never here.
    fn link_ended_hung(&self) -> bool {
        false
    }

    /// True when the shell sets its terminal's line modes itself before
    /// each end mark, because the engine cannot set them from here.
    fn shell_sets_modes(&self) -> bool {
        false
    }

    /// True when each end mark names the processes holding the terminal,
    /// because the engine cannot inspect the terminal from here.
    fn shell_lists_holders(&self) -> bool {
        false
    }

    /// How a person's echo is changed at the shell's prompt.
    fn echo(&self) -> Arc<dyn Echo>;

    /// The environment the shell inherits before the defaults: the local
    /// one here; the login's own on a host (nothing is sent).
    fn base_env(&self, local: &[(String, String)]) -> Vec<(String, String)> {
        local.to_vec()
    }
}

/// Turns the echo of a shell's terminal on or off for a person typing at
/// its prompt, only while the shell itself is in the foreground in line
/// mode (a program's own settings are never touched).
pub(crate) trait Echo: Send + Sync {
    /// Asks for echo `on` (or off); true once it is so (the pump's state
    /// records it). A change made in the background returns false until
    /// it is made, so a caller asks again.
    fn set(&self, on: bool, terminal: &dyn Terminal, shared: &Arc<Shared>) -> bool;
}

/// The place of a session whose local directory is `private`: on `host`,
/// or this machine. A host's directory is made there.
pub(crate) async fn open(
    host: Option<&Arc<dyn RemoteHost>>,
    private: PrivateDir,
) -> Result<Arc<dyn Place>, ShellError> {
    Ok(match host {
        Some(h) => Arc::new(remote::Remote::open(Arc::clone(h)).await?),
        None => Arc::new(local::Local::new(private)),
    })
}
