//! The POSIX sh dialect (dash, busybox sh).
//!
//! POSIX sh has no PIPESTATUS, no prompt hook and no ERR trap, so the
//! fallback end mark (for a line the shell abandons, as on a `set -u`
//! error or C-c) comes from PS1, which dash and busybox expand (a command
//! substitution there runs only when the line was abandoned), and
//! `set -e` followed by a failing command ends the shell: the result is
//! `shell_exited` and the next call gets a fresh shell with the cwd and
//! exported variables restored (bash and zsh stop the command instead).

use std::path::Path;

use super::heredoc::ends_with_continuation;
use super::{Dialect, SetupContext, sh_quote};

/// A POSIX shell: `dash`, `busybox sh`, or another `sh`.
#[derive(Clone, Debug)]
pub struct Posix {
    program: String,
    args: Vec<String>,
}

impl Default for Posix {
    fn default() -> Self {
        Posix::new("sh", &[])
    }
}

impl Posix {
    /// `program` with leading `args` (e.g. `busybox`, `["sh"]`).
    pub fn new(program: &str, args: &[&str]) -> Self {
        Posix {
            program: program.to_owned(),
            args: args.iter().map(|a| (*a).to_owned()).collect(),
        }
    }

    /// Debian's dash.
    pub fn dash() -> Self {
        Posix::new("dash", &[])
    }

    /// busybox's ash.
    pub fn busybox() -> Self {
        Posix::new("busybox", &["sh"])
    }
}

const FUNCTIONS: &str = r#"
set +e
unset HISTFILE
__tether_rc() { return "$1"; }
__tether_enc() {
  case $1 in
    *[!ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789/._+,@:=-]*) ;;
    *) command printf '%s' "$1"; return 0 ;;
  esac
  __tether_r=$1
  while [ -n "$__tether_r" ]; do
    __tether_t=${__tether_r#?}
    __tether_c=${__tether_r%"$__tether_t"}
    __tether_r=$__tether_t
    case $__tether_c in
      [ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789/._+,@:=-]) command printf '%s' "$__tether_c" ;;
      *) command printf '%%%02X' "'$__tether_c" ;;
    esac
  done
}
__tether_end() {
  __tether_e=$2
  __tether_modes
  [ -n "${__tether_st-}" ] && __tether_e=$__tether_st
  __tether_done=
  command export -p >| "$__tether_dir/env" 2>/dev/null
  __tether_held
  command printf '\033]6973;%s%s%s;%s;exit=%s;ran=%s;held=%s;cwd=' SECRET_A SECRET_B "$1" "${3:-end}" "$__tether_e" "${__tether_ran-}" "${__tether_h--}"
  __tether_enc "$PWD"
  command printf '\007'
  return 0
}
__tether_fb() { __tether_end "${__tether_n-0}" "$@"; }
__tether_go() {
  unset __tether_done
  __tether_ran= __tether_n=$1
  command printf '\033]6973;%s%s%s;start\007' SECRET_A SECRET_B "$1"
}
__tether_exit() {
  __tether_x=$?
  [ -z "${__tether_done+d}" ] && __tether_fb "$__tether_x" exiting
  return "$__tether_x"
}
__tether_grab() { [ "$3" = EXIT ] && __tether_utrap=$2; return 0; }
__tether_utrap=
command trap >| "$__tether_dir/traps" 2>/dev/null
while IFS= read -r __tether_l; do
  case $__tether_l in
    "trap -- "*" EXIT") eval "__tether_grab ${__tether_l#trap }" ;;
  esac
done < "$__tether_dir/traps"
command trap "__tether_exit${__tether_utrap:+; $__tether_utrap}" EXIT
unset __tether_l
__tether_done=
PS1='${__tether_done-$(__tether_fb $?)}${__tether_done=}' PS2=''
"#;

impl Dialect for Posix {
    fn name(&self) -> &'static str {
        "sh"
    }

    fn argv(&self, _run_rc_files: bool, _setup: &Path) -> (String, Vec<String>) {
        let mut args = self.args.clone();
        args.push("-i".to_owned());
        (self.program.clone(), args)
    }

    fn env(
        &self,
        _run_rc_files: bool,
        setup: &Path,
        base: &[(String, String)],
    ) -> Vec<(String, String)> {
        // An interactive POSIX shell reads $ENV at start: ours, which reads
        // the user's first when asked.
        let user = base
            .iter()
            .find(|(k, _)| k == "ENV")
            .map(|(_, v)| v.clone())
            .unwrap_or_default();
        vec![
            ("ENV".to_owned(), setup.display().to_string()),
            ("__TETHER_USER_ENV".to_owned(), user),
        ]
    }

    fn setup_script(&self, ctx: &SetupContext<'_>) -> String {
        let mut s = String::new();
        if ctx.run_rc_files {
            s.push_str("[ -n \"${__TETHER_USER_ENV-}\" ] && [ -r \"$__TETHER_USER_ENV\" ] && . \"$__TETHER_USER_ENV\"\n");
        }
        s.push_str("ENV=$__TETHER_USER_ENV; unset __TETHER_USER_ENV\n");
        s.push_str(&format!(
            "__tether_dir={}\n{}",
            sh_quote(&ctx.dir.display().to_string()),
            super::with_secret(FUNCTIONS, ctx.nonce)
        ));
        s.push_str(&super::restore_and_ready(ctx, "command"));
        s
    }

    fn load_setup(&self, _run_rc_files: bool, _path: &Path) -> Option<String> {
        None
    }

    fn nested_setup(&self, ctx: &SetupContext<'_>, seq: u64) -> Option<String> {
        // dash and busybox read lines without an editor unless told
        // (`set -o vi`, `set -o emacs`): turned off where they have one.
        let mut s = format!(
            "set +o vi 2>/dev/null; set +o emacs 2>/dev/null\n__tether_dir={}\n{}",
            sh_quote(&ctx.dir.display().to_string()),
            super::with_secret(FUNCTIONS, ctx.nonce)
        );
        s.push_str(&super::restore(ctx, "command"));
        s.push_str(&format!(
            "__tether_n={seq}\ncommand printf '\\033]6973;%s%s%s;ready\\007' {} {} {seq}\n",
            ctx.nonce.a, ctx.nonce.b
        ));
        Some(s)
    }

    fn nested_load(&self, path: &Path) -> String {
        format!("command . {}\n", sh_quote(&path.display().to_string()))
    }

    fn command_file(&self, code: &str, last_status: i32) -> String {
        // The prefix shares the code's first line, so the shell's messages
        // give the user's own line numbers.
        format!(
            "__tether_ran=1 __tether_st=; __tether_rc {last_status} && :; {code}\n__tether_st=$?\n"
        )
    }

    fn inline_file(&self, path: &Path, bytes: &[u8]) -> Option<String> {
        super::printf_to_file("command", path, bytes)
    }

    fn wrapper_line(&self, path: &Path, seq: u64, _code: &str) -> String {
        // The secret lives only in the functions' bodies (functions are
        // never exported, nor listed by `set`); PS1 calls `__tether_fb`
        // when the line was abandoned (`__tether_done` still unset), in a
        // subshell that only that path pays for.
        format!(
            "__tether_go {seq}; . {path} || __tether_st=$?; __tether_end {seq} $?\n",
            path = sh_quote(&path.display().to_string()),
        )
    }

    fn syntax_check(&self, file: &Path) -> Option<(String, Vec<String>)> {
        let mut args = self.args.clone();
        args.extend(["-n".to_owned(), file.display().to_string()]);
        Some((self.program.clone(), args))
    }

    fn is_incomplete(&self, code: &str, check_stderr: &str, _probe: Option<&str>) -> bool {
        let msg = check_stderr.to_ascii_lowercase();
        ends_with_continuation(code)
            || super::unterminated_heredoc(code)
            || msg.contains("unterminated quoted string")
            || msg.contains("end of file unexpected")
            || msg.contains("unexpected end of file")
    }

    fn has_pipe_status(&self) -> bool {
        false
    }

    fn line_reader_keeps_modes(&self) -> bool {
        self.program == "busybox"
    }
}
