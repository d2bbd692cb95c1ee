//! The bash dialect.

use std::path::Path;

use super::heredoc::ends_with_continuation;
use super::{Dialect, SetupContext, sh_quote};

/// GNU bash, started interactive without line editing (input is not
/// echoed, and nothing redraws).
#[derive(Clone, Copy, Debug, Default)]
pub struct Bash;

/// Shared shell code: functions and hooks, installed after the user's
/// start-up files. `SECRET_A SECRET_B` are the session secret's halves:
/// they live only in these function bodies (never exported, never in a
/// variable), read by the shell from its private setup file; the typed
/// line names only the command's number. It must survive `set -u` (every expansion has a default),
/// `set -o noclobber` (`>|`), redefined builtins (`builtin`), and a hostile
/// PROMPT_COMMAND. Ours are the first and the last entry of
/// PROMPT_COMMAND (string or array), put back by every wrapper line and end
/// mark: `__tether_keep` keeps `$?` for the user's hooks, and
/// `__tether_prompt` prints the ready mark after them (with the fallback end
/// mark of a line that was cut short).
const FUNCTIONS: &str = r#"
set +o errexit +o history
unset HISTFILE
trap - DEBUG RETURN
__tether_rc() { return "$1"; }
__tether_enc() {
  case $1 in
    *[!ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789/._+,@:=-]*) ;;
    *) __tether_cwd=$1; return 0 ;;
  esac
  local LC_ALL=C c i p=$1 out=
  for ((i = 0; i < ${#p}; i++)); do
    c=${p:i:1}
    case $c in
      [ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789/._+,@:=-]) out+=$c ;;
      *) builtin printf -v c '%%%02X' "'$c"; out+=$c ;;
    esac
  done
  __tether_cwd=$out
}
__tether_end() {
  local st=$2 ps
  __tether_modes
  [[ -n ${__tether_st-} ]] && st=$__tether_st
  ps=${__tether_ps-}
  [[ -n $ps ]] || ps=$st
  __tether_pending=
  builtin export -p >| "$__tether_dir/env" 2>/dev/null
  __tether_enc "$PWD"
  __tether_held
  builtin printf '\033]6973;%s%s%s;%s;exit=%s;pipe=%s;ran=%s;held=%s;cwd=%s\007' SECRET_A SECRET_B "$1" "${3:-end}" "$st" "$ps" "${__tether_ran-}" "${__tether_h--}" "$__tether_cwd"
  __tether_lastpid
  __tether_ls=$st
  __tether_pc
  return 0
}
__tether_fb() { __tether_end "${__tether_n-0}" "$@"; }
__tether_keep() {
  __tether_kst=$?
  __tether_lastpid
  __tether_kp=$__tether_lp
  return "$__tether_kst"
}
__tether_prompt() {
  local st=$?
  [[ -n ${__tether_kst-} ]] && st=$__tether_kst
  __tether_kst=
  if [[ -n ${__tether_pending-} ]]; then
    __tether_fb "$st"
  fi
  # A hook may set the prompt again (`PS1='$(git branch)'`): expanded
  # after the ready mark, its command substitutions would run while the
  # next line is typed.
  PS1='' PS2=''
  # The hooks' window opens where the first hook ran: a fallback end mark
  # (a line cut short) is printed only now, after the user's hooks.
  __tether_hp=${__tether_kp:-$__tether_lp}
  __tether_kp=
  __tether_lastpid
  builtin printf '\033]6973;%s%s%s;ready;pids=%s-%s\007' SECRET_A SECRET_B "${__tether_n-}" "$__tether_hp" "$__tether_lp"
  return "$st"
}
__tether_pc() {
  local p e
  if [[ -n ${PROMPT_COMMAND+set} ]] && (( BASH_VERSINFO[0] * 100 + BASH_VERSINFO[1] >= 501 )) && [[ ${PROMPT_COMMAND@a} == *a* ]]; then
    local -a n=()
    for e in "${PROMPT_COMMAND[@]}"; do
      [[ $e == __tether_keep || $e == __tether_prompt ]] || n+=("$e")
    done
    PROMPT_COMMAND=(__tether_keep "${n[@]}" __tether_prompt)
    return 0
  fi
  p=${PROMPT_COMMAND-}
  p=${p#__tether_keep$'\n'}
  p=${p%$'\n'__tether_prompt}
  p=${p//__tether_keep/:}
  p=${p//__tether_prompt/:}
  PROMPT_COMMAND=__tether_keep$'\n'$p$'\n'__tether_prompt
}
__tether_exit() {
  local st=$?
  [[ -n ${__tether_pending-} ]] && __tether_fb "$st" exiting
  return "$st"
}
__tether_go() {
  __tether_pc
  ERRTRAP
  __tether_n=$1 __tether_pending=1 __tether_ran=
  builtin printf '\033]6973;%s%s%s;start\007' SECRET_A SECRET_B "$1"
}
builtin export -nf __tether_end __tether_fb __tether_go
__tether_ls=0
__tether_lastpid() {
  __tether_lp=
  { builtin read -r __tether_la __tether_la __tether_la __tether_la __tether_lp </proc/loadavg; } 2>/dev/null
}
__tether_grab() { __tether_utrap=$2; }
__tether_utrap=
builtin trap -p EXIT >| "$__tether_dir/traps" 2>/dev/null
IFS= read -r -d '' __tether_t < "$__tether_dir/traps"
[[ $__tether_t == 'trap -- '* ]] && eval "__tether_grab ${__tether_t#trap }"
builtin trap "__tether_exit${__tether_utrap:+; $__tether_utrap}" EXIT
unset __tether_t
__tether_pc
PS1='' PS2='' PS0=''
set -o errtrace
"#;

/// The ERR trap: when the user's code turned on `set -e` and a command
/// fails, stop that code (return from the sourced file) instead of letting
/// errexit end the interactive shell. Set again before every command, by
/// `__tether_go` (in [`FUNCTIONS`] for `ERRTRAP`).
const ERR_TRAP: &str = "trap '__tether_s=$?; if [[ $- == *e* ]]; then set +e; __tether_st=$__tether_s; return $__tether_s 2>/dev/null; fi' ERR";

impl Dialect for Bash {
    fn name(&self) -> &'static str {
        "bash"
    }

    fn argv(&self, run_rc_files: bool, setup: &Path) -> (String, Vec<String>) {
        // With rc files, our setup is the rc file (bash still reads the
        // system bashrc first, as it would for the user); it sources
        // ~/.bashrc itself, so nothing the user's rc installs (a failing
        // PROMPT_COMMAND under `set -e`) runs before our setup.
        let mut args = vec!["--noediting".to_owned()];
        if run_rc_files {
            args.extend(["--rcfile".to_owned(), setup.display().to_string()]);
        } else {
            args.extend(["--norc".to_owned(), "--noprofile".to_owned()]);
        }
        args.push("-i".to_owned());
        ("bash".to_owned(), args)
    }

    fn setup_script(&self, ctx: &SetupContext<'_>) -> String {
        let mut s = String::new();
        if ctx.run_rc_files {
            s.push_str("[ -r ~/.bashrc ] && builtin . ~/.bashrc\n");
        }
        s.push_str(&format!(
            "__tether_dir={}\n{}",
            sh_quote(&ctx.dir.display().to_string()),
            super::with_secret(FUNCTIONS, ctx.nonce).replace("ERRTRAP", ERR_TRAP)
        ));
        s.push_str(&super::restore(ctx, "builtin"));
        // A snapshot taken under `set -a` holds the last shell's command
        // number: the first ready mark has none.
        s.push_str(super::SETUP_END);
        s
    }

    fn load_setup(&self, run_rc_files: bool, path: &Path) -> Option<String> {
        super::source_line(run_rc_files, path)
    }

    fn nested_setup(&self, ctx: &SetupContext<'_>, seq: u64) -> Option<String> {
        // Line editing off (readline echoes and redraws what is typed):
        // from the next line on, the shell reads as the session's does.
        let own = self.setup_script(&SetupContext {
            run_rc_files: false,
            ..ctx.clone()
        });
        super::nested_from(&own, seq).map(|s| format!("set +o emacs +o vi 2>/dev/null\n{s}"))
    }

    fn nested_load(&self, path: &Path) -> String {
        super::builtin_source(path)
    }

    fn command_file(&self, code: &str, last_status: i32) -> String {
        // `__tether_rc N && :` sets `$?` for the user's code without
        // tripping errexit or the ERR trap; it shares the code's first line,
        // so the shell's messages give the user's own line numbers. The last
        // line records `$?` and PIPESTATUS of the user's last pipeline
        // before anything changes them.
        // The assignments leave `$?` at 0 already: `__tether_rc` is called
        // only for another status.
        let status = match last_status {
            0 => String::new(),
            n => format!("__tether_rc {n} && :; "),
        };
        format!(
            "__tether_ran=1 __tether_st= __tether_ps=; {status}{code}\n__tether_ps=\"${{PIPESTATUS[*]}}\" __tether_st=$?\n"
        )
    }

    fn inline_file(&self, path: &Path, bytes: &[u8]) -> Option<String> {
        super::printf_to_file("builtin", path, bytes)
    }

    /// `__tether_go` (the prompt hook and the ERR trap put back, the
    /// command's number recorded for the fallback end mark, the start
    /// mark), the command file at top level (so its `declare`s and
    /// positional parameters are the shell's), and the end mark. The
    /// marks' nonce is the session secret the shell read from its setup
    /// file followed by `seq`: nothing typed here can forge one.
    fn wrapper_line(&self, path: &Path, seq: u64, _code: &str) -> String {
        format!(
            "__tether_go {seq}; builtin . {path}; __tether_end {seq} $?; __tether_rc \"$__tether_ls\" && :\n",
            path = sh_quote(&path.display().to_string()),
        )
    }

    fn syntax_check(&self, file: &Path) -> Option<(String, Vec<String>)> {
        Some((
            "bash".to_owned(),
            vec!["-n".to_owned(), file.display().to_string()],
        ))
    }

    fn is_incomplete(&self, code: &str, check_stderr: &str, _probe: Option<&str>) -> bool {
        ends_with_continuation(code)
            || check_stderr.contains("unexpected end of file")
            || check_stderr.contains("unexpected EOF")
            || check_stderr.contains("delimited by end-of-file")
    }

    fn has_pipe_status(&self) -> bool {
        true
    }

    fn ready_at_prompt(&self) -> bool {
        true
    }
}
