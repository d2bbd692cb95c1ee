//! `tether exec --sudo` against real sshd and real sudo: the login user
//! `tether-sudo` may run anything with sudo after typing its password (set
//! for this run; each command starts with `sudo -k`). The password is typed once per host into
//! sudo's own prompt; a wrong one is that host's error, not retried; and
//! the password is in no output, argv, environment or file tether writes.
//! Needs root (to make the user and its sudo rule) and sudo; skips with
//! the reason otherwise.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader};
use std::os::unix::fs::PermissionsExt;
use std::process::{Command, Stdio};

use exec_kit::wait;
use sudo_kit::{USER, password, password_file};
use tether_transport::Terminal;

mod exec_kit;
mod sudo_kit;

fn contains(hay: &[u8], needle: &str) -> bool {
    hay.windows(needle.len()).any(|w| w == needle.as_bytes())
}

#[test]
fn the_password_is_typed_once_into_sudos_prompt_on_every_host() {
    let (Some(f), Some(pw)) = (exec_kit::start(), password()) else {
        return;
    };
    let file = password_file(&f.scratch.0, "pw", pw);
    let file_arg = file.display().to_string();
    let out = f.exec(
        Some(USER),
        "127.0.0.[2-3]",
        &["--sudo-password-file", &file_arg, "--output", "gather"],
        "sudo -k; sudo id -un; echo after",
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    // Both hosts' outputs gathered: sudo ran as root, no prompt, no marker,
    // no blank line where the prompt was.
    assert!(
        stdout.ends_with("127.0.0.[2-3] (2)\n-----------------\nroot\nafter\n"),
        "{stdout}"
    );
    assert!(!contains(&out.stdout, pw) && !contains(&out.stderr, pw));
    // Streamed, line by line, the same; a second sudo that does not ask
    // (its ticket from the first) runs too.
    let out = f.exec(
        Some(USER),
        "127.0.0.2",
        &["--sudo-password-file", &file_arg],
        "sudo -k; sudo id -un; sudo id -un",
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(stdout, "127.0.0.2: root\n127.0.0.2: root\n");
    assert_eq!(out.status.code(), Some(0));
    // A second sudo that asks anew (its ticket removed) is not answered:
    // the password is typed once per host.
    let out = f.exec(
        Some(USER),
        "127.0.0.2",
        &["--sudo-password-file", &file_arg],
        "sudo -k; sudo id -un; sudo -k; sudo id -un; echo unreached",
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(255), "{stdout}\n{stderr}");
    assert!(stdout.starts_with("127.0.0.2: root\n"), "{stdout}");
    assert!(!stdout.contains("unreached"), "{stdout}");
    assert!(
        stderr.contains("asked for the password a second time"),
        "{stderr}"
    );

    // Without --sudo, sudo finds no terminal and says so: nothing is typed.
    let out = f.exec(Some(USER), "127.0.0.2", &[], "sudo -k; sudo id -un");
    assert_ne!(out.status.code(), Some(0));
    assert!(!String::from_utf8_lossy(&out.stdout).contains("root"));
}

#[test]
fn a_wrong_password_is_that_hosts_error_and_never_retried() {
    let (Some(f), Some(pw)) = (exec_kit::start(), password()) else {
        return;
    };
    let wrong = format!("{pw}-wrong");
    let file = password_file(&f.scratch.0, "wrong", &wrong);
    let file_arg = file.display().to_string();
    let out = f.exec(
        Some(USER),
        "127.0.0.[2-3]",
        &["--sudo-password-file", &file_arg, "--output", "json"],
        "sudo -k; sudo id -un; echo after-sudo",
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(255), "{stdout}");
    let hosts: Vec<serde_json::Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(hosts.len(), 2, "{stdout}");
    for h in &hosts {
        assert_eq!(h["error_kind"], "sudo_refused", "{h}");
        assert!(h["error"].as_str().unwrap().contains("second time"), "{h}");
        // sudo said it was wrong once; it was not typed a second time.
        let out = h["stdout"].as_str().unwrap_or_default();
        assert_eq!(out.matches("Sorry, try again").count(), 1, "{h}");
        assert!(!out.contains("root"), "{h}");
    }
    assert!(!contains(&out.stdout, &wrong) && !contains(&out.stderr, &wrong));
}

#[test]
fn the_password_is_in_no_argv_environment_or_file_while_it_runs() {
    let (Some(f), Some(pw)) = (exec_kit::start(), password()) else {
        return;
    };
    let file = password_file(&f.scratch.0, "pw", pw);
    let home = f.scratch.0.join("home");
    let tmp = f.scratch.0.join("tmp");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&tmp).unwrap();
    let go = f.marks.join("go");
    let command = format!(
        "sudo -k; sudo id -un; while [ ! -e {} ]; do sleep 0.05; done; echo done",
        go.display()
    );
    let mut child = f
        .command(
            Some(USER),
            "127.0.0.[2-3]",
            &["--sudo-password-file", &file.display().to_string()],
            &command,
        )
        .env("HOME", &home)
        .env("XDG_STATE_HOME", home.join("state"))
        .env("XDG_RUNTIME_DIR", &tmp)
        .env("TMPDIR", &tmp)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = BufReader::new(child.stdout.take().unwrap());
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for l in stdout.lines() {
            let _ = tx.send(l.unwrap());
        }
    });
    let mut seen = Vec::new();
    while seen
        .iter()
        .filter(|l: &&String| l.ends_with(": root"))
        .count()
        < 2
    {
        let l = rx
            .recv_timeout(std::time::Duration::from_secs(30))
            .unwrap_or_else(|_| panic!("sudo's output on both hosts; saw {seen:?}"));
        seen.push(l);
    }
    // sudo has run on both hosts, the commands still run: no process's
    // argv or environment holds the password.
    sudo_kit::nowhere_but(pw, &[], "");
    std::fs::write(&go, "").unwrap();
    let status = child.wait().unwrap();
    let mut err = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
    seen.extend(rx.iter());
    assert!(status.success(), "{seen:?} {err}");
    assert_eq!(seen.iter().filter(|l| l.ends_with(": done")).count(), 2);
    assert!(!seen.iter().any(|l| l.contains(pw)) && !err.contains(pw));
    // Nor a file it wrote (its state, a spill file in TMPDIR).
    sudo_kit::nowhere_but(pw, &[&home, &tmp], "");
}

#[test]
fn the_password_is_asked_once_on_the_terminal() {
    let (Some(f), Some(pw)) = (exec_kit::start(), password()) else {
        return;
    };
    let c = f.command(
        Some(USER),
        "127.0.0.[2-3]",
        &["--sudo", "--output", "gather"],
        "sudo -k; sudo id -un",
    );
    let program = c.get_program().to_string_lossy().into_owned();
    let args: Vec<String> = c
        .get_args()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let mut spec = tether_pty::SpawnSpec::new(&program);
    spec.args = args;
    spec.env = vec![
        ("PATH".into(), std::env::var("PATH").unwrap()),
        ("TERM".into(), "xterm-256color".into()),
        ("USER".into(), tether_testkit::user()),
    ];
    let pty = tether_pty::LocalPty::spawn(&spec).unwrap();
    let mut out = pty.take_output().unwrap();
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = std::sync::Arc::clone(&seen);
    std::thread::spawn(move || {
        while let Some(chunk) = out.blocking_recv() {
            sink.lock().unwrap().extend_from_slice(&chunk);
        }
    });
    let text = || String::from_utf8_lossy(&seen.lock().unwrap()).into_owned();
    wait(
        || text().contains("sudo password for the hosts: "),
        "tether's one prompt",
    );
    pty.write(format!("{pw}\r").into_bytes()).unwrap();
    let exit = pty.exit();
    wait(|| exit.borrow().is_some(), "tether to exit");
    let code = exit.borrow().unwrap();
    let text = text();
    assert_eq!(code, tether_transport::ExitInfo::Code(0), "{text}");
    assert_eq!(text.matches("sudo password").count(), 1, "{text}");
    assert!(
        text.contains("127.0.0.[2-3]") && text.contains("root"),
        "{text}"
    );
    // Not echoed as typed.
    assert!(!text.contains(pw), "{text}");
}

#[test]
fn sudo_without_a_place_to_ask_or_with_stdin_or_a_loose_file_runs_nothing() {
    let Some(f) = exec_kit::start() else {
        return;
    };
    let mark = f.marks.join("ran");
    let touch = format!("touch {}", mark.display());
    // With --stdin (the terminal's input is sudo's).
    let out = f.exec(None, "127.0.0.2", &["--sudo", "--stdin"], &touch);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    // A password file others may read.
    let loose = f.scratch.0.join("loose");
    std::fs::write(&loose, "x\n").unwrap();
    std::fs::set_permissions(&loose, std::fs::Permissions::from_mode(0o644)).unwrap();
    let out = f.exec(
        None,
        "127.0.0.2",
        &["--sudo-password-file", &loose.display().to_string()],
        &touch,
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(0));
    assert!(err.contains("chmod 600"), "{err}");
    // --sudo with no terminal to ask on (a new session: no /dev/tty).
    let out = Command::new("setsid")
        .arg("-w")
        .arg(exec_kit::TETHER)
        .args(
            f.command(None, "127.0.0.2", &["--sudo"], &touch)
                .get_args()
                .collect::<Vec<_>>(),
        )
        .env("USER", tether_testkit::user())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(0));
    assert!(err.contains("--sudo-password-file"), "{err}");
    assert!(!mark.exists(), "a refused run ran its command");
}
