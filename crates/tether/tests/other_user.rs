//! The daemon is one user's: another local user is refused, by the private
//! directory and socket and, even when those are opened up, by the
//! daemon's check of the peer's uid. Needs root and the user `tether-test`
//! (which `scripts/test` creates); skips with a message otherwise.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::{Daemon, TETHER};

const USER: &str = "tether-test";

/// The other user's uid, or why this test cannot run.
fn other_user() -> Result<u32, String> {
    if !nix::unistd::geteuid().is_root() {
        return Err("not running as root".into());
    }
    match nix::unistd::User::from_name(USER) {
        Ok(Some(u)) => Ok(u.uid.as_raw()),
        _ => Err(format!("there is no user {USER} (scripts/test creates it)")),
    }
}

/// A copy of the binary anyone may run, in a directory anyone may enter.
fn public_binary(dir: &Path) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    let bin = dir.join("tether");
    std::fs::copy(TETHER, &bin).unwrap();
    std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
    bin
}

/// `program ARGS` as the other user, with `env`, in `/` (a directory that
/// user can enter, wherever this checkout is).
fn as_other(program: &Path, args: &[&str], env: &[(&str, &Path)]) -> Output {
    as_other_in(Path::new("/"), program, args, env)
}

/// `program ARGS` as the other user, with `env`, in `cwd`.
fn as_other_in(cwd: &Path, program: &Path, args: &[&str], env: &[(&str, &Path)]) -> Output {
    let mut c = Command::new("setpriv");
    c.current_dir(cwd)
        .args(["--reuid", USER, "--regid", USER, "--clear-groups", "--"])
        .arg(program)
        .args(args)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("HOME", "/tmp");
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().unwrap()
}

#[test]
fn another_user_is_refused() {
    let uid = match other_user() {
        Ok(uid) => uid,
        Err(why) => {
            eprintln!("SKIPPED: {why}");
            return;
        }
    };
    let d = Daemon::new("other-user");
    assert_eq!(
        d.run(&["run", "-s", "mine", "--norc", "--", "echo ok"])
            .status
            .code(),
        Some(0)
    );
    let public = std::env::temp_dir().join(format!("tether-public-{}", std::process::id()));
    let bin = public_binary(&public);

    // The directory is private: the other user's CLI cannot get in.
    let out = as_other(&bin, &["ls"], &[("TETHER_DIR", &d.dir)]);
    assert_eq!(out.status.code(), Some(255), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("belongs to uid 0") || err.contains("Permission denied"),
        "{err}"
    );

    // Opened up by mistake, the socket still answers another uid with a
    // refusal, before any request is read.
    std::fs::set_permissions(&d.dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    let socket = d.dir.join("daemon.sock");
    std::fs::set_permissions(&socket, std::fs::Permissions::from_mode(0o666)).unwrap();
    let probe = "import socket,sys\ns=socket.socket(socket.AF_UNIX)\ns.connect(sys.argv[1])\nf=s.makefile()\nprint(f.readline().strip())\ntry:\n  s.sendall(b'{\"protocol\":1,\"client\":\"probe\"}\\n{\"op\":\"list\",\"all\":true}\\n')\n  rest=f.read()\nexcept (BrokenPipeError, ConnectionResetError):\n  rest=''\nprint(repr(rest))";
    let out = as_other(
        Path::new("/usr/bin/python3"),
        &["-c", probe, socket.to_str().unwrap()],
        &[],
    );
    let said = String::from_utf8_lossy(&out.stdout);
    let first: serde_json::Value = serde_json::from_str(said.lines().next().unwrap_or_default())
        .unwrap_or_else(|e| panic!("{e}: {out:?}"));
    assert_eq!(first["error"]["kind"], "refused", "{said}");
    let message = first["error"]["message"].as_str().unwrap();
    assert!(
        message.contains(&format!("uid {uid} may not use it")),
        "{message}"
    );
    assert_eq!(
        said.lines().nth(1),
        Some("''"),
        "nothing follows the refusal: {said}"
    );
    std::fs::set_permissions(&d.dir, std::fs::Permissions::from_mode(0o700)).unwrap();

    // The other user gets a daemon of their own, which works.
    let theirs = public.join("theirs");
    std::fs::create_dir(&theirs).unwrap();
    std::os::unix::fs::chown(&theirs, Some(uid), None).unwrap();
    // Private, as tether requires of a directory it finds (it never
    // repairs one).
    std::fs::set_permissions(&theirs, std::fs::Permissions::from_mode(0o700)).unwrap();
    let out = as_other(
        &bin,
        &["run", "--norc", "--", "id -u"],
        &[("TETHER_DIR", &theirs)],
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!("{uid}\n"),
        "{out:?}"
    );
    // Called from a directory they cannot enter (a private checkout), their
    // session starts in their home and says so.
    let locked = public.join("locked");
    std::fs::create_dir(&locked).unwrap();
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o700)).unwrap();
    let out = as_other_in(
        &locked,
        &bin,
        &["run", "-s", "locked", "--norc", "--", "id -u; pwd"],
        &[("TETHER_DIR", &theirs)],
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!(
            "tether: cannot enter the working directory {}: Permission denied (os error 13); the session started in /tmp instead\n{uid}\n/tmp\n",
            locked.display()
        ),
        "{out:?}"
    );
    let stop = as_other(&bin, &["daemon", "stop"], &[("TETHER_DIR", &theirs)]);
    assert!(stop.status.success(), "{stop:?}");
    // And root's own session was never touched.
    assert_eq!(
        d.stdout(&["run", "-s", "mine", "--", "echo still mine"]),
        "still mine\n"
    );
    common::wait_for(10, "the other daemon to stop", || {
        (!theirs.join("daemon.sock").exists()).then_some(())
    });
    let _ = std::fs::remove_dir_all(&public);
}
