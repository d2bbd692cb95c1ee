//! A tether on each host (issue 26, parts 1 and 2), against real sshd:
//! the pool's far side copies this build's `tether` binary to a host's
//! cache on first contact (private, its hash checked), uses the cache on
//! the next, refuses a tampered cached binary (another hash, group
//! writable, another owner) with a message naming it and leaves it as it
//! is, stays agentless when told to without reaching the host, and falls
//! back to `tether daemon relay` where sshd forbids stream-local
//! forwarding, and copies through `cat` where sshd has no SFTP. Two first
//! contacts at once leave one binary; another machine (`uname -sm`)
//! stays agentless and gets nothing; a path the
//! config gives is used as found (never copied to); a cache where
//! programs cannot run (a `noexec` mount) leaves the host agentless. The
//! stream answers the daemon protocol: a hello, then a command run by the
//! host's own daemon. Skips with a message when sshd or sftp-server is
//! missing.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use tether_cluster::pool::HostPool;
use tether_ssh::{ConnectOptions, HostKeyPolicy, Route, Target};
use tether_testkit::{Scratch, Sshd, give_to_login_user, keygen, sftp_subsystem, user};
use tether_transport::{DaemonStream, FarSettings, FarSide, HostFailure, TransportError};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

const TETHER: &str = env!("CARGO_BIN_EXE_tether");

/// A host with a fresh cache directory (`XDG_CACHE_HOME`) of its own.
struct Host {
    scratch: Scratch,
    key: PathBuf,
    sshd: Sshd,
    cache: PathBuf,
}

fn host(ip: &str, extra: &str) -> Option<Host> {
    host_with(ip, extra, true, "")
}

/// [`host`], with or without an SFTP server, with more variables `env`
/// (`NAME=value …`: sshd takes one `SetEnv` line).
fn host_with(ip: &str, extra: &str, with_sftp: bool, env: &str) -> Option<Host> {
    if let Some(why) = tether_testkit::unavailable() {
        eprintln!("SKIPPED: {why}");
        return None;
    }
    if tether_testkit::sftp_server().is_none() {
        eprintln!("SKIPPED: sftp-server is not installed");
        return None;
    }
    let scratch = Scratch::new("deploy");
    let key = keygen(&scratch.0.join("id_ed25519"), "").unwrap();
    let cache = scratch.0.join("cache");
    std::fs::create_dir_all(&cache).unwrap();
    std::fs::set_permissions(&cache, std::fs::Permissions::from_mode(0o700)).unwrap();
    give_to_login_user(&cache).unwrap();
    // The login user goes through the scratch directory to its cache.
    std::fs::set_permissions(&scratch.0, std::fs::Permissions::from_mode(0o755)).unwrap();
    let sftp = if with_sftp {
        sftp_subsystem(&scratch.0.join("sftp"), "", "").unwrap()
    } else {
        String::new()
    };
    let extra = format!(
        "{extra}{sftp}SetEnv XDG_CACHE_HOME={} {env}\n",
        cache.display()
    );
    let port = tether_testkit::free_port(ip).unwrap();
    let sshd = Sshd::start_with(ip, port, &[&key.with_extension("pub")], false, &extra).unwrap();
    std::fs::write(scratch.0.join("known_hosts"), sshd.known_hosts_line()).unwrap();
    Some(Host {
        scratch,
        key,
        sshd,
        cache,
    })
}

impl Host {
    fn route(&self) -> Route {
        Route {
            target: Target {
                host: self.sshd.ip.clone(),
                hostname: self.sshd.ip.clone(),
                port: self.sshd.port,
                user: user(),
            },
            options: ConnectOptions {
                known_hosts: vec![self.scratch.0.join("known_hosts")],
                policy: HostKeyPolicy::Yes,
                identities: vec![self.key.clone()],
                identities_only: true,
                agent: None,
                passwords: false,
                ..ConnectOptions::default()
            },
        }
    }

    /// Where this build's binary lives in the host's cache.
    fn cached(&self) -> PathBuf {
        self.cache
            .join("tether/bin")
            .join(&sha256(Path::new(TETHER))[..16])
            .join("tether")
    }

    /// Puts this build's binary in the cache as a first contact would
    /// (the login user's, private), without copying it over SSH.
    fn place(&self) -> PathBuf {
        let path = self.cached();
        let _ = std::fs::remove_file(&path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::copy(TETHER, &path).unwrap();
        for dir in ["tether", "tether/bin"] {
            let d = self.cache.join(dir);
            std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o700)).unwrap();
        }
        let d = path.parent().unwrap();
        std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o700)).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o700)).unwrap();
        give_to_login_user(&self.cache).unwrap();
        path
    }

    /// The far side through a new pool (a new connection).
    async fn far_side(&self, far: FarSettings) -> Result<FarSide, TransportError> {
        let pool = HostPool::deploying(PathBuf::from(TETHER));
        let h = pool.host("far", self.route(), far).unwrap();
        h.far_side().await
    }
}

fn sha256(path: &Path) -> String {
    let out = std::process::Command::new("sha256sum")
        .arg(path)
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)[..64].to_owned()
}

fn uid_of(name: &str) -> u32 {
    let out = std::process::Command::new("id")
        .args(["-u", name])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).trim().parse().unwrap()
}

/// A line from the daemon, within 30 s.
async fn line(r: &mut BufReader<Box<dyn DaemonStream>>, what: &str) -> serde_json::Value {
    let mut l = String::new();
    tokio::time::timeout(Duration::from_secs(30), r.read_line(&mut l))
        .await
        .unwrap_or_else(|_| panic!("no {what} from the host's daemon within 30 s"))
        .unwrap();
    serde_json::from_str(&l).unwrap_or_else(|e| panic!("{what}: {e}: {l:?}"))
}

/// Speaks the daemon protocol on the stream (at once: the daemon drops a
/// connection without a hello within 10 s): a hello, its welcome, then
/// `echo hi` run by the host's daemon. The stream is given back, open,
/// with the daemon's pid.
async fn hello_and_echo(stream: Box<dyn DaemonStream>) -> (BufReader<Box<dyn DaemonStream>>, i32) {
    let mut r = BufReader::new(stream);
    let mut hello =
        serde_json::to_vec(&tether_daemon::client::hello("tether-test", None, false)).unwrap();
    hello.push(b'\n');
    r.get_mut().write_all(&hello).await.unwrap();
    let welcome = line(&mut r, "the welcome").await;
    assert_eq!(welcome["ok"]["kind"], "welcome", "{welcome}");
    // As JSON: the request's other fields have their defaults.
    let run = serde_json::json!({
        "op": "run",
        "session": "far",
        "command": "echo hi",
        "timeout_s": 30.0,
        "output_limit": 10_000,
    });
    let mut run = serde_json::to_vec(&run).unwrap();
    run.push(b'\n');
    r.get_mut().write_all(&run).await.unwrap();
    let reply = line(&mut r, "the reply to echo hi").await;
    // (After a daemon was killed, a line first says its session was
    // recovered.)
    let output = reply["ok"]["output"].as_str().unwrap_or_default();
    assert!(output == "hi\n" || output.ends_with("\nhi\n"), "{reply}");
    assert_eq!(reply["ok"]["exit_code"], 0, "{reply}");
    let pid = welcome["ok"]["pid"].as_i64().unwrap();
    (r, i32::try_from(pid).unwrap())
}

/// Kills the host's daemon `pid` (as if it had ended without a word)
/// and waits until its socket in `dir` takes no connection. (Its process
/// shows as a zombie while its other threads still hold the socket.)
async fn kill_daemon(pid: i32, dir: &Path) {
    let _ = std::process::Command::new("kill")
        .args(["-KILL", &pid.to_string()])
        .output();
    let deadline = Instant::now() + Duration::from_secs(10);
    while std::os::unix::net::UnixStream::connect(dir.join("daemon.sock")).is_ok() {
        assert!(
            Instant::now() < deadline,
            "the host's daemon outlived SIGKILL"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// On one connection: the far side, its daemon killed, the far side again
/// (the daemon started anew, through the same way).
async fn the_daemon_comes_back(h: &Host) {
    let pool = HostPool::deploying(PathBuf::from(TETHER));
    let one = pool.host("far", h.route(), FarSettings::default()).unwrap();
    let (stream, first) = hello_and_echo(daemon(one.far_side().await.unwrap())).await;
    drop(stream);
    kill_daemon(first, &h.sshd.host_daemon_dir()).await;
    let (stream, second) = hello_and_echo(daemon(one.far_side().await.unwrap())).await;
    assert_ne!(first, second, "a new daemon answers");
    drop(stream);
}

fn daemon(far: FarSide) -> Box<dyn DaemonStream> {
    match far {
        FarSide::Daemon(s) => s,
        FarSide::Agentless(why) => panic!("agentless: {why}"),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn first_contact_copies_tether_and_the_next_uses_the_cache() {
    let Some(h) = host("127.0.0.2", "") else {
        return;
    };
    let started = Instant::now();
    let stream = daemon(h.far_side(FarSettings::default()).await.unwrap());
    let took = started.elapsed();
    // At once: the daemon drops a connection without a hello within 10 s.
    let (stream, pid) = hello_and_echo(stream).await;
    eprintln!(
        "first contact (copy {} MB, check, start the host's daemon): {:.2} s",
        std::fs::metadata(TETHER).unwrap().len() >> 20,
        took.as_secs_f64()
    );
    let path = h.cached();
    let meta = std::fs::symlink_metadata(&path).unwrap();
    assert!(meta.is_file());
    assert_eq!(meta.mode() & 0o777, 0o700, "{}", path.display());
    assert_eq!(meta.uid(), uid_of(&user()));
    for dir in [path.parent().unwrap(), &h.cache.join("tether/bin")] {
        let m = std::fs::metadata(dir).unwrap();
        assert_eq!(m.mode() & 0o077, 0, "{} is private", dir.display());
    }
    assert_eq!(sha256(&path), sha256(Path::new(TETHER)));
    // Nothing else is left in its directory (the temporary name is gone).
    let names: Vec<_> = std::fs::read_dir(path.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["tether"]);
    // The connection ends; the host's daemon does not (it holds a session).
    drop(stream);

    // A second contact, on a connection of its own: the same file.
    let started = Instant::now();
    let stream = daemon(h.far_side(FarSettings::default()).await.unwrap());
    let took = started.elapsed();
    let (_, second_pid) = hello_and_echo(stream).await;
    eprintln!(
        "second contact (cache checked): {:.2} s",
        took.as_secs_f64()
    );
    let again = std::fs::symlink_metadata(&path).unwrap();
    assert_eq!(
        (again.ino(), again.mtime(), again.mtime_nsec()),
        (meta.ino(), meta.mtime(), meta.mtime_nsec()),
        "the cached binary was not written again"
    );
    assert_eq!(
        pid, second_pid,
        "the host's daemon outlived the first connection"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_tampered_cached_binary_is_refused_and_left_as_it_is() {
    let Some(h) = host("127.0.0.3", "") else {
        return;
    };
    let refused = |far: Result<FarSide, TransportError>, says: &str, path: &Path| match far {
        Err(TransportError::Host { kind, message, .. }) => {
            assert_eq!(kind, HostFailure::Setup, "{message}");
            assert!(
                message.contains(&path.display().to_string()),
                "names the file: {message}"
            );
            assert!(message.contains(says), "says {says:?}: {message}");
            assert!(message.contains("remove"), "says what to do: {message}");
        }
        other => panic!("not refused: {other:?}"),
    };

    // Another hash: a byte more.
    let path = h.place();
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    std::io::Write::write_all(&mut f, b"x").unwrap();
    drop(f);
    let before = std::fs::metadata(&path).unwrap();
    refused(
        h.far_side(FarSettings::default()).await,
        "not this tether's",
        &path,
    );
    let after = std::fs::metadata(&path).unwrap();
    assert_eq!(
        (after.ino(), after.len(), after.mtime()),
        (before.ino(), before.len(), before.mtime()),
        "left as it is"
    );

    // Writable by its group.
    let path = h.place();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o770)).unwrap();
    refused(
        h.far_side(FarSettings::default()).await,
        "writable by its group or others",
        &path,
    );
    assert_eq!(std::fs::metadata(&path).unwrap().mode() & 0o777, 0o770);

    // Another owner (root, when the tests log in as another user).
    if user() == tether_testkit::running_user() {
        eprintln!("SKIPPED the other owner: the tests log in as the user running them");
        return;
    }
    let path = h.place();
    std::os::unix::fs::chown(&path, Some(0), Some(0)).unwrap();
    refused(
        h.far_side(FarSettings::default()).await,
        "owned by uid 0",
        &path,
    );
    assert_eq!(std::fs::metadata(&path).unwrap().uid(), 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn agentless_when_told_without_reaching_the_host() {
    // Nothing listens there: reaching it would fail.
    let port = tether_testkit::free_port("127.0.0.1").unwrap();
    let route = Route {
        target: Target {
            host: "nowhere".into(),
            hostname: "127.0.0.1".into(),
            port,
            user: "nobody".into(),
        },
        options: ConnectOptions::default(),
    };
    let pool = HostPool::deploying(PathBuf::from(TETHER));
    let why = "deploy = false for nowhere in the config";
    let far = FarSettings {
        agentless: Some(why.into()),
        ..FarSettings::default()
    };
    let h = pool.host("nowhere", route, far).unwrap();
    match h.far_side().await.unwrap() {
        FarSide::Agentless(said) => assert_eq!(said, why),
        FarSide::Daemon(_) => panic!("a daemon where none may run"),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_without_stream_local_forwarding_gets_the_relay() {
    let Some(h) = host("127.0.0.4", "AllowStreamLocalForwarding no\n") else {
        return;
    };
    h.place();
    let stream = daemon(h.far_side(FarSettings::default()).await.unwrap());
    // The stream is a `tether daemon relay` on the host.
    let relays = || {
        tether_testkit::processes_of_host_dir(&h.sshd.host_daemon_dir())
            .into_iter()
            .filter(|pid| {
                std::fs::read(format!("/proc/{pid}/cmdline"))
                    .is_ok_and(|c| c.windows(12).any(|w| w == b"daemon\0relay"))
            })
            .count()
    };
    let (stream, _) = hello_and_echo(stream).await;
    assert_eq!(relays(), 1);
    // The stream dropped, the relay ends.
    drop(stream);
    let deadline = Instant::now() + Duration::from_secs(10);
    while relays() > 0 {
        assert!(Instant::now() < deadline, "the relay outlived its channel");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // A daemon gone is started again by the relay.
    the_daemon_comes_back(&h).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_daemon_gone_meanwhile_is_started_again_on_the_same_connection() {
    let Some(h) = host("127.0.0.8", "") else {
        return;
    };
    h.place();
    the_daemon_comes_back(&h).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn two_first_contacts_at_once_leave_one_binary() {
    let Some(h) = host("127.0.0.5", "") else {
        return;
    };
    // Each says its hello as soon as it has its stream.
    let contact = || async {
        hello_and_echo(daemon(h.far_side(FarSettings::default()).await.unwrap())).await
    };
    let (a, b) = tokio::join!(contact(), contact());
    let path = h.cached();
    assert_eq!(sha256(&path), sha256(Path::new(TETHER)));
    let names: Vec<_> = std::fs::read_dir(path.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["tether"], "no temporary copy is left");
    drop((a, b));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_path_from_the_config_is_used_as_found_and_never_copied_to() {
    let Some(h) = host("127.0.0.6", "") else {
        return;
    };
    let own = h.scratch.0.join("own");
    std::fs::create_dir_all(&own).unwrap();
    std::fs::set_permissions(&own, std::fs::Permissions::from_mode(0o700)).unwrap();
    let given = own.join("tether");
    let far = |p: &Path| FarSettings {
        path: Some(p.display().to_string()),
        ..FarSettings::default()
    };
    // Not there: refused, and nothing is copied there.
    give_to_login_user(&own).unwrap();
    match h.far_side(far(&given)).await {
        Err(TransportError::Host { kind, message, .. }) => {
            assert_eq!(kind, HostFailure::Setup, "{message}");
            assert!(message.contains("does not exist"), "{message}");
            assert!(message.contains(&given.display().to_string()), "{message}");
        }
        other => panic!("not refused: {other:?}"),
    }
    assert!(!given.exists());
    assert!(!h.cached().exists(), "nothing went to the cache either");
    // Installed there by hand: used.
    std::fs::copy(TETHER, &given).unwrap();
    std::fs::set_permissions(&given, std::fs::Permissions::from_mode(0o755)).unwrap();
    give_to_login_user(&own).unwrap();
    let stream = daemon(h.far_side(far(&given)).await.unwrap());
    drop(hello_and_echo(stream).await);
    assert!(!h.cached().exists());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_without_sftp_gets_tether_through_cat() {
    let Some(h) = host_with("127.0.0.9", "", false, "") else {
        return;
    };
    let stream = daemon(h.far_side(FarSettings::default()).await.unwrap());
    drop(hello_and_echo(stream).await);
    let path = h.cached();
    let meta = std::fs::symlink_metadata(&path).unwrap();
    assert_eq!(meta.mode() & 0o777, 0o700, "{}", path.display());
    assert_eq!(sha256(&path), sha256(Path::new(TETHER)));
}

#[tokio::test(flavor = "multi_thread")]
async fn another_machine_stays_agentless_and_gets_nothing() {
    // The host says it is a RISC-V machine (a `uname` first on its PATH).
    let fake = Scratch::new("deploy-uname");
    std::fs::set_permissions(&fake.0, std::fs::Permissions::from_mode(0o755)).unwrap();
    let uname = fake.0.join("uname");
    std::fs::write(&uname, "#!/bin/sh\necho Linux riscv64\n").unwrap();
    std::fs::set_permissions(&uname, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!("PATH={}:/usr/bin:/bin", fake.0.display());
    let Some(h) = host_with("127.0.0.10", "", true, &path) else {
        return;
    };
    match h.far_side(FarSettings::default()).await.unwrap() {
        FarSide::Agentless(why) => assert!(
            why.starts_with("the host is Linux riscv64; this tether is built for Linux "),
            "{why}"
        ),
        FarSide::Daemon(_) => panic!("a daemon on another machine"),
    }
    assert!(!h.cache.join("tether").exists(), "nothing was copied");
}

/// A tmpfs mounted `noexec` over a directory, unmounted on drop.
struct NoExec(PathBuf);

impl NoExec {
    fn mount(dir: &Path) -> Option<NoExec> {
        let out = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", "noexec,size=512m,mode=0700", "tmpfs"])
            .arg(dir)
            .output()
            .ok()?;
        out.status.success().then(|| NoExec(dir.to_owned()))
    }
}

impl Drop for NoExec {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg(&self.0).output();
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_cache_where_nothing_may_run_leaves_the_host_agentless() {
    let Some(h) = host("127.0.0.7", "") else {
        return;
    };
    let Some(_noexec) = NoExec::mount(&h.cache) else {
        eprintln!("SKIPPED: cannot mount a noexec tmpfs here (not root?)");
        return;
    };
    give_to_login_user(&h.cache).unwrap();
    match h.far_side(FarSettings::default()).await.unwrap() {
        FarSide::Agentless(why) => assert!(why.contains("does not start"), "{why}"),
        FarSide::Daemon(_) => panic!("a daemon from a noexec cache"),
    }
    let dir = h.cached().parent().unwrap().to_owned();
    let left: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(
        left.is_empty(),
        "the copy that cannot run is removed: {left:?}"
    );
}
