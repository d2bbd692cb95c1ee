//! Another machine: the shell on the host's terminal, its files in a
//! private directory there, its processes and foreground seen through
//! commands run on the host ([`super::host`]); the engine never sees SSH.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tether_term::Redactor;
use tether_transport::{BoxFuture, RemoteHost, Terminal, TerminalRequest};

use super::host::{self, SHELL_STAT, in_dir};
use super::probe::{Evidence, Prober};
use super::syntax::SyntaxCheck;
use super::{Echo, Place, ShellStart, Staged};
use crate::dialect::{Dialect, sh_quote};
use crate::error::ShellError;
use crate::pump::Shared;
use crate::secrets::Secrets;

/// A host, and the shell's directory there.
pub(crate) struct Remote {
    host: Arc<dyn RemoteHost>,
    dir: PathBuf,
}

impl Remote {
    /// The place of a shell on `host`, with a fresh private directory
    /// made there.
    pub(crate) async fn open(host: Arc<dyn RemoteHost>) -> Result<Remote, ShellError> {
        let dir = host::make_dir(host.as_ref()).await?;
        Ok(Remote { host, dir })
    }

    /// Reads a file of the shell's (`None` when it cannot be read).
    async fn read_file(&self, path: &Path) -> Option<Vec<u8>> {
        let line = format!(
            "cat -- {} 2>/dev/null",
            sh_quote(&path.display().to_string())
        );
        let out = self.host.run(line, Vec::new()).await.ok()?;
        (out.status == Some(0)).then_some(out.stdout)
    }
}

impl Place for Remote {
    fn host_name(&self) -> Option<&str> {
        Some(self.host.name())
    }

    fn dir(&self) -> &Path {
        &self.dir
    }

    fn remote_dir(&self) -> Option<&Path> {
        Some(&self.dir)
    }

    fn cannot_enter(&self, _dir: &Path) -> Option<String> {
        // Only the host can tell: its shell says so as it starts.
        None
    }

    fn remove_file<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            let quoted = sh_quote(&path.display().to_string());
            let _ = self
                .host
                .run(format!("rm -f -- {quoted}"), Vec::new())
                .await;
        })
    }

    fn write_files(&self, files: Vec<(PathBuf, Vec<u8>)>) -> BoxFuture<'_, Result<(), ShellError>> {
        Box::pin(async move { host::write_files(self.host.as_ref(), &files).await })
    }

    fn inline_command(&self, dialect: &dyn Dialect, file: &Path, text: &str) -> Option<String> {
        // The shell writes a short command file itself, on the typed line:
        // no channel (and no remote process) per command.
        dialect.inline_file(file, text.as_bytes())
    }

    fn write_command(
        &self,
        file: PathBuf,
        text: String,
        deadline: Instant,
    ) -> BoxFuture<'_, Result<Staged, ShellError>> {
        self.write_before_typing(vec![(file, text.into_bytes())], deadline)
    }

    fn command_over(&self) {}

    fn learn_exports<'a>(&'a self, secrets: &'a Secrets) -> BoxFuture<'a, Option<Redactor>> {
        Box::pin(async move {
            // The host's file costs a round trip: read only after a command
            // that could have changed a secret.
            if !secrets.take_read_remote() {
                return None;
            }
            let snapshot = self.read_file(&self.dir.join("env")).await?;
            secrets.learn(&snapshot)
        })
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
            let pid_file = host::pid_file(&self.dir);
            // The tree's marker, as locally: the tree kill on the host also
            // looks for it (`host::end_tree`).
            let mut env = start.env.to_vec();
            if let Some(id) = self.dir.file_name().and_then(|n| n.to_str()) {
                env.push((crate::tree::TREE_MARKER.to_owned(), id.to_owned()));
            }
            let command = host::command_line(start.program, start.args, &env, start.cwd, &pid_file);
            let terminal = self
                .host
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
                .is_some_and(|(program, _)| super::syntax::on_local_path(&program));
            if here {
                return super::syntax::check_here(check).await;
            }
            // No such shell here: the one that will run it checks it, on
            // its host (a channel and a process there).
            let Some((program, args)) = check.dialect.syntax_check(&check.shell_file) else {
                return Ok(String::new());
            };
            host::check(
                self.host.as_ref(),
                &check.shell_file,
                check.code,
                &program,
                &args,
            )
            .await
        })
    }

    fn end_tree(&self, remove: bool) -> BoxFuture<'_, ()> {
        Box::pin(host::end_tree(self.host.as_ref(), &self.dir, remove))
    }

    fn sweep<'a>(&'a self, dir: &'a Path) -> BoxFuture<'a, ()> {
        Box::pin(host::end_tree(self.host.as_ref(), dir, true))
    }

    fn end_tree_later(&self) {
        host::end_tree_later(Arc::clone(&self.host), self.dir.clone());
    }

    fn prober(&self) -> Option<&dyn Prober> {
        Some(self)
    }

    fn look_at(&self, pid: i32) -> BoxFuture<'_, Option<super::look::Looked>> {
        super::look::look(Arc::clone(&self.host), self.dir.clone(), pid)
    }

    fn link_hung(&self, within: Duration) -> BoxFuture<'_, bool> {
        self.host.link_hung(within)
    }

    fn link_ended_hung(&self) -> bool {
        self.host.link_ended_hung()
    }

    fn shell_sets_modes(&self) -> bool {
        true
    }

    fn shell_lists_holders(&self) -> bool {
        true
    }

    fn echo(&self) -> Arc<dyn Echo> {
        Arc::new(RemoteEcho {
            host: Arc::clone(&self.host),
            dir: self.dir.clone(),
            last: Mutex::new(None),
            order: Arc::new(tokio::sync::Mutex::new(())),
        })
    }

    fn base_env(&self, _local: &[(String, String)]) -> Vec<(String, String)> {
        Vec::new()
    }
}

impl Prober for Remote {
    fn probe(&self) -> BoxFuture<'static, Evidence> {
        super::probe::probe(Arc::clone(&self.host), self.dir.clone())
    }
}

/// Changes a remote shell's terminal echo for a person attached: on the
/// host, with `stty` on the shell's terminal, only while the shell itself
/// is in the foreground in line mode (as locally). The same request is
/// repeated at most once a second.
struct RemoteEcho {
    host: Arc<dyn RemoteHost>,
    dir: PathBuf,
    last: Mutex<Option<(Instant, bool)>>,
    /// Requests reach the host in the order they were made (an `off`
    /// made after an `on` still in flight must land last).
    order: Arc<tokio::sync::Mutex<()>>,
}

impl Echo for RemoteEcho {
    fn set(&self, on: bool, _terminal: &dyn Terminal, shared: &Arc<Shared>) -> bool {
        // Done, unless the last request (still in flight) said otherwise.
        if shared.lock().echo_on() == on && self.last_requested().is_none_or(|last| last == on) {
            return true;
        }
        self.request(on, Arc::clone(shared));
        false
    }
}

impl RemoteEcho {
    /// What was asked last (`None`: nothing yet).
    fn last_requested(&self) -> Option<bool> {
        self.last
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .map(|(_, on)| on)
    }

    /// Asks the host to turn echo `on` (or off); the pump's state follows
    /// once it has.
    fn request(&self, on: bool, shared: Arc<Shared>) {
        const SCRIPT: &str = r#"[ "$pg" = "$fg" ] || exit 1
t=$(readlink "/proc/$s/fd/0") || exit 3
case $(stty -a < "$t") in *-icanon*) exit 1 ;; esac
stty $e < "$t"
"#;
        {
            let mut last = self.last.lock().unwrap_or_else(|p| p.into_inner());
            if last.is_some_and(|(t, was)| was == on && t.elapsed() < Duration::from_secs(1)) {
                return;
            }
            *last = Some((Instant::now(), on));
        }
        let Ok(rt) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let host = Arc::clone(&self.host);
        let mode = if on { "e=echo\n" } else { "e=-echo\n" };
        let line = in_dir(&self.dir, &format!("{mode}{SHELL_STAT}{SCRIPT}"));
        let order = Arc::clone(&self.order);
        // Taken now when free, in the caller's order, not when the task
        // first runs.
        let held = Arc::clone(&order).try_lock_owned().ok();
        rt.spawn(async move {
            let _turn = match held {
                Some(turn) => turn,
                None => order.lock_owned().await,
            };
            if let Ok(out) = host.run(line, Vec::new()).await
                && out.status == Some(0)
            {
                shared.lock().set_echo_on(on);
            }
        });
    }
}
