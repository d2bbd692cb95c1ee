//! The engine's benchmarks (issue 3), side by side with peers in one run:
//! round trip of `true`, `waiting_for_input` detection latency, a flood
//! through a session against a bare read loop on the same PTY, and the cost
//! of idle sessions and of starting one.
//!
//! Run: `cargo bench -p tether-shell --bench engine` (add `-- --quick` for a
//! smaller run). Peers come from `scripts/bench-peers.py` (pexpect), which
//! installs what it needs into a venv. Figures go to `docs/BENCHMARKS.md`.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use tether_pty::{LocalPty, SpawnSpec};
use tether_shell::{RunOptions, Session, SessionOptions, Status};
use tether_transport::Terminal;

fn stats(mut ms: Vec<f64>) -> (f64, f64, f64) {
    ms.sort_by(f64::total_cmp);
    let at = |q: f64| ms[((ms.len() as f64 - 1.0) * q).round() as usize];
    (at(0.5), at(0.9), at(0.99))
}

fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

fn norc(output_processing: bool) -> SessionOptions {
    SessionOptions {
        run_rc_files: false,
        output_processing,
        ..SessionOptions::default()
    }
}

async fn round_trip(calls: usize) -> (f64, f64, f64) {
    let mut s = Session::start(norc(false)).await.unwrap();
    let opts = RunOptions::default();
    for _ in 0..50 {
        s.run("true", &opts).await.unwrap();
    }
    let mut ms = Vec::with_capacity(calls);
    for _ in 0..calls {
        let t = Instant::now();
        let r = s.run("true", &opts).await.unwrap();
        ms.push(t.elapsed().as_secs_f64() * 1e3);
        assert_eq!((r.status, r.exit_code), (Status::Exited, Some(0)));
    }
    stats(ms)
}

/// Records when the program first blocks reading the terminal, polled every
/// 0.2 ms from another thread: python3 in any read/poll/select on the PTY;
/// bash's `read` builtin in `read(0, _, n)` with n other than 1024 (bash
/// 5.2 reads 1024 bytes at a time at its prompt and 4096 in `read`, so the
/// prompt before the command does not count). x86_64 syscall numbers.
fn watch_block(root: i32, stop: Arc<AtomicBool>, at: Arc<AtomicU64>, t0: Instant) {
    std::thread::spawn(move || {
        let pts = std::fs::read_link(format!("/proc/{root}/fd/0")).unwrap();
        let id = tether_pty::inspect::PtyIdentity { pts, session: root };
        while !stop.load(Ordering::Relaxed) && at.load(Ordering::Relaxed) == 0 {
            let blocked = tether_pty::procfs::all_processes().iter().any(|p| {
                if p.session != root {
                    return false;
                }
                if p.pid == root {
                    return tether_pty::procfs::syscall(p.pid, p.pid)
                        .is_some_and(|c| c.nr == 0 && c.args[0] == 0 && c.args[2] != 1024);
                }
                p.comm.starts_with("python") && tether_pty::inspect::reads_terminal(&id, p.pid)
            });
            if blocked {
                at.store(t0.elapsed().as_micros() as u64 + 1, Ordering::Relaxed);
            }
            std::thread::sleep(Duration::from_micros(200));
        }
    });
}

async fn waiting_latency(code: &str, answer: &str, rounds: usize) -> (f64, f64, f64) {
    let mut s = Session::start(norc(false)).await.unwrap();
    let root = s.shell_pid().unwrap();
    let opts = RunOptions {
        timeout: Duration::from_secs(20),
        ..RunOptions::default()
    };
    let mut ms = Vec::new();
    for _ in 0..rounds {
        let stop = Arc::new(AtomicBool::new(false));
        let at = Arc::new(AtomicU64::new(0));
        let t0 = Instant::now();
        watch_block(root, Arc::clone(&stop), Arc::clone(&at), t0);
        let r = s.run(code, &opts).await.unwrap();
        let done = t0.elapsed().as_micros() as u64;
        stop.store(true, Ordering::Relaxed);
        assert_eq!(r.status, Status::WaitingForInput, "{r:?}");
        let blocked = at.load(Ordering::Relaxed);
        if blocked > 0 && blocked <= done {
            ms.push((done - blocked) as f64 / 1e3);
        }
        let r = s
            .send(Some(answer), &[], Duration::from_secs(10))
            .await
            .unwrap();
        assert_eq!(r.status, Status::Exited, "{r:?}");
    }
    stats(ms)
}

/// MB/s of `yes | head -c BYTES` through a session, and the peak RSS.
async fn flood_session(bytes: u64, output_processing: bool) -> (f64, u64) {
    let mut s = Session::start(norc(output_processing)).await.unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let peak = Arc::new(AtomicU64::new(0));
    let (st, pk) = (Arc::clone(&stop), Arc::clone(&peak));
    std::thread::spawn(move || {
        while !st.load(Ordering::Relaxed) {
            pk.fetch_max(rss_kib(), Ordering::Relaxed);
            std::thread::sleep(Duration::from_millis(20));
        }
    });
    let opts = RunOptions {
        timeout: Duration::from_secs(600),
        ..RunOptions::default()
    };
    let t = Instant::now();
    let r = s
        .run(&format!("yes | head -c {bytes}"), &opts)
        .await
        .unwrap();
    let secs = t.elapsed().as_secs_f64();
    stop.store(true, Ordering::Relaxed);
    assert_eq!(r.status, Status::Exited);
    (bytes as f64 / secs / 1e6, peak.load(Ordering::Relaxed))
}

/// MB/s of the same flood read in a bare loop from a PTY with the same modes.
async fn flood_bare(bytes: u64, output_processing: bool) -> f64 {
    let mut spec = SpawnSpec::new("sh");
    spec.args = vec!["-c".into(), format!("yes | head -c {bytes}")];
    spec.env = vec![("PATH".into(), "/usr/bin:/bin".into())];
    spec.echo = false;
    spec.output_processing = output_processing;
    let t = Instant::now();
    let pty = LocalPty::spawn(&spec).unwrap();
    let mut out = pty.take_output().unwrap();
    let mut n = 0u64;
    while let Some(chunk) = out.recv().await {
        n += chunk.len() as u64;
    }
    let secs = t.elapsed().as_secs_f64();
    assert!(n >= bytes);
    bytes as f64 / secs / 1e6
}

async fn idle_sessions(count: usize) -> (u64, (f64, f64, f64)) {
    let before = rss_kib();
    let mut sessions = Vec::new();
    let mut start_ms = Vec::new();
    for _ in 0..count {
        let t = Instant::now();
        sessions.push(Session::start(norc(false)).await.unwrap());
        start_ms.push(t.elapsed().as_secs_f64() * 1e3);
    }
    let after = rss_kib();
    drop(sessions);
    (after.saturating_sub(before), stats(start_ms))
}

fn peers(calls: usize) -> Option<serde_json::Value> {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scripts/bench-peers.py");
    let out = std::process::Command::new("python3")
        .args([script, "--calls", &calls.to_string(), "--json"])
        .output()
        .ok()?;
    if !out.status.success() {
        eprintln!("peers failed: {}", String::from_utf8_lossy(&out.stderr));
        return None;
    }
    serde_json::from_slice(&out.stdout).ok()
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let calls = if quick { 200 } else { 1000 };
    println!("# tether-shell engine benchmark ({} calls)\n", calls);

    let (med, p90, p99) = round_trip(calls).await;
    let peers = peers(calls);
    println!("| round trip of `true` | median ms | p90 ms | p99 ms | median ratio to tether |");
    println!("| --- | ---: | ---: | ---: | ---: |");
    println!(
        "| tether warm bash session (nonce marks, exit, cwd) | {med:.3} | {p90:.3} | {p99:.3} | 1.00 |"
    );
    if let Some(p) = &peers {
        for (key, name) in [
            ("spawn", "fresh `bash --norc -c true`"),
            ("pexpect_nodelay", "pexpect, `$?` in PS1, no send delay"),
            ("pexpect_default_delay", "pexpect, default 50 ms send delay"),
        ] {
            let m = p[key]["median"].as_f64().unwrap_or(f64::NAN);
            println!(
                "| {name} | {m:.3} | {:.3} | {:.3} | {:.2} |",
                p[key]["p90"].as_f64().unwrap_or(f64::NAN),
                p[key]["p99"].as_f64().unwrap_or(f64::NAN),
                m / med
            );
        }
    }

    let rounds = if quick { 10 } else { 30 };
    let (pm, p9, p99) = waiting_latency("python3 -q", "exit()\n", rounds).await;
    let (rm, r9, r99) = waiting_latency("read x", "answer\n", rounds).await;
    println!(
        "\n| waiting_for_input detection, from the program blocking | median ms | p90 ms | p99 ms |"
    );
    println!("| --- | ---: | ---: | ---: |");
    println!("| `python3 -q` | {pm:.1} | {p9:.1} | {p99:.1} |");
    println!("| `read x` | {rm:.1} | {r9:.1} | {r99:.1} |");

    let big = if quick { 64 << 20 } else { 512 << 20 };
    let small = if quick { 16 << 20 } else { 64 << 20 };
    println!(
        "\n| flood `yes \\| head -c N` | N | session MB/s | bare read loop MB/s | ratio | engine peak RSS |"
    );
    println!("| --- | ---: | ---: | ---: | ---: | ---: |");
    for (bytes, opost) in [(big, false), (small, true)] {
        let bare = flood_bare(bytes, opost).await;
        let (mbs, peak) = flood_session(bytes, opost).await;
        println!(
            "| {} | {} MiB | {mbs:.1} | {bare:.1} | {:.2} | {:.1} MB |",
            if opost {
                "OPOST on (LF → CRLF)"
            } else {
                "OPOST off"
            },
            bytes >> 20,
            mbs / bare,
            peak as f64 / 1024.0
        );
    }

    let count = if quick { 20 } else { 100 };
    let (rss, (sm, s9, s99)) = idle_sessions(count).await;
    println!("\n| {count} idle `--norc` bash sessions | value |");
    println!("| --- | ---: |");
    println!(
        "| engine RSS added (shells excluded: they are other processes) | {:.1} MB |",
        rss as f64 / 1024.0
    );
    println!("| session start to ready, median / p90 / p99 | {sm:.1} / {s9:.1} / {s99:.1} ms |");
}
