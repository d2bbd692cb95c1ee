//! A confined session's result says what the kernel enforced (issue 36):
//! the Landlock ABI in force, what best effort skipped, the seccomp
//! filter and the fence's own devpts, as the fence found them when the
//! shell started. As root and as the unprivileged test user.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
mod fenced;

use fenced::{World, bwrap_missing, everyone};

#[test]
fn every_confined_result_says_what_the_kernel_enforced() {
    if bwrap_missing() {
        return;
    }
    for who in everyone() {
        let w = World::new(who);
        // The default: Landlock ABI 6 required, all of it in force.
        let r = w.run(&["-s", "c", "--confine", "workspace", "--", "true"]);
        let e = &r["confinement"]["enforced"];
        assert_eq!(
            *e,
            serde_json::json!({
                "landlock_abi": 6,
                "landlock_asked": 6,
                "landlock": "full",
                "skipped": [],
                "seccomp": true,
                "own_devpts": true,
                "unix_sockets": [],
            }),
            "{who:?}: {r}"
        );
        // The seccomp filter is the kernel's word, not an assumption: the
        // shell's own status says it too.
        let r = w.run(&["-s", "c", "--", "grep ^Seccomp: /proc/$$/status"]);
        assert!(fenced::output(&r).contains("2"), "{who:?}: {r}");
        // No program of the session can send a report of its own: the
        // report socket (beside its temp directory) takes no connection.
        let spoof = "python3 -c 'import os, socket; s = socket.socket(socket.AF_UNIX); s.connect(os.path.dirname(os.environ[\"TMPDIR\"]) + \"/fence.sock\"); print(\"reached\")' 2>&1 | tail -1";
        let r = w.run(&["-s", "c", "--", spoof]);
        assert!(!fenced::output(&r).contains("reached"), "{who:?}: {r}");
        assert!(
            fenced::output(&r).contains("Permission denied"),
            "{who:?}: {r}"
        );
        // A restarted shell reports again, and a listing says it too.
        let r = w.run(&["-s", "c", "--", "exit 3"]);
        assert_eq!(r["confinement"]["enforced"]["landlock"], "full", "{r}");
        let r = w.run(&["-s", "c", "--", "true"]);
        assert_eq!(r["shell_restarted"], true, "{r}");
        assert_eq!(r["confinement"]["enforced"]["seccomp"], true, "{r}");
        let ls = w.tether(&["ls", "--json"]);
        let ls: serde_json::Value = serde_json::from_slice(&ls.stdout).unwrap();
        assert!(
            ls.to_string().contains("\"landlock_abi\":6"),
            "{who:?}: {ls}"
        );

        // Best effort, asking for more than tether's fence needs (ABI 9:
        // Landlock's own refusal of pathname Unix sockets): what the kernel
        // lacks is named, never claimed.
        let config = w.home.join(".config/tether");
        std::fs::create_dir_all(&config).unwrap();
        std::fs::write(
            config.join("config.toml"),
            "[confine]\nmode = \"workspace\"\nlandlock_abi = 9\nbest_effort = true\n",
        )
        .unwrap();
        if let fenced::Who::Other = who {
            let ok = std::process::Command::new("chown")
                .args(["-R", &format!("{}:", fenced::USER)])
                .arg(w.home.join(".config"))
                .status()
                .unwrap();
            assert!(ok.success());
        }
        let r = w.run(&["-s", "be", "--", "true"]);
        let e = &r["confinement"]["enforced"];
        assert_eq!(e["landlock_asked"], 9, "{who:?}: {r}");
        let given = e["landlock_abi"].as_u64().unwrap();
        if given >= 9 {
            assert_eq!(e["landlock"], "full", "{r}");
            assert_eq!(e["skipped"], serde_json::json!([]), "{r}");
        } else {
            assert!(given >= 6, "{who:?}: {r}");
            assert_eq!(e["landlock"], "partial", "{r}");
            assert_eq!(e["skipped"], serde_json::json!(["resolve_unix"]), "{r}");
        }
        assert_eq!(e["seccomp"], true, "{r}");
    }
}
