//! What the `exec_*` tests share: a fleet of real sshd on 127.0.0.2–3
//! reached by `tether exec` / `tether ssh` with its own key and
//! known_hosts, a directory remote commands leave marks in, and waits on
//! the processes a token names.

#![allow(dead_code)]

use std::path::PathBuf;
use std::process::{Command, Output};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tether_testkit::{Scratch, Sshd, fleet_with, keygen};

pub const TETHER: &str = env!("CARGO_BIN_EXE_tether");

pub struct Fleet {
    pub scratch: Scratch,
    pub port: u16,
    /// Where remote commands leave their marks (anyone may write).
    pub marks: PathBuf,
    _sshd: Vec<Sshd>,
}

pub fn start() -> Option<Fleet> {
    start_with("")
}

/// [`start`] with `extra` first in every sshd's config.
pub fn start_with(extra: &str) -> Option<Fleet> {
    if let Some(why) = tether_testkit::unavailable() {
        eprintln!("SKIPPED: {why}");
        return None;
    }
    let scratch = Scratch::new("exec-truth");
    let key = keygen(&scratch.0.join("id_ed25519"), "").unwrap();
    let (port, sshd, known) = fleet_with(
        &["127.0.0.2", "127.0.0.3"],
        &[&key.with_extension("pub")],
        &|_| extra.to_owned(),
    )
    .unwrap();
    std::fs::write(scratch.0.join("known_hosts"), known).unwrap();
    let marks = scratch.0.join("marks");
    std::fs::create_dir(&marks).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&marks, std::fs::Permissions::from_mode(0o777)).unwrap();
    Some(Fleet {
        scratch,
        port,
        marks,
        _sshd: sshd,
    })
}

/// The logins the tests run as: the test user, and root (refused channel
/// signals) when this runs as root.
pub fn logins() -> Vec<Option<&'static str>> {
    let mut l = vec![None];
    if tether_testkit::running_user() == "root" {
        l.push(Some("root"));
    } else {
        eprintln!("NOTE: not root: the root login is not tried");
    }
    l
}

impl Fleet {
    pub fn command(
        &self,
        login: Option<&str>,
        hosts: &str,
        extra: &[&str],
        command: &str,
    ) -> Command {
        let mut c = self.base(login, hosts);
        c.args(extra).arg("--").arg(command);
        c
    }

    fn base(&self, login: Option<&str>, hosts: &str) -> Command {
        let mut c = self.tether(&["exec", "-H", hosts]);
        if let Some(user) = login {
            c.args(["-l", user]);
        }
        c
    }

    /// `tether SUBCOMMAND` with this fleet's port, key and known_hosts, no
    /// ssh_config, never asking for a secret.
    fn tether(&self, subcommand: &[&str]) -> Command {
        let mut c = Command::new(TETHER);
        c.env("USER", tether_testkit::user());
        c.args(&subcommand[..1])
            .args(["-F", "none", "-o", "BatchMode=yes"])
            .args(&subcommand[1..])
            .args(["-p", &self.port.to_string(), "-o", "IdentityAgent=none"])
            .arg("-o")
            .arg(format!(
                "UserKnownHostsFile={}",
                self.scratch.0.join("known_hosts").display()
            ))
            .arg("-i")
            .arg(self.scratch.0.join("id_ed25519"));
        c
    }

    /// `tether SUBCOMMAND ARGS…` with this fleet's port, key and
    /// known_hosts (`ping`, `cp`).
    pub fn tether_with(&self, subcommand: &[&str]) -> Command {
        self.tether(subcommand)
    }

    /// The `i`-th host's sshd (127.0.0.2 first).
    pub fn sshd(&self, i: usize) -> &Sshd {
        &self._sshd[i]
    }

    /// `tether ssh` to `host` with this fleet's port, key and known_hosts.
    pub fn ssh(&self, host: &str, command: &[&str]) -> Command {
        let mut c = self.tether(&["ssh"]);
        c.arg(host).args(command);
        c
    }

    /// `tether exec` with this fleet's flags and `args` as they are (no
    /// `--` added).
    pub fn exec_args(&self, hosts: &str, args: &[&str]) -> Command {
        let mut c = self.base(None, hosts);
        c.args(args);
        c
    }

    pub fn exec(&self, login: Option<&str>, hosts: &str, extra: &[&str], command: &str) -> Output {
        self.command(login, hosts, extra, command).output().unwrap()
    }

    /// A command that sleeps, then touches a file named after `token`: long
    /// enough (8 s) that a stop after a 1 s timeout, even TERM ignored and
    /// KILL a second later on a loaded machine, comes well before.
    pub fn late_touch(&self, token: &str) -> String {
        format!("sleep 8; touch {}/late_{token}", self.marks.display())
    }

    /// Waits until no process runs with `token` in its command line, then
    /// asserts no file named after it was touched.
    pub fn never_touched(&self, token: &str, what: &str) {
        wait(
            || !running_with(token),
            &format!("{what}: the processes to go"),
        );
        let touched: Vec<_> = std::fs::read_dir(&self.marks)
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().contains(token))
            .collect();
        assert!(
            touched.is_empty(),
            "{what}: the stopped command ran to its end: {touched:?}"
        );
    }
}

/// True while a process has `token` in its command line.
pub fn running_with(token: &str) -> bool {
    std::fs::read_dir("/proc").unwrap().flatten().any(|e| {
        std::fs::read(e.path().join("cmdline"))
            .is_ok_and(|c| String::from_utf8_lossy(&c).contains(token))
    })
}

/// Everything read from `r` so far, gathered by a thread until its end.
pub fn collect(mut r: impl std::io::Read + Send + 'static) -> Arc<Mutex<String>> {
    let seen = Arc::new(Mutex::new(String::new()));
    let sink = Arc::clone(&seen);
    std::thread::spawn(move || {
        let mut buf = [0u8; 1024];
        while let Ok(n) = r.read(&mut buf) {
            if n == 0 {
                break;
            }
            sink.lock()
                .unwrap()
                .push_str(&String::from_utf8_lossy(&buf[..n]));
        }
    });
    seen
}

/// Waits (20 s at most) until `f` holds.
pub fn wait(mut f: impl FnMut() -> bool, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !f() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

pub fn token(what: &str) -> String {
    format!("{what}{}x{}", std::process::id(), rand_ish())
}

pub fn rand_ish() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos()
}
