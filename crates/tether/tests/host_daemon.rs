//! Sessions that live in the host's own tether (issue 26), against real
//! sshd: tether copies itself there and starts its daemon on first use;
//! the link is then cut for real — the sshd processes serving it killed
//! (both ends see it), or the host's veth set down in a network namespace
//! (packets stop, no FIN) — and the local daemon SIGKILLed. In each, the
//! command on the host runs to its end, `tether read` returns every line
//! once with the exit code, and the shell is the same one. Skips with a
//! message when sshd (or, for the veth, network namespaces) is missing.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::PathBuf;

use common::remote::{
    Remote, kill_connections_of, resume, start_deployed, start_netns, stop_connections_of,
};
use common::wait_for;
use tether_testkit::{Scratch, give_to_login_user};
use tether_transport::Terminal;

/// `tether ARGS` against `r`'s daemon, started in the background.
fn spawn(r: &Remote, args: &[&str]) -> std::process::Child {
    r.daemon
        .cmd(args)
        .env("HOME", &r.home.0)
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("SSH_AUTH_SOCK")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

/// A file the host's commands write to (the host is this machine, logged
/// into as the test user).
struct Ledger {
    _dir: Scratch,
    path: PathBuf,
}

impl Ledger {
    fn new() -> Ledger {
        let dir = Scratch::new("ledger");
        give_to_login_user(&dir.0).unwrap();
        let path = dir.0.join("ledger");
        Ledger { _dir: dir, path }
    }

    fn lines(&self) -> Vec<String> {
        std::fs::read_to_string(&self.path)
            .unwrap_or_default()
            .lines()
            .map(str::to_owned)
            .collect()
    }

    fn go(&self) -> PathBuf {
        self.path.with_file_name("go")
    }
}

/// `tether read -s NAME` until the command ends: its output joined, and
/// the last result.
fn read_to_end(r: &Remote, name: &str) -> (String, serde_json::Value) {
    let mut output = String::new();
    let end = wait_for(120, "the command's end", || {
        let (_, v) = r.json(&["read", "-s", name, "--wait", "5"]);
        output.push_str(v["output"].as_str().unwrap_or_default());
        (v["status"] != "running").then_some(v)
    });
    (output, end)
}

fn fifty() -> String {
    (1..=50).map(|i| format!("{i}\n")).collect()
}

/// The issue's drop: a 50-line loop on the host, its link cut by `cut`
/// once it has printed 4 lines, mended by `mend` once the call has said
/// so. The lost result carries the lines already received and says the
/// command started (issue 36: it said `command_started: false` with no
/// output); the reads after give the rest, every line once.
fn drop_under_a_call(r: &Remote, host: &str, cut: impl Fn(), mend: impl Fn()) {
    let ledger = Ledger::new();
    let (code, v) = r.json(&[
        "run",
        "-s",
        "d",
        "--host",
        host,
        "--",
        "echo $$; f() { echo fn; }; Y=7",
    ]);
    assert_eq!(code, 0, "{v}");
    assert!(v["agentless"].is_null(), "tether runs on the host: {v}");
    let pid = v["output"].as_str().unwrap().trim().to_owned();
    let command = format!(
        "for i in $(seq 1 50); do echo $i; echo $i >> '{}'; sleep 0.1; done",
        ledger.path.display()
    );
    let call = spawn(r, &["run", "-s", "d", "--json", "--", &command]);
    wait_for(60, "the loop's 4 lines on the host", || {
        (ledger.lines().len() >= 4).then_some(())
    });
    cut();
    let out = call.wait_with_output().unwrap();
    let v: serde_json::Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {out:?}"));
    assert_eq!(v["status"], "connection_lost", "{v}");
    assert_eq!(v["link"]["kept"], true, "{v}");
    assert_eq!(v["link"]["command_started"], true, "{v}");
    assert!(v["exit_code"].is_null() && v["signal"].is_null(), "{v}");
    assert_eq!(out.status.code(), Some(120), "{out:?}");
    // (The first lines came at least 0.2 s before the cut.)
    let lost = v["output"].as_str().unwrap().to_owned();
    assert!(lost.starts_with("1\n2\n3\n"), "the lines received: {v}");
    mend();
    wait_for(60, "the loop to finish on the host", || {
        (ledger.lines().len() == 50).then_some(())
    });
    let (output, end) = read_to_end(r, "d");
    assert_eq!(lost + &output, fifty(), "every line once: {end}");
    assert_eq!(
        (&end["status"], &end["exit_code"]),
        (&"exited".into(), &0.into())
    );
    let (code, v) = r.json(&["run", "-s", "d", "--", "echo $$; f; echo $Y"]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["output"], format!("{pid}\nfn\n7\n"), "the same shell");
}

#[test]
fn the_sshd_serving_the_link_killed_under_a_call_loses_nothing() {
    let Some(r) = start_deployed("hd-kill") else {
        return;
    };
    drop_under_a_call(&r, "web01", || kill_connections_of(&r.sshd[0]), || {});
}

/// A link that hangs: the sshd processes serving it SIGSTOPped (no FIN,
/// no answer), resumed once the call has said so.
#[test]
fn the_sshd_serving_the_link_stopped_under_a_call_loses_nothing() {
    let Some(r) = start_deployed("hd-stop") else {
        return;
    };
    let stopped = std::cell::RefCell::new(Vec::new());
    drop_under_a_call(
        &r,
        "web01",
        || *stopped.borrow_mut() = stop_connections_of(&r.sshd[0]),
        || resume(&stopped.borrow()),
    );
}

/// An ssh_config as people have one: the host reached through a
/// `ProxyCommand` under a `HostKeyAlias`; tether is deployed and its
/// daemon reached through that same connection, and a call cut by the
/// proxy's death (the link's only carrier) loses nothing.
#[test]
fn a_host_behind_a_proxy_command_and_host_key_alias_gets_tether() {
    if common::nc_missing() {
        return;
    }
    let Some(r) = start_deployed("hd-proxy") else {
        return;
    };
    let ssh = r.home.0.join(".ssh");
    let known = r.sshd[0].known_hosts_line();
    let (_, key) = known.split_once(' ').unwrap();
    std::fs::write(ssh.join("known_hosts"), format!("the-alias {key}")).unwrap();
    let log = ssh.join("proxy.log");
    let config = std::fs::read_to_string(ssh.join("config")).unwrap();
    let web01 = config.split("Host web02").next().unwrap();
    let proxied = web01.replace("Host web01", "Host proxied").replace(
        "  IdentityAgent none\n",
        &format!(
            "  IdentityAgent none\n  HostKeyAlias the-alias\n  ProxyCommand sh -c 'echo $$ >> {}; exec nc %h %p'\n",
            log.display()
        ),
    );
    std::fs::write(ssh.join("config"), proxied).unwrap();
    let proxies = || -> Vec<String> {
        std::fs::read_to_string(&log)
            .unwrap_or_default()
            .lines()
            .map(str::to_owned)
            .collect()
    };
    let (code, v) = r.json(&["run", "-s", "p", "--host", "proxied", "--", "echo up"]);
    assert_eq!((code, &v["output"]), (0, &"up\n".into()), "{v}");
    assert!(v["agentless"].is_null(), "tether runs on the host: {v}");
    assert!(!proxies().is_empty(), "through the proxy");
    drop_under_a_call(
        &r,
        "proxied",
        || {
            for pid in proxies() {
                // The proxy's shell exec'd nc: its pid is nc's.
                common::sigkill(pid.parse().unwrap());
            }
        },
        || {},
    );
}

#[test]
fn the_hosts_veth_set_down_under_a_call_loses_nothing() {
    let Some(r) = start_netns("hd-veth") else {
        return;
    };
    let ns = r.netns.as_ref().unwrap();
    drop_under_a_call(&r, "far01", || ns.down().unwrap(), || ns.up().unwrap());
}

/// The local daemon SIGKILLed during a remote command: the command runs
/// on, once; a new daemon (started by the next `tether read`) finds the
/// session on its host and returns the command's output and exit code.
#[test]
fn the_local_daemon_killed_under_a_call_loses_nothing() {
    let Some(r) = start_deployed("hd-crash") else {
        return;
    };
    let ledger = Ledger::new();
    let (code, v) = r.json(&["run", "-s", "c", "--host", "web01", "--", "true"]);
    assert_eq!(code, 0, "{v}");
    let command = format!(
        "echo start >> '{l}'; while [ ! -e '{go}' ]; do sleep 0.05; done; echo done >> '{l}'; echo out; exit_with() {{ return $1; }}; exit_with 3",
        l = ledger.path.display(),
        go = ledger.go().display()
    );
    let call = spawn(&r, &["run", "-s", "c", "--json", "--", &command]);
    wait_for(60, "the command to start on the host", || {
        (!ledger.lines().is_empty()).then_some(())
    });
    common::sigkill(r.daemon.pid());
    let out = call.wait_with_output().unwrap();
    assert_ne!(out.status.code(), Some(0), "{out:?}");
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("host's tether runs on there"), "{said}");
    std::fs::write(ledger.go(), "").unwrap();
    let (output, end) = read_to_end(&r, "c");
    assert_eq!(output, "out\n", "{end}");
    assert_eq!(
        (&end["status"], &end["exit_code"]),
        (&"exited".into(), &3.into())
    );
    assert_eq!(ledger.lines(), ["start", "done"], "it ran once");
}

/// `--agentless` keeps the host as before (a shell over the link, under
/// sshd), and every result says so.
#[test]
fn an_agentless_host_says_so() {
    let Some(r) = start_deployed("hd-agentless") else {
        return;
    };
    let (code, v) = r.json(&[
        "run",
        "-s",
        "a",
        "--host",
        "web01",
        "--agentless",
        "--",
        "echo $$",
    ]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["agentless"], "--agentless", "{v}");
    let pid: i32 = v["output"].as_str().unwrap().trim().parse().unwrap();
    let (_, listener) = common::remote::sshd_above(pid);
    assert!(listener.is_some(), "the shell runs under sshd");
    let (_, v) = r.json(&["run", "-s", "a", "--", "true"]);
    assert_eq!(v["agentless"], "--agentless", "{v}");
    let out = r.tether(&["run", "-s", "a", "--", "true"]);
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("web01 is agentless (--agentless)"), "{said}");
}

/// The host's daemon lives in the host's TETHER_DIR (the kit's sshd sets
/// it), its socket private there.
#[test]
fn the_hosts_daemon_is_private_to_the_user_there() {
    let Some(r) = start_deployed("hd-private") else {
        return;
    };
    let (code, v) = r.json(&["run", "-s", "p", "--host", "web01", "--", "echo $$"]);
    assert_eq!(code, 0, "{v}");
    let dir = r.sshd[0].host_daemon_dir();
    let socket = dir.join("daemon.sock");
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let d = std::fs::metadata(&dir).unwrap();
    assert_eq!(d.permissions().mode() & 0o777, 0o700);
    let s = std::fs::symlink_metadata(&socket).unwrap();
    assert_eq!(s.permissions().mode() & 0o777, 0o600);
    assert_eq!(s.uid(), d.uid());
    let pid: i32 = v["output"].as_str().unwrap().trim().parse().unwrap();
    let (_, listener) = common::remote::sshd_above(pid);
    assert!(
        listener.is_none(),
        "the shell is the host daemon's, not sshd's"
    );
    // Listed here as on its host, and by the host's own daemon.
    let out = r.tether(&["ls", "--json"]);
    let here: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let s = &here["sessions"][0];
    assert_eq!(
        (&s["name"], &s["state"], &s["host"]),
        (&"p".into(), &"on_host".into(), &"web01".into()),
        "{here}"
    );
    let out = r.tether(&["ls", "--host", "web01", "--json"]);
    let there: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let s = &there["sessions"][0];
    assert_eq!(
        (&s["name"], &s["state"], &s["host"]),
        (&"p".into(), &"idle".into(), &"web01".into()),
        "{there}"
    );
}

/// `tether ssh --keep`: a person's session in the host's tether; the link
/// under it dropped (its sshd processes killed) does not end the person's
/// view: a status line says so, the link is made again and the same shell
/// answers; after `~.`, the same command joins the same shell again.
#[test]
fn ssh_keep_outlives_the_link() {
    let Some(r) = start_deployed("hd-keep") else {
        return;
    };
    let env = [("HOME", r.home.0.display().to_string())];
    let first = common::Person::spawn(&["ssh", "--keep", "web01"], &r.daemon, &env);
    first
        .pty
        .write(b"Y=kept; echo pid=$$-$((6*7))\r".to_vec())
        .unwrap();
    first.sees("pid=");
    first.sees("-42");
    let text = first.text();
    // The output's, not the typed line's echo.
    let pid: String = text[text.rfind("pid=").unwrap() + 4..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    kill_connections_of(&r.sshd[0]);
    first.sees("the link to web01 ended; reconnecting");
    // Back on its own: the same shell answers the same person.
    wait_for(30, "the link back", || {
        first
            .pty
            .write(b"echo back=$$-$Y-$((6*7))\r".to_vec())
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(300));
        first
            .text()
            .contains(&format!("back={pid}-kept-42"))
            .then_some(())
    });
    first.pty.write(b"\r~.".to_vec()).unwrap();
    first.exit();
    let again = common::Person::spawn(&["ssh", "--keep", "web01"], &r.daemon, &env);
    again
        .pty
        .write(b"echo again=$$-$Y-$((6*7))\r".to_vec())
        .unwrap();
    again.sees(&format!("again={pid}-kept-42"));
    again.pty.write(b"\r~.".to_vec()).unwrap();
    again.exit();
    // Options ssh has and --keep does not apply are refused.
    let out = r.tether(&["ssh", "--keep", "-L", "1234:localhost:22", "web01"]);
    // As ssh: 255 for tether's own failure.
    assert_eq!(out.status.code(), Some(255), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("forwarding"),
        "{out:?}"
    );
}

/// The issue's person: `top` in `tether ssh --keep` on the person's
/// terminal (the outer-terminal harness), the host's veth set down (no
/// FIN) until tether has said so on its status line and a try has failed,
/// then up: the screen is redrawn as the host's emulator has it, keys
/// typed while away were not sent (`q` would have ended `top`), and at the
/// end the remote shell's exit code is tether's and the terminal is as
/// before.
#[test]
fn ssh_keep_redraws_top_after_the_veth_comes_back() {
    use common::outer::{Model, Outer, assert_keyboard_back};
    let Some(r) = start_netns("hd-top") else {
        return;
    };
    let ns = r.netns.as_ref().unwrap();
    let env = [("HOME", r.home.0.display().to_string())];
    let before = Model::new(0, 0, 0, 0);
    let o = Outer::spawn(
        &["ssh", "--keep", "far01"],
        &r.daemon,
        &env,
        before.clone(),
        true,
    );
    // One frame of top, then silence (it would redraw in 1000 s).
    o.write(b"top -d 1000\r");
    o.sees(b"load average");
    ns.down().unwrap();
    o.sees(b"the link to far01 stopped answering; reconnecting");
    o.sees(b"try 1 failed");
    o.write(b"q");
    let away = o.bytes().len();
    ns.up().unwrap();
    let session = "ssh-far01";
    let redrawn = wait_for(60, "the redraw after the link is back", || {
        let bytes = o.bytes();
        let after = &bytes[away..];
        after
            .windows(12)
            .any(|w| w == b"load average")
            .then_some(bytes)
    });
    // The person's screen, as a terminal would show it, is the host's.
    let mut screen = vt100::Parser::new(
        std::num::NonZeroU16::new(24).unwrap(),
        std::num::NonZeroU16::new(80).unwrap(),
        0,
    );
    screen.process(&redrawn);
    let (code, host) = r.json(&["screen", "-s", session]);
    assert_eq!(code, 0, "{host}");
    let theirs = host["screen"].as_str().unwrap_or_default();
    let trim = |t: &str| -> Vec<String> {
        t.lines()
            .map(|l| l.trim_end().to_owned())
            .collect::<Vec<_>>()
    };
    let mine = screen.screen().contents();
    let (mut a, mut b) = (trim(&mine), trim(theirs));
    while a.last().is_some_and(String::is_empty) {
        a.pop();
    }
    while b.last().is_some_and(String::is_empty) {
        b.pop();
    }
    assert_eq!(a, b, "the person's screen (left) and the host's (right)");
    assert!(
        !mine.contains("reconnecting"),
        "the status line is gone: {mine}"
    );
    // `q` typed while away never reached top: it still shows.
    assert!(theirs.contains("load average"), "top still runs: {theirs}");
    o.write(b"q");
    wait_for(20, "top to end", || {
        let (_, v) = r.json(&["screen", "-s", session]);
        (!v["screen"].as_str()?.contains("load average")).then_some(())
    });
    o.write(b"exit 3\r");
    let (exit, _, after) = o.finish();
    assert_eq!(exit, tether_transport::ExitInfo::Code(3));
    assert_keyboard_back(&after, &before);
}

/// Another machine (a daemon of its own, nothing of the first one's
/// state) joins a session an agent made in tether on the host:
/// `tether attach --host HOST SESSION`. A session that is not there is
/// said so; SSH flags without --host are refused.
#[test]
fn attach_from_another_machine_joins_a_hosts_session() {
    let Some(r) = start_deployed("hd-other") else {
        return;
    };
    let (code, v) = r.json(&["run", "-s", "agent", "--host", "web01", "--", "X=from-a"]);
    assert_eq!(code, 0, "{v}");
    let other = common::Daemon::new("hd-other-machine");
    let env = [("HOME", r.home.0.display().to_string())];
    let p = common::Person::spawn(&["attach", "--host", "web01", "agent"], &other, &env);
    p.pty.write(b"echo got-$X-$((6*7))\r".to_vec()).unwrap();
    p.sees("got-from-a-42");
    p.pty.write(b"\r~.".to_vec()).unwrap();
    p.exit();
    let missing = other
        .cmd(&["attach", "--host", "web01", "nosuch"])
        .env("HOME", &r.home.0)
        .output()
        .unwrap();
    assert_ne!(missing.status.code(), Some(0), "{missing:?}");
    assert!(
        String::from_utf8_lossy(&missing.stderr).contains("nosuch"),
        "{missing:?}"
    );
    let flags = other.run(&["attach", "-l", "someone", "agent"]);
    assert_eq!(flags.status.code(), Some(255), "{flags:?}");
    assert!(
        String::from_utf8_lossy(&flags.stderr).contains("--host"),
        "{flags:?}"
    );
    let _ = other.run(&["daemon", "stop"]);
}

/// What scrolled past while the link was down reaches the person when it
/// is back: a loop prints numbered lines on the host under `tether ssh
/// --keep`; the veth is set down until tether says so, then up; every
/// line the loop printed reached the person's terminal, not only the last
/// screenful that a redraw shows.
#[test]
fn ssh_keep_replays_what_scrolled_past_while_the_link_was_down() {
    let Some(r) = start_netns("hd-replay") else {
        return;
    };
    let ns = r.netns.as_ref().unwrap();
    let env = [("HOME", r.home.0.display().to_string())];
    let p = common::Person::spawn(&["ssh", "--keep", "far01"], &r.daemon, &env);
    p.pty
        .write(b"for i in $(seq 1 300); do echo L$i.; sleep 0.05; done\r".to_vec())
        .unwrap();
    p.sees("L5.");
    ns.down().unwrap();
    p.sees("the link to far01 stopped answering; reconnecting");
    p.sees("try 1 failed");
    ns.up().unwrap();
    wait_for(90, "the loop's last line", || {
        p.text().contains("L300.").then_some(())
    });
    let text = p.text();
    let missing: Vec<u32> = (1..=300)
        .filter(|n| !text.contains(&format!("L{n}.")))
        .collect();
    assert!(missing.is_empty(), "lines never shown: {missing:?}");
    p.pty.write(b"\r~.".to_vec()).unwrap();
    p.exit();
}
