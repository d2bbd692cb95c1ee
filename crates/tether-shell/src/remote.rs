//! A session's files and shell on a [`RemoteHost`]: the private session
//! directory there, the setup and command files written into it over the
//! host's command channel, the syntax check run there, and the command
//! line that starts the shell on a remote terminal.
//!
//! The remote user's login shell runs these lines, so they are POSIX sh
//! (bash, zsh, dash, ksh and busybox sh all take them).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use tether_transport::{HostOutput, RemoteHost, TransportError};

use crate::dialect::sh_quote;
use crate::error::ShellError;

/// Makes a fresh 0700 directory for one session under
/// `$XDG_RUNTIME_DIR/tether`, else `/tmp/tether-UID`, refusing a base that
/// is a symlink or someone else's, and returns its path.
pub(crate) async fn make_dir(host: &dyn RemoteHost) -> Result<PathBuf, ShellError> {
    const SCRIPT: &str = r#"umask 077
if [ -n "${XDG_RUNTIME_DIR-}" ] && [ -d "$XDG_RUNTIME_DIR" ]; then b=$XDG_RUNTIME_DIR/tether; else b=/tmp/tether-$(id -u); fi
mkdir -p "$b" 2>/dev/null
if [ -L "$b" ] || [ ! -d "$b" ] || [ ! -O "$b" ]; then echo "$b is a symlink, missing, or belongs to another user; remove it" >&2; exit 1; fi
chmod 700 "$b" && mkdir -p "$b/sessions" && d=$(mktemp -d "$b/sessions/XXXXXXXXXXXX") && printf '%s' "$d""#;
    let out = run_ok(
        host,
        SCRIPT.to_owned(),
        Vec::new(),
        "create the session directory",
    )
    .await?;
    let dir = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    if !dir.starts_with('/') {
        return Err(failed(host, "create the session directory", &out));
    }
    Ok(PathBuf::from(dir))
}

/// Writes `files`, each readable only by the user (parent directories
/// made), one command per file: `cat` reads its stdin to the end, where a
/// shared stdin split by `head -c` would lose bytes to read-ahead.
pub(crate) async fn write_files(
    host: &dyn RemoteHost,
    files: &[(PathBuf, Vec<u8>)],
) -> Result<(), ShellError> {
    for (path, bytes) in files {
        let p = sh_quote(&path.display().to_string());
        let parent = path
            .parent()
            .map(|d| format!("mkdir -p {} && ", sh_quote(&d.display().to_string())))
            .unwrap_or_default();
        let line = format!("umask 077 && {parent}cat > {p}");
        run_ok(host, line, bytes.clone(), "write the session's files").await?;
    }
    Ok(())
}

/// Runs `program args` (a syntax checker reading `file`) on the host with
/// `code` written to `file` first, and returns its stderr.
pub(crate) async fn check(
    host: &dyn RemoteHost,
    file: &Path,
    code: &str,
    program: &str,
    args: &[String],
) -> Result<String, ShellError> {
    let f = sh_quote(&file.display().to_string());
    let mut line = format!("umask 077; cat > {f} || exit 1; {}", sh_quote(program));
    for a in args {
        line.push(' ');
        line.push_str(&sh_quote(a));
    }
    line.push_str(&format!(" </dev/null; rm -f {f}"));
    let out = host
        .run(line, code.as_bytes().to_vec())
        .await
        .map_err(ShellError::from)?;
    Ok(String::from_utf8_lossy(&out.stderr).into_owned())
}

/// The start of a command about the shell whose directory is `$d`: its pid
/// `s`, its process group `pg` and its terminal's foreground group `fg`,
/// from `/proc` (exit 3 when they cannot be read).
pub(crate) const SHELL_STAT: &str = r#"s=$(cat "$d/shell.pid" 2>/dev/null) || exit 3
read -r st < "/proc/$s/stat" || exit 3
set -- ${st##*) }
pg=$3 fg=$6
"#;

/// `script`, run with `d` set to the session directory `dir`.
pub(crate) fn in_dir(dir: &Path, script: &str) -> String {
    format!("d={}\n{script}", sh_quote(&dir.display().to_string()))
}

/// Where a remote shell records its pid (written just before it starts).
pub(crate) fn pid_file(dir: &Path) -> PathBuf {
    dir.join("shell.pid")
}

/// Ends the process tree of the shell whose directory is `dir`: the shell,
/// everything in its session (its jobs, which SSH's hang-up leaves running),
/// every descendant, and every process of the user whose environment holds
/// the session's marker (`setsid` escapes, double forks), TERM then KILL;
/// with `remove`, also removes `dir`.
pub(crate) async fn end_tree(host: &dyn RemoteHost, dir: &Path, remove: bool) {
    // awk builds the closure of the session and its descendants from one
    // `ps` listing taken while the shell still runs; the marked processes
    // are found by one `grep -z` over /proc (GNU grep; a host whose grep
    // lacks -z ends only the session and its descendants).
    const SCRIPT: &str = r#"s=$(cat "$d/shell.pid" 2>/dev/null)
case $s in ''|*[!0-9]*) s=0 ;; esac
m="TETHER_SESSION_ID=${d##*/}"
t=$( { grep -lzxF -- "$m" /proc/[0-9]*/environ 2>/dev/null || :; } | sed 's|^/proc/||; s|/environ$||'; echo "$s")
t=$(ps -A -o pid= -o ppid= -o sid= 2>/dev/null | awk -v roots="$t" 'BEGIN {n = split(roots, a, "\n"); for (i = 1; i <= n; i++) if (a[i] > 0) k[a[i]] = 1} {p[NR]=$1; q[NR]=$2; r[NR]=$3} END {for (i = 1; i <= NR; i++) if (r[i] in k) k[p[i]] = 1; do { c = 0; for (i = 1; i <= NR; i++) if ((q[i] in k) && !(p[i] in k)) { k[p[i]] = 1; c = 1 } } while (c); for (x in k) printf "%s ", x}')
[ -n "${t% }" ] && { kill -TERM $t 2>/dev/null && sleep 0.3; kill -KILL $t 2>/dev/null; }
"#;
    let mut line = in_dir(dir, SCRIPT);
    if remove {
        line.push_str("rm -rf -- \"$d\"\n");
    }
    let _ = host.run(line, Vec::new()).await;
}

/// [`end_tree`] and the directory's removal in the background (a session
/// dropped without [`end_tree`]; nobody waits for it).
pub(crate) fn end_tree_later(host: Arc<dyn RemoteHost>, dir: PathBuf) {
    let Ok(rt) = tokio::runtime::Handle::try_current() else {
        return;
    };
    rt.spawn(async move { end_tree(host.as_ref(), &dir, true).await });
}

/// Changes a remote shell's terminal echo for a person attached: on the
/// host, with `stty` on the shell's terminal, only while the shell itself
/// is in the foreground in line mode (as locally). The same request is
/// repeated at most once a second.
pub(crate) struct RemoteEcho {
    host: Arc<dyn RemoteHost>,
    dir: PathBuf,
    last: std::sync::Mutex<Option<(std::time::Instant, bool)>>,
    /// Requests reach the host in the order they were made (an `off`
    /// made after an `on` still in flight must land last).
    order: Arc<tokio::sync::Mutex<()>>,
}

impl RemoteEcho {
    pub(crate) fn new(host: Arc<dyn RemoteHost>, dir: PathBuf) -> RemoteEcho {
        RemoteEcho {
            host,
            dir,
            last: std::sync::Mutex::new(None),
            order: Arc::new(tokio::sync::Mutex::new(())),
        }
    }

    /// What was asked last (`None`: nothing yet).
    pub(crate) fn last_requested(&self) -> Option<bool> {
        self.last
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .map(|(_, on)| on)
    }

    /// Asks the host to turn echo `on` (or off); `shared.echo_on` follows
    /// once it has.
    pub(crate) fn request(&self, on: bool, shared: Arc<crate::pump::Shared>) {
        const SCRIPT: &str = r#"[ "$pg" = "$fg" ] || exit 1
t=$(readlink "/proc/$s/fd/0") || exit 3
case $(stty -a < "$t") in *-icanon*) exit 1 ;; esac
stty $e < "$t"
"#;
        {
            let mut last = self.last.lock().unwrap_or_else(|p| p.into_inner());
            if last.is_some_and(|(t, was)| {
                was == on && t.elapsed() < std::time::Duration::from_secs(1)
            }) {
                return;
            }
            *last = Some((std::time::Instant::now(), on));
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
                shared.lock().echo_on = on;
            }
        });
    }
}

/// The line that starts `program args` in `cwd` (the login directory when
/// `None`) with `env` added to the login environment, after recording its
/// pid in `pid_file` (the shell execs in place, so the pid is its own).
pub(crate) fn command_line(
    program: &str,
    args: &[String],
    env: &[(String, String)],
    cwd: Option<&Path>,
    pid_file: &Path,
) -> String {
    let mut line = format!("echo $$ > {}; ", sh_quote(&pid_file.display().to_string()));
    if let Some(cwd) = cwd {
        line.push_str(&format!(
            "cd -- {} || exit 1; ",
            sh_quote(&cwd.display().to_string())
        ));
    }
    line.push_str("exec env");
    for (k, v) in env {
        line.push(' ');
        line.push_str(&sh_quote(&format!("{k}={v}")));
    }
    line.push(' ');
    line.push_str(&sh_quote(program));
    for a in args {
        line.push(' ');
        line.push_str(&sh_quote(a));
    }
    line
}

async fn run_ok(
    host: &dyn RemoteHost,
    command: String,
    input: Vec<u8>,
    what: &'static str,
) -> Result<HostOutput, ShellError> {
    let out = host.run(command, input).await.map_err(ShellError::from)?;
    if out.status != Some(0) {
        return Err(failed(host, what, &out));
    }
    Ok(out)
}

fn failed(host: &dyn RemoteHost, what: &'static str, out: &HostOutput) -> ShellError {
    let said = String::from_utf8_lossy(&out.stderr).trim().to_owned();
    let status = out
        .status
        .map_or("no exit status".to_owned(), |s| format!("exit status {s}"));
    ShellError::Transport(TransportError::Host {
        host: host.name().to_owned(),
        message: format!(
            "could not {what} ({status}{}{said})",
            if said.is_empty() { "" } else { ": " }
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_line_quotes_every_word() {
        let line = command_line(
            "bash",
            &["--rcfile".into(), "/t/it's".into()],
            &[("A".into(), "x y$z".into())],
            Some(Path::new("/srv")),
            Path::new("/t/shell.pid"),
        );
        assert_eq!(
            line,
            "echo $$ > '/t/shell.pid'; cd -- '/srv' || exit 1; exec env 'A=x y$z' 'bash' '--rcfile' '/t/it'\\''s'"
        );
    }
}
