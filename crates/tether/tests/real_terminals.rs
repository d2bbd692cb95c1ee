//! The way out and the person's rows in real terminal emulators: kitty and
//! xterm under Xvfb, keys typed into their windows with xdotool (XTEST,
//! as a keyboard types them), against real sshd and a real daemon.
//!
//! - With Kitty keyboard flags 15 on (kitty) or modifyOtherKeys 2 (xterm),
//!   Return `~` `.` leaves `tether ssh` (255) and detaches `tether attach`
//!   (0), and neither `~` nor `.` reaches the program.
//! - kitty 0.26 answers DECRQM `?47` with 0 and homes the cursor on
//!   `47h`/`47l`: after `seq 1 6`, `tether ssh -t web01 'printf Z'` leaves
//!   rows 1 to 6 as they were.
//!
//! Each test skips with its reason when Xvfb, xdotool or the emulator is
//! missing or cannot open a window.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::io::{BufRead, BufReader};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::remote::{Remote, start};
use common::{Daemon, TETHER, wait_for};
use tether_testkit::Scratch;

/// `program` on PATH.
fn installed(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(program).is_file()))
}

/// An X server of our own, stopped when dropped.
struct Display {
    xvfb: Child,
    name: String,
}

impl Drop for Display {
    fn drop(&mut self) {
        let _ = self.xvfb.kill();
        let _ = self.xvfb.wait();
    }
}

/// Xvfb on a free display, or why not.
fn display(emulator: &str) -> Result<Display, String> {
    for program in ["Xvfb", "xdotool", emulator] {
        if !installed(program) {
            return Err(format!(
                "{program} is not installed (apt-get install kitty xterm xvfb xdotool)"
            ));
        }
    }
    let mut xvfb = Command::new("Xvfb")
        .args([
            "-displayfd",
            "1",
            "-screen",
            "0",
            "1024x768x24",
            "-nolisten",
            "tcp",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("Xvfb does not start: {e}"))?;
    let mut line = String::new();
    let read = BufReader::new(xvfb.stdout.take().unwrap()).read_line(&mut line);
    match (read, line.trim().parse::<u32>()) {
        (Ok(_), Ok(n)) => Ok(Display {
            xvfb,
            name: format!(":{n}"),
        }),
        _ => {
            let _ = xvfb.kill();
            let _ = xvfb.wait();
            Err("Xvfb named no display".into())
        }
    }
}

/// A terminal emulator's window running `sh SCRIPT`, closed when dropped.
struct Window<'a> {
    child: Child,
    id: String,
    display: &'a Display,
    /// kitty's remote-control socket.
    socket: PathBuf,
}

impl Drop for Window<'_> {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn xdotool(d: &Display, args: &[&str]) -> Option<String> {
    let out = Command::new("xdotool")
        .args(args)
        .env("DISPLAY", &d.name)
        .stderr(Stdio::null())
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Opens `emulator` (kitty or xterm) on `d` running `sh script` with
/// `env`; `Err` says why it could not.
fn open<'a>(
    d: &'a Display,
    emulator: &str,
    script: &Path,
    env: &[(&str, String)],
    dir: &Path,
) -> Result<Window<'a>, String> {
    let socket = dir.join("kitty.sock");
    let script = script.display().to_string();
    let mut cmd = Command::new(emulator);
    match emulator {
        "kitty" => cmd.args([
            "--config",
            "NONE",
            "-o",
            "allow_remote_control=yes",
            "--listen-on",
            &format!("unix:{}", socket.display()),
            "sh",
            &script,
        ]),
        _ => cmd.args(["-geometry", "80x24", "-e", "sh", &script]),
    };
    cmd.env("DISPLAY", &d.name)
        .env_remove("TERM")
        .env_remove("SSH_AUTH_SOCK")
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(
            std::fs::File::create(dir.join(format!("{emulator}.log")))
                .map_or_else(|_| Stdio::null(), Stdio::from),
        );
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("{emulator} does not start: {e}"))?;
    let pid = child.id().to_string();
    let deadline = Instant::now() + Duration::from_secs(30);
    let id = loop {
        if let Some(id) = xdotool(d, &["search", "--onlyvisible", "--pid", &pid])
            .and_then(|o| o.lines().next().map(str::to_owned))
        {
            break id;
        }
        if Instant::now() > deadline || child.try_wait().ok().flatten().is_some() {
            let _ = child.kill();
            let _ = child.wait();
            let log =
                std::fs::read_to_string(dir.join(format!("{emulator}.log"))).unwrap_or_default();
            return Err(format!(
                "{emulator} opened no window under Xvfb: {}",
                log.trim()
            ));
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    Ok(Window {
        child,
        id,
        display: d,
        socket,
    })
}

impl Window<'_> {
    /// Types `keys` (X keysym names) into the window, as a keyboard does.
    fn keys(&self, keys: &[&str]) {
        let d = self.display;
        xdotool(d, &["mousemove", "--window", &self.id, "20", "20"]).unwrap();
        xdotool(d, &["windowfocus", "--sync", &self.id]).unwrap();
        let mut args = vec!["key", "--delay", "30"];
        args.extend_from_slice(keys);
        xdotool(d, &args).unwrap();
    }

    /// kitty's screen, as text.
    fn text(&self) -> String {
        let out = Command::new("kitty")
            .args(["@", "--to", &format!("unix:{}", self.socket.display())])
            .arg("get-text")
            .env("DISPLAY", &self.display.name)
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }
}

/// A directory every user may write (the remote user writes there).
fn shared_dir(what: &str) -> Scratch {
    let dir = Scratch::new(what);
    std::fs::set_permissions(&dir.0, std::fs::Permissions::from_mode(0o777)).unwrap();
    dir
}

/// The encoding each emulator is put in, a key it then sends otherwise
/// than before (kitty: `!`; xterm: Ctrl-A), and how.
struct Enhanced {
    on: &'static str,
    probe: &'static str,
    sent: &'static [u8],
}

fn enhanced(emulator: &str) -> Enhanced {
    match emulator {
        "kitty" => Enhanced {
            on: r"\033[>15u",
            probe: "shift+1",
            sent: b"\x1b[49:33;2u",
        },
        _ => Enhanced {
            on: r"\033[>4;2m",
            probe: "ctrl+a",
            sent: b"\x1b[27;5;97~",
        },
    }
}

fn contains(bytes: &[u8], what: &[u8]) -> bool {
    bytes.windows(what.len()).any(|w| w == what)
}

/// Presses the probe key until the program writing `got` shows it in the
/// enhanced encoding (the terminal then has it on), then Return `~` `.`;
/// returns what the program got after that.
fn leave(w: &Window, got: &Path, e: &Enhanced) -> Vec<u8> {
    let deadline = Instant::now() + Duration::from_secs(30);
    let seen = loop {
        w.keys(&[e.probe]);
        let bytes = std::fs::read(got).unwrap_or_default();
        if let Some(at) = bytes.windows(e.sent.len()).rposition(|x| x == e.sent) {
            break at + e.sent.len();
        }
        assert!(
            Instant::now() < deadline,
            "the terminal never sent {} as {}: the program got {}",
            e.probe,
            e.sent.escape_ascii(),
            bytes.escape_ascii()
        );
    };
    w.keys(&["Return", "shift+grave", "period"]);
    let bytes = std::fs::read(got).unwrap_or_default();
    bytes[seen.min(bytes.len())..].to_vec()
}

/// What the script wrote as its exit code line.
fn exit_line(rc: &Path) -> String {
    wait_for(30, "tether to exit in the terminal", || {
        std::fs::read_to_string(rc)
            .ok()
            .filter(|s| s.ends_with('\n'))
    })
}

/// Neither `~` nor `.` in any encoding among what the program got.
fn assert_no_escape_keys(after: &[u8], emulator: &str) {
    for key in [&b"~"[..], b".", b"126", b"[46"] {
        assert!(
            !contains(after, key),
            "{emulator}: the program got {} of the escape: {}",
            key.escape_ascii(),
            after.escape_ascii()
        );
    }
}

fn ssh_way_out(emulator: &str) {
    let d = match display(emulator) {
        Ok(d) => d,
        Err(why) => return eprintln!("SKIPPED: {why}"),
    };
    let Some(r) = start(&format!("real-{emulator}-ssh")) else {
        return;
    };
    let dir = shared_dir("real-ssh");
    let e = enhanced(emulator);
    let on = e.on;
    let got = dir.0.join("got");
    let remote = dir.0.join("remote.sh");
    // Raw, the mode on, and DA1's answer read: the terminal has the mode
    // once its answer comes.
    std::fs::write(
        &remote,
        format!(
            "stty raw -echo; printf '\\033[?1049h{on}\\033[c'\nuntil [ \"$(dd bs=1 count=1 2>/dev/null)\" = c ]; do :; done\nexec cat > {}\n",
            got.display()
        ),
    )
    .unwrap();
    let rc = dir.0.join("rc");
    let script = dir.0.join("person.sh");
    std::fs::write(
        &script,
        format!(
            "{TETHER} ssh -t web01 'sh {}'\necho \"rc=$?\" > {}\nexec cat\n",
            remote.display(),
            rc.display()
        ),
    )
    .unwrap();
    let env = tether_env(&r.daemon, Some(&r));
    let w = match open(&d, emulator, &script, &env, &dir.0) {
        Ok(w) => w,
        Err(why) => return eprintln!("SKIPPED: {why}"),
    };
    let after = leave(&w, &got, &e);
    assert_eq!(exit_line(&rc), "rc=255\n", "{emulator}");
    assert_no_escape_keys(&after, emulator);
}

/// TETHER_DIR and PATH for `d`, and HOME (its ssh_config) for `r`.
fn tether_env(d: &Daemon, r: Option<&Remote>) -> Vec<(&'static str, String)> {
    let spec = common::spawn_spec(TETHER, &[], d, &[]);
    let mut env: Vec<(&'static str, String)> = spec
        .env
        .into_iter()
        .filter_map(|(k, v)| match k.as_str() {
            "TETHER_DIR" => Some(("TETHER_DIR", v)),
            "PATH" => Some(("PATH", v)),
            _ => None,
        })
        .collect();
    if let Some(r) = r {
        env.push(("HOME", r.home.0.display().to_string()));
    }
    env
}

fn attach_way_out(emulator: &str) {
    let disp = match display(emulator) {
        Ok(d) => d,
        Err(why) => return eprintln!("SKIPPED: {why}"),
    };
    let d = Daemon::new(&format!("real-{emulator}-attach"));
    let out = d.run(&["run", "-s", "s", "--norc", "--", "echo up"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let dir = shared_dir("real-attach");
    let e = enhanced(emulator);
    let on = e.on;
    let got = dir.0.join("got");
    let program = dir.0.join("program.sh");
    std::fs::write(
        &program,
        format!(
            "stty raw -echo; printf '{on}'; exec cat > {}\n",
            got.display()
        ),
    )
    .unwrap();
    let rc = dir.0.join("rc");
    let script = dir.0.join("person.sh");
    std::fs::write(
        &script,
        format!(
            "{TETHER} attach s\necho \"rc=$?\" > {}\nexec cat\n",
            rc.display()
        ),
    )
    .unwrap();
    let w = match open(&disp, emulator, &script, &tether_env(&d, None), &dir.0) {
        Ok(w) => w,
        Err(why) => return eprintln!("SKIPPED: {why}"),
    };
    wait_for(30, "the attachment", || {
        let ls = d.stdout(&["ls", "--json"]);
        ls.contains("\"attached\": 1").then_some(())
    });
    let line = format!("sh {}", program.display());
    let sent = d.run(&["send", "-s", "s", "--wait", "0", &line, "-k", "Enter"]);
    assert!(sent.status.code().is_some(), "{sent:?}");
    let after = leave(&w, &got, &e);
    assert_eq!(exit_line(&rc), "rc=0\n", "{emulator}");
    assert_no_escape_keys(&after, emulator);
}

#[test]
fn kitty_with_kitty_keyboard_flags_leaves_tether_ssh_with_tilde_dot() {
    ssh_way_out("kitty");
}

#[test]
fn xterm_with_modify_other_keys_leaves_tether_ssh_with_tilde_dot() {
    ssh_way_out("xterm");
}

#[test]
fn kitty_with_kitty_keyboard_flags_detaches_tether_attach_with_tilde_dot() {
    attach_way_out("kitty");
}

#[test]
fn xterm_with_modify_other_keys_detaches_tether_attach_with_tilde_dot() {
    attach_way_out("xterm");
}

/// The issue's repro through tether: kitty lacks mode 47 and homes the
/// cursor on it, so a mode-47 step put the remote's output (or tether's
/// farewell) on row 1. After `seq 1 6`: the remote program exits, or the
/// person leaves with `~.`; rows 1 to 6 stay, what follows is below.
#[test]
fn kitty_keeps_the_persons_rows() {
    let d = match display("kitty") {
        Ok(d) => d,
        Err(why) => return eprintln!("SKIPPED: {why}"),
    };
    let Some(r) = start("real-kitty-rows") else {
        return;
    };
    for (remote, leave, code, last) in [
        ("printf Z", false, 0, "Z"),
        (
            "printf Z; exec cat",
            true,
            255,
            "Connection to web01 closed.",
        ),
    ] {
        let dir = shared_dir("real-rows");
        let rc = dir.0.join("rc");
        let script = dir.0.join("person.sh");
        std::fs::write(
            &script,
            format!(
                "clear; seq 1 6; {TETHER} ssh -t web01 '{remote}'\necho \"rc=$?\" > {}\nexec cat\n",
                rc.display()
            ),
        )
        .unwrap();
        let env = tether_env(&r.daemon, Some(&r));
        let w = match open(&d, "kitty", &script, &env, &dir.0) {
            Ok(w) => w,
            Err(why) => return eprintln!("SKIPPED: {why}"),
        };
        if leave {
            wait_for(30, "the remote's Z", || {
                w.text().contains('Z').then_some(())
            });
            w.keys(&["Return", "shift+grave", "period"]);
        }
        assert_eq!(exit_line(&rc), format!("rc={code}\n"), "{remote}");
        let text = wait_for(30, "kitty's screen", || {
            let t = w.text();
            t.contains(last).then_some(t)
        });
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines.get(..6),
            Some(&["1", "2", "3", "4", "5", "6"][..]),
            "{remote}: the person's rows: {text:?}"
        );
        assert!(
            lines[6..].iter().any(|l| l.starts_with('Z')),
            "{remote}: {text:?}"
        );
    }
}
