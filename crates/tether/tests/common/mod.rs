//! A private daemon directory per test, and the daemon in it stopped (every
//! session's process tree ended) when the test ends; a person attached in a
//! PTY of their own.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

pub mod bounded;
pub mod echo;
pub mod keyboard;
pub mod multi;
pub mod outer;
pub mod remote;

use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tether_pty::{LocalPty, SpawnSpec};
use tether_transport::{ExitInfo, Terminal};

pub const TETHER: &str = env!("CARGO_BIN_EXE_tether");

/// One test's daemon directory.
pub struct Daemon {
    pub dir: PathBuf,
}

impl Daemon {
    pub fn new(name: &str) -> Daemon {
        let dir = std::env::temp_dir().join(format!("tether-test-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        Daemon { dir }
    }

    /// `tether ARGS` against this daemon.
    pub fn cmd(&self, args: &[&str]) -> Command {
        let mut c = Command::new(TETHER);
        c.args(args)
            .env("TETHER_DIR", &self.dir)
            .env("TETHER_IDLE_EXIT", "30")
            .env_remove("XDG_RUNTIME_DIR");
        c
    }

    /// `tether ARGS`, returning within [`bounded::CALL_BOUND`].
    pub fn run(&self, args: &[&str]) -> Output {
        bounded::output(&mut self.cmd(args), &self.dir)
    }

    /// `tether ARGS` started in the background: stdin closed, its output
    /// piped (`wait_with_output` reads it).
    pub fn spawn(&self, args: &[&str]) -> Child {
        self.cmd(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    }

    pub fn stdout(&self, args: &[&str]) -> String {
        let out = self.run(args);
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// The running daemon's pid, from `tether daemon status`.
    pub fn pid(&self) -> i32 {
        let status = self.stdout(&["daemon", "status"]);
        status
            .split("(pid ")
            .nth(1)
            .and_then(|s| s.split(')').next())
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("no pid in {status:?}"))
    }
}

/// Whether `pid` runs (exists and is not a zombie).
pub fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| !s.contains(") Z "))
}

impl Drop for Daemon {
    fn drop(&mut self) {
        // Bounded, without a panic (the test may be failing already).
        if let Ok(mut stop) = self
            .cmd(&["daemon", "stop"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
        {
            let deadline = Instant::now() + Duration::from_secs(20);
            while stop.try_wait().ok().flatten().is_none() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(10));
            }
            let _ = stop.kill();
            let _ = stop.wait();
        }
        let deadline = Instant::now() + Duration::from_secs(10);
        while self.dir.join("daemon.sock").exists() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// `program ARGS` with tether's environment for `d` (its directory, PATH,
/// an xterm TERM) and `env` added.
pub fn spawn_spec(program: &str, args: &[&str], d: &Daemon, env: &[(&str, String)]) -> SpawnSpec {
    let mut spec = SpawnSpec::new(program);
    spec.args = args.iter().map(|a| (*a).to_owned()).collect();
    spec.env = vec![
        ("TETHER_DIR".into(), d.dir.display().to_string()),
        ("PATH".into(), std::env::var("PATH").unwrap()),
        ("TERM".into(), "xterm-256color".into()),
    ];
    spec.env
        .extend(env.iter().map(|(k, v)| ((*k).to_owned(), v.clone())));
    spec
}

/// True (with the reason printed) when `nc` is missing, for the tests of
/// a `ProxyCommand` that runs it.
#[allow(dead_code)]
pub fn nc_missing() -> bool {
    if Command::new("nc").arg("-h").output().is_err() {
        eprintln!("SKIPPED: nc is missing (scripts/test installs netcat-openbsd)");
        return true;
    }
    false
}

/// SIGKILL to `pid` (gone already is fine).
pub fn sigkill(pid: i32) {
    let _ = nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid),
        nix::sys::signal::Signal::SIGKILL,
    );
}

/// Polls `f` until it returns `Some`, or panics after `secs`.
pub fn wait_for<T>(secs: u64, what: &str, mut f: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + Duration::from_secs(secs);
    loop {
        if let Some(v) = f() {
            return v;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// `tether attach` on a PTY of its own, its output collected.
pub struct Person {
    pub pty: LocalPty,
    pub seen: Arc<Mutex<Vec<u8>>>,
}

impl Person {
    pub fn attach(d: &Daemon, session: &str) -> Person {
        Person::spawn(&["attach", session], d, &[])
    }

    /// `tether ARGS` in a PTY of its own against `d`, with `env` added.
    pub fn spawn(args: &[&str], d: &Daemon, env: &[(&str, String)]) -> Person {
        Person::spawn_program(TETHER, args, d, env)
    }

    /// `program ARGS` in a PTY of its own (a shell that then runs tether
    /// as a person does), with tether's environment for `d` and `env`.
    pub fn spawn_program(
        program: &str,
        args: &[&str],
        d: &Daemon,
        env: &[(&str, String)],
    ) -> Person {
        let pty = LocalPty::spawn(&spawn_spec(program, args, d, env)).unwrap();
        let mut out = pty.take_output().unwrap();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&seen);
        std::thread::spawn(move || {
            while let Some(chunk) = out.blocking_recv() {
                sink.lock().unwrap().extend_from_slice(&chunk);
            }
        });
        Person { pty, seen }
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.seen.lock().unwrap()).into_owned()
    }

    pub fn sees(&self, what: &str) {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while !self.text().contains(what) {
            let exited = *self.pty.exit().borrow();
            assert!(
                std::time::Instant::now() < deadline,
                "never saw {what:?}; attach exit {exited:?}; saw {:?}",
                self.text()
            );
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }

    pub fn exit(&self) -> ExitInfo {
        let exit = self.pty.exit();
        wait_for(20, "attach to exit", || *exit.borrow())
    }
}

/// The pid the thief (`tether_testkit::thief`) wrote to `pid_file`, once
/// it is blocked reading the terminal; `None` before.
pub fn thief_reading(pid_file: &std::path::Path) -> Option<i32> {
    let pid: i32 = std::fs::read_to_string(pid_file)
        .ok()?
        .trim()
        .parse()
        .ok()?;
    tether_pty::procfs::syscall(pid, pid)
        .is_some_and(|c| c.nr == 0)
        .then_some(pid)
}

/// `tether mcp` spoken to line by line, with a private home whose
/// ssh_config reaches real sshd on `ips` (one key, known_hosts, no agent);
/// initialized (request id 1).
pub struct McpFleet {
    pub home: tether_testkit::Scratch,
    /// The daemon directory of the MCP server's sessions.
    pub tether_dir: PathBuf,
    child: Child,
    stdin: std::process::ChildStdin,
    stdout: std::io::BufReader<std::process::ChildStdout>,
    _sshd: Vec<tether_testkit::Sshd>,
}

impl McpFleet {
    /// The fleet and the server, or `None` (with a printed reason) when
    /// sshd cannot run here.
    pub fn start(name: &str, ips: &[&str]) -> Option<McpFleet> {
        if let Some(why) = tether_testkit::unavailable() {
            eprintln!("SKIPPED: {why}");
            return None;
        }
        let home = tether_testkit::Scratch::new(name);
        let ssh = home.0.join(".ssh");
        std::fs::create_dir_all(&ssh).unwrap();
        let key = tether_testkit::keygen(&ssh.join("id_ed25519"), "").unwrap();
        let (port, sshd, known) =
            tether_testkit::fleet(ips, &[&key.with_extension("pub")]).unwrap();
        std::fs::write(ssh.join("known_hosts"), known).unwrap();
        std::fs::write(
            ssh.join("config"),
            format!(
                "Host *\n  Port {port}\n  User {}\n  IdentityAgent none\n",
                tether_testkit::user()
            ),
        )
        .unwrap();
        let tether_dir = home.0.join("tether");
        let mut child = Command::new(TETHER)
            .args(["mcp", "--norc"])
            .env("HOME", &home.0)
            .env("TETHER_DIR", &tether_dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = std::io::BufReader::new(child.stdout.take().unwrap());
        let mut m = McpFleet {
            home,
            tether_dir,
            child,
            stdin,
            stdout,
            _sshd: sshd,
        };
        m.call(
            1,
            "initialize",
            serde_json::json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}),
        );
        Some(m)
    }

    /// Sends request `id` and returns the answer with that id (lines
    /// without it, notifications, are passed over).
    pub fn call(&mut self, id: u64, method: &str, params: serde_json::Value) -> serde_json::Value {
        use std::io::{BufRead, Write};
        let request =
            serde_json::json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        writeln!(self.stdin, "{request}").unwrap();
        self.stdin.flush().unwrap();
        loop {
            let mut line = String::new();
            assert!(self.stdout.read_line(&mut line).unwrap() > 0);
            let v: serde_json::Value = serde_json::from_str(&line).unwrap();
            if v["id"] == serde_json::json!(id) {
                return v;
            }
        }
    }

    /// Closes the server's stdin and waits for it to end.
    pub fn finish(mut self) {
        drop(self.stdin);
        self.child.wait().unwrap();
    }
}

/// The Python with the official MCP SDK that `scripts/test` makes (or
/// `TETHER_MCP_PYTHON`), `None` with a printed reason when there is none.
pub fn mcp_python() -> Option<PathBuf> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let python = std::env::var_os("TETHER_MCP_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target/mcp-venv/bin/python"));
    if !python.exists() {
        eprintln!(
            "SKIPPED: no Python with the `mcp` package at {} (scripts/test creates it)",
            python.display()
        );
        return None;
    }
    Some(python)
}
