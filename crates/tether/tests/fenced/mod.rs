//! What the confined-session suites share (`confine.rs`, `confine_doors.rs`):
//! a world of the user's own (a home with a secret, a workspace with a git
//! repository, a directory outside it, a daemon directory), as this user
//! or as the unprivileged test user.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;
use tether_testkit::Scratch;

use crate::common;

pub const USER: &str = "tether-test";

/// Who runs tether: this user, or the test user.
#[derive(Clone, Copy, Debug)]
pub enum Who {
    Me,
    Other,
}

pub fn bwrap_missing() -> bool {
    let missing = Command::new("bwrap").arg("--version").output().is_err();
    if missing {
        eprintln!("SKIPPED: bubblewrap (bwrap) is not installed (scripts/test installs it)");
    }
    missing
}

/// The users to run as: this one, and the test user when running as root.
pub fn everyone() -> Vec<Who> {
    let mut v = vec![Who::Me];
    let root = nix::unistd::geteuid().is_root();
    let exists = nix::unistd::User::from_name(USER).ok().flatten().is_some();
    if root && exists {
        v.push(Who::Other);
    } else {
        eprintln!("SKIPPED as {USER}: needs root and that user (scripts/test creates it)");
    }
    v
}

/// A home with a secret, a workspace with a git repository, a directory
/// outside it, and a daemon directory: the user's own.
pub struct World {
    pub who: Who,
    pub s: Scratch,
    pub bin: PathBuf,
    pub home: PathBuf,
    pub ws: PathBuf,
    pub out: PathBuf,
    pub tdir: PathBuf,
}

impl World {
    pub fn new(who: Who) -> World {
        let s = Scratch::new("confine");
        std::fs::set_permissions(&s.0, std::fs::Permissions::from_mode(0o755)).unwrap();
        let (bin, home, ws, out) = (
            s.0.join("bin"),
            s.0.join("home"),
            s.0.join("ws"),
            s.0.join("out"),
        );
        for d in [&bin, &home.join(".ssh"), &ws, &out] {
            std::fs::create_dir_all(d).unwrap();
        }
        // The binary where the other user can run it (the checkout may be
        // private).
        std::fs::copy(common::TETHER, bin.join("tether")).unwrap();
        std::fs::write(home.join(".ssh/id_ed25519"), "PRIVATE KEY 7f3a\n").unwrap();
        let w = World {
            who,
            tdir: s.0.join("tdir"),
            s,
            bin,
            home,
            ws,
            out,
        };
        if let Who::Other = who {
            let ok = Command::new("chown")
                .args(["-R", &format!("{USER}:")])
                .arg(&w.s.0)
                .status()
                .unwrap();
            assert!(ok.success());
        }
        let git = w.sh(&format!(
            "cd {} && git init -q . && echo one > a && git add a && git -c user.name=t -c user.email=t@t commit -qm one",
            w.ws.display()
        ));
        assert!(git.status.success(), "{git:?}");
        w
    }

    /// `program ARGS` as this world's user, in the workspace.
    pub fn cmd(&self, program: &Path, args: &[&str]) -> Command {
        let mut c = match self.who {
            Who::Me => Command::new(program),
            Who::Other => {
                let mut c = Command::new("setpriv");
                c.args(["--reuid", USER, "--regid", USER, "--clear-groups", "--"])
                    .arg(program);
                c
            }
        };
        c.args(args)
            .current_dir(&self.ws)
            .env_clear()
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .env("HOME", &self.home)
            .env("TETHER_DIR", &self.tdir)
            .env("TETHER_IDLE_EXIT", "30")
            .env("API_TOKEN", "sekrit-4c1d-9e7b");
        c
    }

    pub fn sh(&self, script: &str) -> Output {
        self.cmd(Path::new("/bin/sh"), &["-c", script])
            .output()
            .unwrap()
    }

    pub fn tether(&self, args: &[&str]) -> Output {
        self.cmd(&self.bin.join("tether"), args).output().unwrap()
    }

    /// `tether run --json ARGS`'s result.
    pub fn run(&self, args: &[&str]) -> Value {
        let mut a = vec!["run", "--json"];
        a.extend_from_slice(args);
        let out = self.tether(&a);
        serde_json::from_slice(&out.stdout).unwrap_or_else(|_| {
            panic!(
                "{:?}: no result: {}{}",
                self.who,
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            )
        })
    }
}

impl Drop for World {
    fn drop(&mut self) {
        let _ = self.tether(&["daemon", "stop"]);
    }
}

pub fn output(v: &Value) -> &str {
    v["output"].as_str().unwrap_or("")
}
