//! The local PTY transport against real programs.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use common::*;
use tether_transport::{ExitInfo, Signal, TermSize, Terminal, TransportError};

#[tokio::test]
async fn output_exit_code_and_end_of_stream() {
    let (pty, mut out) = spawn("sh", &["-c", "printf 'hello\\n'; exit 3"]);
    let all = read_to_end(&mut out).await;
    assert_eq!(all, b"hello\r\n");
    let mut exit = pty.exit();
    let info = *exit.wait_for(|e| e.is_some()).await.unwrap();
    assert_eq!(info, Some(ExitInfo::Code(3)));
    assert!(pty.inspect().unwrap().top.is_none());
}

#[tokio::test]
async fn child_is_session_leader_with_the_pty_as_controlling_terminal() {
    let (pty, mut out) = spawn("sh", &["-c", "ps -o pid=,sid=,tty= -p $$; tty"]);
    let text = String::from_utf8(read_to_end(&mut out).await).unwrap();
    let pid = pty.pid().to_string();
    let pts = pty.pts_path().display().to_string();
    let fields: Vec<&str> = text.split_whitespace().collect();
    assert_eq!(fields[0], pid, "{text}");
    assert_eq!(fields[1], pid, "session id is its own pid: {text}");
    assert_eq!(format!("/dev/{}", fields[2]), pts, "{text}");
    assert_eq!(fields[3], pts, "{text}");
}

#[tokio::test]
async fn iutf8_is_set_and_echo_and_opost_follow_the_spec() {
    let (_pty, mut out) = spawn("stty", &["-a"]);
    let text = String::from_utf8(read_to_end(&mut out).await).unwrap();
    assert!(text.split_whitespace().any(|w| w == "iutf8"), "{text}");
    assert!(text.split_whitespace().any(|w| w == "echo"), "{text}");
    let mut s = spec("stty", &["-a"]);
    s.echo = false;
    s.output_processing = false;
    let pty = tether_pty::LocalPty::spawn(&s).unwrap();
    let text = String::from_utf8(read_to_end(&mut pty.take_output().unwrap()).await).unwrap();
    for flag in ["-echo", "-opost", "iutf8"] {
        assert!(
            text.split_whitespace().any(|w| w == flag),
            "{flag} in {text}"
        );
    }
}

#[tokio::test]
async fn writes_arrive_in_order_and_resize_is_seen() {
    let (pty, mut out) = spawn("sh", &["-c", "read a; read b; echo \"[$a|$b]\"; stty size"]);
    pty.write(b"one\n".to_vec()).unwrap();
    pty.write(b"two\n".to_vec()).unwrap();
    let mut seen = Vec::new();
    read_until(&mut out, &mut seen, "[one|two]").await;
    drop(pty);
    let (pty, mut out) = spawn("sh", &["-c", "read go; stty size"]);
    pty.resize(TermSize {
        rows: 40,
        cols: 100,
    })
    .unwrap();
    pty.write(b"\n".to_vec()).unwrap();
    let mut seen = Vec::new();
    read_until(&mut out, &mut seen, "40 100").await;
}

#[tokio::test]
async fn inspector_sees_a_program_blocked_reading_the_terminal() {
    let (pty, _out) = spawn("cat", &[]);
    let i = inspect_until(&pty, "cat reading", |i| {
        i.foreground.as_ref().is_some_and(|f| f.reading_terminal)
    });
    let fg = i.foreground.unwrap();
    assert_eq!(fg.pgid, pty.pid());
    assert!(fg.is_top);
    assert_eq!(fg.process.unwrap().command, "cat");
    assert_eq!(i.top.unwrap().command, "cat");
}

#[tokio::test]
async fn inspector_sees_a_sleeping_program_is_not_reading() {
    let (pty, _out) = spawn("sh", &["-c", "exec sleep 30"]);
    let i = inspect_until(&pty, "sleep", |i| {
        i.top.as_ref().is_some_and(|t| t.command == "sleep")
    });
    assert!(!i.foreground.unwrap().reading_terminal);
}

#[tokio::test]
async fn inspector_sees_select_and_poll_readers() {
    // python3 -q waits for input through select() or poll() in readline.
    let (pty, mut out) = spawn("python3", &["-q"]);
    let mut seen = Vec::new();
    read_until(&mut out, &mut seen, ">>> ").await;
    inspect_until(&pty, "python3 reading", |i| {
        i.foreground.as_ref().is_some_and(|f| f.reading_terminal)
    });
    // A script polling stdin explicitly.
    let code = "import select,sys; select.select([sys.stdin],[],[]); print('ok')";
    let (pty, _out) = spawn("python3", &["-c", code]);
    inspect_until(&pty, "select() on stdin", |i| {
        i.foreground.as_ref().is_some_and(|f| f.reading_terminal)
    });
    let code =
        "import select,sys; p=select.poll(); p.register(0, select.POLLIN); p.poll(); print('ok')";
    let (pty, _out) = spawn("python3", &["-c", code]);
    inspect_until(&pty, "poll() on stdin", |i| {
        i.foreground.as_ref().is_some_and(|f| f.reading_terminal)
    });
}

#[tokio::test]
async fn signals_go_to_the_verified_foreground_group() {
    let (pty, mut out) = spawn("bash", &["--norc", "--noprofile", "-i"]);
    pty.write(b"sleep 30 | cat\n".to_vec()).unwrap();
    // The group's leader is bash's fork until it has exec'd sleep.
    let i = inspect_until(&pty, "the pipeline in the foreground", |i| {
        i.foreground
            .as_ref()
            .is_some_and(|f| !f.is_top && f.process.as_ref().is_some_and(|p| p.command == "sleep"))
    });
    let fg = i.foreground.unwrap();
    assert_eq!(fg.process.as_ref().unwrap().command, "sleep");
    // A stale expectation is refused, nothing is signalled.
    let mut stale = fg.clone();
    stale.process.as_mut().unwrap().start_time += 1;
    assert!(matches!(
        pty.signal_foreground(Signal::Int, Some(&stale)),
        Err(TransportError::ForegroundChanged)
    ));
    assert_eq!(
        pty.signal_foreground(Signal::Int, Some(&fg)).unwrap(),
        fg.pgid
    );
    inspect_until(&pty, "the shell back in the foreground", |i| {
        i.foreground.as_ref().is_some_and(|f| f.is_top)
    });
    // Interactive bash abandons the rest of a list whose job died of SIGINT,
    // so ask for the status as a new command.
    pty.write(b"echo \"after:$?\"\n".to_vec()).unwrap();
    let mut seen = Vec::new();
    read_until(&mut out, &mut seen, "after:130").await;
}

/// A sleep duration no other test run uses (`301.<our pid>`).
fn unique(secs: &str) -> String {
    format!("{secs}.{}", std::process::id())
}

/// Waits until one `sleep` per argument runs (a background job may still be
/// a forked shell when its parent prints the next line).
fn wait_for_sleeps(args: &[&str]) -> Vec<tether_pty::procfs::Stat> {
    let start = std::time::Instant::now();
    loop {
        let found: Vec<_> = tether_pty::procfs::all_processes()
            .into_iter()
            .filter(|s| s.comm == "sleep")
            .filter(|s| {
                let cmdline = std::fs::read(format!("/proc/{}/cmdline", s.pid)).unwrap_or_default();
                args.iter()
                    .any(|a| cmdline.ends_with(format!("{a}\0").as_bytes()))
            })
            .collect();
        if found.len() == args.len() {
            return found;
        }
        assert!(
            start.elapsed() < DEADLINE,
            "sleeps {args:?} never all ran: {found:?}"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// A launcher (bubblewrap) that leads the terminal's session hangs the
/// terminal up as it exits, which ends the shell in the middle of its exit
/// trap: its child is asked to end first, and the launcher after.
#[tokio::test]
async fn kill_asks_a_launchers_child_to_end_before_the_launcher() {
    let dir = std::env::temp_dir().join(format!("tether-pty-launcher-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir(&dir).unwrap();
    let (log, ready) = (dir.join("log"), dir.join("ready"));
    // The child's trap does some work before it writes; the launcher's
    // runs at once if it is asked.
    let child = format!(
        "trap 'i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done; echo child >> {log}; exit 0' HUP; trap '' TERM; \
         echo > {ready}; while :; do sleep 1; done",
        log = log.display(),
        ready = ready.display()
    );
    let launcher = format!(
        "trap 'echo launcher >> {log}; exit 0' HUP; trap '' TERM; sh -c \"$1\" & wait; wait",
        log = log.display()
    );
    let mut s = spec("sh", &["-c", &launcher, "launcher", &child]);
    s.launcher = true;
    let pty = tether_pty::LocalPty::spawn(&s).unwrap();
    let _out = pty.take_output().unwrap();
    let start = std::time::Instant::now();
    while !ready.exists() {
        assert!(start.elapsed() < DEADLINE, "the child never started");
        std::thread::sleep(Duration::from_millis(5));
    }
    pty.kill(Duration::from_millis(2000)).unwrap();
    let mut exit = pty.exit();
    exit.wait_for(|e| e.is_some()).await.unwrap();
    // (The launcher ends by itself once its child has: it may not be asked.)
    let log = std::fs::read_to_string(&log).unwrap();
    assert_eq!(log.lines().next(), Some("child"), "{log}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn kill_ends_the_whole_tree_with_no_orphans() {
    let (pty, mut out) = spawn("bash", &["--norc", "--noprofile", "-i"]);
    let (a, b) = (unique("301"), unique("302"));
    let line = format!("sleep {a} & (setsid sleep {b} &) ; trap '' HUP TERM; echo started\n");
    pty.write(line.into_bytes()).unwrap();
    let mut seen = Vec::new();
    read_until(&mut out, &mut seen, "started\r\n").await;
    let tree = wait_for_sleeps(&[&a, &b]);
    assert_eq!(tree.len(), 2, "both sleeps started: {tree:?}");
    let shell = tether_pty::inspect::process_info(pty.pid()).unwrap();
    pty.kill(Duration::from_millis(300)).unwrap();
    for s in &tree {
        wait_gone(s.pid, s.start_time);
    }
    wait_gone(shell.pid, shell.start_time);
    let mut exit = pty.exit();
    exit.wait_for(|e| e.is_some()).await.unwrap();
}

#[tokio::test]
async fn dropping_the_pty_ends_its_tree() {
    let (pty, mut out) = spawn("bash", &["--norc", "--noprofile", "-i"]);
    let a = unique("303");
    pty.write(format!("sleep {a} & echo started\n").into_bytes())
        .unwrap();
    let mut seen = Vec::new();
    read_until(&mut out, &mut seen, "started\r\n").await;
    let sleeper = wait_for_sleeps(&[&a]).remove(0);
    drop(pty);
    wait_gone(sleeper.pid, sleeper.start_time);
}

#[tokio::test]
async fn missing_program_is_a_clear_error() {
    let err = tether_pty::LocalPty::spawn(&spec("/nonexistent/shell", &[])).unwrap_err();
    let text = err.to_string();
    assert!(
        text.starts_with("could not start /nonexistent/shell:"),
        "{text}"
    );
}

/// The modes a program leaves behind are put back by `restore_modes`, and
/// the host's `stty` with `LineModes::stty_args` sets exactly the same
/// termios as the transport does (one description, two renderings).
#[tokio::test]
async fn restore_modes_undoes_raw_mode_and_agrees_with_stty() {
    use tether_transport::{LineModes, ModesRestored};
    let modes = LineModes::default();
    let (pty, mut out) = spawn("sh", &["-c", "stty raw echo opost; echo left; read x"]);
    read_until(&mut out, &mut Vec::new(), "left").await;
    assert_eq!(pty.restore_modes(modes).unwrap(), ModesRestored::Restored);
    assert_eq!(pty.restore_modes(modes).unwrap(), ModesRestored::Unchanged);
    drop(pty);

    let args = modes.stty_args(true).join(" ").replace('\\', "\\\\");
    let script = format!("stty raw echo opost intr ^A; stty {args}; echo set; read x");
    let (pty, mut out) = spawn("sh", &["-c", &script]);
    read_until(&mut out, &mut Vec::new(), "set").await;
    assert_eq!(pty.restore_modes(modes).unwrap(), ModesRestored::Unchanged);
}

#[tokio::test]
async fn a_working_directory_that_cannot_be_entered_is_named_as_that() {
    let mut s = spec("/bin/sh", &[]);
    s.cwd = Some("/nonexistent/dir".into());
    let err = tether_pty::LocalPty::spawn(&s).unwrap_err();
    assert!(
        matches!(&err, tether_transport::TransportError::Cwd { path, .. } if path == std::path::Path::new("/nonexistent/dir")),
        "{err}"
    );
    let text = err.to_string();
    assert!(
        text.contains("cannot enter the working directory /nonexistent/dir")
            && !text.contains("PATH"),
        "{text}"
    );
}

/// Ending a tree never ends another program of ours that happens to hold
/// its terminal: a child of this process caught between fork and exec
/// holds every descriptor this process had open at the fork, and an
/// inspection opens the slave for a moment (seen killing other sessions'
/// programs when sessions start and end side by side).
#[tokio::test]
async fn ending_a_tree_spares_another_child_of_ours_holding_its_terminal() {
    let (pty, mut out) = spawn("sh", &["-c", "echo ready; exec sleep 30"]);
    read_until(&mut out, &mut Vec::new(), "ready").await;
    let pts = std::fs::OpenOptions::new()
        .read(true)
        .open(pty.pts_path())
        .unwrap();
    let mut bystander = std::process::Command::new("sleep")
        .arg(unique("304"))
        .stdin(pts)
        .spawn()
        .unwrap();
    let root = tether_pty::inspect::process_info(pty.pid()).unwrap();
    pty.kill(Duration::from_millis(300)).unwrap();
    wait_gone(root.pid, root.start_time);
    assert!(
        bystander.try_wait().unwrap().is_none(),
        "the other child of ours was ended with the tree"
    );
    bystander.kill().unwrap();
    bystander.wait().unwrap();
}

/// Ending a tree whose top program was reaped long ago never ends a later
/// process given the same pid. The pid is reused on purpose (root writes
/// `ns_last_pid`); elsewhere the test skips, saying so.
#[tokio::test]
async fn ending_a_tree_spares_a_later_process_with_the_roots_pid() {
    if !rustix::process::geteuid().is_root() {
        eprintln!("skipped: reusing a pid on purpose needs root (ns_last_pid)");
        return;
    }
    let (pty, mut out) = spawn("sh", &["-c", "echo ready; read x"]);
    read_until(&mut out, &mut Vec::new(), "ready").await;
    let root = pty.pid();
    let root_start = tether_pty::procfs::stat(root).unwrap().start_time;
    pty.write(b"\n".to_vec()).unwrap();
    let mut exit = pty.exit();
    exit.wait_for(|e| e.is_some()).await.unwrap();
    // Other processes may take the pid first, and a process started in
    // the same clock tick is the same process as far as /proc can tell:
    // tries until a later one has the pid.
    let mut bystander = None;
    for _ in 0..200 {
        std::fs::write("/proc/sys/kernel/ns_last_pid", format!("{}", root - 1)).unwrap();
        let child = std::process::Command::new("sleep")
            .arg(unique("305"))
            .spawn();
        let Ok(mut child) = child else { continue };
        let later = tether_pty::procfs::stat(root).is_some_and(|s| s.start_time != root_start);
        if child.id() as i32 == root && later {
            bystander = Some(child);
            break;
        }
        child.kill().unwrap();
        child.wait().unwrap();
    }
    let Some(mut bystander) = bystander else {
        eprintln!("skipped: pid {root} was never handed out again a tick later in 200 tries");
        return;
    };
    pty.kill(Duration::from_millis(300)).unwrap();
    assert!(
        bystander.try_wait().unwrap().is_none(),
        "a later process with the root's pid was ended: {:?}",
        bystander.try_wait()
    );
    bystander.kill().unwrap();
    bystander.wait().unwrap();
}
