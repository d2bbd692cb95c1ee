//! Shells started inside a session, against real shells: `bash`, `exec
//! bash`, `zsh`, `sudo -i` and `su - tether-test` are armed, later commands
//! run there with exact statuses, cwd and user, and `exit` comes back to
//! the session's shell. A program that is not a shell, and the session's
//! own `read`, still wait for input.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use tether_shell::dialect::{Bash, Zsh};
use tether_shell::{NestChange, RunResult, Session, Status};

mod common;
use common::{session, within};
use tether_testkit::present::{installed, root, user_exists};

async fn run(s: &mut Session, code: &str) -> RunResult {
    s.run(code, &within(20)).await.unwrap()
}

/// `enter` starts a shell that is armed; inside it `(exit 4)`, `cd /tmp`,
/// `whoami` are exact; `exit` comes back to the session's shell, whose pid
/// and state are as they were.
async fn enter_and_return(mut s: Session, enter: &str, program: &str, user: &str) {
    let outer_pid = run(&mut s, "echo $$").await.output;
    run(&mut s, "cd / && export TETHER_OUTER=kept").await;
    let r = run(&mut s, enter).await;
    assert_eq!(r.status, Status::EnteredShell, "{enter}: {r:?}");
    assert_eq!(r.nest_change, Some(NestChange::Entered), "{r:?}");
    assert!(
        r.output.is_empty() || r.output.ends_with('\n'),
        "no prompt left in the output: {r:?}"
    );
    assert_eq!(r.nested.len(), 1, "{r:?}");
    assert_eq!(r.nested[0].program, program);
    assert_eq!(r.nested[0].user.as_deref(), Some(user));
    assert!(!r.nested[0].replaced);

    let r = run(&mut s, "(exit 4)").await;
    assert_eq!((r.status, r.exit_code), (Status::Exited, Some(4)), "{r:?}");
    assert_eq!(r.nested.len(), 1, "{r:?}");
    // What stands between the two shells (`su`, sudo's monitor) is part
    // of the chain, not left holding the terminal.
    assert!(r.terminal_holders.is_empty(), "{r:?}");
    assert_eq!(r.nest_change, None);
    let r = run(&mut s, "cd /tmp").await;
    assert_eq!(
        r.cwd.as_deref(),
        Some(std::path::Path::new("/tmp")),
        "{r:?}"
    );
    let r = run(&mut s, "whoami; echo $$").await;
    let mut lines = r.output.lines();
    assert_eq!(lines.next(), Some(user), "{r:?}");
    assert_ne!(format!("{}\n", lines.next().unwrap()), outer_pid);
    let r = run(&mut s, "echo a; echo b >&2; false | true").await;
    assert_eq!(
        (r.exit_code, r.output.as_str()),
        (Some(0), "a\nb\n"),
        "{r:?}"
    );

    let r = run(&mut s, "exit 3").await;
    assert_eq!((r.status, r.exit_code), (Status::Exited, Some(3)), "{r:?}");
    assert_eq!(r.nest_change, Some(NestChange::Returned), "{r:?}");
    assert!(r.nested.is_empty(), "{r:?}");
    assert_eq!(r.cwd.as_deref(), Some(std::path::Path::new("/")), "{r:?}");
    let r = run(&mut s, "echo $$ $TETHER_OUTER; (exit 5)").await;
    assert_eq!(r.output, format!("{} kept\n", outer_pid.trim()), "{r:?}");
    assert_eq!(r.exit_code, Some(5));
    assert!(r.nested.is_empty() && r.nest_change.is_none(), "{r:?}");
}

#[tokio::test]
async fn bash_inside_bash_is_armed_and_exit_comes_back() {
    let s = session(Arc::new(Bash), "bash").await.unwrap();
    enter_and_return(s, "bash --norc", "bash", &whoami()).await;
}

/// With the user's own start-up files (root's `.bashrc` here may have
/// pyenv or a banner): they ran as the shell started, and it is armed after.
#[tokio::test]
async fn bash_with_the_users_rc_inside_bash_is_armed() {
    let s = session(Arc::new(Bash), "bash").await.unwrap();
    enter_and_return(s, "bash", "bash", &whoami()).await;
}

#[tokio::test]
async fn zsh_inside_bash_is_armed_and_exit_comes_back() {
    if !installed("zsh") {
        return;
    }
    let s = session(Arc::new(Bash), "bash").await.unwrap();
    enter_and_return(s, "zsh -f", "zsh", &whoami()).await;
}

#[tokio::test]
async fn bash_inside_zsh_is_armed_and_exit_comes_back() {
    let Some(s) = session(Arc::new(Zsh), "zsh").await else {
        return;
    };
    enter_and_return(s, "bash --norc", "bash", &whoami()).await;
}

#[tokio::test]
async fn sudo_i_is_armed_and_exit_comes_back() {
    if !installed("sudo") || !root() {
        return;
    }
    let s = session(Arc::new(Bash), "bash").await.unwrap();
    enter_and_return(s, "sudo -i", "bash", "root").await;
}

/// `su -` to another user: that user's shell (tether-test's is /bin/sh,
/// dash) reads its own 0700 directory, since it cannot read the session's.
#[tokio::test]
async fn su_to_another_user_is_armed_and_exit_comes_back() {
    if !root() || !user_exists("tether-test") {
        return;
    }
    let s = session(Arc::new(Bash), "bash").await.unwrap();
    let shell = nix::unistd::User::from_name("tether-test")
        .unwrap()
        .unwrap()
        .shell;
    // A login shell is named as its argv[0] says (`-sh`: sh).
    let program = shell.file_name().unwrap().to_string_lossy().into_owned();
    enter_and_return(s, "su - tether-test", &program, "tether-test").await;
}

/// `exec bash` replaces the session's shell: armed in place; its `exit`
/// ends the session's shell, and the next command gets a fresh one.
#[tokio::test]
async fn exec_bash_is_armed_in_place() {
    let mut s = session(Arc::new(Bash), "bash").await.unwrap();
    let pid = run(&mut s, "echo $$").await.output;
    let r = run(&mut s, "exec bash --norc").await;
    assert_eq!(r.status, Status::EnteredShell, "{r:?}");
    assert!(r.nested[0].replaced, "{r:?}");
    let r = run(&mut s, "(exit 4)").await;
    assert_eq!(r.exit_code, Some(4), "{r:?}");
    let r = run(&mut s, "echo $$").await;
    assert_eq!(r.output, pid, "the same process, replaced");
    let r = run(&mut s, "exit 2").await;
    assert_eq!(
        (r.status, r.exit_code),
        (Status::ShellExited, Some(2)),
        "{r:?}"
    );
    let r = run(&mut s, "echo fresh").await;
    assert_eq!((r.status, r.output.as_str()), (Status::Exited, "fresh\n"));
    assert!(r.shell_restarted && r.nested.is_empty(), "{r:?}");
}

/// Two levels deep, then back one at a time.
#[tokio::test]
async fn shells_nest_and_unwind_one_at_a_time() {
    let mut s = session(Arc::new(Bash), "bash").await.unwrap();
    assert_eq!(
        run(&mut s, "bash --norc").await.status,
        Status::EnteredShell
    );
    let r = run(&mut s, "bash --norc").await;
    assert_eq!(
        (r.status, r.nested.len()),
        (Status::EnteredShell, 2),
        "{r:?}"
    );
    let r = run(&mut s, "exit 7").await;
    assert_eq!((r.exit_code, r.nested.len()), (Some(7), 1), "{r:?}");
    assert_eq!(run(&mut s, "(exit 6)").await.exit_code, Some(6));
    // `exit` alone exits with the last status, as at a prompt.
    let r = run(&mut s, "exit").await;
    assert_eq!((r.exit_code, r.nested.len()), (Some(6), 0), "{r:?}");
    assert_eq!(run(&mut s, "echo top").await.output, "top\n");
}

/// Not every program waiting for input is a shell: `cat`, a shell running
/// a script, and the session's own `read` wait for input as before.
#[tokio::test]
async fn other_programs_still_wait_for_input() {
    let mut s = session(Arc::new(Bash), "bash").await.unwrap();
    for (code, keys) in [
        ("cat", vec!["C-d".to_owned()]),
        ("bash -c 'read x'", vec![]),
        ("read x", vec![]),
    ] {
        let r = run(&mut s, code).await;
        assert_eq!(r.status, Status::WaitingForInput, "{code}: {r:?}");
        assert!(r.nested.is_empty() && r.nest_change.is_none(), "{r:?}");
        let r = s
            .send(Some("x\n"), &keys, std::time::Duration::from_secs(10))
            .await
            .unwrap();
        assert_eq!(r.status, Status::Exited, "{code}: {r:?}");
    }
}

fn whoami() -> String {
    let out = std::process::Command::new("whoami").output().unwrap();
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

/// Inside `sudo -i` (Debian's sudo runs the shell on a terminal of its
/// own and relays this one): a quiet command is not taken for a new shell,
/// and sudo's relay processes are not named as holders of the terminal.
#[tokio::test]
async fn inside_sudo_a_quiet_command_is_no_new_shell_and_sudo_holds_nothing() {
    if !installed("sudo") || !root() {
        return;
    }
    let mut s = session(Arc::new(Bash), "bash").await.unwrap();
    let r = run(&mut s, "sudo -i").await;
    assert_eq!(r.status, Status::EnteredShell, "{r:?}");
    let r = run(&mut s, "sleep 0.3; echo slept").await;
    assert_eq!(
        (r.status, r.output.as_str()),
        (Status::Exited, "slept\n"),
        "{r:?}"
    );
    assert_eq!(r.nested.len(), 1, "{r:?}");
    assert!(r.terminal_holders.is_empty(), "{r:?}");
    assert_eq!(
        run(&mut s, "exit").await.nest_change,
        Some(NestChange::Returned)
    );
}

/// A timeout inside an armed shell stops its whole line, as at its prompt:
/// an interrupt, then TERM for a program that ignores it, and the shell
/// (the inner one, not the session's) abandons the rest; it stays armed.
async fn timeouts_stop_the_line_inside(mut s: Session, enter: &str) {
    let r = run(&mut s, enter).await;
    assert_eq!(r.status, Status::EnteredShell, "{enter}: {r:?}");
    let short = within(1);
    let r = s.run("echo a; sleep 30; echo never", &short).await.unwrap();
    assert_eq!(r.status, Status::TimedOut, "{enter}: {r:?}");
    assert!(!r.output.contains("never"), "{enter}: {r:?}");
    let r = s
        .run(
            "echo a; sh -c 'trap \"\" INT; sleep 30'; echo never",
            &short,
        )
        .await
        .unwrap();
    assert_eq!(r.status, Status::TimedOut, "{enter}: {r:?}");
    assert!(!r.output.contains("never"), "{enter}: {r:?}");
    let r = run(&mut s, "(exit 4)").await;
    assert_eq!(
        (r.exit_code, r.nested.len()),
        (Some(4), 1),
        "{enter}: {r:?}"
    );
    let r = run(&mut s, "exit").await;
    assert_eq!(r.nest_change, Some(NestChange::Returned), "{enter}: {r:?}");
    assert_eq!(run(&mut s, "echo top").await.output, "top\n");
}

#[tokio::test]
async fn a_timeout_inside_bash_stops_the_line_there() {
    let s = session(Arc::new(Bash), "bash").await.unwrap();
    timeouts_stop_the_line_inside(s, "bash --norc").await;
}

#[tokio::test]
async fn a_timeout_inside_sudo_stops_the_line_there() {
    if !installed("sudo") || !root() {
        return;
    }
    let s = session(Arc::new(Bash), "bash").await.unwrap();
    timeouts_stop_the_line_inside(s, "sudo -i").await;
}

/// `su -` as a user who must give a password (on a terminal of su's own,
/// `--pty`, relayed): the prompt is `waiting_for_input` with `secret`, and
/// nothing is typed into it; C-c ends it and the session's shell goes on.
#[tokio::test]
async fn a_password_prompt_is_a_secret_and_nothing_is_typed() {
    if !root() || !user_exists("tether-test") {
        return;
    }
    let mut s = session(Arc::new(Bash), "bash").await.unwrap();
    let r = run(&mut s, "su -P -s /bin/sh tether-test -c 'su - root'").await;
    assert_eq!(r.status, Status::WaitingForInput, "{r:?}");
    assert!(r.secret, "{r:?}");
    assert!(r.nested.is_empty() && r.nest_change.is_none(), "{r:?}");
    let r = s
        .send(
            None,
            &["C-c".to_owned()],
            std::time::Duration::from_secs(10),
        )
        .await
        .unwrap();
    // su takes a moment to end after the C-c its relay passes on.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let mut r = r;
    while r.status == Status::WaitingForInput && std::time::Instant::now() < deadline {
        r = s.read(std::time::Duration::from_millis(200)).await.unwrap();
    }
    assert_eq!(r.status, Status::Exited, "{r:?}");
    assert_eq!(run(&mut s, "echo on").await.output, "on\n");
    // A prompt of the session's own shell, too.
    let r = run(&mut s, "read -s -p 'Password: ' p").await;
    assert_eq!(
        (r.status, r.secret),
        (Status::WaitingForInput, true),
        "{r:?}"
    );
    let r = s
        .send(Some("x\n"), &[], std::time::Duration::from_secs(10))
        .await
        .unwrap();
    assert_eq!((r.status, r.secret), (Status::Exited, false), "{r:?}");
}

/// fish inside bash: armed with the fish dialect; its syntax, `$status`
/// and `$pipestatus` are fish's.
#[tokio::test]
async fn fish_inside_bash_is_armed_and_exit_comes_back() {
    if !installed("fish") {
        return;
    }
    let mut s = session(Arc::new(Bash), "bash").await.unwrap();
    let outer = run(&mut s, "echo $$").await.output;
    let r = run(&mut s, "fish --no-config").await;
    assert_eq!(
        (r.status, r.nested.len()),
        (Status::EnteredShell, 1),
        "{r:?}"
    );
    assert_eq!(r.nested[0].program, "fish");
    assert_eq!(run(&mut s, "sh -c 'exit 4'").await.exit_code, Some(4));
    let r = run(&mut s, "cd /tmp; false | true").await;
    assert_eq!(
        r.cwd.as_deref(),
        Some(std::path::Path::new("/tmp")),
        "{r:?}"
    );
    assert_eq!(r.pipe_status, Some(vec![1, 0]), "{r:?}");
    let r = run(&mut s, "whoami; echo $fish_pid").await;
    assert_eq!(
        r.output,
        format!("{}\n{}\n", whoami(), r.nested[0].pid),
        "{r:?}"
    );
    let r = run(&mut s, "exit 3").await;
    assert_eq!(
        (r.exit_code, r.nest_change),
        (Some(3), Some(NestChange::Returned)),
        "{r:?}"
    );
    assert_eq!(run(&mut s, "echo $$").await.output, outer);
}

/// A shell the session cannot arm (one it knows no dialect of: a `ksh`
/// here) is said so once, waits for input, and `exit` typed into it brings
/// the session's shell back without a reset.
#[tokio::test]
async fn a_shell_that_cannot_be_armed_is_said_so_and_exit_comes_back() {
    let dir = std::env::temp_dir().join(format!("tether-ksh-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let ksh = dir.join("ksh");
    let _ = std::fs::remove_file(&ksh);
    std::os::unix::fs::symlink("/bin/bash", &ksh).unwrap();
    let mut s = session(Arc::new(Bash), "bash").await.unwrap();
    let r = run(&mut s, &format!("{} --norc", ksh.display())).await;
    assert_eq!(r.status, Status::WaitingForInput, "{r:?}");
    assert_eq!(r.nest_change, Some(NestChange::NotArmed), "{r:?}");
    assert!(r.output.starts_with("tether: ksh (pid "), "{r:?}");
    assert!(r.nested.is_empty(), "{r:?}");
    let mut r = s
        .send(Some("exit 3\n"), &[], std::time::Duration::from_secs(10))
        .await
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while r.status == Status::WaitingForInput && std::time::Instant::now() < deadline {
        assert_ne!(
            r.nest_change,
            Some(NestChange::NotArmed),
            "said once: {r:?}"
        );
        r = s.read(std::time::Duration::from_millis(200)).await.unwrap();
    }
    assert_eq!((r.status, r.exit_code), (Status::Exited, Some(3)), "{r:?}");
    assert_eq!(run(&mut s, "echo on").await.output, "on\n");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Turned off, a shell a command starts waits for input like any program.
#[tokio::test]
async fn turned_off_a_started_shell_waits_for_input() {
    let opts = tether_shell::SessionOptions {
        run_rc_files: false,
        arm_nested: false,
        ..tether_shell::SessionOptions::default()
    };
    let mut s = Session::start(opts).await.unwrap();
    let r = run(&mut s, "bash --norc").await;
    assert_eq!(r.status, Status::WaitingForInput, "{r:?}");
    assert!(r.nested.is_empty() && r.nest_change.is_none(), "{r:?}");
    let mut r = s
        .send(Some("exit 2\n"), &[], std::time::Duration::from_secs(10))
        .await
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while r.status == Status::WaitingForInput && std::time::Instant::now() < deadline {
        r = s.read(std::time::Duration::from_millis(200)).await.unwrap();
    }
    assert_eq!((r.status, r.exit_code), (Status::Exited, Some(2)), "{r:?}");
}

/// A secret exported in a shell of another user (`su - tether-test`, whose
/// snapshot is in its own directory) is redacted as the session's own are:
/// in the call that sets it and the next. Before, it was shown.
#[tokio::test]
async fn a_secret_exported_in_another_users_shell_is_redacted() {
    if !root() || !user_exists("tether-test") {
        return;
    }
    let mut s = session(Arc::new(Bash), "bash").await.unwrap();
    let r = run(&mut s, "su - tether-test").await;
    assert_eq!(r.status, Status::EnteredShell, "{r:?}");
    let value = format!("v{}x{}", std::process::id(), 7_919 * 104_729);
    let r = run(
        &mut s,
        &format!("export MY_API_TOKEN={value}; echo \"$MY_API_TOKEN\""),
    )
    .await;
    assert_eq!(
        (r.exit_code, r.output.as_str()),
        (Some(0), "[redacted]\n"),
        "{r:?}"
    );
    let r = run(&mut s, "echo \"x${MY_API_TOKEN}x\"").await;
    assert_eq!(r.output, "x[redacted]x\n", "{r:?}");
}
