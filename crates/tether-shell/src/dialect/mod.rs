//! Shell dialects: each owns its start argv, how its setup is installed,
//! the command wrapper, and how its exit status is reported.
//!
//! Every dialect reports through the same engine marks
//! (`OSC 6973 ; nonce ; kind ; fields`): `ready` once set up (bash and zsh:
//! at every prompt, after the user's prompt hooks, with `pids=A-B`), `start`
//! before the user's code runs, `end;exit=N;pipe=…;cwd=…` after it. The command
//! text itself is written to a private file and loaded by a short wrapper
//! line, so its length, quotes and newlines never meet the terminal's line
//! buffer.
//!
//! No nonce is ever typed. The session secret is written into the setup
//! file (0600, in the 0700 session directory, sent to a host by a channel,
//! never by the terminal), where the shell keeps it in function bodies; a
//! command's marks carry the secret followed by the command's number, and
//! the wrapper line names only that number. A process that reads every
//! byte typed into the terminal learns the number and a file's path: it
//! cannot forge a mark.

mod bash;
mod fish;
mod held;
mod heredoc;
mod modes;
mod posix;
mod pwsh;
mod rename;
mod zsh;

pub use bash::Bash;
pub use fish::{Fish, quote_for_fish};
pub use heredoc::unterminated_heredoc;
pub(crate) use modes::probably_builtins;
pub use posix::Posix;
pub use pwsh::{Pwsh, quote_for_pwsh};
pub use rename::Rename;
pub use zsh::Zsh;

use std::path::Path;

/// The session secret, in two halves that the shell joins when it prints a
/// mark: no function body or listing holds it whole. It is never typed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SplitNonce {
    /// First half (16 hex digits).
    pub a: String,
    /// Second half (16 hex digits).
    pub b: String,
}

impl SplitNonce {
    /// The whole nonce, as it appears in marks.
    pub fn joined(&self) -> String {
        format!("{}{}", self.a, self.b)
    }
}

/// What a dialect needs to write its setup.
#[derive(Clone, Debug)]
pub struct SetupContext<'a> {
    /// The session's private directory.
    pub dir: &'a Path,
    /// The session secret: the nonce of the `ready` mark, and, followed by
    /// a command's number, of that command's marks.
    pub nonce: &'a SplitNonce,
    /// Whether the user's start-up files run first.
    pub run_rc_files: bool,
    /// A file of exported variables to restore (after a restart).
    pub restore_env: Option<&'a Path>,
    /// The directory to return to (after a restart).
    pub restore_cwd: Option<&'a Path>,
    /// `stty` arguments that put the terminal back into the session's line
    /// modes, run by the shell before each end mark: for a terminal the
    /// engine cannot set itself (a remote one). `None` locally.
    pub line_modes: Option<&'a [String]>,
    /// Whether each end mark names the processes holding the terminal
    /// (`held=`): for a terminal the engine cannot inspect (a remote one).
    pub look_for_holders: bool,
}

/// The shell-specific half of a session.
pub trait Dialect: Send + Sync + std::fmt::Debug {
    /// A short name: `bash`, `zsh`, `sh`, `pwsh`, `fish`.
    fn name(&self) -> &'static str;

    /// The program and arguments that start an interactive shell which
    /// loads the setup script at `setup` (right after the user's start-up
    /// files when `run_rc_files`, so nothing of theirs runs in between).
    fn argv(&self, run_rc_files: bool, setup: &Path) -> (String, Vec<String>);

    /// The setup script: runs the user's start-up files when asked, installs
    /// the engine's functions and hooks, restores env and cwd, then prints
    /// the `ready` mark.
    fn setup_script(&self, ctx: &SetupContext<'_>) -> String;

    /// Extra environment for the shell process (for example zsh's
    /// `ZDOTDIR`), given the environment it would otherwise get.
    fn env(
        &self,
        _run_rc_files: bool,
        _setup: &Path,
        _base: &[(String, String)],
    ) -> Vec<(String, String)> {
        Vec::new()
    }

    /// Extra files the start-up needs, as `(path, content)`.
    fn extra_files(&self, _run_rc_files: bool, _setup: &Path) -> Vec<(std::path::PathBuf, String)> {
        Vec::new()
    }

    /// The line to type to load the setup script at `path`, when `argv`
    /// does not load it itself.
    fn load_setup(&self, run_rc_files: bool, path: &Path) -> Option<String>;

    /// The file that runs the user's `code`, with `$?` first set to
    /// `last_status`. It holds no nonce (a remote shell's is typed).
    fn command_file(&self, code: &str, last_status: i32) -> String;

    /// `code` with its stdin read from the file `input` (a grouping with
    /// a redirection: the shell's own stdin, its terminal, is untouched);
    /// `None` when the dialect cannot.
    fn with_stdin(&self, code: &str, input: &Path) -> Option<String> {
        Some(group_with_stdin(code, input))
    }

    /// The line typed to run the command file at `path` (holding `code`)
    /// as command number `seq`: its marks carry the session secret
    /// followed by `seq`, and the line holds no part of the secret.
    fn wrapper_line(&self, path: &Path, seq: u64, code: &str) -> String;

    /// A command, typed before the wrapper line on the same line, that
    /// writes the command file `path` holding `bytes` (for a remote shell,
    /// where this saves a round trip per command); `None` when the dialect
    /// cannot, or the text is too long for a terminal line.
    fn inline_file(&self, _path: &Path, _bytes: &[u8]) -> Option<String> {
        None
    }

    /// Bytes typed before each wrapper line to discard a partial line a
    /// person may have left at the prompt (the terminal's line-kill
    /// character, for shells that read in line mode).
    fn line_kill(&self) -> &'static [u8] {
        b"\x15"
    }

    /// True when the shell's own line reader saves the terminal's modes
    /// when it starts reading a line and puts them back before running it
    /// (busybox ash's line editor): modes set from outside while it waits
    /// are undone, so the shell must set them itself before each end mark.
    fn line_reader_keeps_modes(&self) -> bool {
        false
    }

    /// A statement, typed at the start of a line, that sets the shell
    /// variable `name` to `value` (a plain word).
    fn assignment(&self, name: &str, value: &str) -> String {
        format!("{name}={value}; ")
    }

    /// A program that checks `file` for syntax without running it, when the
    /// dialect has one (`bash -n`).
    fn syntax_check(&self, file: &Path) -> Option<(String, Vec<String>)>;

    /// Text appended to the code for a second check when the checker's
    /// messages do not say whether input is unfinished (zsh): if the error
    /// moves when more text follows, the input was unfinished.
    fn incomplete_probe(&self) -> Option<&'static str> {
        None
    }

    /// True when the checker's message (and, with a probe, its message for
    /// the probed code) says the input is merely unfinished (an open quote,
    /// heredoc or block), not wrong.
    fn is_incomplete(&self, code: &str, check_stderr: &str, probe_stderr: Option<&str>) -> bool;

    /// True when `code` certainly parses as complete, so the checker can be
    /// skipped (a fast path for simple commands).
    fn obviously_complete(&self, code: &str) -> bool {
        !code.is_empty()
            && code
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b" -_./=:,+@%^".contains(&b))
    }

    /// How the shell's messages name the command file `path` it sources,
    /// and what to print instead, so they read as the shell's messages
    /// about the user's own lines (`bash: line 2: …`; the code starts on
    /// the file's first line). `None` to leave the output alone.
    fn file_in_messages(&self, path: &Path) -> Option<(String, String)> {
        Some((format!("{}: ", path.display()), String::new()))
    }

    /// Whether the exit status of each pipeline stage is reported.
    fn has_pipe_status(&self) -> bool;

    /// Whether the shell prints the `ready` mark from its last prompt hook,
    /// after every other (`PROMPT_COMMAND`, `precmd_functions`), at each
    /// prompt: a result then waits for it after the end mark (bounded), so
    /// the user's hooks have run before the next line is typed and before
    /// the terminal's holders are looked at. Otherwise the setup prints it
    /// once.
    fn ready_at_prompt(&self) -> bool {
        false
    }

    /// The setup a shell of this dialect loads when a command of the
    /// session started it (`bash`, `sudo -i`, `su -`) and the session arms
    /// it: the engine's functions with the secret `ctx.nonce` (the new
    /// shell's own), its line editor turned off, no start-up files (they
    /// ran as it started), and a ready mark for command number `seq` (the
    /// one that started it) at its next prompt. `None`: the dialect cannot
    /// be armed so.
    fn nested_setup(&self, _ctx: &SetupContext<'_>, _seq: u64) -> Option<String> {
        None
    }

    /// The line typed into such a shell to load its setup at `path`.
    fn nested_load(&self, path: &Path) -> String {
        format!(". {}\n", sh_quote(&path.display().to_string()))
    }

    /// True when the shell turns the terminal's output processing on for
    /// its programs whatever the session asked (fish forces ONLCR): the
    /// saved output takes back the CR put before each LF.
    fn terminal_adds_cr(&self) -> bool {
        false
    }

    /// Removes the dialect's own echoed input from output (pwsh's line
    /// editor echoes what is typed; the other shells run with echo off).
    fn strip_echo(&self, output: String) -> String {
        output
    }
}

/// `functions` with the session secret's halves in place of `SECRET_A`
/// and `SECRET_B` (the setup file's function bodies).
pub(crate) fn with_secret(functions: &str, secret: &SplitNonce) -> String {
    functions
        .replace("SECRET_A", &secret.a)
        .replace("SECRET_B", &secret.b)
}

/// Longest typed command that writes a file: with the wrapper it must fit
/// a terminal's line buffer (4095 bytes in canonical mode).
pub(crate) const INLINE_MAX: usize = 3000;

/// `{builtin} printf 'FORMAT' >| 'path'; ` writing `bytes` to `path`. Every
/// byte but the letters g-z (and space) is a three-digit octal escape, so
/// nothing the terminal's line discipline acts on (control characters) is
/// typed, no quote closes early, and no nonce (hex digits) is typed whole.
/// `None` for NUL bytes or text too long.
pub(crate) fn printf_to_file(builtin: &str, path: &Path, bytes: &[u8]) -> Option<String> {
    if bytes.contains(&0) {
        return None;
    }
    let mut fmt = String::with_capacity(bytes.len() * 2);
    for &b in bytes {
        if matches!(b, b'g'..=b'z' | b'G'..=b'Z' | b' ') {
            fmt.push(char::from(b));
        } else {
            fmt.push_str(&format!("\\{b:03o}"));
        }
        if fmt.len() > INLINE_MAX {
            return None;
        }
    }
    Some(format!(
        "{builtin} printf '{fmt}' >| {}; ",
        sh_quote(&path.display().to_string())
    ))
}

/// The end of a POSIX-family setup script: restore the exported
/// variables and the cwd (after a restart), set up the modes and the
/// holders' look, then print the ready mark.
/// `builtin` is the prefix that bypasses functions (`builtin` in bash and
/// zsh, `command` in POSIX sh).
pub(crate) fn restore_and_ready(ctx: &SetupContext<'_>, builtin: &str) -> String {
    let mut s = restore(ctx, builtin);
    s.push_str(&format!(
        "{builtin} printf '\\033]6973;%s%s;ready\\007' {} {}\n",
        ctx.nonce.a, ctx.nonce.b
    ));
    s
}

/// The end of a setup script whose shell prints the ready mark from its
/// last prompt hook ([`Dialect::ready_at_prompt`]): restore the exported
/// variables and the cwd, set up the modes and the holders' look.
pub(crate) fn restore(ctx: &SetupContext<'_>, builtin: &str) -> String {
    let mut s = String::new();
    if let Some(env) = ctx.restore_env {
        // The new login's own description of itself wins over the
        // snapshot's (a remote shell restarted on a new connection).
        s.push_str(&format!(
            "__tether_l1=${{SSH_CONNECTION-}} __tether_l2=${{SSH_CLIENT-}} __tether_l3=${{SSH_TTY-}}\n. {} 2>/dev/null\n{LOGIN_VARS}",
            sh_quote(&env.display().to_string())
        ));
    }
    if let Some(cwd) = ctx.restore_cwd {
        s.push_str(&cd_line(builtin, cwd));
    }
    // After the snapshot: what an earlier shell remembered of its modes
    // (exported under `set -a`) is forgotten.
    s.push_str(&modes::modes_function(ctx.line_modes));
    s.push_str(&held::held_function(ctx.look_for_holders, builtin));
    s
}

/// The setup line that enters `dir`, whatever its bytes: quoted as it is
/// when it is UTF-8, else rebuilt by `printf` from octal escapes (once, at
/// start-up; the `x` keeps a trailing newline from the substitution).
fn cd_line(builtin: &str, dir: &Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    match dir.to_str() {
        Some(d) => format!("{builtin} cd -- {} 2>/dev/null\n", sh_quote(d)),
        None => {
            let octal: String = dir
                .as_os_str()
                .as_bytes()
                .iter()
                .map(|b| format!("\\{b:03o}"))
                .collect();
            format!(
                "__tether_t=$({builtin} printf '{octal}x'); {builtin} cd -- \"${{__tether_t%x}}\" 2>/dev/null; unset __tether_t\n"
            )
        }
    }
}

/// Puts back the login variables saved before the env snapshot is read.
const LOGIN_VARS: &str = "[ -n \"$__tether_l1\" ] && SSH_CONNECTION=$__tether_l1\n[ -n \"$__tether_l2\" ] && SSH_CLIENT=$__tether_l2\n[ -n \"$__tether_l3\" ] && SSH_TTY=$__tether_l3\nunset __tether_l1 __tether_l2 __tether_l3\n";

/// The end of a bash or zsh setup ([`Dialect::setup_script`]): no command
/// number yet, the last pid noted.
const SETUP_END: &str = "unset __tether_n __tether_kst\n__tether_lastpid\n";

/// A bash or zsh setup without start-up files, made the setup of a shell
/// armed inside the session: its first ready mark is for command `seq`
/// (the one that started it). `None` for a setup of another shape.
pub(crate) fn nested_from(setup: &str, seq: u64) -> Option<String> {
    setup
        .strip_suffix(SETUP_END)
        .map(|s| format!("{s}unset __tether_kst\n__tether_n={seq}\n__tether_lastpid\n"))
}

/// `builtin . 'path'`: the line that sources `path` in bash or zsh.
pub(crate) fn builtin_source(path: &Path) -> String {
    format!("builtin . {}\n", sh_quote(&path.display().to_string()))
}

/// The typed line that sources the setup script at `path` (with `--norc`).
pub(crate) fn source_line(run_rc_files: bool, path: &Path) -> Option<String> {
    (!run_rc_files).then(|| format!("builtin . {}\n", sh_quote(&path.display().to_string())))
}

/// Quotes `s` for a POSIX shell as one word.
pub fn sh_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// `{ CODE\n} < 'INPUT'` for the POSIX-family shells: the code keeps its
/// line numbers, a trailing heredoc or comment still ends before the `}`.
/// Code with no command at all (blank or comment lines) is left as it is,
/// since `{ }` without one is a syntax error and nothing would read.
fn group_with_stdin(code: &str, input: &Path) -> String {
    let no_command = code
        .lines()
        .all(|l| l.trim().is_empty() || l.trim_start().starts_with('#'));
    if no_command {
        return code.to_owned();
    }
    format!("{{ {code}\n}} < {}", sh_quote(&input.display().to_string()))
}

/// The dialects [`by_name`] knows, as front-ends list them: each one's
/// name and what it is.
pub const KNOWN: &[(&str, &str)] = &[
    ("bash", "GNU bash"),
    ("zsh", "zsh"),
    ("sh", "The system POSIX sh"),
    ("dash", "dash"),
    ("busybox", "busybox sh"),
    ("pwsh", "PowerShell 7"),
    ("fish", "fish 3"),
];

const NAME_ARRAY: [&str; KNOWN.len()] = {
    let mut names = [""; KNOWN.len()];
    let mut i = 0;
    while i < KNOWN.len() {
        names[i] = KNOWN[i].0;
        i += 1;
    }
    names
};

/// The names [`by_name`] knows (those of [`KNOWN`]).
pub const NAMES: &[&str] = &NAME_ARRAY;

/// The dialect called `name` (one of [`NAMES`]).
pub fn by_name(name: &str) -> Option<std::sync::Arc<dyn Dialect>> {
    use std::sync::Arc;
    Some(match name {
        "bash" => Arc::new(Bash),
        "zsh" => Arc::new(Zsh),
        "sh" => Arc::new(Posix::default()),
        "dash" => Arc::new(Posix::dash()),
        "busybox" => Arc::new(Posix::busybox()),
        "pwsh" => Arc::new(Pwsh),
        "fish" => Arc::new(Fish),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// Each name listed is a dialect (dash and busybox are of the sh
    /// family, and call themselves so), and no other name is one.
    #[test]
    fn every_known_name_is_a_dialect() {
        assert_eq!(
            NAMES,
            ["bash", "zsh", "sh", "dash", "busybox", "pwsh", "fish"]
        );
        for name in NAMES {
            let family = by_name(name).unwrap().name();
            assert!(*name == family || family == "sh", "{name}: {family}");
        }
        assert!(by_name("csh").is_none());
    }

    /// The typed writer reproduces every byte but NUL, in each POSIX shell
    /// installed here, and never types a control character or a hex digit.
    #[test]
    fn printf_to_file_round_trips_every_byte() {
        let bytes: Vec<u8> = (1..=255u8).chain(*b"%s%%\\'\"\n-x").collect();
        let dir = std::env::temp_dir().join(format!("tether-printf-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("f");
        let line = printf_to_file("command", &path, &bytes).unwrap();
        assert!(!line.bytes().any(|b| b < 0x20 || b == 0x7f), "{line:?}");
        let fmt = line.split('\'').nth(1).unwrap();
        assert!(
            !fmt.contains(|c: char| c.is_ascii_hexdigit() && !c.is_ascii_digit()),
            "no hex letter typed: {fmt}"
        );
        for sh in ["bash", "dash", "zsh", "sh"] {
            let Ok(out) = std::process::Command::new(sh).arg("-c").arg(&line).output() else {
                continue;
            };
            assert!(out.status.success(), "{sh}: {out:?}");
            assert_eq!(std::fs::read(&path).unwrap(), bytes, "{sh}");
            std::fs::remove_file(&path).unwrap();
        }
        assert_eq!(printf_to_file("command", &path, b"a\0b"), None);
        assert_eq!(printf_to_file("command", &path, &[b'#'; INLINE_MAX]), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Grouped code reads the file in every POSIX shell, with a heredoc or
    /// a comment last, and code without a command stays as it is.
    #[test]
    fn group_with_stdin_reads_the_file() {
        let dir = std::env::temp_dir().join(format!("tether-group-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let input = dir.join("in-1.data");
        std::fs::write(&input, "line\n").unwrap();
        let code = "cat <<EOF\nhere\nEOF\ncat # the input";
        let grouped = group_with_stdin(code, &input);
        for sh in ["bash", "dash", "zsh", "sh"] {
            let Ok(out) = std::process::Command::new(sh)
                .arg("-c")
                .arg(&grouped)
                .output()
            else {
                continue;
            };
            assert_eq!(String::from_utf8_lossy(&out.stdout), "here\nline\n", "{sh}");
        }
        assert_eq!(group_with_stdin("# nothing\n\n", &input), "# nothing\n\n");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
