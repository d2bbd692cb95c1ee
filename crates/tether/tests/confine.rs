//! Confined sessions end to end (issue 27): `tether run --confine` through
//! the daemon, as root and as the unprivileged test user, against the real
//! kernel. Every escape the issue lists is tried and must fail with the
//! program's own error; the same commands unconfined succeed (so each test
//! can fail). Skips with a message without `bwrap`, or (for the other user)
//! without root and `tether-test`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
mod fenced;

use std::path::Path;

use fenced::{Who, World, bwrap_missing, everyone, output};
use serde_json::Value;
use tether_testkit::Scratch;
use tether_transport::Terminal;

#[test]
fn a_workspace_session_writes_only_its_roots_and_every_escape_is_refused() {
    if bwrap_missing() {
        return;
    }
    for who in everyone() {
        let w = World::new(who);
        let (ws, out) = (w.ws.display().to_string(), w.out.display().to_string());
        // Unconfined, every one of these works: the test can fail.
        let free = w.run(&[
            "-s",
            "free",
            "--",
            &format!("touch {out}/free && echo '#' >> .git/config && cat ~/.ssh/id_ed25519"),
        ]);
        assert_eq!(free["exit_code"], 0, "{who:?}: {free}");
        assert!(free["confinement"].is_null(), "{free}");
        assert!(output(&free).contains("PRIVATE KEY"), "{free}");

        let c = |cmd: &str| w.run(&["-s", "c", "--confine", "workspace", "--", cmd]);
        let r = c("touch inside && echo made");
        assert_eq!(r["exit_code"], 0, "{who:?}: {r}");
        assert_eq!(r["confinement"]["mode"], "workspace", "{r}");
        assert_eq!(r["confinement"]["roots"][0], ws.as_str(), "{r}");
        assert_eq!(r["confinement"]["network"], "off", "{r}");
        assert!(w.ws.join("inside").exists());

        let r = c(&format!("touch {out}/outside"));
        assert_eq!(r["exit_code"], 1, "{who:?}: {r}");
        assert!(output(&r).contains("Read-only file system"), "{r}");
        let r = c("echo x > .git/config");
        assert_eq!(r["exit_code"], 1, "{who:?}: {r}");
        assert!(output(&r).contains("Read-only file system"), "{r}");
        let r = c("cat ~/.ssh/id_ed25519");
        assert_ne!(r["exit_code"], 0, "{who:?}: {r}");
        assert!(!output(&r).contains("PRIVATE KEY"), "{r}");

        // A double-forked setsid child, long after its command ended.
        let r = c(&format!(
            "( setsid sh -c 'sleep 0.3; touch {out}/escaped; touch $TMPDIR/child-done' & ) ; echo forked"
        ));
        assert_eq!(r["exit_code"], 0, "{r}");
        common::wait_for(10, "the forked child to finish", || {
            let r = c("ls $TMPDIR");
            output(&r).contains("child-done").then_some(())
        });
        assert!(
            !w.out.join("escaped").exists(),
            "{who:?}: the child escaped"
        );

        // `exec bash` in place of the session's shell, then the shell's own
        // restart: still confined.
        let r = c(&format!("exec bash --norc -c 'touch {out}/after-exec'"));
        assert_eq!(r["status"], "shell_exited", "{r}");
        assert!(output(&r).contains("Read-only file system"), "{who:?}: {r}");
        let r = c(&format!("touch {out}/after-restart; echo $?"));
        assert_eq!(r["shell_restarted"], true, "{r}");
        assert!(output(&r).contains("Read-only file system"), "{who:?}: {r}");
        assert_eq!(r["confinement"]["mode"], "workspace", "{r}");
        for f in ["outside", "after-exec", "after-restart"] {
            assert!(!w.out.join(f).exists(), "{who:?}: {f} was written");
        }

        // git commit with `.git` read-only: git's own message and code.
        let r = c("echo two >> a && git -c user.name=t -c user.email=t@t commit -qam two");
        assert_eq!(r["exit_code"], 128, "{who:?}: {r}");
        assert!(output(&r).contains("Read-only file system"), "{r}");

        // A confinement is set when the session is created.
        let out = w.tether(&["run", "-s", "c", "--confine", "none", "--", "true"]);
        assert!(!out.status.success());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("set when it is created"), "{err}");

        let ls = w.tether(&["ls", "--json"]);
        let ls: Value = serde_json::from_slice(&ls.stdout).unwrap();
        let entry = ls["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["name"] == "c")
            .cloned()
            .unwrap_or_else(|| panic!("{ls}"));
        assert_eq!(entry["confinement"]["mode"], "workspace", "{ls}");
        let table = String::from_utf8_lossy(&w.tether(&["ls"]).stdout).into_owned();
        let row = table.lines().find(|l| l.starts_with("c ")).unwrap_or("");
        assert!(row.contains(" workspace "), "{table}");
        let row = table.lines().find(|l| l.starts_with("free ")).unwrap_or("");
        assert!(!row.contains("workspace"), "{table}");
    }
}

#[test]
fn a_read_only_session_writes_only_its_temp_directory_and_finds_no_door() {
    if bwrap_missing() {
        return;
    }
    for who in everyone() {
        let w = World::new(who);
        let c = |cmd: &str| w.run(&["-s", "ro", "--confine", "read-only", "--", cmd]);
        let r = c("touch here");
        assert_eq!(r["exit_code"], 1, "{who:?}: {r}");
        assert!(output(&r).contains("Read-only file system"), "{r}");
        assert_eq!(r["confinement"]["mode"], "read-only", "{r}");
        let r = c("touch $TMPDIR/scratch && echo tmp-ok");
        assert!(output(&r).contains("tmp-ok"), "{who:?}: {r}");
        // The daemon's socket is not there: no other session can be asked
        // to run something outside.
        let r = c("ls -A \"$TETHER_DIR\"; test -e \"$TETHER_DIR/daemon.sock\" && echo SOCKET");
        assert!(!output(&r).contains("SOCKET"), "{who:?}: {r}");
        assert!(
            w.tdir.join("daemon.sock").exists(),
            "the daemon's socket is outside"
        );
        let r = c(&format!(
            "{} run -s other -- touch ~/x; echo rc=$?",
            w.bin.join("tether").display()
        ));
        assert!(output(&r).contains("rc=255"), "{who:?}: {r}");
        assert!(!w.home.join("x").exists(), "{who:?}: {r}");
        // Nothing reaches out: not the host's loopback either.
        let r = c(
            "python3 -c 'import socket; socket.create_connection((\"1.1.1.1\", 53), timeout=5)' 2>&1 | tail -1",
        );
        assert!(
            output(&r).contains("Network is unreachable"),
            "{who:?}: {r}"
        );
    }
}

#[test]
fn the_agent_contract_holds_inside_the_fence() {
    if bwrap_missing() {
        return;
    }
    let w = World::new(Who::Me);
    let c = |args: &[&str]| {
        let mut a = vec!["-s", "k", "--confine", "workspace"];
        a.extend_from_slice(args);
        w.run(&a)
    };
    // Persistence.
    c(&["--", "mkdir -p sub && cd sub && X=kept"]);
    let r = c(&["--", "echo \"$X $(pwd)\""]);
    assert!(
        output(&r).contains("kept") && output(&r).contains("/ws/sub"),
        "{r}"
    );
    // Exact statuses.
    let r = c(&["--", "false | true | (exit 7)"]);
    assert_eq!(r["exit_code"], 7, "{r}");
    assert_eq!(r["pipe_status"], serde_json::json!([1, 0, 7]), "{r}");
    // Waiting for input, from the kernel.
    let r = c(&["--", "read -r line; echo got:$line"]);
    assert_eq!(r["status"], "waiting_for_input", "{r}");
    let sent = w.tether(&["send", "-s", "k", "--json", "hello\n"]);
    let sent: Value = serde_json::from_slice(&sent.stdout).unwrap();
    assert!(output(&sent).contains("got:hello"), "{sent}");
    // Timeouts interrupt the command and keep the shell.
    let r = c(&["--timeout", "1", "--", "sleep 60"]);
    assert_eq!(r["status"], "timed_out", "{r}");
    let r = c(&["--", "echo $X"]);
    assert!(output(&r).contains("kept"), "{r}");
    // Redaction of a secret-named variable's value.
    let r = c(&["--", "echo token=$API_TOKEN"]);
    assert!(!output(&r).contains("sekrit-4c1d-9e7b"), "{r}");
    assert!(output(&r).contains("token="), "{r}");
}

#[test]
fn a_session_continued_after_its_daemon_is_killed_is_confined_again() {
    if bwrap_missing() {
        return;
    }
    let w = World::new(Who::Me);
    let out = w.out.display().to_string();
    let r = w.run(&["-s", "k", "--confine", "workspace", "--", "export V=1"]);
    assert_eq!(r["exit_code"], 0, "{r}");
    let status = String::from_utf8_lossy(&w.tether(&["daemon", "status"]).stdout).into_owned();
    let pid: i32 = status
        .split("(pid ")
        .nth(1)
        .and_then(|s| s.split(')').next())
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("{status}"));
    common::sigkill(pid);
    common::wait_for(10, "the daemon to die", || {
        (!common::alive(pid)).then_some(())
    });
    let r = w.run(&[
        "-s",
        "k",
        "--",
        &format!("echo V=$V; touch {out}/after-crash"),
    ]);
    assert!(output(&r).contains("V=1"), "{r}");
    assert!(output(&r).contains("Read-only file system"), "{r}");
    assert_eq!(r["confinement"]["mode"], "workspace", "{r}");
    assert!(!w.out.join("after-crash").exists());
}

/// A session in the host's own tether is confined there, by the host's
/// tether (the host is this machine, logged into over real sshd as the
/// test user); an agentless host, whose shell tether only drives over the
/// link, is refused and nothing runs.
#[test]
fn a_session_in_the_hosts_tether_is_confined_there_and_an_agentless_one_is_refused() {
    if bwrap_missing() {
        return;
    }
    let Some(r) = common::remote::start_deployed("cf-remote") else {
        return;
    };
    let (ws, out) = (Scratch::new("cf-ws"), Scratch::new("cf-out"));
    for d in [&ws.0, &out.0] {
        tether_testkit::give_to_login_user(d).unwrap();
    }
    let (wd, od) = (ws.0.display().to_string(), out.0.display().to_string());
    let script = format!("touch {wd}/in && echo made; touch {od}/outside");
    // Unconfined there, both writes work: the test can fail.
    let (code, v) = r.json(&["run", "-s", "free", "--host", "web01", "--", &script]);
    assert_eq!(code, 0, "{v}");
    assert!(out.0.join("outside").exists(), "{v}");
    std::fs::remove_file(out.0.join("outside")).unwrap();
    let (code, v) = r.json(&[
        "run",
        "-s",
        "c",
        "--host",
        "web01",
        "--confine",
        "workspace",
        "--allow-write",
        &wd,
        "--",
        &script,
    ]);
    assert_eq!(code, 1, "{v}");
    assert!(output(&v).contains("made"), "{v}");
    assert!(output(&v).contains("Read-only file system"), "{v}");
    assert_eq!(v["confinement"]["mode"], "workspace", "{v}");
    assert_eq!(v["confinement"]["roots"][0], wd.as_str(), "{v}");
    assert!(!out.0.join("outside").exists(), "written on the host");
    // The next call, and the host's own listing, say so too.
    let (_, v) = r.json(&["run", "-s", "c", "--", &format!("touch {od}/later")]);
    assert!(output(&v).contains("Read-only file system"), "{v}");
    let there = r.tether(&["ls", "--host", "web01", "--json"]);
    let there: Value = serde_json::from_slice(&there.stdout).unwrap();
    let c = there["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "c")
        .cloned()
        .unwrap_or_else(|| panic!("{there}"));
    assert_eq!(c["confinement"]["mode"], "workspace", "{there}");

    let agentless = r.tether(&[
        "run",
        "-s",
        "a",
        "--host",
        "web01",
        "--agentless",
        "--confine",
        "read-only",
        "--",
        &format!("touch {od}/agentless"),
    ]);
    assert_eq!(agentless.status.code(), Some(255), "{agentless:?}");
    let err = String::from_utf8_lossy(&agentless.stderr);
    assert!(err.contains("agentless host cannot be confined"), "{err}");
    assert!(!out.0.join("agentless").exists(), "it ran");
}

#[test]
fn detail_flags_without_a_mode_are_an_error_never_ignored() {
    let w = World::new(Who::Me);
    let out = w.tether(&["run", "--deny", "/etc", "--", "true"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--confine"));
    // `/` as the workspace: no confinement at all, so refused.
    let out = w.tether(&[
        "run",
        "-s",
        "slash",
        "--confine",
        "workspace",
        "--allow-write",
        "/",
        "--",
        "true",
    ]);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("whole file system"),
        "{out:?}"
    );
}

#[test]
fn the_network_allowlist_passes_through_the_proxy_and_refuses_the_rest_at_once() {
    if bwrap_missing() {
        return;
    }
    // A local HTTP server outside the fence.
    let server = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = server.local_addr().unwrap().port();
    std::thread::spawn(move || {
        use std::io::{Read, Write};
        for conn in server.incoming().flatten() {
            let mut conn = conn;
            let mut buf = [0u8; 4096];
            let _ = conn.read(&mut buf);
            let _ = conn.write_all(b"HTTP/1.0 200 OK\r\nContent-Length: 6\r\n\r\nhello\n");
        }
    });
    for who in everyone() {
        let w = World::new(who);
        // Named as an address: a name resolving to loopback would be
        // refused (confine_proxy.rs).
        let allow = format!("127.0.0.1:{port}");
        let c = |cmd: &str| {
            w.run(&[
                "-s",
                "net",
                "--confine",
                "workspace",
                "--allow-net",
                &allow,
                "--",
                cmd,
            ])
        };
        // Through the proxy: allowed.
        let r = c(&format!("curl -s http://127.0.0.1:{port}/"));
        assert_eq!(output(&r).trim(), "hello", "{who:?}: {r}");
        assert_eq!(r["confinement"]["network"], "allowlist", "{r}");
        let r = c(&format!(
            "python3 -c 'import socket; s = socket.socket(); s.connect((\"127.0.0.1\", 3128)); s.sendall(b\"\\x05\\x01\\x00\"); s.recv(2); s.sendall(b\"\\x05\\x01\\x00\\x01\\x7f\\x00\\x00\\x01\" + ({port}).to_bytes(2, \"big\")); print(\"socks\", s.recv(10)[1])'"
        ));
        assert!(output(&r).contains("socks 0"), "{who:?}: {r}");
        // Not on the list: refused by the proxy at once, and reported.
        let r = c("curl -s -o /dev/null -w '%{http_code}' https://example.com/");
        assert!(output(&r).contains("000"), "{who:?}: {r}");
        assert_eq!(
            r["confinement"]["denied"],
            serde_json::json!(["connect example.com:443"]),
            "{r}"
        );
        // Direct, past the proxy: the host's loopback is not there.
        let r = c(&format!(
            "python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", {port}), timeout=5)' 2>&1 | tail -1"
        ));
        assert!(output(&r).contains("Connection refused"), "{who:?}: {r}");
        assert_eq!(r["confinement"]["denied"], serde_json::json!([]), "{r}");
    }
}

#[test]
fn the_session_cannot_signal_what_runs_outside_it() {
    if bwrap_missing() {
        return;
    }
    for who in everyone() {
        let w = World::new(who);
        let mut outside = w.cmd(Path::new("/bin/sleep"), &["30"]).spawn().unwrap();
        let pid = outside.id();
        // Unconfined, the same user may signal it.
        let r = w.run(&[
            "-s",
            "free",
            "--",
            &format!("kill -0 {pid} && echo reachable"),
        ]);
        assert!(output(&r).contains("reachable"), "{who:?}: {r}");
        let r = w.run(&[
            "-s",
            "c",
            "--confine",
            "workspace",
            "--",
            &format!("kill -TERM {pid}; echo rc=$?"),
        ]);
        assert!(
            output(&r).contains("Operation not permitted"),
            "{who:?}: {r}"
        );
        assert!(
            outside.try_wait().unwrap().is_none(),
            "{who:?}: it was killed"
        );
        let _ = outside.kill();
        let _ = outside.wait();
    }
}

#[test]
fn a_landlock_abi_the_kernel_lacks_is_an_error_and_nothing_runs() {
    if bwrap_missing() {
        return;
    }
    let w = World::new(Who::Me);
    let config = w.home.join(".config/tether");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(
        config.join("config.toml"),
        "[confine]\nmode = \"workspace\"\nlandlock_abi = 10\n",
    )
    .unwrap();
    let out = w.tether(&["run", "-s", "x", "--", "touch ran"]);
    let err = String::from_utf8_lossy(&out.stderr);
    if out.status.success() {
        // A kernel with every feature of ABI 10 gives them.
        eprintln!("this kernel gives Landlock ABI 10: nothing to refuse");
        return;
    }
    assert!(err.contains("Landlock ABI 10"), "{err}");
    assert!(!w.ws.join("ran").exists(), "it ran");
    // An unknown key in [confine] is an error too.
    std::fs::write(
        config.join("config.toml"),
        "[confine]\nmode = \"workspace\"\nnet = []\n",
    )
    .unwrap();
    let out = w.tether(&["run", "-s", "y", "--", "touch ran"]);
    assert!(!out.status.success());
    assert!(!w.ws.join("ran").exists(), "it ran");
}

/// The rest of the contract inside the fence: the spill file (written by
/// the daemon outside it, out of the shell's reach), a signal to the
/// foreground, a reset that ends what the session left running, and a
/// person attached who types into the confined shell.
#[test]
fn spill_files_signals_resets_and_a_person_attached_work_inside_the_fence() {
    if bwrap_missing() {
        return;
    }
    let w = World::new(Who::Me);
    let c = |args: &[&str]| {
        let mut a = vec!["-s", "k", "--confine", "read-only"];
        a.extend_from_slice(args);
        w.run(&a)
    };
    // A clipped result's whole output, and the shell cannot touch it.
    let r = c(&["--output-limit", "200", "--", "seq 1 5000"]);
    let path = r["truncated"]["full_output_path"]
        .as_str()
        .unwrap_or_else(|| panic!("{r}"))
        .to_owned();
    let whole = std::fs::read_to_string(&path).unwrap();
    assert_eq!(whole.lines().count(), 5000, "{path}");
    let r = c(&[
        "--",
        &format!("echo forged >> {path}; rm -f {path}; echo rc=$?"),
    ]);
    assert!(output(&r).contains("Read-only file system"), "{r}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), whole);

    // A signal to the foreground program, from outside.
    let running = w
        .cmd(
            &w.bin.join("tether"),
            &["run", "-s", "k", "--json", "--", "sleep 100"],
        )
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    common::wait_for(20, "sleep in the foreground", || {
        let ls = w.tether(&["ls", "--json"]);
        let ls: Value = serde_json::from_slice(&ls.stdout).ok()?;
        let fg = ls["sessions"][0]["foreground"]["command"]
            .as_str()?
            .to_owned();
        (fg == "sleep").then_some(())
    });
    // (Its exit code is the command's, 130.)
    let sent = w.tether(&["signal", "-s", "k", "INT"]);
    assert_eq!(sent.status.code(), Some(130), "{sent:?}");
    let out = running.wait_with_output().unwrap();
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["signal"], "SIGINT", "{r}");

    // A reset ends what the session left running in the background.
    let r = c(&["--", "( setsid sleep 300 & echo $! > $TMPDIR/bg )"]);
    assert_eq!(r["exit_code"], 0, "{r}");
    let r = c(&["--", "cat $TMPDIR/bg"]);
    let bg: i32 = output(&r).trim().parse().unwrap_or_else(|_| panic!("{r}"));
    assert!(common::alive(bg));
    assert!(w.tether(&["reset", "-s", "k"]).status.success());
    common::wait_for(20, "the left-behind process to end", || {
        (!common::alive(bg)).then_some(())
    });

    // A person attached types into the confined shell.
    let d = common::Daemon {
        dir: w.tdir.clone(),
    };
    let person = common::Person::spawn(
        &["attach", "k"],
        &d,
        &[("HOME", w.home.display().to_string())],
    );
    std::mem::forget(d);
    c(&["--", "echo attached-ready"]);
    person.sees("attached-ready");
    person
        .pty
        .write(b"touch /etc/person-was-here; echo typed-$((6*7))\r".to_vec())
        .unwrap();
    person.sees("typed-42");
    person.sees("Read-only file system");
    assert!(!Path::new("/etc/person-was-here").exists());
}
