//! Where a session's shell lives: this machine ([`Local`]) or another one
//! behind a [`RemoteHost`] ([`Remote`]). Everything that differs between
//! the two is one method here: the shell's directory and files, its
//! terminal, the syntax check, ending its process tree, evidence about its
//! foreground, who sets its line modes and its echo, and its environment.
//! The rest of the engine asks its [`Place`] and never branches on a host.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use tether_pty::{LocalPty, SpawnSpec};
use tether_transport::{BoxFuture, RemoteHost, TermSize, Terminal, TerminalRequest};

use crate::dialect::Dialect;
use crate::error::ShellError;
use crate::remote_probe::Evidence;

/// How a shell is started (the dialect's argv and environment, already
/// resolved).
pub(crate) struct ShellStart<'a> {
    pub(crate) program: &'a str,
    pub(crate) args: &'a [String],
    pub(crate) env: &'a [(String, String)],
    pub(crate) cwd: Option<&'a Path>,
    pub(crate) size: TermSize,
    pub(crate) output_processing: bool,
    /// The shell's own directory (where a remote shell records its pid).
    pub(crate) dir: &'a Path,
}

/// A syntax check of `code` by the dialect's checker.
pub(crate) struct SyntaxCheck<'a> {
    pub(crate) code: &'a str,
    pub(crate) dialect: &'a dyn Dialect,
    /// A fresh path in the local session directory for the code.
    pub(crate) local_file: PathBuf,
    /// A fresh path in the shell's directory for the code.
    pub(crate) shell_file: PathBuf,
}

/// Where a session's shell runs; see the module docs.
pub(crate) trait Place: Send + Sync {
    /// The host's name, `None` for this machine.
    fn host_name(&self) -> Option<&str>;

    /// The directory the shell reads its files from: `local` itself here,
    /// a fresh private directory on a host.
    fn make_dir<'a>(&'a self, local: &'a Path) -> BoxFuture<'a, Result<PathBuf, ShellError>>;

    /// Reads a file of the shell's (`None` when it cannot be read).
    fn read_file<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, Option<Vec<u8>>>;

    /// Removes a file of the shell's (best effort).
    fn remove_file<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, ()>;

    /// True when reading a file of the shell's costs no round trip.
    fn reads_are_cheap(&self) -> bool;

    /// Writes private files where the shell reads them.
    fn write_files(&self, files: Vec<(PathBuf, Vec<u8>)>) -> BoxFuture<'_, Result<(), ShellError>>;

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
    fn end_tree<'a>(&'a self, dir: &'a Path, remove: bool) -> BoxFuture<'a, ()>;

    /// [`Place::end_tree`] with removal, in the background (from `Drop`).
    fn end_tree_later(&self, dir: PathBuf);

    /// Evidence about a quiet foreground beyond the terminal's own
    /// inspection: a probe of the host's `/proc`; `None` when the terminal
    /// inspects itself.
    fn probe(&self, dir: &Path) -> Option<BoxFuture<'static, Evidence>>;

    /// True when the link to the shell stopped answering within `within`
    /// (then it is dropped: see [`RemoteHost::link_hung`]); never here.
    fn link_hung(&self, within: std::time::Duration) -> BoxFuture<'_, bool>;

    /// True when the shell sets its terminal's line modes itself before
    /// each end mark, because the engine cannot set them from here.
    fn shell_sets_modes(&self) -> bool;

    /// The echo changer for a person attached, when echo is changed on
    /// the host rather than through the terminal.
    fn remote_echo(&self, dir: &Path) -> Option<crate::remote::RemoteEcho>;

    /// Short command files are written by the typed line itself (saving a
    /// round trip to a host), not beforehand.
    fn types_command_files(&self) -> bool;

    /// The environment the shell inherits before the defaults: the local
    /// one here; the login's own on a host (nothing is sent).
    fn base_env(&self, local: &[(String, String)]) -> Vec<(String, String)>;
}

/// The place of a session: `host`, or this machine.
pub(crate) fn of(host: Option<&Arc<dyn RemoteHost>>) -> Arc<dyn Place> {
    match host {
        Some(h) => Arc::new(Remote(Arc::clone(h))),
        None => Arc::new(Local),
    }
}

/// This machine: a local PTY, files in the session's own directory.
pub(crate) struct Local;

impl Place for Local {
    fn host_name(&self) -> Option<&str> {
        None
    }

    fn read_file<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, Option<Vec<u8>>> {
        Box::pin(async move { std::fs::read(path).ok() })
    }

    fn reads_are_cheap(&self) -> bool {
        true
    }

    fn remove_file<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            let _ = std::fs::remove_file(path);
        })
    }

    fn make_dir<'a>(&'a self, local: &'a Path) -> BoxFuture<'a, Result<PathBuf, ShellError>> {
        Box::pin(async move { Ok(local.to_path_buf()) })
    }

    fn write_files(&self, files: Vec<(PathBuf, Vec<u8>)>) -> BoxFuture<'_, Result<(), ShellError>> {
        Box::pin(async move {
            for (path, bytes) in &files {
                // The session's directory, or one of its own (zsh's zdot).
                if let Some(parent) = path.parent() {
                    crate::private::ensure_dir(parent)?;
                }
                crate::launch::write_private(path, bytes)?;
            }
            Ok(())
        })
    }

    fn open_terminal<'a>(
        &'a self,
        start: ShellStart<'a>,
    ) -> BoxFuture<'a, Result<Arc<dyn Terminal>, ShellError>> {
        Box::pin(async move {
            let mut spec = SpawnSpec::new(start.program.to_owned());
            spec.args = start.args.to_vec();
            spec.env = start.env.to_vec();
            spec.cwd = start.cwd.map(Path::to_path_buf);
            spec.size = start.size;
            spec.echo = false;
            spec.output_processing = start.output_processing;
            spec.tree_marker = start
                .dir
                .file_name()
                .and_then(|n| n.to_str())
                .map(|id| (crate::tree::TREE_MARKER.to_owned(), id.to_owned()));
            // The engine runs on the runtime that holds its sessions (the
            // daemon's, or `run --once`'s), which outlives them: reading the
            // output there saves a thread wake-up per chunk, which a person
            // typing into an attached session feels.
            let pty = match tokio::runtime::Handle::try_current() {
                Ok(runtime) => LocalPty::spawn_on(&spec, &runtime)?,
                Err(_) => LocalPty::spawn(&spec)?,
            };
            let pty: Arc<dyn Terminal> = Arc::new(pty);
            Ok(pty)
        })
    }

    fn check_syntax<'a>(
        &'a self,
        check: SyntaxCheck<'a>,
    ) -> BoxFuture<'a, Result<String, ShellError>> {
        Box::pin(check_here(check))
    }

    fn end_tree<'a>(&'a self, _dir: &'a Path, _remove: bool) -> BoxFuture<'a, ()> {
        Box::pin(async {})
    }

    fn end_tree_later(&self, _dir: PathBuf) {}

    fn link_hung(&self, _within: std::time::Duration) -> BoxFuture<'_, bool> {
        Box::pin(async { false })
    }

    fn probe(&self, _dir: &Path) -> Option<BoxFuture<'static, Evidence>> {
        None
    }

    fn shell_sets_modes(&self) -> bool {
        false
    }

    fn remote_echo(&self, _dir: &Path) -> Option<crate::remote::RemoteEcho> {
        None
    }

    fn types_command_files(&self) -> bool {
        false
    }

    fn base_env(&self, local: &[(String, String)]) -> Vec<(String, String)> {
        local.to_vec()
    }
}

/// Another machine: its terminal, its files and processes, through one
/// [`RemoteHost`] (the engine never sees SSH).
pub(crate) struct Remote(Arc<dyn RemoteHost>);

impl Place for Remote {
    fn host_name(&self) -> Option<&str> {
        Some(self.0.name())
    }

    fn read_file<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, Option<Vec<u8>>> {
        Box::pin(async move {
            let line = format!(
                "cat -- {} 2>/dev/null",
                crate::dialect::sh_quote(&path.display().to_string())
            );
            let out = self.0.run(line, Vec::new()).await.ok()?;
            (out.status == Some(0)).then_some(out.stdout)
        })
    }

    fn reads_are_cheap(&self) -> bool {
        false
    }

    fn remove_file<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            let quoted = crate::dialect::sh_quote(&path.display().to_string());
            let _ = self.0.run(format!("rm -f -- {quoted}"), Vec::new()).await;
        })
    }

    fn make_dir<'a>(&'a self, _local: &'a Path) -> BoxFuture<'a, Result<PathBuf, ShellError>> {
        Box::pin(crate::remote::make_dir(self.0.as_ref()))
    }

    fn write_files(&self, files: Vec<(PathBuf, Vec<u8>)>) -> BoxFuture<'_, Result<(), ShellError>> {
        Box::pin(async move { crate::remote::write_files(self.0.as_ref(), &files).await })
    }

    fn open_terminal<'a>(
        &'a self,
        start: ShellStart<'a>,
    ) -> BoxFuture<'a, Result<Arc<dyn Terminal>, ShellError>> {
        Box::pin(async move {
            let term = start
                .env
                .iter()
                .find(|(k, _)| k == "TERM")
                .map_or("dumb".to_owned(), |(_, v)| v.clone());
            let pid_file = crate::remote::pid_file(start.dir);
            // The tree's marker, as locally: the tree kill on the host also
            // looks for it (`remote::end_tree`).
            let mut env = start.env.to_vec();
            if let Some(id) = start.dir.file_name().and_then(|n| n.to_str()) {
                env.push((crate::tree::TREE_MARKER.to_owned(), id.to_owned()));
            }
            let command =
                crate::remote::command_line(start.program, start.args, &env, start.cwd, &pid_file);
            let terminal = self
                .0
                .open_terminal(TerminalRequest {
                    command,
                    term,
                    size: start.size,
                    echo: false,
                    output_processing: start.output_processing,
                })
                .await?;
            Ok(terminal)
        })
    }

    fn check_syntax<'a>(
        &'a self,
        check: SyntaxCheck<'a>,
    ) -> BoxFuture<'a, Result<String, ShellError>> {
        Box::pin(async move {
            let here = check
                .dialect
                .syntax_check(&check.local_file)
                .is_some_and(|(program, _)| on_local_path(&program));
            if here {
                return check_here(check).await;
            }
            // No such shell here: the one that will run it checks it, on
            // its host (a channel and a process there).
            let Some((program, args)) = check.dialect.syntax_check(&check.shell_file) else {
                return Ok(String::new());
            };
            crate::remote::check(
                self.0.as_ref(),
                &check.shell_file,
                check.code,
                &program,
                &args,
            )
            .await
        })
    }

    fn end_tree<'a>(&'a self, dir: &'a Path, remove: bool) -> BoxFuture<'a, ()> {
        Box::pin(crate::remote::end_tree(self.0.as_ref(), dir, remove))
    }

    fn end_tree_later(&self, dir: PathBuf) {
        crate::remote::end_tree_later(Arc::clone(&self.0), dir);
    }

    fn link_hung(&self, within: std::time::Duration) -> BoxFuture<'_, bool> {
        self.0.link_hung(within)
    }

    fn probe(&self, dir: &Path) -> Option<BoxFuture<'static, Evidence>> {
        Some(crate::remote_probe::probe(
            Arc::clone(&self.0),
            dir.to_path_buf(),
        ))
    }

    fn shell_sets_modes(&self) -> bool {
        true
    }

    fn remote_echo(&self, dir: &Path) -> Option<crate::remote::RemoteEcho> {
        Some(crate::remote::RemoteEcho::new(
            Arc::clone(&self.0),
            dir.to_path_buf(),
        ))
    }

    fn types_command_files(&self) -> bool {
        true
    }

    fn base_env(&self, _local: &[(String, String)]) -> Vec<(String, String)> {
        Vec::new()
    }
}

/// The check run on this machine, with the code in the local file
/// (removed after).
async fn check_here(check: SyntaxCheck<'_>) -> Result<String, ShellError> {
    let file = check.local_file;
    let Some((program, args)) = check.dialect.syntax_check(&file) else {
        return Ok(String::new());
    };
    crate::launch::write_private(&file, check.code.as_bytes())?;
    let stderr = tokio::task::spawn_blocking(move || {
        let out = std::process::Command::new(program)
            .args(args)
            .stdin(std::process::Stdio::null())
            .output();
        let _ = std::fs::remove_file(&file);
        out.map(|o| String::from_utf8_lossy(&o.stderr).into_owned())
            .unwrap_or_default()
    })
    .await
    .unwrap_or_default();
    Ok(stderr)
}

/// True when `program` can be run here (a path to a file, or a name found
/// on `PATH`).
fn on_local_path(program: &str) -> bool {
    if program.contains('/') {
        return Path::new(program).is_file();
    }
    std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(program).is_file()))
}
