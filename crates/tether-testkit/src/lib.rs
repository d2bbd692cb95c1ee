//! `tether-testkit`: real OpenSSH `sshd` processes on loopback (127.0.0.2,
//! 127.0.0.3, …), each with its own host key and config in a private temp
//! directory, key-only authentication and `UsePAM no`; client keys; an
//! `ssh-agent`; and a listener that never answers. For tests only: errors
//! are `anyhow`, and everything it starts ends when dropped.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

pub mod present;
pub mod thief;

const SSHD: &str = "/usr/sbin/sshd";

/// Why SSH tests cannot run here, if they cannot.
pub fn unavailable() -> Option<String> {
    if !Path::new(SSHD).exists() {
        return Some(format!(
            "{SSHD} is missing (scripts/test installs openssh-server)"
        ));
    }
    if Command::new("ssh-keygen").arg("-?").output().is_err() {
        return Some("ssh-keygen is missing".into());
    }
    None
}

static COUNTER: AtomicUsize = AtomicUsize::new(0);

/// A private scratch directory, removed on drop.
#[derive(Debug)]
pub struct Scratch(pub PathBuf);

impl Scratch {
    /// A new directory named after `what`.
    pub fn new(what: &str) -> Scratch {
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("tether-{what}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Makes an ed25519 key pair at `path` (and `path.pub`), with `passphrase`.
pub fn keygen(path: &Path, passphrase: &str) -> Result<PathBuf> {
    keygen_of("ed25519", path, passphrase)
}

/// [`keygen`] for a key of type `kind` (`ed25519`, `ecdsa`, `rsa`).
pub fn keygen_of(kind: &str, path: &Path, passphrase: &str) -> Result<PathBuf> {
    let out = Command::new("ssh-keygen")
        .args([
            "-q",
            "-t",
            kind,
            "-N",
            passphrase,
            "-C",
            "tether-test",
            "-f",
        ])
        .arg(path)
        .output()?;
    if !out.status.success() {
        bail!(
            "ssh-keygen failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    Ok(path.to_path_buf())
}

/// The login shell `user` has (`getent passwd`), if any.
fn login_shell(user: &str) -> Option<String> {
    let out = Command::new("getent")
        .args(["passwd", user])
        .output()
        .ok()?;
    let line = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    line.rsplit(':').next().map(str::to_owned)
}

/// True when `shell` lets a user log in and run commands (not `nologin`,
/// `false`, or a program that is not there).
fn can_log_in(shell: &str) -> bool {
    !shell.ends_with("/nologin") && !shell.ends_with("/false") && Path::new(shell).is_file()
}

/// `tether-test`, when it exists and can log in: as root, a shell that
/// cannot (nologin, false) is replaced by /bin/sh, as scripts/test does.
fn test_user_can_log_in() -> bool {
    let Some(shell) = login_shell("tether-test").filter(|s| !s.is_empty()) else {
        return false;
    };
    if can_log_in(&shell) {
        return true;
    }
    let _ = Command::new("usermod")
        .args(["-s", "/bin/sh", "tether-test"])
        .output();
    login_shell("tether-test").is_some_and(|s| can_log_in(&s))
}

/// The user the SSH tests log in as: as root, the clean test user
/// `tether-test` when it exists and can log in (root's start-up files here
/// print noise and race each other), unlocked for key logins; else the user
/// running.
pub fn user() -> String {
    if nix_is_root()
        && Command::new("id")
            .arg("tether-test")
            .output()
            .is_ok_and(|o| o.status.success())
        && test_user_can_log_in()
    {
        let shadow = Command::new("getent")
            .args(["shadow", "tether-test"])
            .output();
        let locked =
            shadow.is_ok_and(|o| String::from_utf8_lossy(&o.stdout).split(':').nth(1) == Some("!"));
        if locked {
            let _ = Command::new("usermod")
                .args(["-p", "*", "tether-test"])
                .output();
        }
        // sshd complains on stderr when the home directory is missing.
        let home = Path::new("/home/tether-test");
        if !home.exists() && std::fs::create_dir_all(home).is_ok() {
            let _ = Command::new("chown")
                .args(["tether-test:", "/home/tether-test"])
                .output();
        }
        return "tether-test".into();
    }
    running_user()
}

/// The user running the tests.
pub fn running_user() -> String {
    std::env::var("USER")
        .ok()
        .filter(|u| !u.is_empty())
        .or_else(|| {
            let out = Command::new("id").arg("-un").output().ok()?;
            Some(String::from_utf8_lossy(&out.stdout).trim().to_owned())
        })
        .unwrap_or_else(|| "root".into())
}

/// A port free on `ip` just now.
pub fn free_port(ip: &str) -> Result<u16> {
    Ok(TcpListener::bind((ip, 0))?.local_addr()?.port())
}

/// Whether something accepts TCP connections at `ip:port` now. A connection
/// to a port nothing listens on can still succeed when the kernel picks
/// that same port as the connection's own source port (a TCP self-connect,
/// local address = peer address); that one is not a listener.
pub fn accepts(ip: &str, port: u16) -> bool {
    match std::net::TcpStream::connect((ip, port)) {
        Ok(s) => s.local_addr().ok() != s.peer_addr().ok(),
        Err(_) => false,
    }
}

/// Waits until something accepts TCP connections at `ip:port`.
fn wait_listening(ip: &str, port: u16, child: &mut Child, log: &Path) -> Result<()> {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if accepts(ip, port) {
            return Ok(());
        }
        if let Some(status) = child.try_wait()? {
            bail!(
                "sshd exited ({status}): {}",
                std::fs::read_to_string(log).unwrap_or_default()
            );
        }
        if Instant::now() > deadline {
            bail!("sshd did not listen on {ip}:{port} within 10 s");
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// A real sshd on a loopback address.
#[derive(Debug)]
pub struct Sshd {
    /// Its address.
    pub ip: String,
    /// Its port.
    pub port: u16,
    /// Its host public key, `type base64`.
    pub host_key: String,
    child: Child,
    scratch: Scratch,
}

impl Sshd {
    /// Starts sshd on `ip` accepting the public keys `authorized` (`.pub`
    /// files) for the user the tests run as, plus password authentication
    /// when `passwords` is set.
    pub fn start(ip: &str, authorized: &[&Path], passwords: bool) -> Result<Sshd> {
        Sshd::start_on(ip, free_port(ip)?, authorized, passwords)
    }

    /// [`Sshd::start`] on a given port.
    pub fn start_on(ip: &str, port: u16, authorized: &[&Path], passwords: bool) -> Result<Sshd> {
        Sshd::start_with(ip, port, authorized, passwords, "")
    }

    /// [`Sshd::start_on`] with `extra` lines put first in sshd_config, so
    /// they win (sshd takes the first value of each keyword).
    pub fn start_with(
        ip: &str,
        port: u16,
        authorized: &[&Path],
        passwords: bool,
        extra: &str,
    ) -> Result<Sshd> {
        Sshd::start_via(&[], ip, port, authorized, passwords, extra)
    }

    /// [`Sshd::start`] inside network namespace `ns`, on its far address:
    /// a host whose link [`Netns::down`] stops with no FIN.
    pub fn start_in(ns: &Netns, authorized: &[&Path]) -> Result<Sshd> {
        let wrap = ["ip", "netns", "exec", ns.name.as_str()];
        Sshd::start_via(&wrap, &ns.far_ip, 2222, authorized, false, "")
    }

    /// [`Sshd::start_with`], the program run through `wrap` (a command
    /// that execs it, as `ip netns exec NAME`).
    fn start_via(
        wrap: &[&str],
        ip: &str,
        port: u16,
        authorized: &[&Path],
        passwords: bool,
        extra: &str,
    ) -> Result<Sshd> {
        let scratch = Scratch::new(&format!("sshd-{ip}"));
        let dir = &scratch.0;
        keygen(&dir.join("host_ed25519"), "")?;
        let mut keys = String::new();
        for k in authorized {
            keys.push_str(&std::fs::read_to_string(k).with_context(|| format!("{}", k.display()))?);
        }
        std::fs::write(dir.join("authorized_keys"), keys)?;
        // sshd reads authorized_keys as the user logging in.
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755))?;
        std::fs::set_permissions(
            dir.join("authorized_keys"),
            std::fs::Permissions::from_mode(0o644),
        )?;
        // This host's own tether daemon (started there by a tether that
        // reaches it) lives here: every sshd is a host of its own, as
        // different machines are, and its daemon ends with it.
        let hostd = dir.join("hostd");
        std::fs::create_dir_all(&hostd)?;
        std::fs::set_permissions(&hostd, std::fs::Permissions::from_mode(0o700))?;
        give_to_login_user(&hostd)?;
        // sshd takes the first SetEnv line only: the host's TETHER_DIR
        // joins one `extra` gives.
        let tether_dir = format!("TETHER_DIR={}", hostd.display());
        let extra = if extra.lines().any(|l| l.starts_with("SetEnv ")) {
            extra
                .lines()
                .map(|l| match l.strip_prefix("SetEnv ") {
                    Some(rest) => format!("SetEnv {tether_dir} {rest}\n"),
                    None => format!("{l}\n"),
                })
                .collect()
        } else {
            format!("{extra}SetEnv {tether_dir}\n")
        };
        let config = extra
            + &format!(
                "ListenAddress {ip}:{port}\nHostKey {d}/host_ed25519\nPidFile {d}/sshd.pid\nAuthorizedKeysFile {d}/authorized_keys\n\
             PubkeyAuthentication yes\nPasswordAuthentication {pw}\nKbdInteractiveAuthentication no\nUsePAM no\n\
             PermitRootLogin yes\nStrictModes no\nLogLevel ERROR\nAcceptEnv LANG LC_* TERM COLORTERM\nMaxStartups 200\nMaxSessions 100\n",
                d = dir.display(),
                pw = if passwords { "yes" } else { "no" },
            );
        std::fs::write(dir.join("sshd_config"), config)?;
        if nix_is_root() {
            std::fs::create_dir_all("/run/sshd")?;
        }
        let log = dir.join("sshd.log");
        let mut command = match wrap.split_first() {
            Some((program, args)) => {
                let mut c = Command::new(program);
                c.args(args).arg(SSHD);
                c
            }
            None => Command::new(SSHD),
        };
        let mut child = command
            .arg("-D")
            .arg("-f")
            .arg(dir.join("sshd_config"))
            .arg("-E")
            .arg(&log)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .context("cannot start sshd")?;
        wait_listening(ip, port, &mut child, &log)?;
        let host_key = std::fs::read_to_string(dir.join("host_ed25519.pub"))?
            .split_whitespace()
            .take(2)
            .collect::<Vec<_>>()
            .join(" ");
        Ok(Sshd {
            ip: ip.to_owned(),
            port,
            host_key,
            child,
            scratch,
        })
    }

    /// Its known_hosts line.
    pub fn known_hosts_line(&self) -> String {
        format!("[{}]:{} {}\n", self.ip, self.port, self.host_key)
    }

    /// Its scratch directory.
    pub fn dir(&self) -> &Path {
        &self.scratch.0
    }

    /// Where this host's own tether daemon lives (`TETHER_DIR` of every
    /// login, set by sshd): its socket, log and sessions.
    pub fn host_daemon_dir(&self) -> PathBuf {
        self.scratch.0.join("hostd")
    }
}

impl Drop for Sshd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        end_host_daemon(&self.host_daemon_dir());
    }
}

/// The processes started with `TETHER_DIR=dir` (a host daemon and what
/// it started), by pid.
pub fn processes_of_host_dir(dir: &Path) -> Vec<u32> {
    let needle = format!("TETHER_DIR={}", dir.display());
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/environ"))
                .is_ok_and(|env| env.split(|b| *b == 0).any(|v| v == needle.as_bytes()))
        })
        .collect()
}

/// Ends the host daemon of `dir` and what it started: TERM (the daemon
/// ends its sessions), then KILL for what is left after 3 s.
fn end_host_daemon(dir: &Path) {
    let signal = |sig: &str, pids: &[u32]| {
        if !pids.is_empty() {
            let _ = Command::new("kill")
                .arg(sig)
                .args(pids.iter().map(u32::to_string))
                .output();
        }
    };
    signal("-TERM", &processes_of_host_dir(dir));
    let deadline = Instant::now() + Duration::from_secs(3);
    loop {
        let left = processes_of_host_dir(dir);
        if left.is_empty() {
            return;
        }
        if Instant::now() > deadline {
            signal("-KILL", &left);
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn nix_is_root() -> bool {
    std::fs::metadata("/proc/self")
        .map(|m| std::os::unix::fs::MetadataExt::uid(&m) == 0)
        .unwrap_or(false)
}

/// sshd on each of `ips`, all on one port (so a node set and `-p PORT`
/// name them), and their known_hosts lines.
pub fn fleet(ips: &[&str], authorized: &[&Path]) -> Result<(u16, Vec<Sshd>, String)> {
    fleet_with(ips, authorized, &|_| String::new())
}

/// [`fleet`] with `extra(i)` first in the `i`th sshd's config.
pub fn fleet_with(
    ips: &[&str],
    authorized: &[&Path],
    extra: &dyn Fn(usize) -> String,
) -> Result<(u16, Vec<Sshd>, String)> {
    for _ in 0..20 {
        let port = free_port(ips[0])?;
        if !ips.iter().all(|ip| TcpListener::bind((*ip, port)).is_ok()) {
            continue;
        }
        let mut all = Vec::new();
        for (i, ip) in ips.iter().enumerate() {
            all.push(Sshd::start_with(ip, port, authorized, false, &extra(i))?);
        }
        let known = all.iter().map(Sshd::known_hosts_line).collect();
        return Ok((port, all, known));
    }
    bail!("no port is free on all of {ips:?}")
}

/// OpenSSH's `sftp-server`, where this system keeps it.
pub fn sftp_server() -> Option<PathBuf> {
    [
        "/usr/lib/openssh/sftp-server",
        "/usr/libexec/openssh/sftp-server",
        "/usr/libexec/sftp-server",
        "/usr/lib/ssh/sftp-server",
    ]
    .iter()
    .map(PathBuf::from)
    .find(|p| p.exists())
}

/// The sshd_config line that serves SFTP from `sftp-server` started in
/// `start_dir` (so relative paths land there: one directory per host
/// although every host is this machine), with `flags` (`-R`: read-only)
/// and a shell `prefix` run first (`ulimit -f 64;`). The directory is
/// created and given to the user the tests log in as.
pub fn sftp_subsystem(start_dir: &Path, flags: &str, prefix: &str) -> Result<String> {
    let server = sftp_server().context("OpenSSH's sftp-server is not installed")?;
    std::fs::create_dir_all(start_dir)?;
    give_to_login_user(start_dir)?;
    let command = format!(
        "exec {} {flags} -d {}",
        server.display(),
        start_dir.display()
    );
    if prefix.is_empty() {
        return Ok(format!("Subsystem sftp {command}\n"));
    }
    // sshd_config would take the prefix's quotes for its own: a script.
    let script = start_dir.with_extension("sftp.sh");
    std::fs::write(&script, format!("#!/bin/sh\n{prefix} {command}\n"))?;
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755))?;
    Ok(format!("Subsystem sftp {}\n", script.display()))
}

/// Makes `path` (and everything under it) the login user's, when the tests
/// run as root and log in as another user.
pub fn give_to_login_user(path: &Path) -> Result<()> {
    let user = user();
    if nix_is_root() && user != "root" {
        let out = Command::new("chown")
            .arg("-R")
            .arg("-h")
            .arg(format!("{user}:"))
            .arg(path)
            .output()?;
        if !out.status.success() {
            bail!("chown failed: {}", String::from_utf8_lossy(&out.stderr));
        }
    }
    Ok(())
}

/// An `ssh-agent` holding keys, on a socket of its own.
#[derive(Debug)]
pub struct Agent {
    /// Its socket (`SSH_AUTH_SOCK`).
    pub socket: PathBuf,
    child: Child,
    _scratch: Scratch,
}

impl Agent {
    /// Starts an agent and adds `keys` (private key files without
    /// passphrase).
    pub fn start(keys: &[&Path]) -> Result<Agent> {
        let scratch = Scratch::new("agent");
        let socket = scratch.0.join("agent.sock");
        let mut child = Command::new("ssh-agent")
            .arg("-D")
            .arg("-a")
            .arg(&socket)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()?;
        let deadline = Instant::now() + Duration::from_secs(10);
        while !socket.exists() {
            if Instant::now() > deadline || child.try_wait()?.is_some() {
                bail!("ssh-agent did not start");
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        for k in keys {
            let out = Command::new("ssh-add")
                .arg(k)
                .env("SSH_AUTH_SOCK", &socket)
                .output()?;
            if !out.status.success() {
                bail!("ssh-add failed: {}", String::from_utf8_lossy(&out.stderr));
            }
        }
        Ok(Agent {
            socket,
            child,
            _scratch: scratch,
        })
    }
}

impl Drop for Agent {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A TCP listener that accepts connections and never says anything (a
/// host that blackholes the SSH handshake).
#[derive(Debug)]
pub struct Blackhole {
    /// Its port (on 127.0.0.1).
    pub port: u16,
    _listener: TcpListener,
}

impl Blackhole {
    /// Listens; the kernel accepts connections into the backlog.
    pub fn start() -> Result<Blackhole> {
        let listener = TcpListener::bind(("127.0.0.1", 0))?;
        Ok(Blackhole {
            port: listener.local_addr()?.port(),
            _listener: listener,
        })
    }
}

/// A network namespace joined to this one by a veth pair: a host on
/// `far_ip` whose link can be set down (packets stop, no FIN or RST) and
/// up again. Needs root; removed on drop.
#[derive(Debug)]
pub struct Netns {
    /// The namespace's name.
    pub name: String,
    /// The address inside it.
    pub far_ip: String,
    /// This side's address.
    pub near_ip: String,
    near_dev: String,
}

fn ip(args: &[&str]) -> Result<()> {
    let out = Command::new("ip").args(args).output()?;
    if !out.status.success() {
        bail!(
            "ip {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(())
}

impl Netns {
    /// A new namespace with its link up; why not when this machine cannot
    /// (not root, no `ip`).
    pub fn start() -> Result<Netns> {
        if !nix_is_root() {
            bail!("network namespaces need root");
        }
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let pid = std::process::id();
        let name = format!("tether-{pid}-{n}");
        let near_dev = format!("tn{}x{n}", pid % 100_000);
        let far_dev = format!("tf{}x{n}", pid % 100_000);
        let (a, b) = (100 + pid % 100, (n % 60) * 4);
        let (near_ip, far_ip) = (format!("10.{a}.{b}.1"), format!("10.{a}.{b}.2"));
        ip(&["netns", "add", &name])?;
        let ns = Netns {
            name: name.clone(),
            far_ip: far_ip.clone(),
            near_ip: near_ip.clone(),
            near_dev: near_dev.clone(),
        };
        ip(&[
            "link", "add", &near_dev, "type", "veth", "peer", "name", &far_dev,
        ])?;
        ip(&["link", "set", &far_dev, "netns", &name])?;
        ip(&["addr", "add", &format!("{near_ip}/30"), "dev", &near_dev])?;
        ip(&["link", "set", &near_dev, "up"])?;
        let inside = |args: &[&str]| {
            let mut all = vec!["netns", "exec", name.as_str(), "ip"];
            all.extend_from_slice(args);
            ip(&all)
        };
        inside(&["addr", "add", &format!("{far_ip}/30"), "dev", &far_dev])?;
        inside(&["link", "set", &far_dev, "up"])?;
        inside(&["link", "set", "lo", "up"])?;
        Ok(ns)
    }

    /// Stops every packet between the two sides (nothing is sent: no FIN).
    pub fn down(&self) -> Result<()> {
        ip(&["link", "set", &self.near_dev, "down"])
    }

    /// Lets packets through again.
    pub fn up(&self) -> Result<()> {
        ip(&["link", "set", &self.near_dev, "up"])
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        let _ = ip(&["link", "del", &self.near_dev]);
        let _ = ip(&["netns", "del", &self.name]);
    }
}
