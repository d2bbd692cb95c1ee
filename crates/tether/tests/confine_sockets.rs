//! A confined session and the user's real Unix sockets (issue 36): the
//! SSH agent (`$SSH_AUTH_SOCK`, a real `ssh-agent`) and a D-Bus session
//! bus (a real `dbus-daemon`, on a path and on an abstract name) answer
//! an unconfined session and refuse a confined one; a socket allowed by
//! path (`[confine] unix_sockets`) is reached and no other, on a kernel
//! whose Landlock refuses sockets by path (ABI 9), and the key is refused
//! aloud, nothing run, on one without it. As root and as the
//! unprivileged test user.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
mod fenced;

use std::path::{Path, PathBuf};
use std::process::{Child, Command};

use fenced::{USER, Who, World, bwrap_missing, everyone, output};
use serde_json::Value;

/// The user's agent and bus, ended when dropped.
struct Servers {
    children: Vec<Child>,
    agent: PathBuf,
    bus: PathBuf,
    bus_abstract: String,
}

impl Drop for Servers {
    fn drop(&mut self) {
        for c in &mut self.children {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

fn missing(program: &str) -> bool {
    let gone = Command::new("which")
        .arg(program)
        .output()
        .map_or(true, |o| !o.status.success());
    if gone {
        eprintln!("SKIPPED: {program} is not installed (scripts/test installs it)");
    }
    gone
}

/// A real `ssh-agent` and a real `dbus-daemon` of `w`'s user, listening.
fn servers(w: &World) -> Servers {
    let agent = w.s.0.join("agent.sock");
    let bus = w.s.0.join("bus.sock");
    // Unique to this world (tests run at once, in one process).
    let world = w.s.0.file_name().unwrap().to_string_lossy().into_owned();
    let bus_abstract = format!("{world}-bus");
    let a = w
        .cmd(
            Path::new("ssh-agent"),
            &["-D", "-a", agent.to_str().unwrap()],
        )
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // A bus listens on its first address only: one on a path, one on
    // an abstract name.
    let bus_at = |address: &str| {
        w.cmd(
            Path::new("dbus-daemon"),
            &["--session", "--nofork", "--nopidfile", "--address", address],
        )
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap()
    };
    let b = bus_at(&format!("unix:path={}", bus.display()));
    let c = bus_at(&format!("unix:abstract={bus_abstract}"));
    let s = Servers {
        children: vec![a, b, c],
        agent,
        bus,
        bus_abstract,
    };
    // Listening (a socket's path exists from its bind, before its
    // listen): each takes a connection.
    let abstract_addr = {
        use std::os::linux::net::SocketAddrExt;
        std::os::unix::net::SocketAddr::from_abstract_name(&s.bus_abstract).unwrap()
    };
    common::wait_for(10, "the agent and the buses listening", || {
        use std::os::unix::net::UnixStream;
        let up = UnixStream::connect(&s.agent).is_ok()
            && UnixStream::connect(&s.bus).is_ok()
            && UnixStream::connect_addr(&abstract_addr).is_ok();
        up.then_some(())
    });
    s
}

/// `tether run --json` as `w`'s user with the agent and the bus in its
/// environment.
fn run(w: &World, s: &Servers, args: &[&str]) -> (Value, String) {
    let mut a = vec!["run", "--json"];
    a.extend_from_slice(args);
    let out = w
        .cmd(&w.bin.join("tether"), &a)
        .env("SSH_AUTH_SOCK", &s.agent)
        .env(
            "DBUS_SESSION_BUS_ADDRESS",
            format!("unix:path={}", s.bus.display()),
        )
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    (
        serde_json::from_slice(&out.stdout).unwrap_or(Value::Null),
        err,
    )
}

/// Asks the agent, the bus by path and the bus by abstract name.
fn probe(s: &Servers) -> String {
    let call = "--print-reply --dest=org.freedesktop.DBus / org.freedesktop.DBus.ListNames";
    format!(
        "ssh-add -l 2>&1; echo agent=$?; \
         dbus-send --session {call} >/dev/null 2>&1; echo bus=$?; \
         DBUS_SESSION_BUS_ADDRESS=unix:abstract={} dbus-send --session {call} >/dev/null 2>&1; echo abstract=$?",
        s.bus_abstract
    )
}

#[test]
fn the_ssh_agent_and_the_session_bus_answer_only_outside_the_fence() {
    if bwrap_missing() || missing("ssh-agent") || missing("dbus-daemon") {
        return;
    }
    for who in everyone() {
        let w = World::new(who);
        let s = servers(&w);
        let (r, err) = run(&w, &s, &["-s", "free", "--", &probe(&s)]);
        let text = output(&r);
        // The agent answers (it has no key), and so does the bus, twice.
        assert!(
            text.contains("agent has no identities"),
            "{who:?}: {r}{err}"
        );
        for says in ["agent=1", "bus=0", "abstract=0"] {
            assert!(text.contains(says), "{who:?}: {says}: {r}{err}");
        }
        let (r, err) = run(
            &w,
            &s,
            &["-s", "c", "--confine", "workspace", "--", &probe(&s)],
        );
        let text = output(&r);
        assert!(!text.contains("no identities"), "{who:?}: {r}{err}");
        for says in ["agent=2", "bus=1", "abstract=1"] {
            assert!(text.contains(says), "{who:?}: {says}: {r}{err}");
        }
    }
}

#[test]
fn a_unix_socket_allowed_by_path_is_reached_and_no_other_or_refused_aloud() {
    if bwrap_missing() || missing("ssh-agent") || missing("dbus-daemon") {
        return;
    }
    for who in everyone() {
        let w = World::new(who);
        let s = servers(&w);
        let config = w.home.join(".config/tether");
        std::fs::create_dir_all(&config).unwrap();
        let write = |sockets: &str| {
            // Best effort too: it never loosens the refusal of the others.
            let text = format!(
                "[confine]\nmode = \"workspace\"\nbest_effort = true\nunix_sockets = [{sockets}]\n"
            );
            std::fs::write(config.join("config.toml"), text).unwrap();
            if let Who::Other = who {
                let ok = Command::new("chown")
                    .args(["-R", &format!("{USER}:")])
                    .arg(w.home.join(".config"))
                    .status()
                    .unwrap();
                assert!(ok.success());
            }
        };
        // A path that is no socket: refused before anything runs.
        write("\"/etc/passwd\"");
        let (r, err) = run(&w, &s, &["-s", "x", "--", "touch ran"]);
        assert!(
            err.contains("/etc/passwd: not a Unix socket"),
            "{who:?}: {r}{err}"
        );
        assert!(!w.ws.join("ran").exists(), "{who:?}: it ran");

        write(&format!("\"{}\"", s.agent.display()));
        let script = format!("touch ran; {}", probe(&s));
        let (r, err) = run(&w, &s, &["-s", "a", "--", &script]);
        if r.is_null() {
            // This kernel's Landlock cannot refuse the other sockets by
            // path: the key is refused aloud, and nothing ran.
            assert!(
                err.contains("unix_sockets needs Landlock ABI 9"),
                "{who:?}: {err}"
            );
            assert!(!w.ws.join("ran").exists(), "{who:?}: it ran");
            eprintln!("this kernel lacks Landlock ABI 9: unix_sockets is refused, as it must be");
            continue;
        }
        let text = output(&r);
        // The agent, by its path: reached. The bus, by path or abstract
        // name: still refused.
        assert!(text.contains("agent has no identities"), "{who:?}: {r}");
        for says in ["agent=1", "bus=1", "abstract=1"] {
            assert!(text.contains(says), "{who:?}: {says}: {r}");
        }
        let e = &r["confinement"]["enforced"];
        assert_eq!(e["unix_sockets"], serde_json::json!([s.agent]), "{r}");
        assert_eq!(
            r["confinement"]["unix_sockets"],
            serde_json::json!([s.agent])
        );
    }
}
