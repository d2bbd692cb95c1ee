//! One way to a host: `tether shell` and `tether run --host` reach a host
//! exactly as `tether exec` would with the same words, resolved in the
//! caller's process (its flags, tether's config with a cluster's settings,
//! its ssh_config) and carried to the daemon, which reads no file of its
//! own to guess. Against real sshd nodes; skips with a message when sshd
//! is not installed.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::multi::{line, shell};
use common::remote::{start, start_n};
use tether_testkit::Scratch;
use tether_transport::ExitInfo;

/// `tether shell -C lab`: the cluster's `user`, `port` and `identity`
/// (none of them the defaults', nor in ssh_config) reach every node, as
/// `tether exec -C lab` applies them. Before, the nodes were picked from
/// the cluster but reached with the defaults (port 22, the user running
/// tether, the default keys) and none answered.
#[test]
fn a_clusters_user_port_and_identity_reach_every_node_of_tether_shell() {
    let Some(r) = start_n("route-cluster", 2) else {
        return;
    };
    let ssh = r.home.0.join(".ssh");
    // ssh_config says only where each node is and how to trust it.
    let mut config = String::new();
    for (n, ip) in [("node1", "127.0.0.2"), ("node2", "127.0.0.3")] {
        config.push_str(&format!(
            "Host {n}\n  HostName {ip}\n  IdentityAgent none\n  UserKnownHostsFile {}\n",
            ssh.join("known_hosts").display()
        ));
    }
    std::fs::write(ssh.join("config"), config).unwrap();
    let file = r.home.0.join("tether.toml");
    std::fs::write(
        &file,
        format!(
            "[defaults]\nuser = \"nobody-here\"\nport = 9\n\
             [clusters.lab]\nnodes = \"node[1-2]\"\nuser = \"{user}\"\nport = {port}\nidentity = \"{key}\"\n",
            user = tether_testkit::user(),
            port = r.port,
            key = ssh.join("id_test").display(),
        ),
    )
    .unwrap();
    let config = file.display().to_string();

    // `tether exec -C lab` reaches them so …
    let out = r.tether(&["exec", "-C", "lab", "--config", &config, "echo", "by-exec"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    // … and so does `tether shell -C lab`.
    let p = shell(&r, &["-C", "lab", "--config", &config]);
    p.sees("[● node1 ● node2]");
    line(&p, "echo reached-$((6*7)) as $(id -un)");
    let user = tether_testkit::user();
    for n in 1..=2 {
        p.sees(&format!("node{n}: reached-42 as {user}"));
    }
    p.sees("node[1-2]: 0");
    line(&p, "!exit");
    assert_eq!(p.exit(), ExitInfo::Code(0));

    // The same settings as flags, with -H: as `tether exec -H` takes them.
    let port = r.port.to_string();
    let key = ssh.join("id_test").display().to_string();
    let p = shell(
        &r,
        &[
            "-H", "node1", "--name", "flags", "--config", &config, "-l", &user, "-p", &port, "-i",
            &key,
        ],
    );
    p.sees("[● node1]");
    line(&p, "echo flags-$((6*7))");
    p.sees("node1: flags-42");
    line(&p, "!exit");
    assert_eq!(p.exit(), ExitInfo::Code(0));
}

/// `tether run --host web01` from a `HOME` other than the daemon's: the
/// host is reached with the caller's ssh_config (the daemon's HOME has
/// none), on the daemon already running; `-F` names another file. Before,
/// the daemon resolved the host with its own HOME's files and said "cannot
/// resolve the host name" while `tether exec -H web01` worked.
#[test]
fn run_host_is_reached_with_the_callers_ssh_config_not_the_daemons() {
    let Some(r) = start("route-home") else {
        return;
    };
    // The daemon starts from another HOME, without any ssh_config.
    let elsewhere = Scratch::new("route-daemon-home");
    let started = r
        .daemon
        .cmd(&["run", "-s", "local", "--", "echo $HOME"])
        .env("HOME", &elsewhere.0)
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("SSH_AUTH_SOCK")
        .output()
        .unwrap();
    assert_eq!(started.status.code(), Some(0), "{started:?}");
    let pid = r.daemon.pid();

    let out = r.tether(&["exec", "-H", "web01", "echo", "by-exec"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let (code, v) = r.json(&["run", "--host", "web01", "--", "echo reached"]);
    assert_eq!((code, v["output"].as_str()), (0, Some("reached\n")), "{v}");
    assert_eq!(v["host"], "web01", "{v}");
    assert_eq!(r.daemon.pid(), pid, "the daemon was not the one started");

    // From a third HOME, with -F naming the ssh_config.
    let config = r.home.0.join(".ssh/config").display().to_string();
    let out = r
        .daemon
        .cmd(&[
            "run",
            "--host",
            "web02",
            "-F",
            &config,
            "--json",
            "--",
            "echo via-F",
        ])
        .env("HOME", &elsewhere.0)
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("SSH_AUTH_SOCK")
        .output()
        .unwrap();
    let v: serde_json::Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {out:?}"));
    assert_eq!(
        (out.status.code(), v["output"].as_str()),
        (Some(0), Some("via-F\n")),
        "{v}"
    );
    // Flags without a host are a mistake, not ignored.
    for once in [false, true] {
        let mut args = vec!["run", "-p", "2222", "--", "true"];
        if once {
            args.insert(1, "--once");
        }
        let out = r.tether(&args);
        assert_eq!(out.status.code(), Some(255), "{out:?}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("name the host"),
            "{out:?}"
        );
    }
}

/// MCP's `host` is resolved in the MCP server's process (the agent's
/// environment), not by a daemon started from another `HOME`.
#[test]
fn mcp_host_is_reached_with_the_servers_ssh_config_not_the_daemons() {
    let Some(mut m) = common::McpFleet::start("route-mcp", &["127.0.0.2"]) else {
        return;
    };
    // The daemon starts first, from a HOME without any ssh_config.
    let elsewhere = Scratch::new("route-mcp-daemon-home");
    let started = std::process::Command::new(common::TETHER)
        .args(["run", "-s", "local", "--", "true"])
        .env("HOME", &elsewhere.0)
        .env("TETHER_DIR", &m.tether_dir)
        // (Gone by itself should the test fail before it is stopped.)
        .env("TETHER_IDLE_EXIT", "30")
        .env_remove("XDG_RUNTIME_DIR")
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("SSH_AUTH_SOCK")
        .output()
        .unwrap();
    assert_eq!(started.status.code(), Some(0), "{started:?}");
    let r = m.call(
        2,
        "tools/call",
        serde_json::json!({"name": "shell_run", "arguments": {"host": "127.0.0.2", "command": "echo reached"}}),
    );
    let s = &r["result"]["structuredContent"];
    assert_eq!(
        (s["host"].as_str(), s["output"].as_str()),
        (Some("127.0.0.2"), Some("reached\n")),
        "{r}"
    );
    let _ = std::process::Command::new(common::TETHER)
        .args(["daemon", "stop"])
        .env("TETHER_DIR", &m.tether_dir)
        .output();
    m.finish();
}
