//! The zsh dialect.

use std::path::{Path, PathBuf};

use super::heredoc::ends_with_continuation;
use super::{Dialect, SetupContext, sh_quote};

/// zsh, interactive, without its line editor (`+Z`: no echo, no redraws).
#[derive(Clone, Copy, Debug, Default)]
pub struct Zsh;

const FUNCTIONS: &str = r#"
setopt no_err_exit no_prompt_sp no_prompt_cr 2>/dev/null
unset HISTFILE; SAVEHIST=0
unsetopt zle 2>/dev/null
__tether_rc() { return "$1" }
__tether_enc() {
  case $1 in
    (*[!ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789/._+,@:=-]*) ;;
    (*) __tether_cwd=$1; return 0 ;;
  esac
  emulate -L zsh
  setopt no_multibyte
  local c i p=$1 out=
  for (( i = 1; i <= ${#p}; i++ )); do
    c=${p[i]}
    case $c in
      ([ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789/._+,@:=-]) out+=$c ;;
      (*) builtin printf -v c '%%%02X' "'$c"; out+=$c ;;
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
__tether_pc() {
  [[ ${precmd_functions[1]-} == __tether_first && ${precmd_functions[-1]-} == __tether_prompt ]] || precmd_functions=(__tether_first ${${precmd_functions:#__tether_prompt}:#__tether_first} __tether_prompt)
}
__tether_first() {
  local st=$?
  __tether_lastpid
  __tether_kp=$__tether_lp
  return $st
}
__tether_fb() { __tether_end "${__tether_n-0}" "$@" }
__tether_go() {
  __tether_n=$1 __tether_pending=1 __tether_ran=
  builtin printf '\033]6973;%s%s%s;start\007' SECRET_A SECRET_B "$1"
}
__tether_prompt() {
  local st=$?
  if [[ -n ${__tether_pending-} ]]; then
    __tether_fb "$st"
  fi
  # A theme's hooks set the prompts again (powerlevel9k): expanded after
  # the ready mark, their command substitutions would run while the next
  # line is typed.
  PS1='' PROMPT='' RPROMPT='' RPS1='' PS2=''
  # The hooks' window opens where the first hook ran (a fallback end mark
  # is printed only now, after the user's hooks).
  __tether_hp=${__tether_kp:-$__tether_lp}
  __tether_kp=
  __tether_lastpid
  builtin printf '\033]6973;%s%s%s;ready;pids=%s-%s\007' SECRET_A SECRET_B "${__tether_n-}" "$__tether_hp" "$__tether_lp"
  return $st
}
__tether_exit() {
  local st=$?
  [[ -n ${__tether_pending-} ]] && __tether_fb "$st" exiting
  return $st
}
__tether_ls=0
__tether_lastpid() {
  __tether_lp=
  { builtin read -r __tether_la __tether_la __tether_la __tether_la __tether_lp </proc/loadavg; } 2>/dev/null
}
__tether_pc
zshexit_functions=(__tether_exit ${zshexit_functions:#__tether_exit})
PS1='' PROMPT='' RPROMPT='' RPS1='' PS2='' PROMPT_EOL_MARK=''
"#;

const ZERR_TRAP: &str = "trap '__tether_s=$? __tether_tps=\"${pipestatus[*]}\"; if [[ -o errexit ]]; then setopt no_err_exit; __tether_st=$__tether_s; return $__tether_s; fi' ZERR";

impl Dialect for Zsh {
    fn name(&self) -> &'static str {
        "zsh"
    }

    fn argv(&self, run_rc_files: bool, _setup: &Path) -> (String, Vec<String>) {
        let mut args = vec!["+Z".to_owned()];
        if !run_rc_files {
            args.push("-f".to_owned());
        }
        args.push("-i".to_owned());
        ("zsh".to_owned(), args)
    }

    fn env(
        &self,
        run_rc_files: bool,
        setup: &Path,
        base: &[(String, String)],
    ) -> Vec<(String, String)> {
        if !run_rc_files {
            return Vec::new();
        }
        // zsh reads $ZDOTDIR/.zshenv and .zshrc: point it at ours, which
        // read the user's and then our setup.
        let user = base
            .iter()
            .find(|(k, _)| k == "ZDOTDIR")
            .or_else(|| base.iter().find(|(k, _)| k == "HOME"))
            .map(|(_, v)| v.clone())
            .unwrap_or_default();
        vec![
            ("ZDOTDIR".to_owned(), zdot(setup).display().to_string()),
            ("__TETHER_ZDOTDIR".to_owned(), user),
        ]
    }

    fn extra_files(&self, run_rc_files: bool, setup: &Path) -> Vec<(PathBuf, String)> {
        if !run_rc_files {
            return Vec::new();
        }
        let ours = sh_quote(&zdot(setup).display().to_string());
        let zshenv = format!(
            "ZDOTDIR=${{__TETHER_ZDOTDIR:-$HOME}}\n[[ -r $ZDOTDIR/.zshenv ]] && builtin . $ZDOTDIR/.zshenv\nZDOTDIR={ours}\n"
        );
        let zshrc = format!(
            "ZDOTDIR=${{__TETHER_ZDOTDIR:-$HOME}}\nunset __TETHER_ZDOTDIR\n[[ -r $ZDOTDIR/.zshrc ]] && builtin . $ZDOTDIR/.zshrc\nbuiltin . {}\n",
            sh_quote(&setup.display().to_string())
        );
        vec![
            (zdot(setup).join(".zshenv"), zshenv),
            (zdot(setup).join(".zshrc"), zshrc),
        ]
    }

    fn setup_script(&self, ctx: &SetupContext<'_>) -> String {
        let mut s = format!(
            "__tether_dir={}\n{}",
            sh_quote(&ctx.dir.display().to_string()),
            super::with_secret(FUNCTIONS, ctx.nonce)
        );
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
        // The functions turn the line editor off (`unsetopt zle`) for the
        // next line on.
        super::nested_from(&self.setup_script(ctx), seq)
    }

    fn nested_load(&self, path: &Path) -> String {
        super::builtin_source(path)
    }

    fn command_file(&self, code: &str, last_status: i32) -> String {
        // The ZERR trap runs after a failing pipeline and resets
        // `pipestatus`; it saves it first, and the last line takes the saved
        // one when the user's last pipeline failed.
        format!(
            "__tether_ran=1 __tether_st= __tether_ps= __tether_tps=; __tether_rc {last_status} && :; {code}\n__tether_ps=\"${{pipestatus[*]}}\" __tether_st=$?\n[[ $__tether_st != 0 && -n $__tether_tps ]] && __tether_ps=$__tether_tps\n"
        )
    }

    fn inline_file(&self, path: &Path, bytes: &[u8]) -> Option<String> {
        super::printf_to_file("builtin", path, bytes)
    }

    /// The prompt hook (the last of `precmd_functions`: it prints the ready
    /// mark after the user's hooks, which zsh gives the command's `$?`)
    /// and the ZERR trap put back, then as in bash: the marks' nonce is the
    /// session secret followed by `seq`.
    fn wrapper_line(&self, path: &Path, seq: u64, _code: &str) -> String {
        format!(
            "__tether_pc; {ZERR_TRAP}; __tether_go {seq}; builtin . {path}; __tether_end {seq} $?; __tether_rc $__tether_ls && :\n",
            path = sh_quote(&path.display().to_string()),
        )
    }

    fn syntax_check(&self, file: &Path) -> Option<(String, Vec<String>)> {
        Some((
            "zsh".to_owned(),
            vec!["-n".to_owned(), file.display().to_string()],
        ))
    }

    fn incomplete_probe(&self) -> Option<&'static str> {
        Some("\n:\n")
    }

    fn is_incomplete(&self, code: &str, check_stderr: &str, probe_stderr: Option<&str>) -> bool {
        if ends_with_continuation(code) || super::unterminated_heredoc(code) {
            return true;
        }
        if check_stderr.contains("unmatched") {
            return true;
        }
        // zsh names the last token for unfinished input and for wrong input
        // alike; unfinished input's error moves when more text follows.
        check_stderr.contains("parse error")
            && probe_stderr.is_some_and(|p| strip_file(p) != strip_file(check_stderr))
    }

    fn file_in_messages(&self, path: &Path) -> Option<(String, String)> {
        // `/…/cmd-7.zsh:2: parse error` reads as `zsh:2: parse error`.
        Some((path.display().to_string(), "zsh".to_owned()))
    }

    fn has_pipe_status(&self) -> bool {
        true
    }

    fn ready_at_prompt(&self) -> bool {
        true
    }
}

fn zdot(setup: &Path) -> PathBuf {
    setup.parent().unwrap_or(setup).join("zdot")
}

/// The message without its `file:` prefix (the probe is another file).
fn strip_file(msg: &str) -> String {
    msg.lines()
        .map(|l| l.split_once(':').map_or(l, |(_, rest)| rest))
        .collect::<Vec<_>>()
        .join("\n")
}
