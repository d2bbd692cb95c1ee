//! A tether call in a test returns within a bound, or the test fails with
//! the evidence (the call, what the daemon logged, the processes), killed:
//! a hang is a failure that says where it is, never a run that goes on
//! until CI's clock ends it.

use std::io::Read;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// How long one call may take before it is taken for a hang: far past
/// any call a test makes (the longest wait a test asks for is a minute).
pub const CALL_BOUND: Duration = Duration::from_secs(240);

/// `cmd`'s output (stdin closed, as `Command::output` does), within
/// [`CALL_BOUND`]; `dir` is the daemon's directory, whose log a failure
/// shows.
pub fn output(cmd: &mut Command, dir: &Path) -> Output {
    let child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait(child, &format!("{cmd:?}"), dir)
}

/// `child`'s output once it exited and closed its pipes, within
/// [`CALL_BOUND`]; past it the child is killed and the test fails.
pub fn wait(mut child: Child, what: &str, dir: &Path) -> Output {
    let deadline = Instant::now() + CALL_BOUND;
    let stdout = drain(child.stdout.take());
    let stderr = drain(child.stderr.take());
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            hung(what, dir, "did not exit");
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let left = deadline.saturating_duration_since(Instant::now());
    let (Ok(stdout), Ok(stderr)) = (stdout.recv_timeout(left), stderr.recv_timeout(left)) else {
        hung(
            what,
            dir,
            "exited, but a process it started keeps its output open",
        );
    };
    Output {
        status,
        stdout,
        stderr,
    }
}

/// Everything `from` gives until its end, on a thread of its own.
fn drain(from: Option<impl Read + Send + 'static>) -> mpsc::Receiver<Vec<u8>> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut all = Vec::new();
        if let Some(mut from) = from {
            let _ = from.read_to_end(&mut all);
        }
        let _ = tx.send(all);
    });
    rx
}

/// Fails the test: `what` hung; the daemon's log and the processes say
/// where.
fn hung(what: &str, dir: &Path, how: &str) -> ! {
    let log = std::fs::read_to_string(dir.join("daemon.log")).unwrap_or_default();
    let tail: Vec<&str> = log.lines().rev().take(80).collect();
    let tail: Vec<&str> = tail.into_iter().rev().collect();
    let ps = Command::new("ps")
        .args(["-eo", "pid,ppid,stat,etime,wchan:20,args", "--forest"])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default();
    let ps: Vec<&str> = ps
        .lines()
        .filter(|l| l.contains("tether") || l.contains("sshd") || l.contains("PID"))
        .collect();
    panic!(
        "{what} {how} within {CALL_BOUND:?}\n--- daemon.log (last lines) ---\n{}\n--- processes ---\n{}",
        tail.join("\n"),
        ps.join("\n")
    );
}
