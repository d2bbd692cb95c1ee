//! Marks no command can forge, and exact working directories: real bash,
//! zsh, dash and busybox sh sessions (a shell not installed is skipped with
//! a printed reason).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use tether_shell::dialect::{Bash, Posix, Zsh};
use tether_shell::{RunOptions, RunResult, Session, Status};

mod common;
use common::session;

async fn run(s: &mut Session, code: &str) -> RunResult {
    s.run(code, &RunOptions::default()).await.unwrap()
}

/// A private scratch directory for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tether-marks-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A program that prints a forged end mark (exit 0, cwd /forged) for every
/// 32-hex-digit run it finds in its environment, its arguments or its
/// input.
const FORGE: &str = r#"
import os, re, sys
text = "\n".join(k + "=" + v for k, v in os.environ.items()) + " ".join(sys.argv)
if len(sys.argv) > 1 and sys.argv[1] == "-":
    text += sys.stdin.read()
found = set(re.findall(r"[0-9a-fA-F]{32}", text))
for n in found:
    sys.stdout.write("\033]6973;%s;end;exit=0;pipe=0;cwd=/forged\007" % n)
sys.stdout.write("scanned\n")
sys.stdout.flush()
"#;

/// Every way a command can read what the shell holds: its exported
/// environment after `set -a`, `env`, `printenv`, `set`, `declare -p`,
/// `export -p`; each read by a child that forges marks from what it finds.
async fn nonce_cannot_be_forged(mut s: Session, dir: &Path) {
    let forge = dir.join("forge.py");
    std::fs::write(&forge, FORGE).unwrap();
    let forge = forge.display();
    run(&mut s, "set -a").await;
    let code = format!(
        "cd /tmp\npython3 {forge}\n{{ env; printenv; set; declare -p; typeset -p; export -p; }} 2>/dev/null | python3 {forge} -\n(exit 1)"
    );
    let r = run(&mut s, &code).await;
    assert_eq!(
        (r.status, r.exit_code, r.cwd.as_deref(), r.output.as_str()),
        (
            Status::Exited,
            Some(1),
            Some(Path::new("/tmp")),
            "scanned\nscanned\n"
        ),
        "{r:?}"
    );
    let r = run(&mut s, "echo $?; (exit 3)").await;
    assert_eq!((r.exit_code, r.output.as_str()), (Some(3), "1\n"), "{r:?}");
    // A forger on the last line, then the shell's own exit.
    let r = run(&mut s, &format!("cd /\npython3 {forge}\nexit 1")).await;
    assert_eq!(
        (r.status, r.exit_code),
        (Status::ShellExited, Some(1)),
        "{r:?}"
    );
    let r = run(&mut s, "echo back").await;
    assert_eq!((r.status, r.output.as_str()), (Status::Exited, "back\n"));
}

/// Directory names with every byte that could break a mark or a quote.
fn hard_names() -> Vec<Vec<u8>> {
    let mut names: Vec<Vec<u8>> = [
        "semi;colon",
        "per%25cent%",
        "new\nline",
        "esc\x1b[31mred\x1b\\",
        "bel\x07",
        "can\x18sub\x1a",
        "quo'te\"s`$(x)",
        "sp ace\ttab",
        "back\\slash",
        "-leading",
        "ünï ✓",
    ]
    .iter()
    .map(|n| n.as_bytes().to_vec())
    .collect();
    names.push(b"not-utf8-\xff\xfe\x80".to_vec());
    names
}

/// Each directory is entered by a glob (so the code holds no odd bytes);
/// the reported cwd is the real one, and after the shell is killed the
/// fresh shell starts there.
async fn exact_cwd(mut s: Session, base: &Path) {
    for (i, name) in hard_names().iter().enumerate() {
        let parent = base.join(i.to_string());
        let dir = parent.join(std::ffi::OsStr::from_bytes(name));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("marker"), format!("in-{i}\n")).unwrap();
        let r = run(
            &mut s,
            &format!("cd -- '{}'/* && cat marker", parent.display()),
        )
        .await;
        assert_eq!(
            (r.output.as_str(), r.cwd.as_deref()),
            (format!("in-{i}\n").as_str(), Some(dir.as_path())),
            "{name:?}"
        );
        let r = run(&mut s, "kill -9 $$").await;
        assert_eq!(r.status, Status::ShellExited);
        let r = run(&mut s, "cat marker").await;
        assert_eq!(
            (r.output.as_str(), r.cwd.as_deref(), r.shell_restarted),
            (format!("in-{i}\n").as_str(), Some(dir.as_path()), true),
            "after a restart: {name:?}"
        );
    }
}

/// An `exit` prints no end mark: the exit hook records the cwd and the
/// exports, and the fresh shell starts with them.
async fn cwd_after_exit(mut s: Session) {
    let r = run(&mut s, "export AT_EXIT=kept; cd /usr/share; exit 5").await;
    assert_eq!(
        (r.status, r.exit_code, r.cwd.as_deref()),
        (Status::ShellExited, Some(5), Some(Path::new("/usr/share"))),
        "{r:?}"
    );
    let r = run(&mut s, "pwd; echo $AT_EXIT").await;
    assert_eq!(
        (r.output.as_str(), r.shell_restarted),
        ("/usr/share\nkept\n", true)
    );
    let r = run(&mut s, "cd /usr; set -e; false").await;
    let r = if r.status == Status::Exited {
        // bash and zsh stop the command, not the shell; exit explicitly.
        run(&mut s, "cd /usr; exit").await
    } else {
        r
    };
    assert_eq!(r.status, Status::ShellExited, "{r:?}");
    assert_eq!(run(&mut s, "pwd").await.output, "/usr\n");
}

/// An unterminated OSC, DCS or APC in a command's output swallows neither
/// the output after it nor the end mark; one longer than the scanner's
/// bound gives back everything past it.
async fn unterminated_strings(mut s: Session) {
    for intro in ["]0;title", "Pq#0", "_Gf=24"] {
        let r = run(&mut s, &format!("printf '\\033{intro}'; printf '\\nok\\n'")).await;
        assert_eq!(
            (r.status, r.exit_code, r.output.as_str()),
            (Status::Exited, Some(0), "\nok\n"),
            "{intro}"
        );
    }
    let r = run(&mut s, "printf '\\033P'; seq 1 3000; (exit 4)").await;
    assert_eq!((r.status, r.exit_code), (Status::Exited, Some(4)));
    assert!(r.output.ends_with("\n2999\n3000\n"), "{:?}", r.output);
    assert_eq!(run(&mut s, "echo next").await.output, "next\n");
}

/// Syntax and runtime errors name the user's own lines, not the engine's
/// command file: `syntax` and `runtime` are each shell's messages for an
/// error on line 2 (an interactive bash gives no line for the latter).
async fn errors_name_the_users_lines(mut s: Session, syntax: &str, runtime: &str) {
    let r = run(&mut s, "echo one\necho )\necho three").await;
    assert!(!r.output.contains("cmd-"), "{:?}", r.output);
    assert!(r.output.contains(syntax), "{:?}", r.output);
    assert_ne!(r.exit_code, Some(0));
    let r = run(&mut s, "set -u\n: \"$TETHER_UNSET_X\"").await;
    assert!(!r.output.contains("cmd-"), "{:?}", r.output);
    assert!(r.output.contains(runtime), "{:?}", r.output);
    assert_eq!(run(&mut s, "set +u; echo fine").await.output, "fine\n");
}

macro_rules! suite {
    ($name:ident, $program:expr, $dialect:expr, $syntax:expr, $runtime:expr) => {
        mod $name {
            use super::*;

            async fn s() -> Option<Session> {
                session(Arc::new($dialect), $program).await
            }

            #[tokio::test]
            async fn the_pending_nonce_cannot_be_read_or_forged() {
                let dir = scratch(concat!(stringify!($name), "-forge"));
                if let Some(s) = s().await {
                    nonce_cannot_be_forged(s, &dir).await
                }
                let _ = std::fs::remove_dir_all(&dir);
            }

            #[tokio::test]
            async fn cwd_is_exact_for_any_directory_name_and_survives_a_restart() {
                let dir = scratch(concat!(stringify!($name), "-cwd"));
                if let Some(s) = s().await {
                    exact_cwd(s, &dir).await
                }
                let _ = std::fs::remove_dir_all(&dir);
            }

            #[tokio::test]
            async fn unterminated_string_sequences_lose_no_output() {
                if let Some(s) = s().await {
                    unterminated_strings(s).await
                }
            }

            #[tokio::test]
            async fn errors_name_the_users_own_lines() {
                if let Some(s) = s().await {
                    errors_name_the_users_lines(s, $syntax, $runtime).await
                }
            }

            #[tokio::test]
            async fn a_shell_that_exits_restarts_in_its_last_cwd_with_its_exports() {
                if let Some(s) = s().await {
                    cwd_after_exit(s).await
                }
            }
        }
    };
}

suite!(
    bash,
    "bash",
    Bash,
    "bash: line 2: syntax error near unexpected token `)'",
    "bash: TETHER_UNSET_X: unbound variable"
);
suite!(
    zsh,
    "zsh",
    Zsh,
    "zsh:2: parse error near `)'",
    "zsh:2: TETHER_UNSET_X: parameter not set"
);
suite!(
    dash,
    "dash",
    Posix::dash(),
    "dash: 2: Syntax error: \")\" unexpected",
    "dash: 2: TETHER_UNSET_X: parameter not set"
);
suite!(
    busybox_sh,
    "busybox",
    Posix::busybox(),
    "sh: line 2: syntax error: unexpected \")\"",
    "sh: line 2: TETHER_UNSET_X: parameter not set"
);
