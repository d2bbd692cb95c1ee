//! Hosts for `tether cp`'s tests: real sshd on loopback, named `node1` …
//! in an ssh_config of their own (plus `down`, where nothing listens), each
//! serving SFTP from a directory of its own; trees to copy, and the checks
//! that a copy is the same tree.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::ffi::OsStr;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, UNIX_EPOCH};

use tether_testkit::{Scratch, Sshd, fleet_with, keygen};

const TETHER: &str = env!("CARGO_BIN_EXE_tether");

pub struct Hosts {
    pub scratch: Scratch,
    roots: Vec<PathBuf>,
    config: PathBuf,
    _sshd: Vec<Sshd>,
}

impl Hosts {
    /// `n` hosts; `subsystem(i, root)` is the i-th host's `Subsystem` line.
    pub fn start(
        name: &str,
        n: usize,
        subsystem: &dyn Fn(usize, &Path) -> String,
    ) -> Option<Hosts> {
        if let Some(why) = tether_testkit::unavailable() {
            eprintln!("SKIPPED: {why}");
            return None;
        }
        if tether_testkit::sftp_server().is_none() {
            eprintln!("SKIPPED: OpenSSH's sftp-server is not installed");
            return None;
        }
        let scratch = Scratch::new(&format!("cp-{name}"));
        let key = keygen(&scratch.0.join("id_ed25519"), "").unwrap();
        let roots: Vec<PathBuf> = (1..=n)
            .map(|i| scratch.0.join(format!("host{i}")))
            .collect();
        let ips: Vec<String> = (0..n).map(|i| format!("127.0.0.{}", i + 2)).collect();
        let ip_refs: Vec<&str> = ips.iter().map(String::as_str).collect();
        let extra = |i: usize| {
            let line = subsystem(i, &roots[i]);
            if line.is_empty() {
                tether_testkit::sftp_subsystem(&roots[i], "", "").unwrap()
            } else {
                std::fs::create_dir_all(&roots[i]).unwrap();
                tether_testkit::give_to_login_user(&roots[i]).unwrap();
                line
            }
        };
        let (port, sshd, known) =
            fleet_with(&ip_refs, &[&key.with_extension("pub")], &extra).unwrap();
        let known_file = scratch.0.join("known_hosts");
        std::fs::write(&known_file, known).unwrap();
        let mut config = String::new();
        let hosts = ips
            .iter()
            .enumerate()
            .map(|(i, ip)| (format!("node{}", i + 1), ip.clone()))
            .chain(std::iter::once((
                "down".to_owned(),
                "127.0.0.99".to_owned(),
            )));
        for (name, ip) in hosts {
            config.push_str(&format!(
                "Host {name}\n  HostName {ip}\n  Port {port}\n  User {user}\n  IdentityFile {key}\n  IdentityAgent none\n  UserKnownHostsFile {known}\n",
                user = tether_testkit::user(),
                key = key.display(),
                known = known_file.display(),
            ));
        }
        let config_file = scratch.0.join("ssh_config");
        std::fs::write(&config_file, config).unwrap();
        Some(Hosts {
            scratch,
            roots,
            config: config_file,
            _sshd: sshd,
        })
    }

    /// The directory host `i` (from 0) serves.
    pub fn root(&self, i: usize) -> PathBuf {
        self.roots[i].clone()
    }

    /// `tether cp FLAGS OPERANDS` on these hosts (AES-GCM: the debug build's
    /// fastest cipher), never asking for a secret.
    pub fn cp(&self, flags: &[&str], operands: &[&str]) -> Output {
        let operands: Vec<&OsStr> = operands.iter().map(OsStr::new).collect();
        self.cp_os(flags, &operands)
    }

    /// [`Hosts::cp`] with operands that need not be UTF-8.
    pub fn cp_os(&self, flags: &[&str], operands: &[&OsStr]) -> Output {
        self.command(flags, operands).output().unwrap()
    }

    /// The command [`Hosts::cp_os`] runs, to start it otherwise.
    pub fn command(&self, flags: &[&str], operands: &[&OsStr]) -> Command {
        let mut cmd = Command::new(TETHER);
        cmd.arg("cp")
            .arg("-F")
            .arg(&self.config)
            .args([
                "-o",
                "BatchMode=yes",
                "-o",
                "Ciphers=aes128-gcm@openssh.com",
            ])
            .args(flags)
            .args(operands)
            .env("HOME", &self.scratch.0)
            .env_remove("XDG_CONFIG_HOME")
            .env_remove("SSH_AUTH_SOCK");
        cmd
    }
}

/// `len` bytes that differ from place to place and from seed to seed.
pub fn pattern(len: usize, seed: u32) -> Vec<u8> {
    let mut x = seed.wrapping_mul(2_654_435_761).wrapping_add(1);
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x as u8
        })
        .collect()
}

fn set_mtime(path: &Path, secs: u64) {
    let t = UNIX_EPOCH + Duration::from_secs(secs);
    let f = std::fs::File::open(path).unwrap();
    f.set_times(std::fs::FileTimes::new().set_modified(t).set_accessed(t))
        .unwrap();
}

fn write(path: &Path, data: &[u8], mode: u32, mtime: u64) {
    std::fs::write(path, data).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    set_mtime(path, mtime);
}

/// A tree at `dir`: a big file of `big` bytes, an executable, a read-only
/// file, `small` files of 4 KiB in `small/`, an empty directory of mode
/// 0750, and a link; old times everywhere.
pub fn make_tree(dir: &Path, big: usize, small: usize) {
    std::fs::create_dir_all(dir.join("small")).unwrap();
    std::fs::create_dir_all(dir.join("empty")).unwrap();
    write(&dir.join("big.bin"), &pattern(big, 1), 0o644, 1_500_000_000);
    write(
        &dir.join("run.sh"),
        b"#!/bin/sh\necho hi\n",
        0o751,
        1_500_000_001,
    );
    write(&dir.join("ro.txt"), b"read only\n", 0o444, 1_500_000_002);
    for i in 0..small {
        let mode = if i % 2 == 0 { 0o644 } else { 0o600 };
        write(
            &dir.join(format!("small/f{i:04}")),
            &pattern(4096, i as u32 + 7),
            mode,
            1_400_000_000 + i as u64,
        );
    }
    std::os::unix::fs::symlink("small/f0001", dir.join("link")).unwrap();
    std::fs::set_permissions(dir.join("empty"), std::fs::Permissions::from_mode(0o750)).unwrap();
    for (d, t) in [
        ("empty", 1_300_000_000),
        ("small", 1_300_000_001),
        ("", 1_300_000_002),
    ] {
        set_mtime(&dir.join(d), t);
    }
}

/// The names in `dir`, sorted.
pub fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// `copy` is `orig`: the same names everywhere (nothing more: no temporary
/// file left), the same bytes and link targets, and with `preserve` the
/// same modes and times.
pub fn assert_same_tree(orig: &Path, copy: &Path, preserve: bool) {
    let (a, b) = (
        std::fs::symlink_metadata(orig).unwrap(),
        std::fs::symlink_metadata(copy).unwrap_or_else(|e| panic!("{}: {e}", copy.display())),
    );
    assert_eq!(a.file_type(), b.file_type(), "{}", copy.display());
    if a.is_symlink() {
        assert_eq!(
            std::fs::read_link(orig).unwrap(),
            std::fs::read_link(copy).unwrap()
        );
        return;
    }
    if preserve {
        assert_eq!(
            a.mode() & 0o7777,
            b.mode() & 0o7777,
            "mode of {}",
            copy.display()
        );
        assert_eq!(a.mtime(), b.mtime(), "time of {}", copy.display());
    }
    if a.is_dir() {
        let names = names(orig);
        assert_eq!(names, self::names(copy), "{}", copy.display());
        for n in names {
            assert_same_tree(&orig.join(&n), &copy.join(&n), preserve);
        }
    } else {
        assert!(
            std::fs::read(orig).unwrap() == std::fs::read(copy).unwrap(),
            "{} differs",
            copy.display()
        );
    }
}
