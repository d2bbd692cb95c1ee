//! The doors out of a confined session (issue 36): sockets of the user's
//! that would run a command outside the fence (another tether daemon's, a
//! tmux server's, an SSH agent's, a D-Bus bus, an abstract socket), the
//! user's other terminals, and vsock. Each is tried from an unconfined session first (where it
//! works, so the test can fail), then from a confined one (refused). As
//! root and as the unprivileged test user.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
mod fenced;

use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixListener;
use std::path::Path;
use std::process::Command;

use fenced::{World, bwrap_missing, everyone, output};

/// Runs `f` when dropped (the servers a test started, even when it fails).
struct Cleanup<F: FnMut()>(F);

impl<F: FnMut()> Drop for Cleanup<F> {
    fn drop(&mut self) {
        (self.0)()
    }
}

/// A listener at `path` anyone may connect to (the test user too).
fn listen(path: &Path) -> UnixListener {
    let l = UnixListener::bind(path).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o777)).unwrap();
    l.set_nonblocking(true).unwrap();
    l
}

/// How many connections `l` has waiting (taking them).
fn reached(l: &UnixListener) -> usize {
    std::iter::from_fn(|| l.accept().ok()).count()
}

#[test]
fn no_socket_and_no_terminal_outside_the_session_is_reached() {
    if bwrap_missing() {
        return;
    }
    if Command::new("tmux").arg("-V").output().is_err() {
        eprintln!("SKIPPED: tmux is not installed (scripts/test installs it)");
        return;
    }
    for who in everyone() {
        let w = World::new(who);
        let out = w.out.display().to_string();
        let tether = w.bin.join("tether").display().to_string();
        // Another daemon of the user's, with a directory of its own.
        let other = w.s.0.join("other-tdir");
        let started = w
            .cmd(&w.bin.join("tether"), &["run", "-s", "o", "--", "true"])
            .env("TETHER_DIR", &other)
            .output()
            .unwrap();
        assert!(started.status.success(), "{who:?}: {started:?}");
        // A tmux server of the user's, its pane a terminal of the user's.
        let sock = w.s.0.join("tmux.sock").display().to_string();
        let tmux = |args: &[&str]| {
            let mut a = vec!["-S", sock.as_str()];
            a.extend_from_slice(args);
            w.cmd(Path::new("tmux"), &a).output().unwrap()
        };
        let made = tmux(&["new-session", "-d", "-x", "80", "-y", "24", "cat"]);
        assert!(made.status.success(), "{who:?}: {made:?}");
        let _servers = Cleanup(|| {
            tmux(&["kill-server"]);
            let _ = w
                .cmd(&w.bin.join("tether"), &["daemon", "stop"])
                .env("TETHER_DIR", &other)
                .output();
        });
        let pane = String::from_utf8_lossy(&tmux(&["display", "-p", "#{pane_tty}"]).stdout)
            .trim()
            .to_owned();
        assert!(pane.starts_with("/dev/pts/"), "{who:?}: {pane}");
        // An agent, a bus and an abstract socket, listening outside.
        let (agent, bus) = (w.s.0.join("agent.sock"), w.s.0.join("bus.sock"));
        let (agent_l, bus_l) = (listen(&agent), listen(&bus));
        let abstract_name = format!("tether-doors-{}", std::process::id());
        let abstract_l = {
            use std::os::linux::net::SocketAddrExt;
            let a = std::os::unix::net::SocketAddr::from_abstract_name(&abstract_name).unwrap();
            let l = UnixListener::bind_addr(&a).unwrap();
            l.set_nonblocking(true).unwrap();
            l
        };
        let probe = w.s.0.join("probe.py");
        std::fs::write(
            &probe,
            format!(
                r#"import socket
for name, addr in [("agent", "{}"), ("bus", "{}"), ("abstract", "\0{abstract_name}")]:
    try:
        s = socket.socket(socket.AF_UNIX)
        s.connect(addr)
        print("reached", name)
    except OSError as e:
        print("refused", name, e)
try:
    socket.socket(socket.AF_VSOCK, socket.SOCK_STREAM)
    print("made vsock")
except OSError as e:
    print("refused vsock", e)
"#,
                agent.display(),
                bus.display()
            ),
        )
        .unwrap();
        std::fs::set_permissions(&probe, std::fs::Permissions::from_mode(0o644)).unwrap();
        let script = format!(
            "TETHER_DIR={other} {tether} run -s esc -- touch {out}/daemon >/dev/null 2>&1; \
             tmux -S {sock} run-shell 'touch {out}/tmux' 2>&1; \
             echo INJECT > {pane} && echo wrote-pane; \
             ls /dev/pts; \
             python3 {probe}",
            other = other.display(),
            probe = probe.display(),
        );

        // Unconfined, every door opens.
        let r = w.run(&["-s", "free", "--", &script]);
        let text = output(&r);
        for f in ["daemon", "tmux"] {
            assert!(w.out.join(f).exists(), "{who:?}: no {f}: {r}");
            std::fs::remove_file(w.out.join(f)).unwrap();
        }
        for says in [
            "wrote-pane",
            "reached agent",
            "reached bus",
            "reached abstract",
        ] {
            assert!(text.contains(says), "{who:?}: {says}: {r}");
        }
        assert!(reached(&agent_l) + reached(&bus_l) + reached(&abstract_l) >= 3);

        // Confined, none does.
        let r = w.run(&["-s", "c", "--confine", "workspace", "--", &script]);
        let text = output(&r);
        for f in ["daemon", "tmux"] {
            assert!(!w.out.join(f).exists(), "{who:?}: {f} was touched: {r}");
        }
        for says in [
            "refused agent",
            "refused bus",
            "refused abstract",
            "refused vsock",
        ] {
            assert!(text.contains(says), "{who:?}: {says}: {r}");
        }
        assert!(!text.contains("wrote-pane"), "{who:?}: {r}");
        // Only its own devpts: no terminal of the host's is listed.
        let pane_n = pane.trim_start_matches("/dev/pts/");
        let listed: Vec<&str> = text
            .lines()
            .filter(|l| l.chars().all(|c| c.is_ascii_digit()) && !l.is_empty())
            .collect();
        assert!(!listed.contains(&pane_n), "{who:?}: {r}");
        assert_eq!(
            (reached(&agent_l), reached(&bus_l), reached(&abstract_l)),
            (0, 0, 0),
            "{who:?}: a socket outside was reached: {r}"
        );
        // The session's own terminal still works as its terminal.
        let r = w.run(&[
            "-s",
            "c",
            "--",
            "test -t 0 && echo is-a-tty; echo to-tty > /dev/tty && echo ctty-ok",
        ]);
        assert!(output(&r).contains("is-a-tty"), "{who:?}: {r}");
        assert!(output(&r).contains("ctty-ok"), "{who:?}: {r}");
        let pane_text = String::from_utf8_lossy(&tmux(&["capture-pane", "-p"]).stdout).into_owned();
        assert_eq!(
            pane_text.matches("INJECT").count(),
            1,
            "{who:?}: only the unconfined write: {pane_text}"
        );
    }
}
