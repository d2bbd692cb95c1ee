//! The commands a remote place runs on its [`RemoteHost`]: the private
//! session directory there, the setup and command files written into it
//! over the host's command channel, the syntax check run there, the
//! command line that starts the shell on a remote terminal, and the end of
//! its process tree.
//!
//! The remote user's login shell runs these lines, so they are POSIX sh
//! (bash, zsh, dash, ksh and busybox sh all take them).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use tether_transport::{HostOutput, RemoteHost, TransportError};

use crate::dialect::sh_quote;
use crate::error::ShellError;

/// Makes a fresh 0700 directory for one session and returns its path:
/// `sessions/ID` under `$XDG_RUNTIME_DIR/tether`, else
/// `/dev/shm/tether-UID`, else `/tmp/tether-UID` (see [`dir_script`]).
pub(crate) async fn make_dir(host: &dyn RemoteHost) -> Result<PathBuf, ShellError> {
    let out = run_ok(
        host,
        dir_script("/dev/shm", "/tmp"),
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

/// The script that makes a session's directory on a host, with `shm` and
/// `tmp` for `/dev/shm` and `/tmp` (tests give others). Without
/// `XDG_RUNTIME_DIR` (a login without pam_systemd) the base is in memory
/// when `shm` is a sticky directory the user may write to, as for local
/// sessions: each command's file is created and removed there, which on a
/// disk file system costs the journal's work at every line. A base that
/// exists but is a symlink, not a directory or someone else's is refused
/// (somebody may have planted it), never used or repaired; one that cannot
/// be made in `shm` (full, read-only) falls back to `tmp`.
fn dir_script(shm: &str, tmp: &str) -> String {
    const SCRIPT: &str = r#"umask 077
u=$(id -u)
__tether_mk() {
  mkdir -p "$1" 2>/dev/null
  if [ -L "$1" ] || { [ -e "$1" ] && { [ ! -d "$1" ] || [ ! -O "$1" ]; }; }; then echo "$1 is a symlink, not a directory, or belongs to another user; remove it" >&2; exit 1; fi
  [ -d "$1" ] && chmod 700 "$1" && mkdir -p "$1/sessions" && d=$(mktemp -d "$1/sessions/XXXXXXXXXXXX") && printf '%s' "$d"
}
if [ -n "${XDG_RUNTIME_DIR-}" ] && [ -d "$XDG_RUNTIME_DIR" ]; then __tether_mk "$XDG_RUNTIME_DIR/tether"
else { [ -d "$shm" ] && [ -w "$shm" ] && [ -k "$shm" ] && __tether_mk "$shm/tether-$u"; } || __tether_mk "$tmp/tether-$u"
fi || { echo "cannot make a private directory for the session" >&2; exit 1; }"#;
    format!("shm={}\ntmp={}\n{SCRIPT}", sh_quote(shm), sh_quote(tmp))
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
        kind: tether_transport::HostFailure::Setup,
        message: format!(
            "could not {what} ({status}{}{said})",
            if said.is_empty() { "" } else { ": " }
        ),
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    /// A scratch `shm` (sticky, writable by all, as `/dev/shm`) and `tmp`.
    struct Bases {
        root: PathBuf,
        shm: PathBuf,
        tmp: PathBuf,
    }

    impl Bases {
        fn new(name: &str) -> Bases {
            let root = std::env::temp_dir().join(format!("tether-{name}-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&root);
            let (shm, tmp) = (root.join("shm"), root.join("tmp"));
            for d in [&shm, &tmp] {
                std::fs::create_dir_all(d).unwrap();
                std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o1777)).unwrap();
            }
            Bases { root, shm, tmp }
        }

        /// The script's output in each POSIX shell installed here, with
        /// `XDG_RUNTIME_DIR` as given: (shell, exit status, stdout, stderr).
        fn run(&self, xdg: Option<&Path>) -> Vec<(String, Option<i32>, String, String)> {
            let script = dir_script(
                &self.shm.display().to_string(),
                &self.tmp.display().to_string(),
            );
            let mut outs = Vec::new();
            for sh in [
                &["sh"][..],
                &["dash"],
                &["bash"],
                &["zsh"],
                &["busybox", "sh"],
            ] {
                let mut cmd = std::process::Command::new(sh[0]);
                cmd.args(&sh[1..]).arg("-c").arg(&script);
                match xdg {
                    Some(d) => cmd.env("XDG_RUNTIME_DIR", d),
                    None => cmd.env_remove("XDG_RUNTIME_DIR"),
                };
                let Ok(out) = cmd.output() else {
                    continue;
                };
                outs.push((
                    sh.join(" "),
                    out.status.code(),
                    String::from_utf8_lossy(&out.stdout).into_owned(),
                    String::from_utf8_lossy(&out.stderr).into_owned(),
                ));
            }
            assert!(!outs.is_empty());
            outs
        }

        /// Every shell made a fresh private session directory under `base`.
        fn made_under(&self, base: &Path, xdg: Option<&Path>) {
            for (sh, code, out, err) in self.run(xdg) {
                assert_eq!(code, Some(0), "{sh}: {err}");
                let dir = Path::new(&out);
                assert_eq!(dir.parent(), Some(base.join("sessions").as_path()), "{sh}");
                for d in [dir, base] {
                    let mode = std::fs::symlink_metadata(d).unwrap().permissions().mode();
                    assert_eq!(mode & 0o7777, 0o700, "{sh}: {}", d.display());
                }
            }
        }
    }

    impl Drop for Bases {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.root);
        }
    }

    /// In memory when it can be, else `/tmp`; under `XDG_RUNTIME_DIR`
    /// when there is one.
    #[test]
    fn the_session_directory_is_in_memory_when_it_can_be() {
        let b = Bases::new("dir-shm");
        let uid = crate::private::uid();
        b.made_under(&b.shm.join(format!("tether-{uid}")), None);
        let xdg = b.root.join("xdg");
        std::fs::create_dir(&xdg).unwrap();
        b.made_under(&xdg.join("tether"), Some(&xdg));
        // Not sticky: anybody could rename what is ours there.
        std::fs::set_permissions(&b.shm, std::fs::Permissions::from_mode(0o777)).unwrap();
        b.made_under(&b.tmp.join(format!("tether-{uid}")), None);
        std::fs::remove_dir_all(&b.shm).unwrap();
        b.made_under(&b.tmp.join(format!("tether-{uid}")), None);
    }

    /// A base somebody else could have planted in memory is refused, not
    /// used and not passed over for `/tmp`.
    #[test]
    fn a_planted_base_is_refused() {
        let b = Bases::new("dir-planted");
        let base = b.shm.join(format!("tether-{}", crate::private::uid()));
        let elsewhere = b.root.join("elsewhere");
        std::fs::create_dir(&elsewhere).unwrap();
        std::os::unix::fs::symlink(&elsewhere, &base).unwrap();
        let check = |what: &str| {
            for (sh, code, out, err) in b.run(None) {
                assert_eq!((code, out.as_str()), (Some(1), ""), "{what}, {sh}");
                assert!(err.contains("remove it"), "{what}, {sh}: {err}");
            }
            assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0, "{what}");
            assert_eq!(std::fs::read_dir(&b.tmp).unwrap().count(), 0, "{what}");
        };
        check("a symlink");
        std::fs::remove_file(&base).unwrap();
        std::fs::write(&base, "").unwrap();
        check("a file");
        // Someone else's (only root can make one here).
        if crate::private::uid() == 0 {
            std::fs::remove_file(&base).unwrap();
            std::fs::create_dir(&base).unwrap();
            std::os::unix::fs::chown(&base, Some(65534), None).unwrap();
            check("someone else's");
        }
    }

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
