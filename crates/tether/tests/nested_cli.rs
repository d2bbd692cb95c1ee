//! Shells started inside a session, through the real `tether` binary and a
//! daemon of the test's own: `bash --norc`, `bash` (with the user's rc),
//! `exec bash`, `sudo -i`, `su - tether-test`, and `sudo -i` inside `su -`
//! (two levels) are armed; inside, `(exit 4)`, `cd /tmp` and `whoami` are
//! exact; `exit` comes back to the session's own shell. `ssh` to another
//! host is not armed: it waits for input, said once, and `exit` sent into
//! it brings the session's shell back.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
use tether_testkit::present::{installed, root, user_exists};

use common::Daemon;
use serde_json::Value;

/// `tether run -s SESSION --json [--norc] -- CODE`: the exit code and the
/// result.
fn run(d: &Daemon, session: &str, code: &str) -> (i32, Value) {
    let out = d.run(&["run", "-s", session, "--norc", "--json", "--", code]);
    let v: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{code}: not JSON ({e}): {out:?}"));
    (out.status.code().unwrap(), v)
}

/// The chain of armed shells as `(program, user)`, outermost first.
fn chain(r: &Value) -> Vec<(String, String)> {
    r["nested"]
        .as_array()
        .unwrap_or_else(|| panic!("no nested list: {r}"))
        .iter()
        .map(|l| {
            (
                l["program"].as_str().unwrap().to_owned(),
                l["user"].as_str().unwrap_or("?").to_owned(),
            )
        })
        .collect()
}

fn whoami() -> String {
    nix::unistd::User::from_uid(nix::unistd::getuid())
        .unwrap()
        .unwrap()
        .name
}

/// The program a login shell of `user` is named as (`/bin/sh`: `sh`).
fn login_program(user: &str) -> String {
    let shell = nix::unistd::User::from_name(user).unwrap().unwrap().shell;
    shell.file_name().unwrap().to_string_lossy().into_owned()
}

/// Runs `enter` at depth `depth` (the chain so far has `depth` shells):
/// it is armed as `program` of `user`; inside it `(exit 4)`, `cd /tmp`
/// and `whoami` are exact. The shell is left armed.
fn enter_and_check(d: &Daemon, s: &str, enter: &str, program: &str, user: &str, depth: usize) {
    let (code, r) = run(d, s, enter);
    assert_eq!(
        (code, r["status"].as_str()),
        (0, Some("entered_shell")),
        "{enter}: {r}"
    );
    assert_eq!(r["nest_change"], "entered", "{enter}: {r}");
    let levels = chain(&r);
    assert_eq!(levels.len(), depth + 1, "{enter}: {r}");
    assert_eq!(
        levels[depth],
        (program.to_owned(), user.to_owned()),
        "{enter}: {r}"
    );

    let (code, r) = run(d, s, "(exit 4)");
    assert_eq!(
        (code, r["status"].as_str(), r["exit_code"].as_i64()),
        (4, Some("exited"), Some(4)),
        "{enter}: {r}"
    );
    assert!(r["nest_change"].is_null(), "{enter}: {r}");
    assert_eq!(chain(&r).len(), depth + 1, "{enter}: {r}");
    let (code, r) = run(d, s, "cd /tmp");
    assert_eq!((code, r["cwd"].as_str()), (0, Some("/tmp")), "{enter}: {r}");
    let (code, r) = run(d, s, "whoami");
    assert_eq!(
        (code, r["output"].as_str()),
        (0, Some(format!("{user}\n").as_str())),
        "{enter}: {r}"
    );
}

/// `exit` from a shell at depth `depth + 1`: the one around it (`depth`
/// shells armed; 0: the session's own) runs commands again, with the exit
/// status of the last command inside (`cd /tmp`: 0).
fn exit_back(d: &Daemon, s: &str, depth: usize) {
    let (code, r) = run(d, s, "exit");
    assert_eq!(
        (code, r["status"].as_str(), r["exit_code"].as_i64()),
        (0, Some("exited"), Some(0)),
        "{r}"
    );
    assert_eq!(r["nest_change"], "returned", "{r}");
    assert_eq!(chain(&r).len(), depth, "{r}");
}

/// In the session's own shell again: its pid, cwd and exports are as they
/// were before the shell was entered, and exit codes are exact.
fn own_shell_is_back(d: &Daemon, s: &str, pid: &str) {
    let (code, r) = run(d, s, "echo $$ $PWD $TETHER_OUTER; (exit 5)");
    assert_eq!(
        (code, r["output"].as_str()),
        (5, Some(format!("{pid} / kept\n").as_str())),
        "{r}"
    );
    assert!(chain(&r).is_empty() && r["nest_change"].is_null(), "{r}");
}

/// The session's own shell, in `/` with an export, and its pid.
fn start(d: &Daemon, s: &str) -> String {
    let (code, r) = run(d, s, "cd / && export TETHER_OUTER=kept && echo $$");
    assert_eq!(code, 0, "{r}");
    r["output"].as_str().unwrap().trim().to_owned()
}

/// One shell in, checked, and out again.
fn enter_and_return(name: &str, enter: &str, program: &str, user: &str) {
    let d = Daemon::new(name);
    let pid = start(&d, "n");
    enter_and_check(&d, "n", enter, program, user, 0);
    exit_back(&d, "n", 0);
    own_shell_is_back(&d, "n", &pid);
}

#[test]
fn bash_norc_inside_a_session_is_armed_and_exit_comes_back() {
    enter_and_return("nested-bash-norc", "bash --norc", "bash", &whoami());
}

/// With the user's own start-up files (whatever root's `.bashrc` has).
#[test]
fn bash_with_the_users_rc_inside_a_session_is_armed() {
    enter_and_return("nested-bash-rc", "bash", "bash", &whoami());
}

#[test]
fn sudo_i_inside_a_session_is_armed_and_exit_comes_back() {
    if !installed("sudo") || !root() {
        return;
    }
    enter_and_return("nested-sudo", "sudo -i", "bash", "root");
}

/// tether-test's login shell (`/bin/sh` as scripts/test makes it) reads a
/// 0700 directory of its own.
#[test]
fn su_to_another_user_inside_a_session_is_armed_and_exit_comes_back() {
    if !root() || !user_exists("tether-test") {
        return;
    }
    let program = login_program("tether-test");
    enter_and_return("nested-su", "su - tether-test", &program, "tether-test");
}

/// `exec bash` replaces the session's shell: armed in place; its `exit`
/// ends the session's shell (`shell_exited`, exit code 122), and the next
/// command gets a fresh one, cwd and exports restored.
#[test]
fn exec_bash_is_armed_in_place_and_its_exit_ends_the_sessions_shell() {
    let d = Daemon::new("nested-exec");
    let pid = start(&d, "n");
    let (code, r) = run(&d, "n", "exec bash --norc");
    assert_eq!(
        (code, r["status"].as_str()),
        (0, Some("entered_shell")),
        "{r}"
    );
    assert_eq!(r["nest_change"], "entered", "{r}");
    assert_eq!(r["nested"][0]["replaced"], true, "{r}");
    assert_eq!(chain(&r), [("bash".to_owned(), whoami())], "{r}");
    let (code, r) = run(&d, "n", "(exit 4)");
    assert_eq!((code, r["exit_code"].as_i64()), (4, Some(4)), "{r}");
    let (_, r) = run(&d, "n", "cd /tmp");
    assert_eq!(r["cwd"], "/tmp", "{r}");
    let (_, r) = run(&d, "n", "whoami; echo $$");
    assert_eq!(
        r["output"].as_str(),
        Some(format!("{}\n{pid}\n", whoami()).as_str()),
        "the same process, replaced: {r}"
    );
    let (code, r) = run(&d, "n", "exit 2");
    assert_eq!(
        (code, r["status"].as_str(), r["exit_code"].as_i64()),
        (122, Some("shell_exited"), Some(2)),
        "{r}"
    );
    let (code, r) = run(&d, "n", "echo fresh $TETHER_OUTER; (exit 3)");
    assert_eq!(
        (code, r["output"].as_str(), r["shell_restarted"].as_bool()),
        (3, Some("fresh kept\n"), Some(true)),
        "{r}"
    );
    assert!(chain(&r).is_empty(), "{r}");
}

/// `su - tether-test`, then `sudo -i` inside it (a sudoers drop-in lets
/// tether-test do so without a password): two levels, root at the inner
/// one; `exit` twice comes back one level at a time.
#[test]
fn sudo_i_inside_su_is_armed_two_levels_deep() {
    if !installed("sudo") || !installed("visudo") || !root() || !user_exists("tether-test") {
        return;
    }
    sudoers_rule();
    let d = Daemon::new("nested-su-sudo");
    let pid = start(&d, "n");
    let outer = login_program("tether-test");
    enter_and_check(&d, "n", "su - tether-test", &outer, "tether-test", 0);
    enter_and_check(&d, "n", "sudo -i", "bash", "root", 1);
    let (_, r) = run(&d, "n", "whoami");
    assert_eq!(
        chain(&r),
        [
            (outer.clone(), "tether-test".to_owned()),
            ("bash".to_owned(), "root".to_owned())
        ],
        "{r}"
    );
    exit_back(&d, "n", 1);
    let (code, r) = run(&d, "n", "whoami; (exit 6)");
    assert_eq!(
        (code, r["output"].as_str()),
        (6, Some("tether-test\n")),
        "{r}"
    );
    let (code, r) = run(&d, "n", "exit");
    assert_eq!(
        (code, r["exit_code"].as_i64(), r["nest_change"].as_str()),
        (6, Some(6), Some("returned")),
        "exit alone: the last status: {r}"
    );
    assert!(chain(&r).is_empty(), "{r}");
    own_shell_is_back(&d, "n", &pid);
}

/// `/etc/sudoers.d/tether-test` (`tether-test ALL=(ALL) NOPASSWD: ALL`,
/// 0440, checked by `visudo -cf`), made when absent (written beside it
/// under a name with a dot, which sudo does not read, then renamed).
fn sudoers_rule() {
    let path = std::path::Path::new("/etc/sudoers.d/tether-test");
    let rule = "tether-test ALL=(ALL) NOPASSWD: ALL\n";
    if std::fs::read_to_string(path).is_ok_and(|s| s == rule) {
        return;
    }
    use std::os::unix::fs::PermissionsExt;
    let tmp = std::path::PathBuf::from(format!(
        "/etc/sudoers.d/.tether-test.{}",
        std::process::id()
    ));
    std::fs::write(&tmp, rule).unwrap();
    std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o440)).unwrap();
    let check = std::process::Command::new("visudo")
        .args(["-cf"])
        .arg(&tmp)
        .output()
        .unwrap();
    if !check.status.success() {
        let _ = std::fs::remove_file(&tmp);
        panic!("visudo -cf: {check:?}");
    }
    std::fs::rename(&tmp, path).unwrap();
}

/// Without --json: `bash --norc` exits 0 with a note on stderr naming the
/// shell; inside, exit codes are the commands' own; `exit` exits with the
/// inner shell's code and says the session's shell runs commands again.
#[test]
fn the_plain_cli_gives_exit_codes_and_notes() {
    let d = Daemon::new("nested-plain");
    let plain = |code: &str| {
        let out = d.run(&["run", "-s", "p", "--norc", "--", code]);
        (
            out.status.code().unwrap(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (code, _, err) = plain("bash --norc");
    assert_eq!(code, 0, "{err}");
    assert!(
        err.starts_with("tether: entered a shell: later commands on session p run in bash (pid ")
            && err.contains(&format!("user {}", whoami()))
            && err.contains("until it exits (`exit` returns)"),
        "{err}"
    );
    let (code, out, err) = plain("(exit 4)");
    assert_eq!((code, out.as_str(), err.as_str()), (4, "", ""));
    let (code, _, err) = plain("cd /tmp");
    assert_eq!((code, err.as_str()), (0, ""));
    let (code, out, _) = plain("pwd; whoami");
    assert_eq!((code, out), (0, format!("/tmp\n{}\n", whoami())));
    let (code, _, err) = plain("exit 7");
    assert_eq!(
        (code, err.as_str()),
        (
            7,
            "tether: the shell exited with code 7; later commands run in the session's shell\n"
        )
    );
    let (code, out, err) = plain("echo top; (exit 3)");
    assert_eq!((code, out.as_str(), err.as_str()), (3, "top\n", ""));
}

/// `ssh` to a test sshd from inside a session: a shell on another host,
/// which the session does not arm. The result waits for input (ssh's
/// remote prompt), says so once (`not_armed`, the first line of output
/// naming ssh); the session stays usable by `tether send`: what is typed
/// runs on the far side, `exit 3` ends ssh with 3, and the session's own
/// shell runs commands again with exact exit codes.
#[test]
fn ssh_inside_a_session_waits_for_input_and_exit_sent_comes_back() {
    let Some(r) = common::remote::start_hosts("nested-ssh", &[("web01", "127.0.0.2")]) else {
        return;
    };
    let config = r.home.0.join(".ssh/config");
    let (code, v) = r.json(&["run", "-s", "n", "--norc", "--", "cd / && echo $$"]);
    assert_eq!(code, 0, "{v}");
    let pid = v["output"].as_str().unwrap().trim().to_owned();
    let ssh = format!("ssh -F {} web01", config.display());
    let (code, v) = r.json(&["run", "-s", "n", "--timeout", "20", "--", &ssh]);
    assert_eq!(
        (code, v["status"].as_str()),
        (125, Some("waiting_for_input")),
        "{v}"
    );
    assert_eq!(v["nest_change"], "not_armed", "{v}");
    assert!(chain(&v).is_empty(), "{v}");
    let output = v["output"].as_str().unwrap();
    assert!(
        output.starts_with("tether: ssh")
            && output.contains("runs a shell on another host, which the session does not arm"),
        "{v}"
    );
    // Typed into ssh: it runs on the far side (SSH_CONNECTION is set
    // there, not here), and the notice is not said again.
    let (_, v) = r.json(&["send", "-s", "n", "echo far:$SSH_CONNECTION", "-k", "Enter"]);
    let mut seen = v["output"].as_str().unwrap().to_owned();
    let v = wait_output(&r, &mut seen, "far:127.0.0.");
    assert_ne!(v["nest_change"], "not_armed", "said once: {v}");
    // `exit 3` typed into the remote shell: ssh ends with 3, and the
    // session's shell is back.
    let (_, v) = r.json(&["send", "-s", "n", "exit 3", "-k", "Enter"]);
    let v = wait_done(&r, v);
    assert_eq!(
        (v["status"].as_str(), v["exit_code"].as_i64()),
        (Some("exited"), Some(3)),
        "{v}"
    );
    assert!(chain(&v).is_empty(), "{v}");
    let (code, v) = r.json(&["run", "-s", "n", "--", "echo $$ $PWD; (exit 4)"]);
    assert_eq!(
        (code, v["output"].as_str()),
        (4, Some(format!("{pid} /\n").as_str())),
        "{v}"
    );
    let (code, v) = r.json(&["run", "-s", "n", "--", "whoami"]);
    assert_eq!(
        (code, v["output"].as_str()),
        (0, Some(format!("{}\n", whoami()).as_str())),
        "{v}"
    );
    assert!(chain(&v).is_empty() && v["nest_change"].is_null(), "{v}");
}

/// Reads the session until its output (`seen`, added to) holds `what`;
/// the last result.
fn wait_output(r: &common::remote::Remote, seen: &mut String, what: &str) -> Value {
    let mut last = Value::Null;
    common::wait_for(20, what, || {
        if seen.contains(what) {
            return Some(());
        }
        let (_, v) = r.json(&["read", "-s", "n", "--wait", "1"]);
        seen.push_str(v["output"].as_str().unwrap_or(""));
        last = v;
        None
    });
    last
}

/// `v`, or the result `tether read` gives once the session no longer
/// waits for input.
fn wait_done(r: &common::remote::Remote, v: Value) -> Value {
    let mut last = v;
    common::wait_for(20, "ssh to end", || {
        if last["status"] != "waiting_for_input" && last["status"] != "running" {
            return Some(last.clone());
        }
        let (_, v) = r.json(&["read", "-s", "n", "--wait", "1"]);
        last = v;
        None
    })
}
