//! What tether makes in its private directory it makes private whatever
//! the umask, and what it finds there it uses only when it is provably
//! private: an open directory of one's own is refused (never repaired), a
//! parent others could change is refused, a too-long path is an immediate
//! error, a symlink in a session directory is never written through, and
//! `run --once` keeps its files there and removes them.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Output;

use common::{Daemon, TETHER};

fn mode(path: &Path) -> u32 {
    std::fs::symlink_metadata(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .permissions()
        .mode()
        & 0o7777
}

fn chmod(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

fn text(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn err(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn an_open_directory_of_ones_own_is_refused_not_repaired() {
    let d = Daemon::new("pf-open");
    std::fs::create_dir(&d.dir).unwrap();
    chmod(&d.dir, 0o755);
    for args in [
        &["run", "--norc", "--", "echo ran"][..],
        &["run", "--once", "--norc", "--", "echo ran"],
        &["ls"],
    ] {
        let out = d.run(args);
        assert_eq!(out.status.code(), Some(255), "{args:?}: {out:?}");
        assert!(out.stdout.is_empty(), "{out:?}");
        let expected = format!(
            "tether: refusing to use {}: other users may use it (mode 0755), so what is in it may have been planted or read; tether does not repair it: check it, remove it and run the command again",
            d.dir.display()
        );
        assert_eq!(err(&out).trim_end(), expected);
    }
    assert_eq!(mode(&d.dir), 0o755, "repaired in place");
    assert_eq!(std::fs::read_dir(&d.dir).unwrap().count(), 0);
}

#[test]
fn a_parent_others_can_change_is_refused_unless_sticky() {
    let d = Daemon::new("pf-parent");
    std::fs::create_dir(&d.dir).unwrap();
    chmod(&d.dir, 0o777);
    let inner = Daemon {
        dir: d.dir.join("tether"),
    };
    let out = inner.run(&["run", "--once", "--norc", "--", "echo ran"]);
    assert_eq!(out.status.code(), Some(255), "{out:?}");
    let expected = format!(
        "refusing to use {}: the directory {} on the way to it can be written by other users (mode 0777, not sticky), so they could replace it",
        inner.dir.display(),
        d.dir.display()
    );
    assert!(err(&out).contains(&expected), "{}", err(&out));
    assert!(!inner.dir.exists(), "made under an unsafe parent");

    // Sticky, as /tmp is: nobody else can remove or rename what is ours.
    chmod(&d.dir, 0o1777);
    let out = inner.run(&["run", "--once", "--norc", "--", "echo ran"]);
    assert_eq!(text(&out), "ran\n", "{out:?}");
}

#[test]
fn a_tether_dir_too_long_for_a_socket_is_an_immediate_error() {
    let base = std::env::temp_dir().join(format!("tether-pf-long-{}-", std::process::id()));
    let pad = 100usize.saturating_sub(base.as_os_str().len()).max(1);
    let d = Daemon {
        dir: PathBuf::from(format!("{}{}", base.display(), "x".repeat(pad))),
    };
    let socket_len = d.dir.join("daemon.sock").as_os_str().len();
    assert!(socket_len > 107, "{socket_len}");
    for args in [&["run", "--norc", "--", "echo ran"][..], &["ls"]] {
        let out = d.run(args);
        assert_eq!(out.status.code(), Some(255), "{out:?}");
        let said = err(&out);
        let expected = format!(
            "would be a {socket_len}-byte path, and a unix socket path holds at most 107 bytes (sun_path is 108 bytes with the final NUL): set TETHER_DIR to a shorter path"
        );
        assert!(said.contains(&expected), "{said}");
    }
    assert!(!d.dir.exists(), "the directory was made all the same");
}

/// `tether ARGS` with umask 777 (nothing would be readable, writable or
/// searchable if tether left modes to the umask).
fn with_umask_777(d: &Daemon, args: &[&str]) -> Output {
    std::process::Command::new("/bin/sh")
        .args(["-c", r#"umask 777; exec "$0" "$@""#, TETHER])
        .args(args)
        .env("TETHER_DIR", &d.dir)
        .env("TETHER_IDLE_EXIT", "30")
        .env_remove("XDG_RUNTIME_DIR")
        .output()
        .unwrap()
}

#[test]
fn modes_are_exact_whatever_the_umask() {
    let d = Daemon::new("pf-umask");
    let show = r#"stat -c '%a %n' "$__tether_dir" "$__tether_dir"/cmd-*"#;
    let out = with_umask_777(&d, &["run", "--norc", "--", show]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let session = d.dir.join("daemon/sessions");
    let lines: Vec<String> = text(&out).lines().map(str::to_owned).collect();
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert!(
        lines[0].starts_with(&format!("700 {}/", session.display())),
        "{lines:?}"
    );
    assert!(
        lines[1].starts_with("600 ") && lines[1].ends_with(".bash"),
        "{lines:?}"
    );
    for (path, want) in [
        (d.dir.clone(), 0o700),
        (d.dir.join("daemon"), 0o700),
        (session, 0o700),
        (d.dir.join("daemon.log"), 0o600),
        (d.dir.join("daemon.lock"), 0o600),
        (d.dir.join("daemon.sock"), 0o600),
    ] {
        assert_eq!(mode(&path), want, "{}", path.display());
    }

    let out = with_umask_777(&d, &["run", "--once", "--norc", "--", show]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(
        text(&out).starts_with(&format!("700 {}/sessions/", d.dir.display())),
        "{out:?}"
    );
    assert_eq!(mode(&d.dir.join("sessions")), 0o700);
}

#[test]
fn symlinks_at_command_and_spill_paths_are_not_followed() {
    let d = Daemon::new("pf-links");
    let victim = std::env::temp_dir().join(format!("tether-pf-victim-{}", std::process::id()));
    std::fs::write(&victim, "original\n").unwrap();
    // The session's next command and spill files, pointed at the victim.
    let plant = format!(
        r#"for i in $(seq 1 40); do ln -s {0} "$__tether_dir/cmd-$i.bash"; ln -s {0} "$__tether_dir/out-$i.txt"; done 2>/dev/null; echo planted"#,
        victim.display()
    );
    assert_eq!(d.stdout(&["run", "--norc", "--", &plant]), "planted\n");
    let out = d.run(&["run", "--output-limit", "100", "--", "seq 1 5000"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let shown = text(&out);
    assert!(
        shown.starts_with("1\n2\n") && shown.ends_with("4999\n5000\n"),
        "{shown}"
    );
    let left = std::fs::read_to_string(&victim).unwrap();
    let _ = std::fs::remove_file(&victim);
    assert!(
        left == "original\n",
        "written through a symlink: {:?}…",
        left.get(..40).unwrap_or(&left)
    );
}

#[test]
fn run_once_keeps_its_files_in_tether_dir_and_removes_them() {
    let d = Daemon::new("pf-once");
    let out = d.run(&["run", "--once", "--norc", "--", "echo $__tether_dir"]);
    let dir = PathBuf::from(text(&out).trim());
    let sessions = d.dir.join("sessions");
    assert_eq!(dir.parent(), Some(sessions.as_path()), "{out:?}");
    assert!(!dir.exists(), "left behind: {}", dir.display());

    // A spill file the result names is kept, alone.
    let out = d.run(&[
        "run",
        "--once",
        "--norc",
        "--output-limit",
        "50",
        "--",
        "seq 1 1000",
    ]);
    let said = err(&out);
    let spill = said
        .split("the whole output is in ")
        .nth(1)
        .map(|s| PathBuf::from(s.trim()))
        .unwrap_or_else(|| panic!("no spill file named: {said}"));
    assert_eq!(
        std::fs::read_to_string(&spill).unwrap().lines().count(),
        1000
    );
    let kept: Vec<_> = std::fs::read_dir(spill.parent().unwrap())
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    assert_eq!(kept, vec![spill.clone()]);
    assert_eq!(mode(&spill), 0o600);
}
