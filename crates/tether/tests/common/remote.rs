//! Two hosts on real sshd for the daemon's remote sessions: `web01`
//! (127.0.0.2) and `web02` (127.0.0.3) in a private `~/.ssh/config` (HOME
//! is a scratch directory).

use std::process::Output;

use super::Daemon;
use tether_testkit::{Netns, Scratch, Sshd, fleet, keygen};

pub struct Remote {
    pub daemon: Daemon,
    pub home: Scratch,
    /// `PATH` for tether (and the daemon it starts), when not ours.
    pub path: Option<String>,
    /// The port every host's sshd listens on.
    pub port: u16,
    /// The hosts' sshd, in the order named.
    pub sshd: Vec<Sshd>,
    /// The network namespace the host lives in ([`start_netns`]), after
    /// `sshd`: dropped once its sshd has ended.
    pub netns: Option<Netns>,
}

/// Two hosts, `web01` (127.0.0.2) and `web02` (127.0.0.3), in the
/// daemon's ssh_config.
pub fn start(name: &str) -> Option<Remote> {
    start_hosts(name, &[("web01", "127.0.0.2"), ("web02", "127.0.0.3")])
}

/// `n` hosts, `node1` (127.0.0.2) to `nodeN`, in the daemon's ssh_config.
pub fn start_n(name: &str, n: usize) -> Option<Remote> {
    let hosts: Vec<(String, String)> = (1..=n)
        .map(|i| (format!("node{i}"), format!("127.0.0.{}", i + 1)))
        .collect();
    let refs: Vec<(&str, &str)> = hosts
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    start_hosts(name, &refs)
}

/// Two hosts as [`start`] gives them, with tether deployed on them (their
/// sessions live in each host's own daemon).
pub fn start_deployed(name: &str) -> Option<Remote> {
    Some(start(name)?.deployed())
}

/// Hosts `(name, address)`, each on a real sshd, in the daemon's
/// ssh_config. They are agentless (`deploy = false` in tether's config
/// under this HOME): the suites on this kit test the shell driven over
/// the link; those of sessions living in the host's tether start with
/// [`start_deployed`] or [`start_netns`].
pub fn start_hosts(name: &str, hosts: &[(&str, &str)]) -> Option<Remote> {
    if let Some(why) = tether_testkit::unavailable() {
        eprintln!("SKIPPED: {why}");
        return None;
    }
    let home = Scratch::new("remote-home");
    let ssh = home.0.join(".ssh");
    std::fs::create_dir_all(&ssh).unwrap();
    let key = keygen(&ssh.join("id_test"), "").unwrap();
    let ips: Vec<&str> = hosts.iter().map(|(_, ip)| *ip).collect();
    let (port, sshd, known) = fleet(&ips, &[&key.with_extension("pub")]).unwrap();
    Some(remote(name, home, &key, port, sshd, &known, hosts, None))
}

/// One host, `far01`, on a real sshd inside a network namespace joined by
/// a veth pair: [`Netns::down`] stops its link with no FIN. Skips (with a
/// message) where namespaces cannot be made.
pub fn start_netns(name: &str) -> Option<Remote> {
    if let Some(why) = tether_testkit::unavailable() {
        eprintln!("SKIPPED: {why}");
        return None;
    }
    let ns = match Netns::start() {
        Ok(ns) => ns,
        Err(e) => {
            eprintln!("SKIPPED: no network namespace: {e}");
            return None;
        }
    };
    let home = Scratch::new("remote-home");
    let ssh = home.0.join(".ssh");
    std::fs::create_dir_all(&ssh).unwrap();
    let key = keygen(&ssh.join("id_test"), "").unwrap();
    let sshd = Sshd::start_in(&ns, &[&key.with_extension("pub")]).unwrap();
    let (port, known) = (sshd.port, sshd.known_hosts_line());
    let far = ns.far_ip.clone();
    let hosts = [("far01", far.as_str())];
    let r = remote(name, home, &key, port, vec![sshd], &known, &hosts, Some(ns));
    Some(r.deployed())
}

#[allow(clippy::too_many_arguments)]
fn remote(
    name: &str,
    home: Scratch,
    key: &std::path::Path,
    port: u16,
    sshd: Vec<Sshd>,
    known: &str,
    hosts: &[(&str, &str)],
    netns: Option<Netns>,
) -> Remote {
    let ssh = home.0.join(".ssh");
    std::fs::write(ssh.join("known_hosts"), known).unwrap();
    let mut config = String::new();
    for (name, ip) in hosts {
        config.push_str(&format!(
            "Host {name}\n  HostName {ip}\n  Port {port}\n  User {user}\n  IdentityFile {key}\n  IdentityAgent none\n  UserKnownHostsFile {known}\n",
            user = tether_testkit::user(),
            key = key.display(),
            known = ssh.join("known_hosts").display(),
        ));
    }
    std::fs::write(ssh.join("config"), config).unwrap();
    // TETHER_TEST_DEPLOYED=1 runs these suites with tether on the hosts
    // instead (to see what differs; some assert the agentless mode).
    let deploy = std::env::var_os("TETHER_TEST_DEPLOYED").is_some_and(|v| v == "1");
    let tether = home.0.join(".config/tether");
    std::fs::create_dir_all(&tether).unwrap();
    let defaults = if deploy {
        ""
    } else {
        "[defaults]\ndeploy = false\n"
    };
    std::fs::write(tether.join("config.toml"), defaults).unwrap();
    Remote {
        daemon: Daemon::new(name),
        home,
        path: None,
        port,
        sshd,
        netns,
    }
}

impl Remote {
    /// From now on, tether runs on the hosts (their sessions live in each
    /// host's own daemon): the kit's `deploy = false` is taken away.
    pub fn deployed(self) -> Remote {
        std::fs::write(self.home.0.join(".config/tether/config.toml"), "").unwrap();
        self
    }

    pub fn tether(&self, args: &[&str]) -> Output {
        let mut cmd = self.daemon.cmd(args);
        if let Some(path) = &self.path {
            cmd.env("PATH", path);
        }
        cmd.env("HOME", &self.home.0)
            .env_remove("XDG_CONFIG_HOME")
            .env_remove("SSH_AUTH_SOCK");
        super::bounded::output(&mut cmd, &self.daemon.dir)
    }

    /// `tether ARGS --json`: the exit code and the result.
    pub fn json(&self, args: &[&str]) -> (i32, serde_json::Value) {
        let mut all = args.to_vec();
        let at = all.iter().position(|a| *a == "--").unwrap_or(all.len());
        all.insert(at, "--json");
        let out = self.tether(&all);
        let v = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!("not JSON ({e}): {out:?}");
        });
        (out.status.code().unwrap(), v)
    }
}

/// The processes between a remote shell (`shell_pid`, as `$$` printed it)
/// and its sshd listener (started with `-f sshd_config`), nearest first:
/// they all serve that one connection (for a user other than root, the
/// privileged monitor too); and the listener, if one was found above.
pub fn sshd_above(shell_pid: i32) -> (Vec<i32>, Option<i32>) {
    let parent_of = |pid: i32| -> Option<i32> {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        stat.rsplit(')')
            .next()?
            .split_whitespace()
            .nth(1)?
            .parse()
            .ok()
    };
    let mut at = parent_of(shell_pid).expect("the shell's parent");
    let mut chain = Vec::new();
    while at > 1 {
        let cmdline = std::fs::read_to_string(format!("/proc/{at}/cmdline")).unwrap_or_default();
        if cmdline.contains("sshd_config") {
            return (chain, Some(at));
        }
        chain.push(at);
        at = parent_of(at).unwrap_or(1);
    }
    (chain, None)
}

/// Kills every process between a remote shell (`shell_pid`) and its sshd
/// listener ([`sshd_above`]). The listener stays, so the host can be
/// reached again.
pub fn kill_connection_above(shell_pid: i32) {
    let (chain, _listener) = sshd_above(shell_pid);
    assert!(!chain.is_empty(), "no sshd above the shell {shell_pid}");
    for pid in chain {
        super::sigkill(pid);
    }
}

/// The processes serving `sshd`'s connections (every process under its
/// listener, the listener excepted).
pub fn connections_of(sshd: &Sshd) -> Vec<i32> {
    let config = format!("{}/sshd_config", sshd.dir().display());
    let procs: Vec<(i32, i32, String)> = std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| {
            let pid: i32 = e.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            let ppid = stat
                .rsplit(')')
                .next()?
                .split_whitespace()
                .nth(1)?
                .parse()
                .ok()?;
            let cmdline =
                std::fs::read_to_string(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            Some((pid, ppid, cmdline))
        })
        .collect();
    let started: Vec<&(i32, i32, String)> = procs
        .iter()
        .filter(|(_, _, c)| c.contains(&config))
        .collect();
    let listener = started
        .iter()
        .find(|(_, pp, _)| !started.iter().any(|(p, _, _)| p == pp))
        .map(|(p, _, _)| *p)
        .expect("the sshd listener");
    let mut below = vec![listener];
    let mut i = 0;
    while i < below.len() {
        let parent = below[i];
        below.extend(
            procs
                .iter()
                .filter(|(_, pp, _)| *pp == parent)
                .map(|(p, _, _)| *p),
        );
        i += 1;
    }
    assert!(below.len() > 1, "no connection under sshd {listener}");
    below.split_off(1)
}

/// Kills every process of the connections `sshd` serves now (its
/// listener's descendants), so each link ends at both sides; the listener
/// stays.
pub fn kill_connections_of(sshd: &Sshd) {
    for pid in connections_of(sshd) {
        super::sigkill(pid);
    }
}

/// SIGSTOP to every process serving `sshd`'s connections (a link that
/// hangs: no FIN, no answer); the pids, for [`resume`].
pub fn stop_connections_of(sshd: &Sshd) -> Vec<i32> {
    let pids = connections_of(sshd);
    for pid in &pids {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(*pid),
            nix::sys::signal::Signal::SIGSTOP,
        );
    }
    pids
}

/// SIGCONT to `pids`.
pub fn resume(pids: &[i32]) {
    for pid in pids {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(*pid),
            nix::sys::signal::Signal::SIGCONT,
        );
    }
}
