//! Saved outputs (spill files) are bounded and never claimed whole when
//! they are not: on a real 2 MiB tmpfs a flood of output is reported
//! unsaved with the reason, and the session goes on; past the session's
//! cap (`TETHER_SPILL_CAP`) the oldest saved outputs go first and the
//! result says so.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::Daemon;
use serde_json::Value;

/// A tmpfs of `size` mounted for one test, unmounted when dropped.
struct Tmpfs {
    dir: PathBuf,
}

impl Tmpfs {
    /// `None` (with the reason printed) where mounting is not allowed.
    fn mount(name: &str, size: &str) -> Option<Tmpfs> {
        let dir = std::env::temp_dir().join(format!("tether-tmpfs-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let out = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size},mode=0700")])
            .arg("tmpfs")
            .arg(&dir)
            .output();
        match out {
            Ok(o) if o.status.success() => Some(Tmpfs { dir }),
            other => {
                eprintln!(
                    "SKIPPED: cannot mount a tmpfs at {} ({other:?}); run as root",
                    dir.display()
                );
                let _ = std::fs::remove_dir(&dir);
                None
            }
        }
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        // Lazily: the stopped daemon may still hold its log and lock there
        // for a moment; the file system goes when it lets go.
        let _ = Command::new("umount").arg("--lazy").arg(&self.dir).status();
        let _ = std::fs::remove_dir(&self.dir);
    }
}

/// `tether run --json -s s -- COMMAND`: its result.
fn run(d: &Daemon, env: &[(&str, &str)], command: &str) -> Value {
    let out = d
        .cmd(&["run", "-s", "s", "--norc", "--json", "--", command])
        .envs(env.iter().copied())
        .output()
        .unwrap();
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {out:?}"))
}

/// Every spill file under `dir`.
fn spills(dir: &Path) -> Vec<PathBuf> {
    files(dir, "out-")
}

/// Every file under `dir` whose name starts with `prefix`.
fn files(dir: &Path, prefix: &str) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = e.path();
        if path.is_dir() {
            found.extend(files(&path, prefix));
        } else if e.file_name().to_string_lossy().starts_with(prefix) {
            found.push(path);
        }
    }
    found
}

fn output(r: &Value) -> &str {
    r["output"].as_str().unwrap_or_else(|| panic!("{r}"))
}

#[test]
fn a_full_disk_is_reported_unsaved_and_the_session_goes_on() {
    let Some(disk) = Tmpfs::mount("full", "2m") else {
        return;
    };
    let d = Daemon {
        dir: disk.dir.join("tether"),
    };
    let pid = output(&run(&d, &[], "echo $$")).to_owned();

    // 13.8 MB of output onto 2 MiB.
    let r = run(&d, &[], "seq 1 2000000");
    assert_eq!(r["status"], "exited", "{r}");
    assert_eq!(r["exit_code"], 0, "{r}");
    assert!(output(&r).ends_with("\n2000000\n"), "{r}");
    let t = &r["truncated"];
    assert_eq!(t["full_output_path"], Value::Null, "{t}");
    let note = t["note"].as_str().unwrap_or_else(|| panic!("{t}"));
    assert!(
        note.contains("not saved whole") && note.contains("No space left on device"),
        "{note}"
    );
    assert_eq!(
        spills(&disk.dir),
        Vec::<PathBuf>::new(),
        "a partial spill was kept"
    );

    // The same shell, with room again.
    let r = run(&d, &[], "echo after; echo $$");
    assert_eq!(output(&r), format!("after\n{pid}"), "{r}");
    // And the CLI says it in words.
    let out = d.run(&["run", "-s", "s", "--", "seq 1 2000000"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("not saved whole"), "{stderr}");

    // With the disk full from elsewhere, a command (longer than the page
    // its predecessor's file gives back) is refused with the reason; once
    // there is room, the session goes on.
    let filler = disk.dir.join("filler");
    assert!(std::fs::write(&filler, vec![0u8; 4 << 20]).is_err());
    let long = format!("echo full # {}", "x".repeat(16 << 10));
    let out = d.run(&["run", "-s", "s", "--", &long]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "ran on a full disk: {out:?}");
    assert!(stderr.contains("No space left on device"), "{stderr}");
    std::fs::remove_file(&filler).unwrap();
    let r = run(&d, &[], "echo back; echo $$");
    assert_eq!(output(&r), format!("back\n{pid}"), "{r}");
}

#[test]
fn past_the_cap_the_oldest_saved_outputs_go_first_and_the_result_says_so() {
    let d = Daemon::new("spill-cap");
    let cap = [("TETHER_SPILL_CAP", "1M")];
    // 588,895 bytes: saved.
    let a = run(&d, &cap, "seq 1 100000");
    let pa = a["truncated"]["full_output_path"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(Path::new(&pa).exists(), "{a}");
    assert!(output(&a).starts_with("1\n2\n"), "{a}");

    // 700,000 more: the first goes, and this result says so.
    let b = run(&d, &cap, "seq 100001 200000");
    let pb = b["truncated"]["full_output_path"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(Path::new(&pb).exists(), "{b}");
    assert!(!Path::new(&pa).exists(), "the oldest spill is still there");
    let head = output(&b).lines().next().unwrap();
    assert!(
        head.starts_with("tether: the saved output of 1 earlier command was removed")
            && head.contains("1 MiB")
            && head.contains(&pa),
        "{head}"
    );

    // 1,988,895 bytes: over the cap on its own, so not saved whole.
    let c = run(&d, &cap, "seq 1 300000");
    let t = &c["truncated"];
    assert_eq!(t["full_output_path"], Value::Null, "{t}");
    let note = t["note"].as_str().unwrap();
    assert!(note.contains("cap of 1 MiB"), "{note}");
    assert!(output(&c).lines().next().unwrap().contains(&pb), "{c}");
    assert!(output(&c).ends_with("\n300000\n"), "{c}");
    assert_eq!(spills(&d.dir), Vec::<PathBuf>::new());

    let fine = run(&d, &cap, "echo fine");
    assert_eq!(output(&fine), "fine\n", "{fine}");
    assert_eq!(fine["truncated"], Value::Null);
}

#[test]
fn command_files_do_not_pile_up_in_a_session() {
    let d = Daemon::new("cmd-files");
    for n in 0..5 {
        let r = run(&d, &[], &format!("echo {n}"));
        assert_eq!(output(&r), format!("{n}\n"), "{r}");
    }
    let left = files(&d.dir, "cmd-");
    assert!(left.len() <= 1, "{left:?}");
}
