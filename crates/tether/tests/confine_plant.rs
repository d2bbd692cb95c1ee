//! Fences around a workspace, not a home (issue 37): a confined session
//! tries to plant code that would run outside its fence later: start-up
//! files, `authorized_keys`, an autostart entry, a systemd user unit, a
//! crontab, git hooks, and the start-up files inside its own root. Nothing
//! is written, locally (as root and as the test user) and on a host; and a
//! session whose writable root would be the whole home is refused aloud,
//! with nothing run. Unconfined, the same plants succeed (the test can
//! fail).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
mod fenced;

use std::path::{Path, PathBuf};

use fenced::{Who, World, bwrap_missing, everyone, output};
use tether_testkit::Scratch;

/// Every plant, in `home` and in the workspace (the cwd).
fn plants(home: &Path) -> String {
    let h = home.display();
    format!(
        "echo evil >> {h}/.bashrc; echo evil >> {h}/.profile; \
         echo key >> {h}/.ssh/authorized_keys; \
         mkdir -p {h}/.config/autostart && echo evil > {h}/.config/autostart/evil.desktop; \
         mkdir -p {h}/.config/systemd/user && echo evil > {h}/.config/systemd/user/evil.service; \
         echo evil > .git/hooks/post-checkout; echo evil >> .bashrc; echo evil > .config/evil; \
         echo evil > .local/bin/ls; \
         if command -v crontab >/dev/null; then echo '* * * * * true # tether-plant' | crontab -; fi; \
         echo planted"
    )
}

/// The files the plants write (relative to the home, or to the workspace).
fn planted(home: &Path, ws: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = [
        ".ssh/authorized_keys",
        ".config/autostart/evil.desktop",
        ".config/systemd/user/evil.service",
    ]
    .iter()
    .map(|p| home.join(p))
    .collect();
    v.extend(
        [".git/hooks/post-checkout", ".config/evil", ".local/bin/ls"]
            .iter()
            .map(|p| ws.join(p)),
    );
    v
}

fn crontab_has_plant(w: &World) -> bool {
    let out = w.sh("crontab -l 2>/dev/null");
    String::from_utf8_lossy(&out.stdout).contains("tether-plant")
}

/// Start-up files that exist, as people have them.
fn lived_in(w: &World) {
    for f in [".bashrc", ".profile"] {
        std::fs::write(w.home.join(f), "# mine\n").unwrap();
        std::fs::write(w.ws.join(f), "# mine\n").unwrap();
    }
    for d in [w.ws.join(".config"), w.ws.join(".local/bin")] {
        std::fs::create_dir_all(d).unwrap();
    }
    if let Who::Other = w.who {
        let ok = std::process::Command::new("chown")
            .args(["-R", &format!("{}:", fenced::USER)])
            .arg(&w.s.0)
            .status()
            .unwrap();
        assert!(ok.success());
    }
}

fn untouched(w: &World) {
    for f in [".bashrc", ".profile"] {
        for base in [&w.home, &w.ws] {
            let text = std::fs::read_to_string(base.join(f)).unwrap();
            assert_eq!(text, "# mine\n", "{:?}: {}", w.who, base.join(f).display());
        }
    }
    for p in planted(&w.home, &w.ws) {
        assert!(!p.exists(), "{:?}: planted {}", w.who, p.display());
    }
    assert!(!crontab_has_plant(w), "{:?}: a crontab was planted", w.who);
}

#[test]
fn a_confined_session_plants_nothing_and_a_home_root_is_refused() {
    if bwrap_missing() {
        return;
    }
    for who in everyone() {
        let w = World::new(who);
        lived_in(&w);
        let r = w.run(&["-s", "c", "--confine", "workspace", "--", &plants(&w.home)]);
        assert!(output(&r).contains("planted"), "{who:?}: {r}");
        assert!(output(&r).contains("Read-only file system"), "{who:?}: {r}");
        untouched(&w);

        // The home as the starting directory: refused, nothing run.
        let marker = w.home.join("ran");
        let out = w
            .cmd(
                &w.bin.join("tether"),
                &[
                    "run",
                    "--once",
                    "--confine",
                    "workspace",
                    "--",
                    &format!("touch {}", marker.display()),
                ],
            )
            .current_dir(&w.home)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(255), "{who:?}: {err}");
        assert!(err.contains("whole home directory"), "{who:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{who:?}: {err}");
        assert!(!marker.exists(), "{who:?}: it ran");

        // Unconfined, the same plants are written: the test can fail.
        let r = w.run(&["-s", "free", "--", &plants(&w.home)]);
        assert!(output(&r).contains("planted"), "{who:?}: {r}");
        assert!(
            w.ws.join(".git/hooks/post-checkout").exists(),
            "{who:?}: {r}"
        );
        assert!(
            w.home.join(".config/autostart/evil.desktop").exists(),
            "{r}"
        );
        if crontab_has_plant(&w) {
            let _ = w.sh("crontab -r");
        }
    }
}

#[test]
fn on_a_host_the_login_directory_is_no_root_and_its_start_up_files_stay() {
    if bwrap_missing() {
        return;
    }
    let Some(r) = common::remote::start_deployed("cf-plant") else {
        return;
    };
    let (code, v) = r.json(&["run", "-s", "free", "--host", "web01", "--", "echo $HOME"]);
    assert_eq!(code, 0, "{v}");
    let home = PathBuf::from(output(&v).trim());
    let bashrc = home.join(".bashrc");
    let before = std::fs::read(&bashrc).unwrap_or_default();
    // The login directory (the home) as the default root: refused there.
    let out = r.tether(&[
        "run",
        "-s",
        "c",
        "--host",
        "web01",
        "--confine",
        "workspace",
        "--",
        "echo evil >> ~/.bashrc; echo ran",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(255), "{err}");
    assert!(err.contains("whole home directory"), "{err}");
    assert!(
        !String::from_utf8_lossy(&out.stdout).contains("ran"),
        "{out:?}"
    );
    // A workspace of its own: the home's start-up files stay as they were.
    let ws = Scratch::new("cf-plant-ws");
    tether_testkit::give_to_login_user(&ws.0).unwrap();
    let wd = ws.0.display().to_string();
    let (_, v) = r.json(&[
        "run",
        "-s",
        "w",
        "--host",
        "web01",
        "--confine",
        "workspace",
        "--allow-write",
        &wd,
        "--",
        "echo evil >> ~/.bashrc; echo evil >> ~/.profile; echo ran",
    ]);
    assert!(output(&v).contains("ran"), "{v}");
    assert!(output(&v).contains("Read-only file system"), "{v}");
    assert_eq!(std::fs::read(&bashrc).unwrap_or_default(), before);
}
