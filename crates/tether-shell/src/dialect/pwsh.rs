//! The PowerShell 7 (`pwsh`) dialect.
//!
//! pwsh cannot take its prompt from the environment, so the setup script
//! (typed once after start) installs a `prompt` function and the engine's
//! helpers. Each command resets `$LASTEXITCODE`, runs its body through
//! `Invoke-Expression` (short bodies inline, in a backtick-escaped
//! double-quoted string with no raw control characters; long ones read from
//! the private command file), and reports the native exit code, 1 for a
//! terminating error, 0 otherwise. PSReadLine echoes what is typed and has
//! no `stty -echo`: the echo lands before the start mark, and any echoed
//! wrapper line that reaches a result is stripped.
//!
//! pwsh cannot be installed on the development machine; this dialect is
//! tested on its generated text and a transcript-shaped extraction, and the
//! real-shell suite runs only where a `pwsh` binary exists.

use std::path::Path;

use super::{Dialect, SetupContext};

/// Bodies up to this many bytes are typed inline; longer ones are read
/// from the command file.
const INLINE_MAX: usize = 1024;

/// A token that only the engine's own wrapper line contains.
const WRAPPER_TOKEN: &str = "$global:__tether_pending = '";

/// PowerShell 7.
#[derive(Clone, Copy, Debug, Default)]
pub struct Pwsh;

/// `s` as a PowerShell double-quoted string body: backtick, double quote
/// and `$` are escaped with a backtick, and CR, LF, tab and ESC become
/// `` `r ``, `` `n ``, `` `t `` and `` `e ``, so no raw control character is
/// typed.
pub fn quote_for_pwsh(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '`' => out.push_str("``"),
            '"' => out.push_str("`\""),
            '$' => out.push_str("`$"),
            '\r' => out.push_str("`r"),
            '\n' => out.push_str("`n"),
            '\t' => out.push_str("`t"),
            '\x1b' => out.push_str("`e"),
            // Typographic double quotes also end a pwsh string.
            '\u{201c}' | '\u{201d}' | '\u{201e}' => {
                out.push('`');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out
}

/// `s` as a PowerShell single-quoted literal.
fn single_quoted(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

const FUNCTIONS: &str = r#"
function global:__tether_enc([string]$p) {
  $p.Replace('%','%25').Replace(';','%3B').Replace("`a",'%07').Replace("`e",'%1B').Replace("`n",'%0A')
}
function global:__tether_start([string]$n) {
  [Console]::Write("`e]6973;SECRET_A" + "SECRET_B$n;start`a")
}
function global:__tether_end([string]$n, [int]$code) {
  $global:__tether_pending = $null
  try {
    Get-ChildItem env: | ForEach-Object { "`$env:$($_.Name) = '$($_.Value.Replace("'", "''"))'" } |
      Set-Content -LiteralPath (Join-Path $global:__tether_dir 'env')
  } catch {}
  [Console]::Write("`e]6973;SECRET_A" + "SECRET_B$n;end;exit=$code;cwd=$(__tether_enc (Get-Location).Path)`a")
}
function global:prompt {
  if ($global:__tether_pending) {
    __tether_end $global:__tether_pending 1
  }
  'PS> '
}
"#;

impl Dialect for Pwsh {
    fn name(&self) -> &'static str {
        "pwsh"
    }

    fn argv(&self, run_rc_files: bool, _setup: &Path) -> (String, Vec<String>) {
        let mut args = vec!["-NoLogo".to_owned()];
        if !run_rc_files {
            args.push("-NoProfile".to_owned());
        }
        ("pwsh".to_owned(), args)
    }

    fn env(
        &self,
        _run_rc_files: bool,
        _setup: &Path,
        _base: &[(String, String)],
    ) -> Vec<(String, String)> {
        vec![("NO_COLOR".to_owned(), "1".to_owned())]
    }

    fn setup_script(&self, ctx: &SetupContext<'_>) -> String {
        let mut s = format!(
            "$global:__tether_dir = {}\n{}",
            single_quoted(&ctx.dir.display().to_string()),
            super::with_secret(FUNCTIONS, ctx.nonce)
        );
        if let Some(env) = ctx.restore_env {
            s.push_str(&format!(
                "try {{ . {} }} catch {{}}\n",
                single_quoted(&env.display().to_string())
            ));
        }
        if let Some(cwd) = ctx.restore_cwd {
            s.push_str(&format!(
                "try {{ Set-Location -LiteralPath {} }} catch {{}}\n",
                single_quoted(&cwd.display().to_string())
            ));
        }
        s.push_str(&format!(
            "[Console]::Write(\"`e]6973;{}\" + \"{};ready`a\")\n",
            ctx.nonce.a, ctx.nonce.b
        ));
        s
    }

    fn load_setup(&self, _run_rc_files: bool, path: &Path) -> Option<String> {
        Some(format!(
            ". {}\r",
            single_quoted(&path.display().to_string())
        ))
    }

    fn with_stdin(&self, _code: &str, _input: &Path) -> Option<String> {
        None
    }

    fn command_file(&self, code: &str, _last_status: i32) -> String {
        code.to_owned()
    }

    /// The command's number (the session secret that completes its marks'
    /// nonce is in the setup's functions: PSReadLine's echo shows no part
    /// of it).
    fn wrapper_line(&self, path: &Path, seq: u64, code: &str) -> String {
        let body = if code.len() <= INLINE_MAX {
            format!("\"{}\"", quote_for_pwsh(code))
        } else {
            format!(
                "([IO.File]::ReadAllText({}))",
                single_quoted(&path.display().to_string())
            )
        };
        format!(
            "$global:LASTEXITCODE = 0; {WRAPPER_TOKEN}{seq}'; __tether_start '{seq}'; $__tether_ok = $true; try {{ Invoke-Expression {body} }} catch {{ $__tether_ok = $false; Write-Error -ErrorRecord $_ }}; $__tether_code = if (-not $__tether_ok) {{ 1 }} elseif ($global:LASTEXITCODE) {{ $global:LASTEXITCODE }} else {{ 0 }}; __tether_end '{seq}' $__tether_code\r",
        )
    }

    fn syntax_check(&self, file: &Path) -> Option<(String, Vec<String>)> {
        let script = format!(
            "$t = $null; $e = $null; [void][System.Management.Automation.Language.Parser]::ParseFile({}, [ref]$t, [ref]$e); if ($e | Where-Object IncompleteInput) {{ [Console]::Error.WriteLine('TETHER_INCOMPLETE') }}",
            single_quoted(&file.display().to_string())
        );
        Some((
            "pwsh".to_owned(),
            vec![
                "-NoLogo".into(),
                "-NoProfile".into(),
                "-NonInteractive".into(),
                "-Command".into(),
                script,
            ],
        ))
    }

    fn is_incomplete(&self, _code: &str, check_stderr: &str, _probe: Option<&str>) -> bool {
        check_stderr.contains("TETHER_INCOMPLETE")
    }

    fn file_in_messages(&self, _path: &Path) -> Option<(String, String)> {
        // The code runs by Invoke-Expression: no file is named.
        None
    }

    fn has_pipe_status(&self) -> bool {
        false
    }

    fn assignment(&self, name: &str, value: &str) -> String {
        format!("$global:{name} = {}; ", quote_for_pwsh(value))
    }

    fn line_kill(&self) -> &'static [u8] {
        // PSReadLine reads raw keys; it has no line-kill character.
        b""
    }

    fn strip_echo(&self, output: String) -> String {
        if !output.contains(WRAPPER_TOKEN) {
            return output;
        }
        output
            .split_inclusive('\n')
            .filter(|line| !line.contains(WRAPPER_TOKEN))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dialect::SplitNonce;

    fn nonce() -> SplitNonce {
        SplitNonce {
            a: "0123456789abcdef".into(),
            b: "fedcba9876543210".into(),
        }
    }

    #[test]
    fn quoting_escapes_everything_that_ends_or_expands_a_string() {
        assert_eq!(quote_for_pwsh("plain text"), "plain text");
        assert_eq!(quote_for_pwsh("a`b\"c$d"), "a``b`\"c`$d");
        assert_eq!(quote_for_pwsh("l1\r\nl2\tx\x1b[0m"), "l1`r`nl2`tx`e[0m");
        assert_eq!(
            quote_for_pwsh("say \u{201c}hi\u{201d}"),
            "say `\u{201c}hi`\u{201d}"
        );
        assert_eq!(quote_for_pwsh("'single' stays"), "'single' stays");
    }

    #[test]
    fn wrapper_line_is_one_typed_line_without_control_characters_or_the_secret() {
        let line = Pwsh.wrapper_line(Path::new("/s/cmd-1.pwsh"), 7, "Write-Output \"hi\"\nexit 3");
        let (body, enter) = line.split_at(line.len() - 1);
        assert_eq!(enter, "\r");
        assert!(!body.chars().any(|c| c.is_control()), "{body:?}");
        assert!(
            !body.contains(&nonce().a) && !body.contains(&nonce().b),
            "no part of the secret is typed"
        );
        assert!(body.contains("__tether_start '7'"), "{body}");
        assert!(body.starts_with("$global:LASTEXITCODE = 0; "));
        assert!(
            body.contains("Invoke-Expression \"Write-Output `\"hi`\"`nexit 3\""),
            "{body}"
        );
        assert!(body.contains("if (-not $__tether_ok) { 1 } elseif ($global:LASTEXITCODE) { $global:LASTEXITCODE } else { 0 }"));
        assert!(body.ends_with("__tether_end '7' $__tether_code"));
    }

    #[test]
    fn long_bodies_are_read_from_the_command_file() {
        let code = "x".repeat(INLINE_MAX + 1);
        let line = Pwsh.wrapper_line(Path::new("/s/it's.pwsh"), 7, &code);
        assert!(
            line.contains("Invoke-Expression ([IO.File]::ReadAllText('/s/it''s.pwsh'))"),
            "{line}"
        );
        assert!(!line.contains(&code));
        assert_eq!(Pwsh.command_file(&code, 0), code);
    }

    #[test]
    fn setup_installs_the_prompt_and_reports_ready_in_halves() {
        let dir = Path::new("/run/t/s1");
        let n = nonce();
        let ctx = SetupContext {
            dir,
            nonce: &n,
            run_rc_files: false,
            restore_env: Some(Path::new("/run/t/s1/env")),
            restore_cwd: Some(Path::new("/tmp/o'k")),
            line_modes: None,
            look_for_holders: false,
        };
        let s = Pwsh.setup_script(&ctx);
        assert!(s.starts_with("$global:__tether_dir = '/run/t/s1'\n"));
        assert!(s.contains("function global:prompt {"));
        assert!(
            s.contains(
                "[Console]::Write(\"`e]6973;0123456789abcdef\" + \"fedcba9876543210$n;start`a\")"
            ),
            "{s}"
        );
        assert!(s.contains("try { . '/run/t/s1/env' } catch {}"));
        assert!(s.contains("Set-Location -LiteralPath '/tmp/o''k'"));
        assert!(s.ends_with(
            "[Console]::Write(\"`e]6973;0123456789abcdef\" + \"fedcba9876543210;ready`a\")\n"
        ));
        assert_eq!(
            Pwsh.load_setup(false, Path::new("/run/t/s1/setup.pwsh"))
                .unwrap(),
            ". '/run/t/s1/setup.pwsh'\r"
        );
        assert_eq!(
            Pwsh.argv(false, Path::new("x")),
            (
                "pwsh".to_owned(),
                vec!["-NoLogo".to_owned(), "-NoProfile".to_owned()]
            )
        );
    }

    /// The shape of a pwsh session's output: PSReadLine echoes the typed
    /// wrapper (wrapped at the terminal width), then the marks and output.
    /// Written by hand from the wrapper this dialect types; no pwsh was
    /// available to record one.
    fn transcript(n: &SplitNonce, seq: u64, line: &str) -> Vec<u8> {
        let echoed = line
            .trim_end_matches('\r')
            .as_bytes()
            .chunks(80)
            .collect::<Vec<_>>()
            .join(&b"\r\n"[..]);
        [
            b"PS> ".as_slice(),
            &echoed,
            b"\r\n",
            format!("\x1b]6973;{}{}{seq};start\x07", n.a, n.b).as_bytes(),
            b"hi\r\nsecond line\r\n",
            format!("\x1b]6973;{}{}{seq};end;exit=3;cwd=/tmp\x07", n.a, n.b).as_bytes(),
            b"PS> ",
        ]
        .concat()
    }

    #[test]
    fn output_between_the_marks_excludes_the_echo_and_the_exit_code_is_read() {
        use tether_term::{Marker, MarkerScanner, TextProjector};
        let n = nonce();
        let line = Pwsh.wrapper_line(Path::new("/s/cmd-1.pwsh"), 7, "Write-Output hi; exit 3");
        let stream = transcript(&n, 7, &line);
        let mut marks = Vec::new();
        let mut scanner = MarkerScanner::new(&n.joined()).unwrap();
        scanner.set_sequence(7);
        scanner.feed(&stream, &mut marks);
        assert_eq!(
            marks.len(),
            2,
            "the echo holds no mark: no part of the secret is typed"
        );
        let Marker::Engine { fields, .. } = &marks[1].marker else {
            panic!("{marks:?}")
        };
        assert_eq!(fields[0], ("exit".to_owned(), "3".to_owned()));
        let inner = &stream[marks[0].end as usize..marks[1].start as usize];
        let mut text = String::new();
        let mut p = TextProjector::new();
        p.feed(inner, &mut text);
        p.finish(&mut text);
        assert_eq!(Pwsh.strip_echo(text), "hi\nsecond line\n");
    }

    #[test]
    fn an_echoed_wrapper_that_reaches_a_result_is_stripped() {
        let line = Pwsh.wrapper_line(Path::new("/s/cmd-1.pwsh"), 7, "Get-Date");
        let leaked = format!("{}\nreal output\n", line.trim_end());
        assert_eq!(Pwsh.strip_echo(leaked), "real output\n");
        assert_eq!(Pwsh.strip_echo("untouched\n".into()), "untouched\n");
    }
}
