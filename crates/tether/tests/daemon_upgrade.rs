//! `tether daemon stop` after an upgrade: the daemon still running is an
//! older tether's, which refuses this one's hello (another protocol). It is
//! stopped anyway (SIGTERM to the process the kernel says listens on the
//! socket, as `kill` would), not left for the user to find and kill.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::io::{BufRead, BufReader};
use std::os::unix::fs::PermissionsExt;
use std::process::{Command, Stdio};

/// A daemon of another protocol: it answers every hello with a version
/// refusal, and ends on SIGTERM.
const OLD_DAEMON: &str = r#"
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.bind(sys.argv[1])
s.listen(8)
print("listening", flush=True)
while True:
    c, _ = s.accept()
    f = c.makefile("rwb")
    f.readline()
    f.write(b'{"error":{"kind":"version","message":"the running tether daemon speaks protocol 1"}}\n')
    f.flush()
    c.close()
"#;

/// The old daemon, killed if the test ends before it does.
struct Old(std::process::Child);

impl Drop for Old {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn daemon_stop_ends_an_older_tethers_daemon() {
    let d = common::Daemon::new("upgrade");
    std::fs::create_dir_all(&d.dir).unwrap();
    std::fs::set_permissions(&d.dir, std::fs::Permissions::from_mode(0o700)).unwrap();
    let mut old = Old(Command::new("python3")
        .args(["-c", OLD_DAEMON])
        .arg(d.dir.join("daemon.sock"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap());
    let mut ready = String::new();
    BufReader::new(old.0.stdout.take().unwrap())
        .read_line(&mut ready)
        .unwrap();
    assert_eq!(ready.trim(), "listening");
    // Any other call says what runs there.
    let out = d.run(&["ls"]);
    assert_eq!(out.status.code(), Some(255), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("protocol 1"),
        "{out:?}"
    );
    // `daemon stop` ends it.
    let out = d.run(&["daemon", "stop"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(
        err.contains(&format!(
            "another tether version (pid {}) stopped",
            old.0.id()
        )),
        "{err}"
    );
    let status = old.0.wait().unwrap();
    assert!(!status.success(), "ended by a signal: {status:?}");
    let _ = std::fs::remove_dir_all(&d.dir);
}
