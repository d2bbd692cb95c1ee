//! Start-up files as people have them, through the doors people use: the
//! CLI (`tether run`, its daemon) for each setup, and MCP (the official
//! Python SDK, `tests/mcp/rc_matrix.py`) for the bash ones. For each: `echo
//! hello` prints exactly `hello` and nothing on stderr (no holder named),
//! `(exit 3)` is 3, a 1 s timeout on `echo a; sleep 5; echo never` never
//! runs `never`, and `read x` waits for input. The engine's own matrix is
//! `crates/tether-shell/tests/user_rc.rs`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

mod common;
use tether_testkit::present::installed;

/// A HOME for `name` holding `files`.
fn home(name: &str, files: &[(&str, String)]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tether-rc-doors-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for (path, text) in files {
        std::fs::write(dir.join(path), text).unwrap();
    }
    dir
}

/// The setups of bash, as `(name, .bashrc)`, those whose packages are here.
fn bash_setups() -> Vec<(&'static str, String)> {
    let mut s = vec![
        (
            "hooks",
            "echo banner from bashrc\n__my_hook() { local st=$?; echo hook-noise; (sleep 0.3 &); return $st; }\nPROMPT_COMMAND=\"__my_hook;${PROMPT_COMMAND-}\"\nHISTFILE=$HOME/.hist\nPROMPT_COMMAND+=$'\\n''history -a'\n".to_owned(),
        ),
        (
            "osc133",
            "__pre() { printf '\\033]133;C\\007'; }\ntrap '__pre' DEBUG\nPROMPT_COMMAND='printf \"\\033]133;D;%s\\007\\033]633;A\\007\" $?'\nPS1='$(date +%s) \\w \\$ '\n".to_owned(),
        ),
    ];
    if installed("direnv") {
        s.push(("direnv", "eval \"$(direnv hook bash)\"\n".to_owned()));
    }
    let pyenv = std::env::var_os("PYENV_ROOT")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".pyenv")))
        .filter(|r| r.join("plugins/pyenv-virtualenv").is_dir());
    match pyenv {
        Some(root) => s.push((
            "pyenv",
            format!(
                "export PYENV_ROOT={root}\nexport PATH=\"$PYENV_ROOT/bin:$PYENV_ROOT/shims:$PATH\"\neval \"$(pyenv init -)\"\neval \"$(pyenv virtualenv-init -)\"\n",
                root = root.display()
            ),
        )),
        None => eprintln!("SKIPPED: pyenv with pyenv-virtualenv is not installed here"),
    }
    s
}

/// `tether ARGS` against `d`, with `home` as HOME and stdin closed.
fn tether(d: &common::Daemon, home: &Path, args: &[&str]) -> (i32, String, String) {
    let out = d
        .cmd(args)
        .env("HOME", home)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The four checks through the CLI, in a session of `shell` under `home`.
fn cli_checks(name: &str, home: &Path, shell: &str) {
    let d = common::Daemon::new(&format!("rc-{name}"));
    let s = ["run", "-s", "m", "--shell", shell, "--"];
    let with = |code: &'static str| [&s[..], &[code]].concat();
    let (code, out, err) = tether(&d, home, &with("echo hello"));
    assert_eq!(
        (code, out.as_str(), err.as_str()),
        (0, "hello\n", ""),
        "{name}"
    );
    let (code, _, err) = tether(&d, home, &with("(exit 3)"));
    assert_eq!((code, err.as_str()), (3, ""), "{name}");
    let (code, out, _) = tether(
        &d,
        home,
        &[
            "run",
            "-s",
            "m",
            "--timeout",
            "1",
            "--",
            "echo a; sleep 5; echo never",
        ],
    );
    assert_eq!(code, 124, "{name}: {out}");
    assert!(out.contains('a') && !out.contains("never"), "{name}: {out}");
    let (code, _, err) = tether(&d, home, &with("read x"));
    assert_eq!(code, 125, "{name}: {err}");
    assert!(!err.contains("holding"), "{name}: {err}");
    let (code, _, _) = tether(&d, home, &["send", "-s", "m", "x", "-k", "Enter"]);
    assert_eq!(code, 0, "{name}");
    let _ = tether(&d, home, &["daemon", "stop"]);
}

#[test]
fn each_bash_setup_through_the_cli() {
    for (name, rc) in bash_setups() {
        let dir = home(name, &[(".bashrc", rc)]);
        cli_checks(name, &dir, "bash");
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[test]
fn zsh_with_compinit_and_plugins_through_the_cli() {
    if !installed("zsh") {
        return;
    }
    let plugins = [
        "/usr/share/zsh-autosuggestions/zsh-autosuggestions.zsh",
        "/usr/share/zsh-syntax-highlighting/zsh-syntax-highlighting.zsh",
    ];
    let mut rc = "autoload -Uz compinit && compinit -u\nprecmd() { print -n; }\n".to_owned();
    for p in plugins {
        if Path::new(p).exists() {
            rc.push_str(&format!("source {p}\n"));
        } else {
            eprintln!("SKIPPED in part: {p} is not installed");
        }
    }
    let dir = home("zsh", &[(".zshrc", rc)]);
    cli_checks("zsh", &dir, "zsh");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn each_bash_setup_through_mcp() {
    let Some(python) = common::mcp_python() else {
        return;
    };
    let client = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/rc_matrix.py");
    for (name, rc) in bash_setups() {
        let dir = home(&format!("mcp-{name}"), &[(".bashrc", rc)]);
        let d = common::Daemon::new(&format!("rc-mcp-{name}"));
        let out = Command::new(&python)
            .env("TETHER_DIR", &d.dir)
            .env_remove("XDG_RUNTIME_DIR")
            .arg(&client)
            .arg(env!("CARGO_BIN_EXE_tether"))
            .arg(&dir)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{name}: {stdout}\n{stderr}");
        assert!(
            stdout.contains("rc matrix: all checks passed"),
            "{name}: {stdout}"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
