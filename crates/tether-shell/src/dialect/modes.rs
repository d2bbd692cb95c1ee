//! `__tether_modes`, which every POSIX-family end mark calls first: `stty`
//! with the session's line modes on a terminal the engine cannot set
//! itself (a remote one, or busybox's: its line editor puts back the modes
//! it saw when it started reading), since a program may have left it raw;
//! nothing locally (the engine sets the PTY's modes itself).
//!
//! That `stty` is a fork and an exec at every end mark, about a quarter of
//! a remote shell's CPU for a short command, so it is skipped when nothing
//! can have changed the modes since the last one: the echo asked is the
//! same, the shell has no child now (a job stopped after changing them is
//! one: dash, busybox and zsh leave its modes), and it reaped none since.
//! The last is `cminflt`, the minor faults of the shell's waited-for
//! children in `/proc/self/stat` (field 11): every child that ran adds at
//! least one (its first write after the fork); builtins add none, and
//! those that change the modes (`read -s`) put them back. A process that
//! is not the shell's child (a job that left its session) could change the
//! modes just after a `stty` as well, so the skip adds no case the `stty`
//! covered. Without `/proc` (or the `children` file: Linux 3.17 and
//! `CONFIG_PROC_CHILDREN`) the `stty` runs every time.
//!
//! Right after a fork those files cost about a tenth of the `stty` each to
//! read, which a command that ran a program would pay for nothing: the
//! typed line says whether the command probably runs only builtins
//! (`__tether_q=1`, from [`probably_builtins`]), and only then does the end
//! mark look (and, after a `stty`, note `cminflt` for the next one). The
//! hint decides only whether to look: a wrong one costs a `stty` or a
//! look, never a skip that should not be.

use super::sh_quote;

/// Commands that are builtins (or keywords) in the POSIX-family shells and
/// run no program.
const BUILTINS: &[&str] = &[
    ":", "true", "false", "cd", "pwd", "echo", "printf", "export", "unset", "set", "shopt",
    "setopt", "unsetopt", "alias", "unalias", "readonly", "local", "declare", "typeset", "umask",
    "ulimit", "shift", "return", "test", "[", "[[", "let", "read", "type", "hash", "pushd", "popd",
    "dirs", "trap", "wait", "jobs", "kill", "getopts",
];

/// Keywords after which the next word is a command (or that stand alone).
const KEYWORDS: &[&str] = &[
    "if", "then", "elif", "else", "fi", "while", "until", "do", "done", "!", "{", "}", "time",
];

/// Whether `code` probably runs no program, only builtins: every command
/// of it (between `;`, `&&`, `||` and newlines) is assignments or starts
/// with a builtin's name, and nothing forks for sure (a subshell, a
/// substitution, a pipe, a background job). Names may be functions or
/// aliases and quotes may hide separators: this is a hint for
/// `__tether_modes`, whose checks decide.
pub(crate) fn probably_builtins(code: &str) -> bool {
    let code = code.replace("&&", ";").replace("||", ";");
    if code.contains(['(', ')', '`', '|', '&', '<']) {
        return false;
    }
    code.split([';', '\n']).all(|command| {
        let mut words = command.split_whitespace().skip_while(|w| {
            KEYWORDS.contains(w) || w.split_once('=').is_some_and(|(name, _)| is_name(name))
        });
        match words.next() {
            None | Some("for") => true,
            Some(first) => BUILTINS.contains(&first),
        }
    })
}

fn is_name(s: &str) -> bool {
    let mut bytes = s.bytes();
    bytes
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// The shell functions: `__tether_modes` with the `stty` arguments `args`
/// (`None`: nothing to do here), and `__tether_look`, which sets
/// `__tether_k` to `cminflt`, or `x` when it cannot be known. The fields
/// are split by `read` (patterns over the line cost several times more in
/// bash and zsh), and the line is used only when the command's name
/// (`(comm)`, which may hold spaces) is the second word and no later one
/// holds a `)`. When `cminflt` is unchanged the children are listed, then
/// it is read again: a child reaped in between (bash reaps in a signal
/// handler) is counted by the second reading. In a subshell (POSIX sh's
/// prompt hook runs it in one) the look is the subshell's own, so the
/// `stty` runs. Nothing here may fail: the ERR trap under the user's
/// `set -e` would take it for the command's status.
pub(super) fn modes_function(args: Option<&[String]>) -> String {
    const LOOK: &str = r#"__tether_look() {
  __tether_k=x
  { IFS=' ' read -r __tether_p __tether_n __tether_w1 __tether_w2 __tether_w3 __tether_w4 __tether_w5 __tether_w6 __tether_w7 __tether_w8 __tether_k __tether_r < /proc/self/stat; } 2>/dev/null || __tether_k=x
  case $__tether_n in '('*')') ;; *) __tether_k=x ;; esac
  case $__tether_w1$__tether_w2$__tether_w3$__tether_w4$__tether_w5$__tether_w6$__tether_w7$__tether_w8$__tether_k$__tether_r in *')'*) __tether_k=x ;; esac
}
"#;
    let Some(args) = args else {
        return "__tether_modes() { :; }\n".to_owned();
    };
    let words: Vec<String> = args.iter().map(|a| sh_quote(a)).collect();
    format!(
        r#"{LOOK}__tether_modes() {{
  case ${{__tether_q-}}${{__tether_m:+m}} in
    1m)
      __tether_look
      case $__tether_k/${{__tether_echo--echo}} in
        "$__tether_m")
          __tether_c=x
          {{ IFS= read -r __tether_c < /proc/thread-self/children; }} 2>/dev/null || :
          case $__tether_c in
            '')
              __tether_j=$__tether_k
              __tether_look
              case $__tether_k in "$__tether_j") return 0 ;; esac ;;
          esac ;;
      esac ;;
  esac
  command stty {} "${{__tether_echo--echo}}" 2>/dev/null || :
  __tether_m=
  case ${{__tether_q-}} in
    1)
      __tether_look
      case $__tether_k in
        ''|*[!0123456789]*) ;;
        *) __tether_m=$__tether_k/${{__tether_echo--echo}} ;;
      esac ;;
  esac
}}
unset __tether_m
"#,
        words.join(" ")
    )
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn the_hint_names_commands_of_builtins() {
        for code in [
            "true",
            "cd /tmp && pwd",
            "export A=1; B=2 C=3",
            "x=1",
            "if [ -d /tmp ]; then cd /tmp; fi",
            "echo $HOME\n: done",
            "",
        ] {
            assert!(probably_builtins(code), "{code:?}");
        }
        for code in [
            "hostname",
            "cd /tmp; ls",
            "x=$(date)",
            "echo `id`",
            "(cd /tmp)",
            "true | cat",
            "sleep 1 &",
            "read x < file",
            "A=1 make",
            "echo \"a; b\"",
        ] {
            assert!(!probably_builtins(code), "{code:?}");
        }
    }

    /// `__tether_modes` runs `stty` when a child could have changed the
    /// modes or the echo asked changed, and only then when the hint says
    /// to look, in every POSIX shell installed here; nothing it does fails
    /// (an ERR trap would see it) or trips `set -u`.
    #[test]
    fn the_modes_are_set_again_only_when_something_could_have_changed_them() {
        let dir = std::env::temp_dir().join(format!("tether-modes-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let log = dir.join("log");
        let fake = dir.join("stty");
        std::fs::write(
            &fake,
            format!("#!/bin/sh\necho \"stty $*\" >> '{}'\n", log.display()),
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
        let setup = modes_function(Some(&["sane".to_owned()]));
        let script = format!(
            r#"{setup}
m() {{ echo "$1" >> '{log}'; __tether_modes; }}
__tether_q=1
m first
m again
cd /; true; echo x >/dev/null; __tether_x=1; m builtins
/bin/true; m external
(:); m subshell
__tether_echo=echo; m echo
m same
sleep 30 & m child
kill $! 2>/dev/null; wait $! 2>/dev/null || :
__tether_q=; m unhinted
m unhinted
__tether_q=1; m hinted
m hinted
"#,
            log = log.display()
        );
        let want = "first\nstty sane -echo\nagain\nbuiltins\nexternal\nstty sane -echo\nsubshell\nstty sane -echo\necho\nstty sane echo\nsame\nchild\nstty sane echo\nunhinted\nstty sane echo\nunhinted\nstty sane echo\nhinted\nstty sane echo\nhinted\n";
        let path = format!(
            "{}:{}",
            dir.display(),
            std::env::var("PATH").unwrap_or_default()
        );
        for (sh, errexit) in [
            ("bash", "set -euE; trap 'echo ERR >> \"$L\"' ERR"),
            ("zsh", "set -eu; trap 'echo ERR >> \"$L\"' ZERR"),
            ("dash", "set -eu"),
            ("sh", "set -eu"),
            ("busybox", "set -eu"),
        ] {
            let _ = std::fs::remove_file(&log);
            let mut cmd = std::process::Command::new(sh);
            if sh == "busybox" {
                cmd.arg("sh");
            }
            let Ok(out) = cmd
                .arg("-c")
                .arg(format!("L='{}'; {errexit}\n{script}", log.display()))
                .env("PATH", &path)
                .output()
            else {
                continue;
            };
            assert!(out.status.success(), "{sh}: {out:?}");
            assert_eq!(std::fs::read_to_string(&log).unwrap(), want, "{sh}");
        }
        // A shell whose name holds `) (` and spaces could be misread (as
        // its flags, which do not change): it is not read at all, and the
        // stty runs every time.
        let odd = dir.join("sh) (x y");
        if std::os::unix::fs::symlink("/bin/bash", &odd).is_ok() {
            let _ = std::fs::remove_file(&log);
            let out = std::process::Command::new(&odd)
                .arg("-c")
                .arg(&script)
                .env("PATH", &path)
                .output()
                .unwrap();
            assert!(out.status.success(), "{out:?}");
            let log = std::fs::read_to_string(&log).unwrap();
            assert_eq!(log.matches("stty").count(), 12, "{log}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
