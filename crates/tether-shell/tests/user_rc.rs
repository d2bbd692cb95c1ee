//! Start-up files as people have them: prompt hooks (pyenv-virtualenv,
//! direnv, a `PROMPT_COMMAND` that starts a short background job, bash's
//! array form with `history -a`, zsh's `precmd_functions`), a noisy rc.
//! For each: the end mark and readiness hold, `$?` reaches the hooks, the
//! hooks' output is not the command's, and nothing a hook starts is named
//! a holder of the terminal. A tool not installed is skipped with a
//! printed reason (`scripts/test` installs direnv and zsh as root).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use tether_shell::dialect::{Bash, Dialect, Zsh};
use tether_shell::{RunOptions, Session, SessionOptions, Status};

/// A fresh HOME holding `files` (name, text).
fn home(name: &str, files: &[(&str, String)]) -> PathBuf {
    let home = std::env::temp_dir().join(format!("tether-user-rc-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&home);
    std::fs::create_dir_all(&home).unwrap();
    for (file, text) in files {
        std::fs::write(home.join(file), text).unwrap();
    }
    home
}

fn installed(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(program).is_file()))
}

async fn start(home: &Path, dialect: Arc<dyn Dialect>) -> Session {
    let mut env: Vec<(String, String)> = std::env::vars()
        .filter(|(k, _)| k != "HOME" && k != "ZDOTDIR" && !k.starts_with("PYENV"))
        .collect();
    env.push(("HOME".into(), home.display().to_string()));
    let opts = SessionOptions {
        dialect,
        run_rc_files: true,
        base_env: env,
        start_timeout: Duration::from_secs(20),
        ..SessionOptions::default()
    };
    Session::start(opts).await.unwrap()
}

/// The checks every start-up setup passes. `status_log`, when the setup's
/// hook writes the `$?` it was given there, is checked too.
async fn holds(home: &Path, dialect: Arc<dyn Dialect>, status_log: Option<&Path>) {
    let mut s = start(home, dialect).await;
    let opts = RunOptions::default();
    for _ in 0..3 {
        let r = s.run("echo hello", &opts).await.unwrap();
        assert_eq!(
            (r.status, r.exit_code, r.output.as_str()),
            (Status::Exited, Some(0), "hello\n"),
            "{r:?}"
        );
        assert!(r.terminal_holders.is_empty(), "{r:?}");
    }
    let r = s.run("(exit 3)", &opts).await.unwrap();
    assert_eq!((r.status, r.exit_code), (Status::Exited, Some(3)), "{r:?}");
    assert!(r.terminal_holders.is_empty(), "{r:?}");
    if let Some(log) = status_log {
        let seen = std::fs::read_to_string(log).unwrap();
        assert_eq!(seen.lines().last(), Some("3"), "the hook's $?: {seen:?}");
    }
    let r = s.run("echo $?", &opts).await.unwrap();
    assert_eq!(r.output, "3\n", "{r:?}");
    // A line cut short by a timeout: its end mark comes from the last
    // hook, after the others have run; what they started is theirs still.
    let short = RunOptions {
        timeout: Duration::from_secs(1),
        ..RunOptions::default()
    };
    let r = s.run("echo a; sleep 5; echo never", &short).await.unwrap();
    assert_eq!(r.status, Status::TimedOut, "{r:?}");
    assert!(!r.output.contains("never"), "{r:?}");
    let r = s.run("read x", &opts).await.unwrap();
    assert_eq!(r.status, Status::WaitingForInput, "{r:?}");
    assert!(r.terminal_holders.is_empty(), "{r:?}");
    let r = s
        .send(Some("typed\n"), &[], Duration::from_secs(10))
        .await
        .unwrap();
    assert_eq!((r.status, r.exit_code), (Status::Exited, Some(0)), "{r:?}");
    let r = s.run("echo \"$x\"", &opts).await.unwrap();
    assert_eq!(r.output, "typed\n", "{r:?}");
    assert!(r.terminal_holders.is_empty(), "{r:?}");
}

/// A hook that writes the `$?` it was given, and prints, and starts a
/// short background job holding the terminal: none of it is the command's.
fn busy_hook(log: &Path) -> String {
    format!(
        "__my_hook() {{ local st=$?; echo \"$st\" >> {log}; echo hook-noise; (sleep 0.3 &); return $st; }}\n",
        log = log.display()
    )
}

#[tokio::test]
async fn bash_prompt_command_with_output_a_background_job_and_status() {
    let dir = home("pc", &[]);
    let log = dir.join("status.log");
    let rc = format!(
        "echo banner from bashrc\n{}PROMPT_COMMAND=\"__my_hook;${{PROMPT_COMMAND-}}\"\n",
        busy_hook(&log)
    );
    std::fs::write(dir.join(".bashrc"), rc).unwrap();
    holds(&dir, Arc::new(Bash), Some(&log)).await;
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn bash_prompt_command_as_an_array_with_history_a() {
    let dir = home("pc-array", &[]);
    let log = dir.join("status.log");
    let rc = format!(
        "{}HISTFILE=$HOME/.hist\nPROMPT_COMMAND=(__my_hook 'history -a')\n",
        busy_hook(&log)
    );
    std::fs::write(dir.join(".bashrc"), rc).unwrap();
    holds(&dir, Arc::new(Bash), Some(&log)).await;
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn bash_with_direnvs_hook() {
    if !installed("direnv") {
        eprintln!("SKIPPED: direnv is not installed (scripts/test installs it as root)");
        return;
    }
    let dir = home(
        "direnv",
        &[(".bashrc", "eval \"$(direnv hook bash)\"\n".into())],
    );
    holds(&dir, Arc::new(Bash), None).await;
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn bash_with_pyenv_virtualenv() {
    // pyenv is no Debian package: the test runs where the user has it.
    let root = std::env::var_os("PYENV_ROOT")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".pyenv")))
        .filter(|r| r.join("plugins/pyenv-virtualenv").is_dir());
    let Some(root) = root else {
        eprintln!("SKIPPED: pyenv with pyenv-virtualenv is not installed here");
        return;
    };
    let rc = format!(
        "export PYENV_ROOT={root}\nexport PATH=\"$PYENV_ROOT/bin:$PYENV_ROOT/shims:$PATH\"\neval \"$(pyenv init -)\"\neval \"$(pyenv virtualenv-init -)\"\n",
        root = root.display()
    );
    let dir = home("pyenv", &[(".bashrc", rc)]);
    holds(&dir, Arc::new(Bash), None).await;
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn zsh_precmd_functions_and_precmd() {
    if !installed("zsh") {
        eprintln!("SKIPPED: zsh is not installed (scripts/test installs it as root)");
        return;
    }
    let dir = home("zsh", &[]);
    let log = dir.join("status.log");
    let rc = format!(
        "print banner from zshrc\n{}precmd() {{ print precmd-noise }}\nprecmd_functions+=(__my_hook)\n",
        busy_hook(&log)
    );
    std::fs::write(dir.join(".zshrc"), rc).unwrap();
    holds(&dir, Arc::new(Zsh), Some(&log)).await;
    let _ = std::fs::remove_dir_all(&dir);
}

/// `path`, or `None` with a printed reason (`scripts/test` installs it).
fn package_file(path: &str, package: &str) -> Option<String> {
    if Path::new(path).exists() {
        return Some(path.to_owned());
    }
    eprintln!("SKIPPED: {path} is missing (Debian's {package}; scripts/test installs it as root)");
    None
}

#[tokio::test]
async fn zsh_with_compinit_autosuggestions_syntax_highlighting_and_powerlevel9k() {
    if !installed("zsh") {
        eprintln!("SKIPPED: zsh is not installed (scripts/test installs it as root)");
        return;
    }
    let (Some(auto), Some(high), Some(p9k)) = (
        package_file(
            "/usr/share/zsh-autosuggestions/zsh-autosuggestions.zsh",
            "zsh-autosuggestions",
        ),
        package_file(
            "/usr/share/zsh-syntax-highlighting/zsh-syntax-highlighting.zsh",
            "zsh-syntax-highlighting",
        ),
        package_file(
            "/usr/share/powerlevel9k/powerlevel9k.zsh-theme",
            "zsh-theme-powerlevel9k",
        ),
    ) else {
        return;
    };
    let rc = format!(
        "autoload -Uz compinit && compinit -u\nsource {auto}\nsource {p9k}\nsource {high}\nprecmd() {{ print -n '' }}\n"
    );
    let dir = home("zsh-plugins", &[(".zshrc", rc)]);
    holds(&dir, Arc::new(Zsh), None).await;
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn bash_with_powerline_and_fzf_key_bindings_in_vi_mode() {
    let (Some(powerline), Some(fzf)) = (
        package_file(
            "/usr/share/powerline/bindings/bash/powerline.sh",
            "powerline",
        ),
        package_file("/usr/share/doc/fzf/examples/key-bindings.bash", "fzf"),
    ) else {
        return;
    };
    let rc = format!("set -o vi\nsource {fzf}\nsource {powerline}\n");
    let dir = home("powerline", &[(".bashrc", rc)]);
    holds(&dir, Arc::new(Bash), None).await;
    let _ = std::fs::remove_dir_all(&dir);
}

/// The DEBUG-trap preexec pattern (bash-preexec, atuin), OSC 133 and 633
/// prompt marks as VS Code's and iTerm2's shell integration print them, a
/// `$(…)` in PS1 (set again by the prompt hook), a banner, and a slow rc
/// file.
#[tokio::test]
async fn bash_with_preexec_shell_integration_marks_and_a_slow_noisy_rc() {
    let rc = r#"echo "welcome to $(hostname)"
sleep 1
__pre() { [[ $BASH_COMMAND == __post* ]] || __in_cmd=1; }
__post() { local st=$?; __in_cmd=; printf '\033]633;D;%s\007\033]133;D;%s\007' "$st" "$st"; PS1='$(sleep 0.2; date +%s) \$ '; return $st; }
trap '__pre' DEBUG
PROMPT_COMMAND="__post${PROMPT_COMMAND:+;$PROMPT_COMMAND}"
PS1='\[\e]633;A\a\e]133;A\a\]$(date +%s) \u@\h \w\$ \[\e]633;B\a\e]133;B\a\]'
PS0='\[\e]633;C\a\]'
"#;
    let dir = home("integration", &[(".bashrc", rc.to_owned())]);
    holds(&dir, Arc::new(Bash), None).await;
    let _ = std::fs::remove_dir_all(&dir);
}
