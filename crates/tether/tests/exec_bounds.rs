//! `tether exec`'s bounds and hygiene (issue 23, item 11): `--output dir`
//! never lets two hosts write the same files; host names with escape or
//! bidi characters are escaped in every message; gather and json keep a
//! host's output past a cap in a private file, not in memory.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod exec_kit;

use std::process::Command;

use exec_kit::{TETHER, start};

#[test]
fn output_dir_refuses_hosts_whose_files_would_clash() {
    let scratch = tether_testkit::Scratch::new("exec-dir-clash");
    let dir = scratch.0.join("out");
    let out = Command::new(TETHER)
        .args(["exec", "--output", "dir", "--dir"])
        .arg(&dir)
        .args(["-t", "1", "-H", "x/1,x_1", "--", "true"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("x/1 and x_1 would write the same files"),
        "{err}"
    );
    assert!(!dir.exists(), "nothing is written");
}

#[test]
fn host_names_are_escaped_in_every_message() {
    // The bidi name does not resolve: its error line has the name escaped.
    // A name with a control character is refused before anything runs
    // (issue 36), its refusal escaped too.
    for mode in ["stream", "gather"] {
        for (hosts, shown) in [
            ("bidi\u{202e}y.invalid", "bidi\\u{202e}y"),
            ("evil\u{1b}x,bidi\u{202e}y.invalid", "evil\\u{1b}x"),
        ] {
            let out = Command::new(TETHER)
                .args(["exec", "-F", "none", "-o", "BatchMode=yes", "-t", "2"])
                .args(["--output", mode, "-H"])
                .arg(hosts)
                .args(["--", "true"])
                .output()
                .unwrap();
            let all = [out.stdout.as_slice(), out.stderr.as_slice()].concat();
            let text = String::from_utf8_lossy(&all);
            assert!(
                !text.contains('\u{1b}') && !text.contains('\u{202e}'),
                "{mode}: raw: {text:?}"
            );
            assert!(text.contains(shown), "{mode}: {text:?}");
        }
    }
}

/// The peak resident memory of `c` (VmHWM, read from /proc while it runs
/// and just before it is reaped), and its output.
fn peak_kib(c: &mut Command) -> (u64, std::process::Output) {
    use std::os::unix::process::ExitStatusExt;
    let child = c
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let peak = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let seen = std::sync::Arc::clone(&peak);
    let watcher = std::thread::spawn(move || {
        while let Ok(s) = std::fs::read_to_string(format!("/proc/{pid}/status")) {
            if let Some(kib) = s
                .lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            {
                seen.fetch_max(kib, std::sync::atomic::Ordering::Relaxed);
            }
            if s.contains("State:\tZ") {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
    });
    let out = child.wait_with_output().unwrap();
    let _ = watcher.join();
    let _ = out.status.signal();
    (peak.load(std::sync::atomic::Ordering::Relaxed), out)
}

#[test]
fn gather_and_json_spill_big_outputs_instead_of_holding_them() {
    let Some(f) = start() else { return };
    // 2 hosts × 40 MB; held in memory that is 80 MB and more.
    let big = "head -c 40000000 /dev/zero | tr '\\0' x; echo";
    for mode in ["gather", "json"] {
        let (kib, out) = peak_kib(&mut f.command(None, "127.0.0.[2-3]", &["--output", mode], big));
        assert_eq!(out.status.code(), Some(0), "{mode}: {:?}", out.stderr);
        match mode {
            "gather" => {
                // One group, the whole output once.
                let text = &out.stdout;
                assert!(
                    String::from_utf8_lossy(&text[..200]).contains("127.0.0.[2-3] (2)"),
                    "{mode}"
                );
                assert_eq!(text.iter().filter(|b| **b == b'x').count(), 40_000_000);
            }
            _ => {
                let rows: Vec<serde_json::Value> = out
                    .stdout
                    .split(|b| *b == b'\n')
                    .filter(|l| !l.is_empty())
                    .map(|l| serde_json::from_slice(l).unwrap())
                    .collect();
                assert_eq!(rows.len(), 2);
                for r in rows {
                    assert_eq!(r["stdout"].as_str().unwrap().len(), 40_000_001);
                }
            }
        }
        eprintln!("{mode}: peak {kib} KiB");
        assert!(
            kib < 60_000,
            "{mode}: peak {kib} KiB: the hosts' output was held in memory"
        );
    }
}
