//! `tether exec` against real sshd on 127.0.0.2–4 (and a host that is
//! down): every output mode, exit-code policies, a command timeout, and
//! --fail-fast. Skips with a message when sshd is not installed.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::{Command, Output};

use exec_kit::{collect, wait};
use tether_testkit::{Scratch, Sshd, fleet, keygen};

mod exec_kit;

const TETHER: &str = env!("CARGO_BIN_EXE_tether");

/// `tether`, logging in as the tests' SSH user by default (`$USER`).
fn tether() -> Command {
    let mut c = Command::new(TETHER);
    c.env("USER", tether_testkit::user());
    c
}

struct Fleet {
    scratch: Scratch,
    port: u16,
    _sshd: Vec<Sshd>,
}

fn start() -> Option<Fleet> {
    if let Some(why) = tether_testkit::unavailable() {
        eprintln!("SKIPPED: {why}");
        return None;
    }
    let scratch = Scratch::new("exec");
    let key = keygen(&scratch.0.join("id_ed25519"), "").unwrap();
    let (port, sshd, known) = fleet(
        &["127.0.0.2", "127.0.0.3", "127.0.0.4"],
        &[&key.with_extension("pub")],
    )
    .unwrap();
    std::fs::write(scratch.0.join("known_hosts"), known).unwrap();
    Some(Fleet {
        scratch,
        port,
        _sshd: sshd,
    })
}

impl Fleet {
    /// `tether SUBCOMMAND` on `hosts` with this fleet's port and
    /// known_hosts and the key `key`, no ssh_config, never asking for a
    /// secret.
    fn reaching(&self, subcommand: &str, hosts: &str, key: &std::path::Path) -> Command {
        let mut c = tether();
        c.args([subcommand, "-F", "none", "-o", "BatchMode=yes", "-H", hosts])
            .args(["-p", &self.port.to_string(), "-o", "IdentityAgent=none"])
            .arg("-o")
            .arg(format!(
                "UserKnownHostsFile={}",
                self.scratch.0.join("known_hosts").display()
            ))
            .arg("-i")
            .arg(key);
        c
    }

    /// `tether exec` on `hosts`, reached with this fleet's key.
    fn command(&self, hosts: &str, extra: &[&str], command: &str) -> Command {
        let mut c = self.reaching("exec", hosts, &self.scratch.0.join("id_ed25519"));
        c.args(extra).arg("--").arg(command);
        c
    }

    fn exec(&self, hosts: &str, extra: &[&str], command: &str) -> Output {
        self.command(hosts, extra, command).output().unwrap()
    }
}

fn lines(b: &[u8]) -> Vec<String> {
    let mut l: Vec<String> = String::from_utf8_lossy(b)
        .lines()
        .map(str::to_owned)
        .collect();
    l.sort();
    l
}

/// Exits 7 on 127.0.0.3, 0 elsewhere; says where it ran.
const BY_HOST: &str =
    "set -- $SSH_CONNECTION; echo on $3; echo warn >&2; [ $3 = 127.0.0.3 ] && exit 7; exit 0";

#[test]
fn stream_gather_json_and_dir_report_every_host_truthfully() {
    let Some(f) = start() else { return };
    let hosts = "127.0.0.[2-4]";
    let out = f.exec(hosts, &[], BY_HOST);
    assert_eq!(out.status.code(), Some(7), "max of 0, 7, 0: {out:?}");
    assert_eq!(
        lines(&out.stdout),
        [
            "127.0.0.2: on 127.0.0.2",
            "127.0.0.3: on 127.0.0.3",
            "127.0.0.4: on 127.0.0.4"
        ]
    );
    assert_eq!(
        lines(&out.stderr),
        ["127.0.0.2: warn", "127.0.0.3: warn", "127.0.0.4: warn"]
    );

    let out = f.exec(hosts, &["--output", "gather"], "echo same");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "-----------------\n127.0.0.[2-4] (3)\n-----------------\nsame\n"
    );
    assert_eq!(out.status.code(), Some(0));

    let out = f.exec(
        hosts,
        &["--output", "json", "--exit-code", "all-zero"],
        BY_HOST,
    );
    assert_eq!(out.status.code(), Some(1));
    let rows: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let codes: Vec<(String, i64)> = rows
        .iter()
        .map(|r| {
            (
                r["host"].as_str().unwrap().to_owned(),
                r["exit_code"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        codes,
        [
            ("127.0.0.2".to_owned(), 0),
            ("127.0.0.3".to_owned(), 7),
            ("127.0.0.4".to_owned(), 0)
        ]
    );
    assert_eq!(rows[1]["stderr"], "warn\n");

    // --stdin goes to every host; without it the remote stdin is closed.
    let mut child = f
        .command(hosts, &["--stdin", "--output", "gather"], "wc -l")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), b"a\nb\nc\n").unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        String::from_utf8_lossy(&out.stdout).ends_with("(3)\n-----------------\n3\n"),
        "{out:?}"
    );
    let out = f.exec(hosts, &["--output", "gather"], "cat; echo eof");
    assert!(
        String::from_utf8_lossy(&out.stdout).ends_with("-----------------\neof\n"),
        "{out:?}"
    );

    let dir = f.scratch.0.join("out");
    let out = f.exec(
        hosts,
        &[
            "--output",
            "dir",
            "--dir",
            dir.to_str().unwrap(),
            "--exit-code",
            "first",
        ],
        BY_HOST,
    );
    assert_eq!(out.status.code(), Some(0), "the first host's code");
    assert_eq!(
        std::fs::read_to_string(dir.join("127.0.0.3.status")).unwrap(),
        "exit 7\n"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("127.0.0.3.stdout")).unwrap(),
        "on 127.0.0.3\n"
    );
}

#[test]
fn stdin_streams_to_running_hosts_and_whole_to_late_ones() {
    let Some(f) = start() else { return };
    // One host at a time: the second starts after the first ended, and
    // still reads from the first byte. tether ends with the hosts, while
    // its own stdin stays open.
    let mut child = f
        .command("127.0.0.[2-3]", &["--stdin", "-f", "1"], "head -n1")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    std::io::Write::write_all(&mut stdin, b"first\n").unwrap();
    wait(|| child.try_wait().unwrap().is_some(), "the run to end");
    let out = child.wait_with_output().unwrap();
    drop(stdin);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(lines(&out.stdout), ["127.0.0.2: first", "127.0.0.3: first"]);

    // Much more than the SSH window, read back while it is written.
    let mut child = f
        .command("127.0.0.[2-4]", &["--stdin"], "wc -c")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    std::thread::spawn(move || {
        std::io::Write::write_all(&mut stdin, &vec![b'x'; 8 << 20]).unwrap();
    });
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        lines(&out.stdout),
        [
            "127.0.0.2: 8388608",
            "127.0.0.3: 8388608",
            "127.0.0.4: 8388608"
        ]
    );
}

#[test]
fn a_down_host_a_timeout_and_an_unknown_key_are_reported_per_host() {
    let Some(f) = start() else { return };
    // 127.0.0.5 has no sshd: one clear line, the others still run.
    let out = f.exec("127.0.0.[2-5]", &["--output", "gather"], "echo up");
    assert_eq!(out.status.code(), Some(255));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("127.0.0.[2-4] (3)\n") && text.contains("127.0.0.5 (1) cannot connect"),
        "{text}"
    );
    // A command that outlives its timeout.
    let out = f.exec("127.0.0.2", &["-u", "0.5"], "sleep 30");
    assert_eq!(out.status.code(), Some(255));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("did not finish within 0.5 s"),
        "{out:?}"
    );
    // An unknown host key is refused, naming the file.
    let out = tether()
        .args([
            "exec",
            "-H",
            "127.0.0.2",
            "-p",
            &f.port.to_string(),
            "-o",
            "UserKnownHostsFile=/nonexistent/kh",
            "--",
            "true",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(255));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("host key"),
        "{out:?}"
    );
}

/// --fail-fast, one at a time: after 127.0.0.2 fails, no other host is
/// started and the command runs nowhere else (each host leaves a marker
/// first). 127.0.0.2 prints enough lines that the printer is still busy
/// with them when it fails: a cancel set by the printer would come after
/// 127.0.0.3 had started.
#[test]
fn fail_fast_one_at_a_time_runs_nothing_after_the_first_failure() {
    let Some(f) = start() else { return };
    let marks = f.scratch.0.join("marks");
    std::fs::create_dir(&marks).unwrap();
    tether_testkit::give_to_login_user(&marks).unwrap();
    let command = format!(
        "set -- $SSH_CONNECTION; touch {}/ran-$3; seq 1 5000; exit 3",
        marks.display()
    );
    let flags = ["-f", "1", "--fail-fast", "--exit-code", "first"];
    let out = f.exec("127.0.0.[2-4]", &flags, &command);
    assert_eq!(out.status.code(), Some(3), "{:?}", out.stderr);
    assert_eq!(
        names_in(&marks),
        ["ran-127.0.0.2"],
        "the command ran after the first failure"
    );
    let err = String::from_utf8_lossy(&out.stderr);
    for host in ["127.0.0.3", "127.0.0.4"] {
        assert!(
            err.contains(&format!("{host}: cancelled (fail fast): not started")),
            "{err}"
        );
    }
    assert!(
        err.contains("--fail-fast cancelled 127.0.0.[3-4] (2)"),
        "{err}"
    );

    // The same with the result as JSON: the cancelled hosts say so.
    let out = f.exec(
        "127.0.0.[2-4]",
        &["-f", "1", "--fail-fast", "--output", "json"],
        "exit 3",
    );
    let rows: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows[0]["exit_code"], 3, "{rows:?}");
    assert!(
        rows[1..].iter().all(|r| r["error"]
            .as_str()
            .unwrap()
            .starts_with("cancelled (fail fast)")
            && r["error_kind"] == "cancelled"),
        "{rows:?}"
    );
}

/// A host still connecting when another fails a `--fail-fast` run is
/// given up at once and never sent the command: 127.0.0.5 accepts TCP and
/// never answers, so before the cancel reached the connection it was
/// reported after the 30 s connect timeout as a connection error.
#[test]
fn fail_fast_gives_up_a_host_still_connecting() {
    let Some(f) = start() else { return };
    let silent = std::net::TcpListener::bind(("127.0.0.5", f.port)).unwrap();
    let flags = ["-f", "2", "--fail-fast", "-t", "30", "--output", "json"];
    let out = f.exec("127.0.0.2,127.0.0.5", &flags, "exit 3");
    drop(silent);
    let rows: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), 2, "{out:?}");
    assert_eq!(rows[0]["exit_code"], 3, "{rows:?}");
    assert_eq!(
        rows[1]["error"], "cancelled (fail fast): not started",
        "{rows:?}"
    );
}

/// The names in `dir`, sorted.
fn names_in(dir: &std::path::Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn ssh_config_aliases_keys_known_hosts_and_proxy_jump() {
    let Some(f) = start() else { return };
    let d = &f.scratch.0;
    let config = d.join("ssh_config");
    let text = format!(
        "Host web-b\n  HostName 127.0.0.3\n  ProxyJump jump\n  SetEnv LC_SET=set-by-config NOT_ACCEPTED=x\n  SendEnv LC_SENT_*\nHost jump\n  HostName 127.0.0.2\nHost *\n  User {user}\n  Port {port}\n  IdentityFile {d}/id_ed25519\n  IdentitiesOnly yes\n  IdentityAgent none\n  UserKnownHostsFile {d}/known_hosts_%h\n  StrictHostKeyChecking accept-new\n",
        port = f.port,
        d = d.display(),
        user = tether_testkit::user()
    );
    std::fs::write(&config, text).unwrap();
    let run = |hosts: &str| {
        tether()
            .args([
                "exec",
                "-F",
                config.to_str().unwrap(),
                "-H",
                hosts,
                "--",
                "set -- $SSH_CONNECTION; echo $3",
            ])
            .output()
            .unwrap()
    };
    let out = run("web-b");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "web-b: 127.0.0.3\n",
        "{out:?}"
    );
    // accept-new wrote each host's key to its own file (%h is the HostName).
    let listing: Vec<_> = std::fs::read_dir(d)
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert!(
        d.join("known_hosts_127.0.0.3").exists() && d.join("known_hosts_127.0.0.2").exists(),
        "{listing:?}"
    );
    // A bad value in the config is an error with file and line, before anything runs.
    std::fs::write(&config, "Host *\n  ConnectTimeout soon\n").unwrap();
    let out = run("web-b");
    assert_eq!(out.status.code(), Some(255));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("{}:2", config.display())) && err.contains("ConnectTimeout"),
        "{err}"
    );
}

/// `tether exec` of `echo started; sleep 30` on `hosts` with `flags`,
/// once `n` hosts have started; its stderr as it comes.
fn started(
    f: &Fleet,
    hosts: &str,
    flags: &[&str],
    n: usize,
) -> (
    std::process::Child,
    std::sync::Arc<std::sync::Mutex<String>>,
) {
    let mut child = f
        .command(hosts, flags, "echo started; sleep 30")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let out = collect(child.stdout.take().unwrap());
    let err = collect(child.stderr.take().unwrap());
    wait(
        || out.lock().unwrap().matches("started").count() == n,
        "the hosts to start",
    );
    (child, err)
}

#[test]
fn ctrl_c_once_says_who_runs_twice_cancels() {
    let Some(f) = start() else { return };
    let (mut child, err) = started(&f, "127.0.0.[2-4]", &[], 3);
    let pid = nix::unistd::Pid::from_raw(child.id() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT).unwrap();
    wait(
        || {
            err.lock()
                .unwrap()
                .contains("still running on 127.0.0.[2-4] (3)")
        },
        "the running hosts",
    );
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT).unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130), "{}", err.lock().unwrap());
    wait(
        || {
            err.lock()
                .unwrap()
                .matches("cancelled (interrupted)")
                .count()
                == 3
        },
        "three cancellations",
    );
}

/// `-b` (pdsh's batch mode): the first Ctrl-C cancels every host.
#[test]
fn with_b_one_ctrl_c_cancels() {
    let Some(f) = start() else { return };
    let (mut child, err) = started(&f, "127.0.0.[2-3]", &["-b"], 2);
    let pid = nix::unistd::Pid::from_raw(child.id() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT).unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130), "{}", err.lock().unwrap());
    wait(
        || {
            err.lock()
                .unwrap()
                .matches("cancelled (interrupted)")
                .count()
                == 2
        },
        "two cancellations",
    );
    let err = err.lock().unwrap();
    assert!(err.contains("interrupted: cancelling every host"), "{err}");
    assert!(!err.contains("still running on"), "{err}");
}

#[test]
fn clusters_and_groups_come_from_the_config_file() {
    let Some(f) = start() else { return };
    let d = &f.scratch.0;
    let cfg = d.join("config.toml");
    let text = format!(
        "[defaults]\nfanout = 2\n\n[groups]\npair = \"127.0.0.[2-3]\"\n\n[clusters.lab]\nnodes = \"@pair,127.0.0.4\"\nport = {}\nidentity = \"{}/id_ed25519\"\nuser = \"{}\"\n",
        f.port,
        d.display(),
        tether_testkit::user()
    );
    std::fs::write(&cfg, text).unwrap();
    let hosts = tether()
        .args([
            "hosts",
            "--config",
            cfg.to_str().unwrap(),
            "@pair!127.0.0.3",
        ])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&hosts.stdout), "127.0.0.2\n");
    let known = format!("UserKnownHostsFile={}", d.join("known_hosts").display());
    let out = tether()
        .args([
            "exec",
            "--config",
            cfg.to_str().unwrap(),
            "-C",
            "lab",
            "-F",
            "none",
            "-o",
            &known,
            "-o",
            "IdentityAgent=none",
        ])
        .args(["--output", "gather", "--", "echo hi"])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "-----------------\n127.0.0.[2-4] (3)\n-----------------\nhi\n",
        "{out:?}"
    );
    // A mistake in the config is an error with file, line and column.
    std::fs::write(&cfg, "[defaults]\nfanout = 2\nfanuot = 3\n").unwrap();
    let out = tether()
        .args([
            "exec",
            "--config",
            cfg.to_str().unwrap(),
            "-H",
            "x",
            "--",
            "true",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(255));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("{}:3:1:", cfg.display())) && err.contains("fanuot"),
        "{err}"
    );
    let out = tether()
        .args([
            "exec",
            "--config",
            cfg.to_str().unwrap(),
            "-C",
            "nope",
            "--",
            "true",
        ])
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("fanuot"),
        "the broken file is reported first"
    );
}

#[test]
fn a_passphrase_is_asked_on_the_terminal_once() {
    use tether_transport::{ExitInfo, Terminal};
    if let Some(why) = tether_testkit::unavailable() {
        eprintln!("SKIPPED: {why}");
        return;
    }
    let scratch = Scratch::new("exec-passphrase");
    let key = keygen(&scratch.0.join("id_locked"), "open sesame").unwrap();
    let (port, _sshd, known) =
        fleet(&["127.0.0.12", "127.0.0.13"], &[&key.with_extension("pub")]).unwrap();
    let kh = scratch.0.join("known_hosts");
    std::fs::write(&kh, known).unwrap();
    let mut spec = tether_pty::SpawnSpec::new(TETHER);
    spec.args = [
        "exec",
        "-F",
        "none",
        "-H",
        "127.0.0.[12-13]",
        "-p",
        &port.to_string(),
        "-i",
        key.to_str().unwrap(),
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .chain([
        "-o".into(),
        format!("UserKnownHostsFile={}", kh.display()),
        "-o".into(),
        "IdentityAgent=none".into(),
    ])
    .chain(["--".into(), "echo unlocked".into()])
    .collect();
    spec.env = vec![
        ("PATH".into(), std::env::var("PATH").unwrap()),
        ("USER".into(), tether_testkit::user()),
    ];
    let pty = tether_pty::LocalPty::spawn(&spec).unwrap();
    let mut out = pty.take_output().unwrap();
    let seen = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
    let sink = std::sync::Arc::clone(&seen);
    std::thread::spawn(move || {
        while let Some(c) = out.blocking_recv() {
            sink.lock().unwrap().push_str(&String::from_utf8_lossy(&c));
        }
    });
    wait(
        || seen.lock().unwrap().contains("Enter passphrase for key"),
        "the prompt",
    );
    pty.write(b"open sesame\r".to_vec()).unwrap();
    let exit = pty.exit();
    wait(|| exit.borrow().is_some(), "exec to finish");
    assert_eq!(
        *exit.borrow(),
        Some(ExitInfo::Code(0)),
        "{}",
        seen.lock().unwrap()
    );
    // The last output can reach us after the exit is seen.
    wait(
        || {
            let t = seen.lock().unwrap();
            t.contains("127.0.0.12: unlocked") && t.contains("127.0.0.13: unlocked")
        },
        "both hosts' output",
    );
    let text = seen.lock().unwrap().clone();
    assert!(
        text.contains("127.0.0.12: unlocked") && text.contains("127.0.0.13: unlocked"),
        "{text}"
    );
    assert_eq!(
        text.matches("Enter passphrase").count(),
        1,
        "asked once for both hosts: {text}"
    );
    assert!(
        !text.contains("open sesame"),
        "the passphrase is not echoed: {text}"
    );
}

/// The hosts narrowed as pdsh and ClusterShell users type it: `-x`,
/// `--filter`, a host file (`^FILE`), and a cluster narrowed by `-H`;
/// only the hosts left run the command.
#[test]
fn exclusions_filters_host_files_and_a_narrowed_cluster_pick_the_hosts_that_run() {
    let Some(f) = start() else { return };
    let on = "set -- $SSH_CONNECTION; echo on $3";
    let out = f.exec("127.0.0.[2-4]", &["-x", "127.0.0.3"], on);
    assert_eq!(
        lines(&out.stdout),
        ["127.0.0.2: on 127.0.0.2", "127.0.0.4: on 127.0.0.4"]
    );
    let out = f.exec("127.0.0.[2-4]", &["--filter", "*.4"], on);
    assert_eq!(lines(&out.stdout), ["127.0.0.4: on 127.0.0.4"]);
    let file = f.scratch.0.join("hosts");
    std::fs::write(&file, "# two of them\n127.0.0.2\n127.0.0.3 # and this\n").unwrap();
    let out = f.exec(&format!("^{}", file.display()), &[], on);
    assert_eq!(
        lines(&out.stdout),
        ["127.0.0.2: on 127.0.0.2", "127.0.0.3: on 127.0.0.3"]
    );
    let config = f.scratch.0.join("config.toml");
    std::fs::write(&config, "[clusters.lab]\nnodes = \"127.0.0.[2-4]\"\n").unwrap();
    let cfg = config.display().to_string();
    let out = f.exec("127.0.0.3", &["--config", &cfg, "-C", "lab"], on);
    assert_eq!(lines(&out.stdout), ["127.0.0.3: on 127.0.0.3"], "{out:?}");
    // A node outside the cluster, or nothing left: an error, nothing run.
    let out = f.exec("127.0.0.9", &["--config", &cfg, "-C", "lab"], on);
    assert_eq!(out.status.code(), Some(255), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("not in cluster lab"));
    let out = f.exec("127.0.0.[2-4]", &["-x", "127.0.0.[2-4]"], on);
    assert!(out.stdout.is_empty(), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("leave none"));
}

impl Fleet {
    /// `tether ping` on `hosts`, reached as [`Fleet::command`] reaches them.
    fn ping(&self, hosts: &str, extra: &[&str]) -> Output {
        let mut c = self.reaching("ping", hosts, &self.scratch.0.join("id_ed25519"));
        c.args(extra).output().unwrap()
    }
}

/// `tether ping` as bssh's: a line per host, 0 when all are reached, 1
/// when some are, 255 when none; a host with no sshd and a login refused
/// each say why.
#[test]
fn ping_tells_which_hosts_let_us_in() {
    let Some(f) = start() else { return };
    let out = f.ping("127.0.0.[2-4]", &[]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let l = lines(&out.stdout);
    assert_eq!(l.len(), 3, "{l:?}");
    assert!(l.iter().all(|l| l.contains(": ok (")), "{l:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("3 of 3 hosts reached"));
    // 127.0.0.5 has no sshd.
    let out = f.ping("127.0.0.[4-5]", &[]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let l = lines(&out.stdout);
    assert!(l[0].starts_with("127.0.0.4: ok"), "{l:?}");
    assert!(l[1].starts_with("127.0.0.5: failed"), "{l:?}");
    let out = f.ping("127.0.0.5", &["--output", "json"]);
    assert_eq!(out.status.code(), Some(255), "{out:?}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (&v["host"], &v["ok"]),
        (&"127.0.0.5".into(), &false.into()),
        "{v}"
    );
    assert_eq!(v["error_kind"], "ssh", "{v}");
    // A key the hosts do not know (and no other): refused, each host
    // saying so.
    let other = tether_testkit::keygen(&f.scratch.0.join("other_key"), "").unwrap();
    let out = f
        .reaching("ping", "127.0.0.[2-3]", &other)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(255), "{out:?}");
    assert!(
        lines(&out.stdout).iter().all(|l| l.contains("failed")),
        "{out:?}"
    );
}

/// `--diff` prints what `clush --diff` prints for the same outputs from
/// the same hosts (ClusterShell's own clush, through OpenSSH's ssh with
/// this fleet's port, key and known_hosts).
#[test]
fn diff_prints_what_clush_diff_prints() {
    let Some(f) = start() else { return };
    if Command::new("clush").arg("--version").output().is_err() {
        eprintln!("SKIPPED: clush is not installed (scripts/test installs clustershell)");
        return;
    }
    let cmd = "set -- $SSH_CONNECTION; echo a; echo b; if [ $3 = 127.0.0.3 ]; then echo B; else echo c; fi; echo d; echo e; echo f; echo g";
    let hosts = "127.0.0.[2-4]";
    let mine = f.exec(hosts, &["--diff"], cmd);
    assert_eq!(mine.status.code(), Some(0), "{mine:?}");
    let ssh_opts = format!(
        "-F none -o BatchMode=yes -o IdentityAgent=none -o IdentitiesOnly=yes -p {} -i {} -o UserKnownHostsFile={}",
        f.port,
        f.scratch.0.join("id_ed25519").display(),
        f.scratch.0.join("known_hosts").display()
    );
    let theirs = Command::new("clush")
        .args(["-w", hosts, "-o", &ssh_opts, "--diff", "--color=never", cmd])
        .output()
        .unwrap();
    assert!(theirs.status.success(), "{theirs:?}");
    assert_eq!(
        String::from_utf8_lossy(&mine.stdout),
        String::from_utf8_lossy(&theirs.stdout)
    );
    assert!(
        String::from_utf8_lossy(&mine.stdout).contains("+B"),
        "{mine:?}"
    );
    // All the same: nothing to show.
    let same = f.exec(hosts, &["--diff"], "echo same");
    assert!(same.stdout.is_empty(), "{same:?}");
}

/// `-4` and `-6` as OpenSSH takes them (AddressFamily): an IPv4 host is
/// reached with -4, and with -6 it has no address to try, said per host.
#[test]
fn address_family_flags_choose_the_addresses_tried() {
    let Some(f) = start() else { return };
    let out = f.exec("127.0.0.2", &["-4"], "echo v4");
    assert_eq!(lines(&out.stdout), ["127.0.0.2: v4"], "{out:?}");
    let out = f.exec("127.0.0.2", &["-6"], "echo v6");
    assert_eq!(out.status.code(), Some(255), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("no IPv6 address"),
        "{out:?}"
    );
    let out = f.exec("127.0.0.2", &["-o", "AddressFamily=inet6"], "echo v6");
    assert_eq!(out.status.code(), Some(255), "{out:?}");
    let out = f.exec("127.0.0.2", &["-4", "-6"], "true");
    assert_eq!(out.status.code(), Some(2), "-4 and -6 together: {out:?}");
}

/// `-v`: each host's connection steps on stderr, with the time since the
/// run began; stdout is the command's alone.
#[test]
fn verbose_shows_each_hosts_connection_steps_on_stderr() {
    let Some(f) = start() else { return };
    let out = f.exec("127.0.0.[2-3]", &["-v"], "echo hi");
    assert_eq!(
        lines(&out.stdout),
        ["127.0.0.2: hi", "127.0.0.3: hi"],
        "{out:?}"
    );
    let err = String::from_utf8_lossy(&out.stderr);
    for host in ["127.0.0.2", "127.0.0.3"] {
        assert!(
            err.lines()
                .any(|l| l.starts_with("tether: +") && l.contains(host) && l.contains("connected")),
            "{err}"
        );
    }
    let quiet = f.exec("127.0.0.2", &[], "echo hi");
    assert!(!String::from_utf8_lossy(&quiet.stderr).contains("tether: +"));
}

/// tether's pdsh mode against pdsh itself (`pdsh -R ssh`, through OpenSSH
/// with the same ssh_config): the same lines, the same exit codes, with
/// and without -S, -N and -x; a link named `pdsh` to tether does the same.
#[test]
fn pdsh_mode_prints_and_exits_as_pdsh_does() {
    let Some(f) = start() else { return };
    if Command::new("pdsh").arg("-V").output().is_err() {
        eprintln!("SKIPPED: pdsh is not installed (scripts/test installs it)");
        return;
    }
    let home = f.scratch.0.join("home");
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    let config = home.join(".ssh/config");
    std::fs::write(
        &config,
        format!(
            "Host 127.0.0.*\n  Port {}\n  IdentityFile {}\n  IdentitiesOnly yes\n  IdentityAgent none\n  UserKnownHostsFile {}\n  BatchMode yes\n",
            f.port,
            f.scratch.0.join("id_ed25519").display(),
            f.scratch.0.join("known_hosts").display()
        ),
    )
    .unwrap();
    let link = f.scratch.0.join("pdsh");
    std::os::unix::fs::symlink(common_tether(), &link).unwrap();
    let cmd =
        "set -- $SSH_CONNECTION; echo on $3; echo err $3 >&2; [ $3 = 127.0.0.3 ] && exit 7; exit 0";
    for (hosts, flags) in [
        ("127.0.0.[2-4]", &[][..]),
        ("127.0.0.[2-4]", &["-S"][..]),
        ("127.0.0.[2-4]", &["-N"][..]),
        ("127.0.0.[2-4]", &["-S", "-x", "127.0.0.3"][..]),
        ("127.0.0.[2-4]", &["-f", "1", "-S"][..]),
        // 127.0.0.5 has no sshd.
        ("127.0.0.[4-5]", &[][..]),
        ("127.0.0.[4-5]", &["-S"][..]),
    ] {
        let mut args = vec!["-R", "ssh", "-w", hosts];
        args.extend_from_slice(flags);
        args.push(cmd);
        let theirs = Command::new("pdsh")
            .args(&args)
            .env("PDSH_SSH_ARGS", format!("-F {} -l%u %h", config.display()))
            .output()
            .unwrap();
        let mine = tether()
            .arg("pdsh")
            .args(&args)
            .env("HOME", &home)
            .output()
            .unwrap();
        let linked = Command::new(&link)
            .args(&args)
            .env("HOME", &home)
            .output()
            .unwrap();
        for (who, out) in [("tether pdsh", &mine), ("a pdsh link", &linked)] {
            assert_eq!(
                lines(&out.stdout),
                lines(&theirs.stdout),
                "{who} {flags:?}: {out:?} vs {theirs:?}"
            );
            assert_eq!(
                out.status.code(),
                theirs.status.code(),
                "{who} {flags:?}: {out:?} vs {theirs:?}"
            );
        }
        let err_lines = |o: &Output| {
            lines(&o.stderr)
                .into_iter()
                .filter(|l| l.contains("err 127"))
                .collect::<Vec<_>>()
        };
        assert_eq!(err_lines(&mine), err_lines(&theirs), "stderr {flags:?}");
    }
    // Not pdsh's: another rcmd module, and no host.
    let out = tether()
        .args(["pdsh", "-R", "rsh", "-w", "a", "true"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("ssh only"));
}

/// The tether binary the tests run.
fn common_tether() -> &'static str {
    env!("CARGO_BIN_EXE_tether")
}
