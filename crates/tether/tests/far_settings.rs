//! The far side's settings as a person gives them: `--agentless` on the
//! doors whose sessions live on a host (`run`, `shell`, `mcp`) and refused
//! by those that keep none there (`exec`, `cp`, `ssh`), and `deploy` and
//! `tether_path` in tether's config, checked before anything connects.
//! Where sshd is installed, the route `tether run --host` hands the daemon
//! carries them (the daemon keeps it beside the session, `route.json`).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::{Path, PathBuf};

use common::Daemon;
use common::remote::start;
use tether_testkit::Scratch;

/// `tether ARGS` with `home` as HOME (its config in
/// `home/.config/tether/config.toml`).
fn tether_in(d: &Daemon, home: &Path, args: &[&str]) -> std::process::Output {
    d.cmd(args)
        .env("HOME", home)
        .env_remove("XDG_CONFIG_HOME")
        .output()
        .unwrap()
}

fn write_config(home: &Path, text: &str) -> PathBuf {
    let dir = home.join(".config/tether");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("config.toml");
    std::fs::write(&file, text).unwrap();
    file
}

#[test]
fn only_the_doors_that_keep_sessions_on_a_host_take_agentless() {
    let d = Daemon::new("far-flag");
    let home = Scratch::new("far-flag-home");
    for door in ["run", "shell", "mcp"] {
        let out = tether_in(&d, &home.0, &[door, "--help"]);
        let help = String::from_utf8_lossy(&out.stdout);
        assert!(help.contains("--agentless"), "{door}: {help}");
    }
    // A flag tether would not apply is an error, never ignored.
    for args in [
        &["exec", "-H", "web1", "--agentless", "true"][..],
        &["cp", "--agentless", "/etc/hostname", "web1:/tmp/"],
        &["ssh", "--agentless", "web1"],
    ] {
        let out = tether_in(&d, &home.0, args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains("--agentless"), "{args:?}: {err}");
    }
    // Without --host it would say nothing: refused, nothing run.
    for args in [
        &["run", "--agentless", "--", "echo", "ran"][..],
        &["run", "--once", "--agentless", "--", "echo", "ran"],
    ] {
        let out = tether_in(&d, &home.0, args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(255), "{args:?}: {err}");
        assert!(
            err.contains("--agentless") && err.contains("--host"),
            "{err}"
        );
        assert!(out.stdout.is_empty(), "{out:?}");
    }
}

#[test]
fn a_bad_far_setting_in_the_config_stops_run_host_with_its_place() {
    let d = Daemon::new("far-config");
    let home = Scratch::new("far-config-home");
    for (text, at, says) in [
        ("[defaults]\ndeploy = \"no\"\n", ":2:", "bool"),
        (
            "[defaults]\nuser = \"ops\"\ntether_path = \"~/bin/tether\"\n",
            ":3:",
            "full path",
        ),
        (
            "[defaults]\ndeploy_tether = false\n",
            ":2:",
            "deploy_tether",
        ),
    ] {
        let file = write_config(&home.0, text);
        let out = tether_in(&d, &home.0, &["run", "--host", "web1", "--", "true"]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(255), "{text:?}: {err}");
        let place = format!("{}{at}", file.display());
        assert!(
            err.contains(&place) && err.contains(says),
            "{text:?}: {err}"
        );
    }
}

/// Every `route.json` under `dir`, read as JSON.
fn routes(dir: &Path) -> Vec<serde_json::Value> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return found;
    };
    for e in entries.flatten() {
        let path = e.path();
        if path.is_dir() {
            found.extend(routes(&path));
        } else if path.file_name().is_some_and(|n| n == "route.json") {
            found.push(serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap());
        }
    }
    found
}

/// The far settings of the route of the session on `host`.
fn far_of(dir: &Path, host: &str) -> serde_json::Value {
    let all = routes(dir);
    let route = all
        .iter()
        .find(|r| r["name"] == host)
        .unwrap_or_else(|| panic!("no route for {host} in {all:?}"));
    route["far"].clone()
}

#[test]
fn run_host_hands_the_daemon_the_flag_over_the_config() {
    let Some(r) = start("far-route") else {
        return;
    };
    let file = write_config(
        &r.home.0,
        "[defaults]\ndeploy = false\ntether_path = \"/opt/tether/bin/tether\"\n",
    );
    let out = r.tether(&["run", "--host", "web01", "--", "echo", "on-web01"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "on-web01\n");
    let far = far_of(&r.daemon.dir, "web01");
    assert_eq!(
        far,
        serde_json::json!({
            "agentless": format!("deploy = false in {}:2 for [defaults]", file.display()),
            "path": "/opt/tether/bin/tether",
        })
    );
    // The flag wins over the config (a path given stays given).
    write_config(&r.home.0, "[defaults]\ndeploy = true\n");
    let out = r.tether(&["run", "--host", "web02", "--agentless", "--", "echo", "ok"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(
        far_of(&r.daemon.dir, "web02"),
        serde_json::json!({"agentless": "--agentless"})
    );
}
