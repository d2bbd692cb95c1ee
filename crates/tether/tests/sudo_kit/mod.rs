//! What the `--sudo` tests share: the login user `tether-sudo`, who may
//! run anything with sudo after typing its password (set for this run;
//! each test command starts with `sudo -k`). Needs root and sudo.

#![allow(dead_code)]

use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::OnceLock;

pub const USER: &str = "tether-sudo";

/// The user's password for this run, set once (all tests share it).
pub fn password() -> Option<&'static str> {
    static PASSWORD: OnceLock<Option<String>> = OnceLock::new();
    PASSWORD.get_or_init(prepare).as_deref()
}

/// Makes `tether-sudo` (a password, a sudo rule asking it every time);
/// `None`, with the reason printed, when this machine cannot.
fn prepare() -> Option<String> {
    if tether_testkit::running_user() != "root" {
        eprintln!("SKIPPED: not root: cannot make the sudo test user");
        return None;
    }
    if Command::new("sudo").arg("-V").output().is_err() {
        eprintln!("SKIPPED: sudo is missing (scripts/test installs it)");
        return None;
    }
    if !Command::new("id")
        .arg(USER)
        .output()
        .unwrap()
        .status
        .success()
    {
        let made = Command::new("useradd")
            .args(["-m", "-s", "/bin/sh", USER])
            .status()
            .unwrap();
        assert!(made.success(), "useradd {USER}");
    }
    let pw = format!(
        "Pw-{:x}",
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    );
    let mut chpasswd = Command::new("chpasswd")
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    writeln!(chpasswd.stdin.take().unwrap(), "{USER}:{pw}").unwrap();
    assert!(chpasswd.wait().unwrap().success(), "chpasswd");
    std::fs::create_dir_all("/etc/sudoers.d").unwrap();
    let rule = format!("{USER} ALL=(ALL) ALL\nDefaults:{USER} lecture=never, passwd_tries=3\n");
    let path = Path::new("/etc/sudoers.d/tether-sudo-test");
    std::fs::write(path, rule).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o440)).unwrap();
    // Debian's sudoers reads the directory; a sudoers without it is told.
    let main = std::fs::read_to_string("/etc/sudoers").unwrap_or_default();
    if !main.contains("includedir /etc/sudoers.d") {
        eprintln!("SKIPPED: /etc/sudoers does not read /etc/sudoers.d");
        return None;
    }
    Some(pw)
}

/// A private file (0600) in `dir` holding `text` and a newline.
pub fn password_file(dir: &Path, name: &str, text: &str) -> std::path::PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, format!("{text}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    path
}

/// True when `secret` is in no process's argv or environment and in no
/// file under `dirs` but `except`; else panics naming where it is.
pub fn nowhere_but(secret: &str, dirs: &[&Path], except: &str) -> bool {
    fn has(b: &[u8], s: &str) -> bool {
        b.windows(s.len()).any(|w| w == s.as_bytes())
    }
    fn walk(dir: &Path, secret: &str, except: &str) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() && !p.is_symlink() {
                walk(&p, secret, except);
            } else if p.to_string_lossy() != except
                && let Ok(b) = std::fs::read(&p)
            {
                assert!(!has(&b, secret), "{} holds the password", p.display());
            }
        }
    }
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        for what in ["cmdline", "environ"] {
            if let Ok(b) = std::fs::read(e.path().join(what)) {
                assert!(
                    !has(&b, secret),
                    "{} holds the password",
                    e.path().join(what).display()
                );
            }
        }
    }
    for d in dirs {
        walk(d, secret, except);
    }
    true
}
