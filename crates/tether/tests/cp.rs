//! `tether cp` against real sshd: each host serves SFTP from OpenSSH's
//! sftp-server started in a directory of its own (`-d`), so relative paths
//! land in one directory per host although every host is this machine,
//! and each host's copy is checked on disk, byte for byte, with modes,
//! times and links. Skips with a message when sshd or sftp-server is
//! missing.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod cp_kit;

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;

use cp_kit::{Hosts, assert_same_tree, make_tree};

#[test]
fn a_tree_goes_to_five_hosts_and_comes_back_the_same() {
    let Some(h) = Hosts::start("tree", 5, &|_, _| String::new()) else {
        return;
    };
    let src = h.scratch.0.join("src");
    make_tree(&src.join("tree"), 100 << 20, 1000);
    let out = h.cp(
        &["-r", "-p", "--mkdir", "--output", "json"],
        &[src.join("tree").to_str().unwrap(), "node[1-5]:deploy/"],
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 5, "{out:?}");
    for (i, v) in lines.iter().enumerate() {
        assert_eq!(v["host"], format!("node{}", i + 1));
        assert_eq!(
            (v["ok"].as_bool(), v["error"].is_null()),
            (Some(true), true),
            "{v}"
        );
        assert_eq!(v["files"], 1003, "{v}");
        assert_eq!(v["links"], 1, "{v}");
        assert!(v["bytes"].as_u64().unwrap() > 100 << 20, "{v}");
        assert_same_tree(&src.join("tree"), &h.root(i).join("deploy/tree"), true);
    }

    // Back again, into a directory per host.
    let back = h.scratch.0.join("back");
    let out = h.cp(
        &["-r", "-p", "--mkdir"],
        &["node[1-5]:deploy/tree", back.to_str().unwrap()],
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    for i in 1..=5 {
        assert!(
            text.contains(&format!("node{i}: copied 1003 files")),
            "{text}"
        );
        assert_same_tree(&src.join("tree"), &back.join(format!("node{i}/tree")), true);
    }
}

#[test]
fn one_file_is_renamed_replaced_and_pulled_with_its_mode() {
    let Some(h) = Hosts::start("one", 3, &|_, _| String::new()) else {
        return;
    };
    let file = h.scratch.0.join("app.conf");
    std::fs::write(&file, "v1\n").unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o640)).unwrap();
    // A destination that is not a directory is the copy's new name.
    let out = h.cp(&[], &[file.to_str().unwrap(), "node[1-3]:app.conf.new"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    for i in 0..3 {
        let p = h.root(i).join("app.conf.new");
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "v1\n");
        assert_eq!(std::fs::metadata(&p).unwrap().mode() & 0o777, 0o640);
    }
    // An existing file is replaced whole; nothing else is left beside it.
    std::fs::write(&file, "v2\n").unwrap();
    let out = h.cp(
        &["-H", "node[1-3]"],
        &[file.to_str().unwrap(), ":app.conf.new"],
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    for i in 0..3 {
        assert_eq!(
            std::fs::read_to_string(h.root(i).join("app.conf.new")).unwrap(),
            "v2\n"
        );
        assert_eq!(cp_kit::names(&h.root(i)), ["app.conf.new"]);
    }
    let logs = h.scratch.0.join("logs");
    std::fs::create_dir(&logs).unwrap();
    let out = h.cp(&["-p"], &["node[1-3]:app.conf.new", logs.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    for i in 1..=3 {
        let p = logs.join(format!("node{i}/app.conf.new"));
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "v2\n");
        assert_eq!(std::fs::metadata(&p).unwrap().mode() & 0o777, 0o640);
    }
}

#[test]
fn bad_input_is_one_error_and_nothing_is_written() {
    let Some(h) = Hosts::start("bad", 2, &|_, _| String::new()) else {
        return;
    };
    let dir = h.scratch.0.join("d");
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(dir.join("f"), "x").unwrap();
    let missing = h.scratch.0.join("missing");
    let out = h.cp(
        &[],
        &[
            dir.join("f").to_str().unwrap(),
            missing.to_str().unwrap(),
            "node[1-2]:",
        ],
    );
    assert_eq!(out.status.code(), Some(255), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("missing: no such file or directory; nothing was copied"),
        "{err}"
    );
    let out = h.cp(&[], &[dir.to_str().unwrap(), "node[1-2]:"]);
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("use -r"),
        "{out:?}"
    );
    for i in 0..2 {
        assert!(cp_kit::names(&h.root(i)).is_empty());
    }
    // A remote file where a directory is needed fails that host only.
    std::fs::write(h.root(0).join("target"), "a file").unwrap();
    std::fs::create_dir(h.root(1).join("target")).unwrap();
    tether_testkit::give_to_login_user(&h.root(1)).unwrap();
    let out = h.cp(&[], &[dir.join("f").to_str().unwrap(), "node[1-2]:target/"]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("node1: target is a file on the host, not a directory"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(h.root(0).join("target")).unwrap(),
        "a file"
    );
    assert_eq!(
        std::fs::read_to_string(h.root(1).join("target/f")).unwrap(),
        "x"
    );
    // A missing destination directory is not made without --mkdir.
    let out = h.cp(&[], &[dir.join("f").to_str().unwrap(), "node2:no/such/"]);
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("pass --mkdir"),
        "{out:?}"
    );
    assert!(!h.root(1).join("no").exists());
}

/// The sizes of what is under `dir`, by relative name.
fn real_names(dir: &Path) -> Vec<String> {
    cp_kit::names(dir)
}

#[test]
fn a_host_down_a_read_only_one_and_a_full_one_fail_alone() {
    let special = |i: usize, root: &Path| match i {
        1 => tether_testkit::sftp_subsystem(root, "-R", "").unwrap(),
        // Writes past 1 MB fail (EFBIG), as on a full disk.
        2 => tether_testkit::sftp_subsystem(root, "", "trap '' XFSZ; ulimit -f 2000;").unwrap(),
        _ => tether_testkit::sftp_subsystem(root, "", "").unwrap(),
    };
    let Some(h) = Hosts::start("fail", 4, &special) else {
        return;
    };
    let src = h.scratch.0.join("big");
    std::fs::write(&src, cp_kit::pattern(8 << 20, 3)).unwrap();
    let out = h.cp(
        &["--output", "json"],
        &[src.to_str().unwrap(), "node[1-4],down:big"],
    );
    assert_eq!(out.status.code(), Some(255), "{out:?}");
    let v: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let kind = |host: &str| {
        let r = v.iter().find(|r| r["host"] == host).unwrap();
        (
            r["error_kind"].as_str().map(str::to_owned),
            r["error"].as_str().unwrap_or("").to_owned(),
        )
    };
    assert_eq!(kind("node1").0, None);
    assert_eq!(kind("node4").0, None);
    let (k, e) = kind("node2");
    assert_eq!(k.as_deref(), Some("copy"));
    assert!(e.contains("permission denied"), "{e}");
    let (k, e) = kind("node3");
    assert_eq!(k.as_deref(), Some("copy"), "{e}");
    assert!(e.contains("cannot write"), "{e}");
    assert_eq!(kind("down").0.as_deref(), Some("ssh"));
    // Its kind as tether-ssh typed it, and a message naming no host (the
    // text output puts it in front, once).
    let down = v.iter().find(|r| r["host"] == "down").unwrap();
    assert_eq!(down["host_failure"], "refused", "{down}");
    assert!(
        down["error"]
            .as_str()
            .is_some_and(|e| e.starts_with("cannot connect to 127.0.0.99:")),
        "{down}"
    );
    for i in [0, 3] {
        assert_eq!(std::fs::read(h.root(i).join("big")).unwrap().len(), 8 << 20);
    }
    // Nothing under the real name, and the temporary file removed.
    assert!(
        real_names(&h.root(1)).is_empty(),
        "{:?}",
        real_names(&h.root(1))
    );
    assert!(
        real_names(&h.root(2)).is_empty(),
        "{:?}",
        real_names(&h.root(2))
    );

    // One host at a time, failing fast: the hosts after the first
    // failure are not started.
    let out = h.cp(
        &["-f", "1", "--fail-fast", "--exit-code", "all-zero"],
        &[src.to_str().unwrap(), "node2,node4:again"],
    );
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("node4: cancelled (fail fast): not started"),
        "{err}"
    );
    assert!(err.contains("--fail-fast cancelled node4 (1)"), "{err}");
    assert!(!h.root(3).join("again").exists());
}

#[test]
fn a_server_killed_mid_file_leaves_nothing_under_the_real_name() {
    // sftp-server is killed by SIGXFSZ at its first write past 16,320
    // blocks (8,355,840 bytes, a whole number of 255 KiB pieces and of
    // 32 KiB ones): the write that reaches the limit starts at it, so the
    // server dies there instead of answering a short write with a failure
    // (which, under load, could come back before the next write was sent).
    let special = |i: usize, root: &Path| match i {
        0 => tether_testkit::sftp_subsystem(root, "", "ulimit -f 16320;").unwrap(),
        _ => tether_testkit::sftp_subsystem(root, "", "").unwrap(),
    };
    let Some(h) = Hosts::start("killed", 2, &special) else {
        return;
    };
    let src = h.scratch.0.join("big");
    std::fs::write(&src, cp_kit::pattern(8 << 20, 5)).unwrap();
    let out = h.cp(&[], &[src.to_str().unwrap(), "node[1-2]:big"]);
    assert_eq!(out.status.code(), Some(255), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("node1: "), "{err}");
    assert!(!h.root(0).join("big").exists());
    assert!(
        cp_kit::names(&h.root(0))
            .iter()
            .all(|n| n.starts_with(".big.tether-")),
        "{:?}",
        cp_kit::names(&h.root(0))
    );
    assert_eq!(std::fs::read(h.root(1).join("big")).unwrap().len(), 8 << 20);
}

#[test]
fn a_listing_that_names_a_way_out_is_refused() {
    let special = |i: usize, root: &Path| match i {
        0 => {
            // A copy the login user can read: the checkout may be private
            // (a 0700 folder), and sshd runs the subsystem as that user.
            let script = root.with_extension("evil_sftp.py");
            std::fs::copy(
                Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/hosts/evil_sftp.py"),
                &script,
            )
            .unwrap();
            std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o644)).unwrap();
            format!("Subsystem sftp python3 {}\n", script.display())
        }
        _ => tether_testkit::sftp_subsystem(root, "", "").unwrap(),
    };
    let Some(h) = Hosts::start("evil", 2, &special) else {
        return;
    };
    std::fs::create_dir_all(h.root(1).join("logs/app")).unwrap();
    std::fs::write(h.root(1).join("logs/app/fine"), "fine\n").unwrap();
    tether_testkit::give_to_login_user(&h.root(1)).unwrap();
    let into = h.scratch.0.join("pulled");
    let out = h.cp(
        &["-r", "--mkdir"],
        &["node[1-2]:logs", into.to_str().unwrap()],
    );
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("node1: the listing of logs names \"../escaped\""),
        "{err}"
    );
    assert!(!into.join("node1/escaped").exists() && !into.join("escaped").exists());
    assert_eq!(
        std::fs::read_to_string(into.join("node2/logs/app/fine")).unwrap(),
        "fine\n"
    );
}

#[test]
fn patterns_pull_what_matches_on_each_host() {
    let Some(h) = Hosts::start("glob", 2, &|_, _| String::new()) else {
        return;
    };
    for (i, names) in [
        (0, &["a.log", "b.log", "c.txt", ".h.log"][..]),
        (1, &["z.log"][..]),
    ] {
        std::fs::create_dir_all(h.root(i).join("var/app1")).unwrap();
        for n in names {
            std::fs::write(h.root(i).join("var/app1").join(n), n).unwrap();
        }
        tether_testkit::give_to_login_user(&h.root(i)).unwrap();
    }
    let into = h.scratch.0.join("got");
    let out = h.cp(
        &["--mkdir"],
        &["node[1-2]:var/app?/*.log", into.to_str().unwrap()],
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(cp_kit::names(&into.join("node1")), ["a.log", "b.log"]);
    assert_eq!(cp_kit::names(&into.join("node2")), ["z.log"]);
    let out = h.cp(&[], &["node[1-2]:var/*.txt", into.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("nothing on the host matches var/*.txt"),
        "{out:?}"
    );
}

/// Names that are not UTF-8 (`caf\xe9`, Latin-1) cannot be named over SFTP
/// here: each is refused by name (printed with U+FFFD), with what to do,
/// and never copied under another name. A push stops before any host; a
/// pull fails the host whose listing has one.
#[test]
fn names_that_are_not_utf8_are_refused_by_name_never_mangled() {
    let Some(h) = Hosts::start("latin1", 1, &|_, _| String::new()) else {
        return;
    };
    let latin1 = OsStr::from_bytes(b"caf\xe9");
    let shown = "caf\u{FFFD}";
    let tree = h.scratch.0.join("tree");
    std::fs::create_dir(&tree).unwrap();
    std::fs::write(tree.join("ok.txt"), "ok\n").unwrap();
    std::fs::write(tree.join(latin1), "latin1\n").unwrap();
    let refused = |out: &std::process::Output, code: i32| {
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{out:?}");
        assert!(
            err.contains(shown) && err.contains("not UTF-8") && err.contains("rename it"),
            "{err}"
        );
    };

    // Pushed in a tree, or named itself: nothing reaches the host.
    let out = h.cp(&["-r"], &[tree.to_str().unwrap(), "node1:"]);
    refused(&out, 255);
    let out = h.cp_os(&[], &[tree.join(latin1).as_os_str(), OsStr::new("node1:")]);
    refused(&out, 255);
    assert!(cp_kit::names(&h.root(0)).is_empty());

    // Pulled: the host fails, naming it; no copy under a changed name.
    std::fs::create_dir_all(h.root(0).join("logs")).unwrap();
    std::fs::write(h.root(0).join("logs/ok.txt"), "ok\n").unwrap();
    std::fs::write(h.root(0).join("logs").join(latin1), "latin1\n").unwrap();
    std::fs::create_dir_all(h.root(0).join("links")).unwrap();
    std::os::unix::fs::symlink(latin1, h.root(0).join("links/to-latin1")).unwrap();
    tether_testkit::give_to_login_user(&h.root(0)).unwrap();
    let back = h.scratch.0.join("back");
    for source in ["node1:logs", "node1:logs/caf*", "node1:links"] {
        let out = h.cp(&["-r", "--mkdir"], &[source, back.to_str().unwrap()]);
        refused(&out, 1);
        assert!(String::from_utf8_lossy(&out.stderr).contains("tether: node1: "));
        for dir in ["", "logs", "links"] {
            let here = back.join("node1").join(dir);
            if here.is_dir() {
                let names = cp_kit::names(&here);
                assert!(!names.iter().any(|n| n.contains('\u{FFFD}')), "{names:?}");
                assert!(!names.iter().any(|n| n == "to-latin1"), "{names:?}");
            }
        }
    }
    // A remote operand that is not UTF-8 is refused before any host.
    let mut remote = b"node1:logs/".to_vec();
    remote.extend_from_slice(latin1.as_bytes());
    let out = h.cp_os(&[], &[OsStr::from_bytes(&remote), back.as_os_str()]);
    refused(&out, 255);
}

/// `-b`: one Ctrl-C cancels the copy (pdcp -b), where without it the first
/// only says which hosts still run. The host's SFTP server never answers
/// (it is `sleep`), so the copy waits there until cancelled.
#[test]
fn with_b_one_ctrl_c_cancels() {
    use std::io::Read;
    let Some(h) = Hosts::start("batch", 1, &|_, _| "Subsystem sftp sleep 100\n".into()) else {
        return;
    };
    let src = h.scratch.0.join("small");
    std::fs::write(&src, b"x").unwrap();
    let operands = [src.as_os_str(), OsStr::new("node1:small")];
    let mut child = h
        .command(&["-b", "-v"], &operands)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let seen = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
    let sink = std::sync::Arc::clone(&seen);
    let reader = std::thread::spawn(move || {
        let mut buf = [0u8; 1024];
        while let Ok(n) = stderr.read(&mut buf) {
            if n == 0 {
                break;
            }
            sink.lock()
                .unwrap()
                .push_str(&String::from_utf8_lossy(&buf[..n]));
        }
    });
    // Logged in (`-v` says so): the copy now waits for the SFTP server.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !seen.lock().unwrap().contains("authenticated as") {
        assert!(
            std::time::Instant::now() < deadline,
            "never logged in: {}",
            seen.lock().unwrap()
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let pid = nix::unistd::Pid::from_raw(child.id() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT).unwrap();
    let status = child.wait().unwrap();
    reader.join().unwrap();
    let err = seen.lock().unwrap().clone();
    assert_eq!(status.code(), Some(130), "{err}");
    assert!(err.contains("interrupted: cancelling every host"), "{err}");
    assert!(!err.contains("press Ctrl-C again"), "{err}");
}
