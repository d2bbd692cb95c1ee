//! tether's private directory is trusted only when proven: another local
//! user (`tether-test`, which `scripts/test` creates; these tests need
//! root and skip with a message otherwise) plants things in a
//! `TETHER_DIR` that was open to them, and tether refuses with a message
//! naming what to remove, reads and writes nothing through what was
//! planted, and repairs nothing in place.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::TETHER;

const USER: &str = "tether-test";
const SECRET: &str = "tok-5f1c9e2d7a3b";

/// The other user's uid, or `None` (and why, printed) when this test
/// cannot play them.
fn attacker() -> Option<u32> {
    if !nix::unistd::geteuid().is_root() {
        eprintln!("SKIPPED: not running as root");
        return None;
    }
    match nix::unistd::User::from_name(USER) {
        Ok(Some(u)) => Some(u.uid.as_raw()),
        _ => {
            eprintln!("SKIPPED: there is no user {USER} (scripts/test creates it)");
            None
        }
    }
}

/// `sh -c SCRIPT sh ARGS…` as the other user.
fn as_attacker(script: &str, args: &[&Path]) -> Output {
    Command::new("setpriv")
        .args(["--reuid", USER, "--regid", USER, "--clear-groups", "--"])
        .args(["/bin/sh", "-c", script, "sh"])
        .args(args)
        .current_dir("/")
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .output()
        .unwrap()
}

/// A scratch directory others may enter (0755), holding the victim's
/// `TETHER_DIR` (`shared`) and a file of the victim's the attacker aims at.
struct Scratch {
    root: PathBuf,
    shared: PathBuf,
    victim: PathBuf,
}

impl Scratch {
    fn new(name: &str) -> Scratch {
        let root = std::env::temp_dir().join(format!("tether-pd-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir(&root).unwrap();
        chmod(&root, 0o755);
        let victim = root.join("profile");
        std::fs::write(&victim, "original\n").unwrap();
        chmod(&victim, 0o644);
        Scratch {
            shared: root.join("shared"),
            root,
            victim,
        }
    }

    /// `tether ARGS` as the victim, with a secret in its environment.
    fn tether(&self, args: &[&str]) -> Output {
        Command::new(TETHER)
            .args(args)
            .env("TETHER_DIR", &self.shared)
            .env("TETHER_IDLE_EXIT", "30")
            .env("API_TOKEN", SECRET)
            .env_remove("XDG_RUNTIME_DIR")
            .output()
            .unwrap()
    }

    fn victim_untouched(&self) {
        assert_eq!(
            std::fs::read_to_string(&self.victim).unwrap(),
            "original\n",
            "the victim's file was written through something planted"
        );
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = self.tether(&["daemon", "stop"]);
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

fn chmod(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

fn mode(path: &Path) -> u32 {
    std::fs::symlink_metadata(path)
        .unwrap()
        .permissions()
        .mode()
        & 0o7777
}

/// Every path under `dir` (symlinks not followed), sorted.
fn tree(dir: &Path) -> Vec<PathBuf> {
    let mut all = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            if e.file_type().unwrap().is_dir() {
                todo.push(e.path());
            }
            all.push(e.path());
        }
    }
    all.sort();
    all
}

fn refused(out: &Output) -> String {
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(255), "not refused: {out:?}");
    assert!(out.stdout.is_empty(), "something ran: {out:?}");
    assert!(err.contains("remove it"), "no advice: {err}");
    err
}

#[test]
fn a_world_writable_tether_dir_is_refused_and_nothing_planted_is_used() {
    if attacker().is_none() {
        return;
    }
    let s = Scratch::new("open");
    std::fs::create_dir(&s.shared).unwrap();
    chmod(&s.shared, 0o777);
    let planted = as_attacker(
        r#"mkdir -m 777 "$1/sessions" "$1/daemon" "$1/daemon/sessions" && ln -s "$2" "$1/daemon.log""#,
        &[&s.shared, &s.victim],
    );
    assert!(planted.status.success(), "{planted:?}");
    let before = tree(&s.shared);

    let run = [
        "run",
        "--norc",
        "--",
        "echo $API_TOKEN > /dev/null; echo ran",
    ];
    let once = ["run", "--once", "--norc", "--", "echo ran"];
    for args in [&run[..], &once[..], &["daemon", "start"][..], &["ls"][..]] {
        let err = refused(&s.tether(args));
        let expected = format!(
            "refusing to use {}: other users may use it (mode 0777)",
            s.shared.display()
        );
        assert!(
            err.contains(&expected) && err.contains("tether does not repair it"),
            "{args:?}: {err}"
        );
    }
    assert_eq!(
        mode(&s.shared),
        0o777,
        "the directory was repaired in place"
    );
    assert_eq!(tree(&s.shared), before, "something was made in it");
    s.victim_untouched();
}

#[test]
fn things_planted_before_the_directory_was_closed_are_refused_one_by_one() {
    if attacker().is_none() {
        return;
    }
    let s = Scratch::new("closed");
    std::fs::create_dir(&s.shared).unwrap();
    chmod(&s.shared, 0o777);
    let planted = as_attacker(
        r#"cd "$1" && mkdir -m 777 sessions daemon daemon/sessions && ln -s "$2" daemon.log && : > daemon.lock && chmod 666 daemon.lock"#,
        &[&s.shared, &s.victim],
    );
    assert!(planted.status.success(), "{planted:?}");
    // Closed later (as tether used to do): what is inside stays.
    chmod(&s.shared, 0o700);
    let mut left: Vec<PathBuf> = ["sessions", "daemon", "daemon.log", "daemon.lock"]
        .iter()
        .map(|n| s.shared.join(n))
        .collect();

    let mut expected = tree(&s.shared);
    for _ in 0..=left.len() {
        let out = s.tether(&["run", "--norc", "--", "echo ran"]);
        if out.status.code() == Some(0) {
            assert_eq!(String::from_utf8_lossy(&out.stdout), "ran\n");
            break;
        }
        let err = refused(&out);
        let named = left
            .iter()
            .position(|p| err.contains(&format!("refusing to use {}: ", p.display())))
            .unwrap_or_else(|| panic!("names none of {left:?}: {err}"));
        assert_eq!(tree(&s.shared), expected, "something was made: {err}");
        assert_eq!(
            std::fs::metadata(s.shared.join("daemon.lock")).map_or(0, |m| m.len()),
            0
        );
        s.victim_untouched();
        let path = left.remove(named);
        if path.is_dir() && !path.is_symlink() {
            std::fs::remove_dir_all(&path).unwrap();
        } else {
            std::fs::remove_file(&path).unwrap();
        }
        expected = tree(&s.shared);
    }
    assert!(left.is_empty(), "used though planted: {left:?}");
    s.victim_untouched();
}

#[test]
fn a_planted_socket_is_refused_and_hears_nothing() {
    let Some(uid) = attacker() else { return };
    let s = Scratch::new("socket");
    std::fs::create_dir(&s.shared).unwrap();
    chmod(&s.shared, 0o777);
    let theirs = s.root.join("theirs");
    std::fs::create_dir(&theirs).unwrap();
    std::os::unix::fs::chown(&theirs, Some(uid), None).unwrap();
    // A fake daemon: it welcomes a client and records what it sends.
    let fake = r#"
import json, os, socket, sys
path, heard, ready = sys.argv[1:4]
s = socket.socket(socket.AF_UNIX)
s.bind(path)
os.chmod(path, 0o777)
s.listen(8)
open(ready, "w").close()
while True:
    c, _ = s.accept()
    f = c.makefile("rwb")
    with open(heard, "ab") as out:
        out.write(b"connection\n")
        hello = f.readline()
        out.write(hello)
        out.flush()
        version = json.loads(hello or b"{}").get("protocol", 0)
        f.write(b'{"ok":{"kind":"welcome","protocol":%d,"server":"tether","pid":1}}\n' % version)
        f.flush()
        out.write(f.readline())
    f.close()
    c.close()
"#;
    let (socket, heard, ready) = (
        s.shared.join("daemon.sock"),
        theirs.join("heard"),
        theirs.join("ready"),
    );
    let mut listener = Command::new("setpriv")
        .args(["--reuid", USER, "--regid", USER, "--clear-groups", "--"])
        .args(["/usr/bin/python3", "-c", fake])
        .args([&socket, &heard, &ready])
        .current_dir("/")
        .spawn()
        .unwrap();
    common::wait_for(20, "the fake daemon to listen", || {
        ready.exists().then_some(())
    });
    chmod(&s.shared, 0o700);

    let outs = [
        s.tether(&["run", "--norc", "--", "echo ran"]),
        s.tether(&["ls"]),
        s.tether(&["run", "--once", "--norc", "--", "echo ran"]),
    ];
    let _ = listener.kill();
    let _ = listener.wait();
    for out in &outs {
        let err = refused(out);
        let expected = format!(
            "refusing to use {}: it belongs to uid {uid}, not to you",
            socket.display()
        );
        assert!(err.contains(&expected), "{err}");
    }
    let got = std::fs::read_to_string(&heard).unwrap_or_default();
    assert!(got.is_empty(), "the planted socket heard: {got}");
    let _ = std::fs::remove_file(&socket);
}
