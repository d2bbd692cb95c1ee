//! A process in a host's shell terminal, looked at on the host (its argv,
//! user and working directory, and the session's shell pid there): what
//! tells a shell a command started from the session's own shell reading
//! in a builtin, where the terminal is not inspected on this machine.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use tether_transport::{BoxFuture, RemoteHost};

use super::host::in_dir;

/// What the host says of one process.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Looked {
    /// The pid of the session's shell on the host.
    pub(crate) session_shell: i32,
    /// The real user id of the session's shell.
    pub(crate) session_uid: u32,
    /// The process's argv.
    pub(crate) argv: Vec<String>,
    /// Its real user id, and that user's name where the host knows it.
    pub(crate) uid: u32,
    pub(crate) user: Option<String>,
    /// Its working directory, where it can be read.
    pub(crate) cwd: Option<PathBuf>,
}

/// Prints `s PID` and `v UID` (the session's shell), `u UID`, `w NAME`,
/// `c CWD`, then `a ARG` per argv word of process `$p`.
const SCRIPT: &str = r#"s=$(cat "$d/shell.pid" 2>/dev/null) || exit 3
[ -r "/proc/$p/cmdline" ] || exit 3
echo "s $s"
uid() { while read -r k v rest; do case $k in Uid:) echo "$v"; return ;; esac; done < "/proc/$1/status"; }
echo "v $(uid "$s")"
u=$(uid "$p")
echo "u $u"
echo "w $(id -nu "$u" 2>/dev/null)"
echo "c $(readlink "/proc/$p/cwd" 2>/dev/null)"
tr '\0' '\n' < "/proc/$p/cmdline" | while IFS= read -r a; do echo "a $a"; done
"#;

/// Looks at process `pid` on `host`, for the session whose directory
/// there is `dir`; `None` when it is gone or the host cannot tell.
pub(crate) fn look(
    host: Arc<dyn RemoteHost>,
    dir: PathBuf,
    pid: i32,
) -> BoxFuture<'static, Option<Looked>> {
    Box::pin(async move {
        let line = in_dir(&dir, &format!("p={pid}\n{SCRIPT}"));
        let out = host.run(line, Vec::new()).await.ok()?;
        if out.status != Some(0) {
            return None;
        }
        parse(&String::from_utf8_lossy(&out.stdout))
    })
}

fn parse(out: &str) -> Option<Looked> {
    let mut looked = Looked::default();
    for line in out.lines() {
        let (key, value) = line.split_once(' ').unwrap_or((line, ""));
        match key {
            "s" => looked.session_shell = value.trim().parse().ok()?,
            "u" => looked.uid = value.trim().parse().ok()?,
            "v" => looked.session_uid = value.trim().parse().ok()?,
            "w" => looked.user = (!value.is_empty()).then(|| value.to_owned()),
            "c" => looked.cwd = (!value.is_empty()).then(|| Path::new(value).to_path_buf()),
            "a" => looked.argv.push(value.to_owned()),
            _ => {}
        }
    }
    (!looked.argv.is_empty()).then_some(looked)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn the_hosts_answer_is_read() {
        let out = "s 41\nv 1000\nu 1000\nw alice\nc /home/alice\na bash\na --norc\na \n";
        let l = parse(out).unwrap();
        assert_eq!((l.session_shell, l.session_uid), (41, 1000));
        assert_eq!((l.uid, l.user.as_deref()), (1000, Some("alice")));
        assert_eq!(l.cwd.as_deref(), Some(Path::new("/home/alice")));
        assert_eq!(l.argv, ["bash", "--norc", ""]);
        assert_eq!(parse("s 41\nu 0\n"), None, "no argv: gone");
        assert_eq!(parse("s x\nu 0\na bash\n"), None, "not a pid");
    }
}
