//! The fish dialect (fish 3, tested with Debian's fish 3.6).
//!
//! fish has no mode without its line editor: it echoes and highlights
//! what is typed, so the typed wrapper line (no control characters, no
//! part of the secret) lands on the terminal before the start mark, and
//! fish's own drawing (the prompt, the missing-newline mark) after the end
//! mark. It starts with `-C`, which sources the setup right after the
//! user's `config.fish` (`--no-config` skips that). The prompts are
//! emptied: `fish_prompt` prints only the ready mark, once per command (to
//! the terminal, not to the prompt fish captures), after the user's
//! `fish_prompt` event handlers, which see the command's `$status`. Until
//! that first prompt, `FISH_UNIT_TESTS_RUNNING` is set (not exported):
//! fish's first-prompt setup then starts no man-page scan in the
//! background (a process holding the terminal) and no bracketed paste.
//!
//! A command file is sourced at top level (its `set` and `function` are
//! the shell's); its last line saves `$status` and `$pipestatus`. fish
//! parses a file whole before it runs any of it: a syntax error leaves
//! `ran=` empty, and the checker (`fish --no-execute`) tells it from a
//! file that never arrived. fish has no `set -e` nor `set -u`. `exit` in a
//! sourced file only leaves the file: the setup's `exit` function notes
//! the code, and the wrapper's end ends the shell with it. Jobs run under
//! `status job-control full`, so a program in a command file is in front
//! in its own process group, as one typed at the prompt.
//!
//! fish sets the terminal's modes for each program itself, with echo,
//! canonical input and CR before LF forced on (`term_fix_external_modes`):
//! a line sent to a program is echoed into the output, and the saved
//! output ([`Dialect::terminal_adds_cr`]) takes back the CRs.
//!
//! The exported-variables snapshot is `set -gx NAME 'VALUE'` lines (fish
//! quoting: `\\` and `\'`), sourced again after a restart (a value's
//! trailing newlines are not kept).

use std::path::Path;

use super::{Dialect, SetupContext};

/// fish, interactive.
#[derive(Clone, Copy, Debug, Default)]
pub struct Fish;

/// `s` as a fish single-quoted word.
pub fn quote_for_fish(s: &str) -> String {
    format!("'{}'", s.replace('\\', "\\\\").replace('\'', "\\'"))
}

/// The engine's functions, after the user's start-up files.
/// `SECRET_A SECRET_B` are the session secret's halves, kept only in these
/// function bodies.
const FUNCTIONS: &str = r#"
set -g fish_history ''
status job-control full
set -g fish_greeting ''
set -q FISH_UNIT_TESTS_RUNNING; or set -g __tether_quiet 1
set -q __tether_quiet[1]; and set -g FISH_UNIT_TESTS_RUNNING 1
set -g __tether_ls 0
set -g __tether_pending
set -g __tether_lp
function __tether_rc; return $argv[1]; end
function __tether_in; set -g __tether_ran 1; return $argv[1]; end
function __tether_lastpid
  set -g __tether_lp
  read -l __tether_a __tether_b __tether_c __tether_d lp < /proc/loadavg 2>/dev/null
  and set -g __tether_lp $lp
  return 0
end
function __tether_enc
  string escape --style=url -- $argv[1] | string replace -a '%2F' / | string replace -a '%3D' = | string replace -a '%3A' : | string replace -a '%2C' , | string replace -a '%40' @ | string replace -a '%2B' +
end
function __tether_snapshot
  for n in (set -nx)
    string match -qr '^__tether_' -- $n; and continue
    printf "set -gx %s '%s'\n" $n (string replace -a -- '\\' '\\\\' "$$n" | string replace -a -- "'" "\\'" | string collect)
  end > $__tether_dir/env 2>/dev/null
end
function exit
  set -l st $status
  set -q argv[1]; and set st $argv[1]
  set -g __tether_exiting $st
  builtin exit $st
end
function __tether_end
  set -l st $argv[2]
  if set -q __tether_exiting[1]
    builtin exit $__tether_exiting
  end
  set -l ps $argv[3..]
  set -l kind end
  set -q __tether_kind[1]; and set kind $__tether_kind
  set -g __tether_kind
  if set -q __tether_r[1]
    set st $__tether_r[1]
    set ps $__tether_r[2..]
  end
  set -q ps[1]; or set ps $st
  __tether_modes
  set -g __tether_pending
  __tether_snapshot
  printf '\e]6973;%s%s%s;%s;exit=%s;pipe=%s;ran=%s;held=-;cwd=%s\a' SECRET_A SECRET_B $argv[1] $kind $st "$ps" "$__tether_ran" (__tether_enc $PWD)
  set -g __tether_ls $st
  set -g __tether_want 1
  return 0
end
function __tether_go
  set -g __tether_n $argv[1]
  set -g __tether_pending 1
  set -g __tether_ran
  set -g __tether_r
  printf '\e]6973;%s%s%s;start\a' SECRET_A SECRET_B $argv[1]
end
function __tether_post --on-event fish_postexec
  set -l st $status
  if set -q __tether_pending[1]
    __tether_end "$__tether_n" $st
  end
  return $st
end
function __tether_ready
  set -l st $status
  if set -q __tether_quiet[1]
    set -e __tether_quiet
    set -ge FISH_UNIT_TESTS_RUNNING
  end
  if set -q __tether_pending[1]
    __tether_end "$__tether_n" $st
  end
  set -q __tether_want[1]; or return $st
  set -g __tether_want
  set -l hp $__tether_lp
  __tether_lastpid
  printf '\e]6973;%s%s%s;ready;pids=%s-%s\a' SECRET_A SECRET_B "$__tether_n" "$hp" "$__tether_lp" > /dev/tty
  return $st
end
function fish_prompt; __tether_ready; end
function fish_right_prompt; end
function fish_mode_prompt; end
function fish_title; end
function __tether_exit --on-event fish_exit
  set -l st $status
  set -q __tether_exiting[1]; and set st $__tether_exiting
  set -g __tether_exiting
  if set -q __tether_pending[1]
    set -g __tether_kind exiting
    __tether_end "$__tether_n" $st
  end
end
"#;

impl Dialect for Fish {
    fn name(&self) -> &'static str {
        "fish"
    }

    fn argv(&self, run_rc_files: bool, setup: &Path) -> (String, Vec<String>) {
        let mut args = Vec::new();
        if !run_rc_files {
            args.push("--no-config".to_owned());
        }
        args.extend([
            "--interactive".to_owned(),
            "--init-command".to_owned(),
            format!("source {}", quote_for_fish(&setup.display().to_string())),
        ]);
        ("fish".to_owned(), args)
    }

    fn setup_script(&self, ctx: &SetupContext<'_>) -> String {
        let mut s = format!(
            "set -g __tether_dir {}\n{}",
            quote_for_fish(&ctx.dir.display().to_string()),
            super::with_secret(FUNCTIONS, ctx.nonce)
        );
        s.push_str(&modes_function(ctx.line_modes));
        if let Some(env) = ctx.restore_env {
            // The new login's own description of itself wins over the
            // snapshot's (a remote shell restarted on a new connection).
            s.push_str(&format!(
                "set -l __tether_login SSH_CONNECTION SSH_CLIENT SSH_TTY\nset -l __tether_saved\nfor v in $__tether_login; set -a __tether_saved \"$$v\"; end\nsource {} 2>/dev/null\nfor i in 1 2 3; test -n \"$__tether_saved[$i]\"; and set -gx $__tether_login[$i] $__tether_saved[$i]; end\n",
                quote_for_fish(&env.display().to_string())
            ));
        }
        if let Some(cwd) = ctx.restore_cwd {
            s.push_str(&format!(
                "builtin cd -- {} 2>/dev/null\n",
                quote_for_fish(&cwd.display().to_string())
            ));
        }
        s.push_str("set -g __tether_n\nset -g __tether_want 1\n__tether_lastpid\n");
        s
    }

    fn load_setup(&self, _run_rc_files: bool, _path: &Path) -> Option<String> {
        None
    }

    fn nested_setup(&self, ctx: &SetupContext<'_>, seq: u64) -> Option<String> {
        // fish's own reader stays (it cannot be turned off): as in the
        // session's own fish, it draws the typed line before the start mark.
        let own = self.setup_script(ctx);
        let first = "set -g __tether_n\nset -g __tether_want 1\n";
        own.contains(first).then(|| {
            own.replace(
                first,
                &format!("set -g __tether_n {seq}\nset -g __tether_want 1\n"),
            )
        })
    }

    fn nested_load(&self, path: &Path) -> String {
        format!("source {}\n", quote_for_fish(&path.display().to_string()))
    }

    fn command_file(&self, code: &str, last_status: i32) -> String {
        // The prefix shares the code's first line, so fish's messages give
        // the user's own line numbers.
        format!("__tether_in {last_status}; {code}\nset -g __tether_r $status $pipestatus\n")
    }

    fn with_stdin(&self, code: &str, input: &Path) -> Option<String> {
        let no_command = code
            .lines()
            .all(|l| l.trim().is_empty() || l.trim_start().starts_with('#'));
        if no_command {
            return Some(code.to_owned());
        }
        Some(format!(
            "begin; {code}\nend < {}",
            quote_for_fish(&input.display().to_string())
        ))
    }

    /// The start mark, the command file at top level, the end mark, then
    /// `$status` put back for the user's prompt handlers. The marks' nonce
    /// is the secret the shell read from its setup file followed by `seq`.
    fn wrapper_line(&self, path: &Path, seq: u64, _code: &str) -> String {
        format!(
            "__tether_go {seq}; source {}; __tether_end {seq} $status $pipestatus; __tether_rc $__tether_ls\n",
            quote_for_fish(&path.display().to_string())
        )
    }

    fn assignment(&self, name: &str, value: &str) -> String {
        format!("set -g {name} {}; ", quote_for_fish(value))
    }

    fn syntax_check(&self, file: &Path) -> Option<(String, Vec<String>)> {
        Some((
            "fish".to_owned(),
            vec![
                "--no-config".to_owned(),
                "--no-execute".to_owned(),
                file.display().to_string(),
            ],
        ))
    }

    /// The default's simple commands, unless a word opens a block or
    /// continues a job (`if true` is simple text, and unfinished).
    fn obviously_complete(&self, code: &str) -> bool {
        const OPENERS: &[&str] = &[
            "if", "while", "for", "function", "begin", "switch", "and", "or", "not", "else",
            "case", "end",
        ];
        !code.is_empty()
            && code
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b" -_./=:,+@%^".contains(&b))
            && !code.split_whitespace().any(|w| OPENERS.contains(&w))
    }

    fn is_incomplete(&self, _code: &str, check_stderr: &str, _probe: Option<&str>) -> bool {
        check_stderr.contains("Missing end to balance")
            || check_stderr.contains("Unexpected end of string")
            || check_stderr.contains("but found end of the input")
    }

    fn file_in_messages(&self, path: &Path) -> Option<(String, String)> {
        // `/…/cmd-7.fish (line 2): …` reads as `fish (line 2): …`.
        Some((path.display().to_string(), "fish".to_owned()))
    }

    fn terminal_adds_cr(&self) -> bool {
        true
    }

    fn has_pipe_status(&self) -> bool {
        true
    }

    fn ready_at_prompt(&self) -> bool {
        true
    }
}

/// `__tether_modes`: on a terminal the engine cannot set itself, `stty`
/// with the session's line modes (and the echo asked) before each end mark.
fn modes_function(args: Option<&[String]>) -> String {
    match args {
        None => "function __tether_modes; end\n".to_owned(),
        Some(args) => {
            let words: Vec<String> = args.iter().map(|a| quote_for_fish(a)).collect();
            format!(
                "function __tether_modes\n  set -q __tether_echo[1]; or set -g __tether_echo -echo\n  command stty {} $__tether_echo 2>/dev/null\n  return 0\nend\n",
                words.join(" ")
            )
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::dialect::SplitNonce;

    fn nonce() -> SplitNonce {
        SplitNonce {
            a: "0123456789abcdef".into(),
            b: "fedcba9876543210".into(),
        }
    }

    #[test]
    fn the_wrapper_is_one_line_without_control_characters_or_the_secret() {
        let line = Fish.wrapper_line(Path::new("/s/it's/cmd-7.fish"), 7, "echo hi\nexit 3");
        let (body, enter) = line.split_at(line.len() - 1);
        assert_eq!(enter, "\n");
        assert!(!body.chars().any(|c| c.is_control()), "{body:?}");
        assert!(!body.contains(&nonce().a) && !body.contains(&nonce().b));
        assert_eq!(
            body,
            "__tether_go 7; source '/s/it\\'s/cmd-7.fish'; __tether_end 7 $status $pipestatus; __tether_rc $__tether_ls"
        );
    }

    #[test]
    fn the_setup_keeps_the_secret_in_function_bodies_and_runs_after_config() {
        let n = nonce();
        let ctx = SetupContext {
            dir: Path::new("/run/t/s1"),
            nonce: &n,
            run_rc_files: true,
            restore_env: Some(Path::new("/run/t/s1/env")),
            restore_cwd: Some(Path::new("/tmp/o'k")),
            line_modes: None,
            look_for_holders: false,
        };
        let s = Fish.setup_script(&ctx);
        assert!(s.starts_with("set -g __tether_dir '/run/t/s1'\n"), "{s}");
        assert!(!s.contains(&n.joined()), "never whole");
        assert!(s.contains("function fish_prompt; __tether_ready; end"));
        assert!(s.contains("source '/run/t/s1/env' 2>/dev/null"));
        assert!(s.contains("builtin cd -- '/tmp/o\\'k' 2>/dev/null"));
        assert!(s.contains("function __tether_modes; end"));
        let (program, args) = Fish.argv(true, Path::new("/run/t/s1/setup.fish"));
        assert_eq!(program, "fish");
        assert_eq!(
            args,
            [
                "--interactive",
                "--init-command",
                "source '/run/t/s1/setup.fish'"
            ]
        );
        assert_eq!(Fish.argv(false, Path::new("x")).1[0], "--no-config");
        assert_eq!(Fish.load_setup(true, Path::new("x")), None);
    }

    #[test]
    fn the_command_file_sets_status_first_and_saves_it_last() {
        assert_eq!(
            Fish.command_file("false | true", 4),
            "__tether_in 4; false | true\nset -g __tether_r $status $pipestatus\n"
        );
        assert_eq!(
            Fish.with_stdin("cat", Path::new("/s/in-1.data")).unwrap(),
            "begin; cat\nend < '/s/in-1.data'"
        );
        assert_eq!(Fish.with_stdin("# x", Path::new("/s/i")).unwrap(), "# x");
    }

    /// fish's parser messages for unfinished input, as fish 3.6 prints
    /// them, and one for wrong input.
    #[test]
    fn unfinished_input_is_told_from_wrong_input() {
        for msg in [
            "t.fish (line 1): Missing end to balance this if statement",
            "t.fish (line 1): Unexpected end of string, quotes are not balanced",
            "t.fish (line 1): Unexpected end of string, incomplete escape sequence",
            "t.fish: Expected a command, but found end of the input",
        ] {
            assert!(Fish.is_incomplete("x", msg, None), "{msg}");
        }
        assert!(!Fish.is_incomplete("x", "t.fish (line 1): 'end' outside of a block", None));
        assert!(!Fish.obviously_complete("if true"));
        assert!(!Fish.obviously_complete("begin"));
        assert!(Fish.obviously_complete("ls -la /tmp"));
    }

    /// A quoted word reads back as itself in a real fish.
    #[test]
    fn quoting_round_trips_in_fish() {
        let word = "it's a \\ back\\slash, $HOME (x) \"q\" *";
        let Ok(out) = std::process::Command::new("fish")
            .args(["--no-config", "-c"])
            .arg(format!("printf '%s' {}", quote_for_fish(word)))
            .output()
        else {
            return;
        };
        assert_eq!(String::from_utf8_lossy(&out.stdout), word);
    }
}
