//! The fence against the real kernel, through bubblewrap: as this user and
//! (when run as root) as the unprivileged test user. Writes outside the
//! roots, into `.git`, from a double-forked `setsid` child, reads of a
//! hidden file, and a connection to a listener outside are all refused by
//! the kernel with the program's own error; writes in a root and in the
//! temp directory work. Skips with a message when `bwrap` is missing.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::ffi::OsString;
use std::path::Path;
use std::process::Command;

use tether_confine::{Fence, Mode};
use tether_testkit::{Scratch, give_to_login_user, user};

/// Runs `script` with `sh -c` inside `fence`, as `who` (None: this user).
fn run(fence: &Fence, script: &str, who: Option<&str>) -> (i32, String) {
    let (bwrap, args) = fence
        .command(Path::new("/bin/sh"), &[OsString::from("-c"), script.into()])
        .unwrap();
    let mut cmd = match who {
        Some(u) => {
            let mut c = Command::new("setpriv");
            c.args([
                &format!("--reuid={u}"),
                &format!("--regid={u}"),
                "--init-groups",
                "--",
            ]);
            c.arg(&bwrap);
            c
        }
        None => Command::new(&bwrap),
    };
    let out = cmd.args(&args).output().unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code().unwrap_or(-1), text)
}

fn check_as(who: Option<&str>) {
    let s = Scratch::new("fence");
    let (ws, out, secret, tmp) = (
        s.0.join("ws"),
        s.0.join("out"),
        s.0.join("secret"),
        s.0.join("tmp"),
    );
    for d in [&ws, &ws.join(".git"), &out, &secret, &tmp] {
        std::fs::create_dir_all(d).unwrap();
    }
    std::fs::write(ws.join(".git/config"), "[core]\n").unwrap();
    std::fs::write(secret.join("id_ed25519"), "PRIVATE KEY").unwrap();
    if who.is_some() {
        give_to_login_user(&s.0).unwrap();
    }
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let mut fence = Fence::new(
        Mode::Workspace {
            roots: vec![ws.clone()],
        },
        &tmp,
    )
    .unwrap()
    .hide(&secret)
    .unwrap();
    if who.is_some() {
        fence = fence.unprivileged();
    }
    let label = who.unwrap_or("this user");
    let (ws_, out_, tmp_) = (ws.display(), out.display(), tmp.display());
    // Allowed: the root and the temp directory.
    let (code, text) = run(
        &fence,
        &format!("touch {ws_}/made && touch {tmp_}/made && echo fine"),
        who,
    );
    assert_eq!((code, text.trim()), (0, "fine"), "{label}");
    assert!(ws.join("made").exists() && tmp.join("made").exists());
    // Refused: outside, .git, and a double-forked setsid child outside.
    for script in [
        format!("touch {out_}/x"),
        format!("echo x > {ws_}/.git/config"),
        "touch /etc/tether-fence-test".to_string(),
    ] {
        let (code, text) = run(&fence, &script, who);
        assert_ne!(code, 0, "{label}: {script} was allowed");
        assert!(
            text.contains("Read-only file system"),
            "{label}: {script}: {text}"
        );
    }
    // The child, in a session of its own, tries and then says so in the
    // temp directory (which it may write).
    run(
        &fence,
        &format!("setsid sh -c '(touch {out_}/escaped 2>/dev/null; touch {tmp_}/tried) &'"),
        who,
    );
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while !tmp.join("tried").exists() {
        assert!(
            std::time::Instant::now() < deadline,
            "{label}: the child never ran"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    assert!(
        !out.join("escaped").exists(),
        "{label}: a setsid child wrote outside"
    );
    assert!(!Path::new("/etc/tether-fence-test").exists());
    assert_eq!(
        std::fs::read_to_string(ws.join(".git/config")).unwrap(),
        "[core]\n"
    );
    // Hidden: reads as missing.
    let (code, text) = run(&fence, &format!("cat {}/id_ed25519", secret.display()), who);
    assert_ne!(code, 0, "{label}: {text}");
    assert!(!text.contains("PRIVATE KEY"), "{label}: {text}");
    // No network: a listener outside on this machine's loopback is not
    // reached (the fence's loopback is its own), nor is any other
    // address; both fail at once.
    let connect = |host: &str, p: u16| {
        format!("exec python3 -c 'import socket; socket.create_connection((\"{host}\", {p}), 5)'")
    };
    listener.set_nonblocking(true).unwrap();
    for (script, says) in [
        (connect("127.0.0.1", port), "Connection refused"),
        (connect("192.0.2.1", 80), "Network is unreachable"),
    ] {
        // A connect left waiting would end in python's own 5 s timeout
        // ("timed out"), not in the error the kernel gives at once.
        let (code, text) = run(&fence, &script, who);
        assert_ne!(code, 0, "{label}: connected: {text}");
        assert!(text.contains(says), "{label}: {script}: {text}");
    }
    assert!(
        listener.accept().is_err(),
        "{label}: the listener outside was reached"
    );
}

fn bwrap_missing() -> bool {
    let missing = Command::new("bwrap").arg("--version").output().is_err();
    if missing {
        eprintln!("SKIPPED: bwrap is missing (scripts/test installs bubblewrap)");
    }
    missing
}

#[test]
fn the_fence_refuses_every_way_out_for_this_user() {
    if bwrap_missing() {
        return;
    }
    check_as(None);
}

#[test]
fn the_fence_refuses_every_way_out_for_a_user_who_is_not_root() {
    if bwrap_missing() {
        return;
    }
    let u = user();
    if u == "root" || tether_testkit::running_user() != "root" {
        eprintln!("SKIPPED: needs root and the unprivileged test user (tether-test)");
        return;
    }
    check_as(Some(&u));
}

/// The default deny list and doors: a key under the home directory, the
/// runtime directory, and an agent's socket (listening outside) are out
/// of reach inside.
#[test]
fn the_default_secrets_and_doors_are_hidden() {
    if bwrap_missing() {
        return;
    }
    let s = Scratch::new("doors");
    let (home, rundir, tmp) = (s.0.join("home"), s.0.join("run"), s.0.join("tmp"));
    for d in [&home.join(".ssh"), &rundir, &tmp] {
        std::fs::create_dir_all(d).unwrap();
    }
    std::fs::write(home.join(".ssh/id_ed25519"), "PRIVATE KEY").unwrap();
    let agent = s.0.join("agent.sock");
    let listener = std::os::unix::net::UnixListener::bind(&agent).unwrap();
    listener.set_nonblocking(true).unwrap();
    std::fs::write(rundir.join("bus"), "x").unwrap();
    let doors = tether_confine::Doors {
        home: Some(home.clone()),
        runtime_dir: Some(rundir.clone()),
        agent: Some(agent.clone()),
    };
    let mut fence = Fence::new(Mode::ReadOnly, &tmp).unwrap();
    for p in doors.hidden() {
        fence = fence.hide(&p).unwrap();
    }
    let (code, text) = run(
        &fence,
        &format!("cat {}/.ssh/id_ed25519", home.display()),
        None,
    );
    assert!(code != 0 && !text.contains("PRIVATE KEY"), "{text}");
    let (code, text) = run(&fence, &format!("ls -A {}", rundir.display()), None);
    assert_eq!(
        (code, text.trim()),
        (0, ""),
        "the runtime directory reads empty"
    );
    let script = format!(
        "exec python3 -c 'import socket; s = socket.socket(socket.AF_UNIX); s.connect(\"{}\")'",
        agent.display()
    );
    let (code, text) = run(&fence, &script, None);
    assert_ne!(code, 0, "reached the agent's socket: {text}");
    assert!(listener.accept().is_err(), "the agent's socket was reached");
}
