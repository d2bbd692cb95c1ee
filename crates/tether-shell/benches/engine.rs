//! The engine's benchmarks (issue 3), side by side with peers in one run:
//! round trip of `true`, `waiting_for_input` detection latency, a flood
//! through a session against a bare read loop on the same PTY, and the cost
//! of idle sessions and of starting one.
//!
//! Run: `cargo bench -p tether-shell --bench engine` (add `-- --quick` for a
//! smaller run, `-- --only round-trip|waiting|flood|idle|peers` for one part,
//! as a profiler wants it, `-- --calls N` for N round trips). With
//! `-- --serve` it reads a number N per line on stdin and answers with the
//! latencies (ms) of N round trips of `true` in one warm session, on one
//! line: `scripts/bench-agent.py` runs it beside the other peers. With
//! `--current-thread` the runtime has one thread instead of two workers. Peers come from `scripts/bench-peers.py` (pexpect), which
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

/// `--serve`: one warm session; each line `N` on stdin runs N round trips
/// of `true` and prints their latencies in ms on one line.
async fn serve() {
    use std::io::{BufRead, Write};
    let mut s = Session::start(norc(false)).await.unwrap();
    let opts = RunOptions::default();
    let (tx, mut rx) = tokio::sync::mpsc::channel::<usize>(1);
    std::thread::spawn(move || {
        for line in std::io::stdin().lock().lines() {
            let Ok(n) = line.unwrap_or_default().trim().parse() else {
                break;
            };
            if tx.blocking_send(n).is_err() {
                break;
            }
        }
    });
    println!("ready");
    while let Some(n) = rx.recv().await {
        let mut ms = Vec::with_capacity(n);
        for _ in 0..n {
            let t = Instant::now();
            let r = s.run("true", &opts).await.unwrap();
            ms.push(format!("{:.4}", t.elapsed().as_secs_f64() * 1e3));
            assert_eq!((r.status, r.exit_code), (Status::Exited, Some(0)));
        }
        let mut out = std::io::stdout().lock();
        writeln!(out, "{}", ms.join(" ")).unwrap();
        out.flush().unwrap();
    }
}

/// Nanoseconds on a CPU so far (`/proc/.../schedstat`, first field) of
/// process `pid`, all threads (`None`: this process).
fn cpu_ns(pid: Option<i32>) -> u64 {
    let dir = match pid {
        Some(p) => format!("/proc/{p}/task"),
        None => "/proc/self/task".to_owned(),
    };
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|t| std::fs::read_to_string(t.path().join("schedstat")).ok())
        .filter_map(|s| s.split_whitespace().next()?.parse::<u64>().ok())
        .sum()
}

/// The round trip's latency (median, p90, p99 ms), and the CPU time per
/// call of the shell and of this process (µs): where the time goes.
async fn round_trip(calls: usize) -> ((f64, f64, f64), (f64, f64)) {
    let mut s = Session::start(norc(false)).await.unwrap();
    let shell = s.shell_pid();
    let opts = RunOptions::default();
    for _ in 0..50 {
        s.run("true", &opts).await.unwrap();
    }
    let mut ms = Vec::with_capacity(calls);
    let (shell0, own0) = (cpu_ns(shell), cpu_ns(None));
    for _ in 0..calls {
        let t = Instant::now();
        let r = s.run("true", &opts).await.unwrap();
        ms.push(t.elapsed().as_secs_f64() * 1e3);
        assert_eq!((r.status, r.exit_code), (Status::Exited, Some(0)));
    }
    let per_call = |ns: u64| ns as f64 / calls as f64 / 1e3;
    let cpu = (
        per_call(cpu_ns(shell) - shell0),
        per_call(cpu_ns(None) - own0),
    );
    (stats(ms), cpu)
}

/// Records when the program first blocks reading the terminal, polled every
/// 0.2 ms from another thread: python3 (a child of the shell, found once)
/// in any read/poll/select on the PTY; bash's `read` builtin in
/// `read(0, _, n)` with n other than 1024 (bash 5.2 reads 1024 bytes at a
/// time at its prompt and 4096 in `read`, so the prompt before the command
/// does not count). x86_64 syscall numbers. Only those processes' files
/// are read, not all of `/proc`: the watcher must not load the machine it
/// measures.
fn watch_block(root: i32, stop: Arc<AtomicBool>, at: Arc<AtomicU64>, t0: Instant) {
    std::thread::spawn(move || {
        let pts = std::fs::read_link(format!("/proc/{root}/fd/0")).unwrap();
        let id = tether_pty::inspect::PtyIdentity {
            pts,
            session: root,
            top: root,
        };
        let mut python = None;
        while !stop.load(Ordering::Relaxed) && at.load(Ordering::Relaxed) == 0 {
            let shell_reads = tether_pty::procfs::syscall(root, root)
                .is_some_and(|c| c.nr == 0 && c.args[0] == 0 && c.args[2] != 1024);
            if python.is_none() {
                python = children(root).into_iter().find(|p| {
                    std::fs::read_to_string(format!("/proc/{p}/comm"))
                        .is_ok_and(|c| c.starts_with("python"))
                });
            }
            let blocked =
                shell_reads || python.is_some_and(|p| tether_pty::inspect::reads_terminal(&id, p));
            if blocked {
                at.store(t0.elapsed().as_micros() as u64 + 1, Ordering::Relaxed);
            }
            std::thread::sleep(Duration::from_micros(200));
        }
    });
}

/// The children of `pid`'s main thread.
fn children(pid: i32) -> Vec<i32> {
    std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children"))
        .map(|s| {
            s.split_whitespace()
                .filter_map(|p| p.parse().ok())
                .collect()
        })
        .unwrap_or_default()
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

fn main() {
    let args: Vec<String> = std::env::args().collect();
    // `--current-thread`: the engine on one thread, as `tether mcp` runs.
    let rt = if args.iter().any(|a| a == "--current-thread") {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
    } else {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
    };
    let rt = rt.unwrap();
    if args.iter().any(|a| a == "--serve") {
        // The calls run in a task on the runtime, as the daemon's do.
        return rt.block_on(async { tokio::spawn(serve()).await.unwrap() });
    }
    rt.block_on(bench(args));
}

async fn bench(args: Vec<String>) {
    let quick = args.iter().any(|a| a == "--quick");
    let only = args
        .iter()
        .position(|a| a == "--only")
        .and_then(|i| args.get(i + 1).cloned());
    let part = |name: &str| only.as_deref().is_none_or(|o| o == name);
    let calls = args
        .iter()
        .position(|a| a == "--calls")
        .and_then(|i| args.get(i + 1)?.parse().ok())
        .unwrap_or(if quick { 200 } else { 1000 });
    println!("# tether-shell engine benchmark ({} calls)\n", calls);

    let ((med, p90, p99), (shell_us, engine_us)) = if part("round-trip") {
        round_trip(calls).await
    } else {
        ((f64::NAN, f64::NAN, f64::NAN), (f64::NAN, f64::NAN))
    };
    let peers = if part("peers") { peers(calls) } else { None };
    println!("| round trip of `true` | median ms | p90 ms | p99 ms | median ratio to tether |");
    println!("| --- | ---: | ---: | ---: | ---: |");
    println!(
        "| tether warm bash session (nonce marks, exit, cwd) | {med:.3} | {p90:.3} | {p99:.3} | 1.00 |"
    );
    let share = format!("CPU per call: shell {shell_us:.0} µs, engine {engine_us:.0} µs");
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

    if part("round-trip") {
        println!("\n{share}");
    }

    let rounds = if quick { 10 } else { 30 };
    if part("waiting") {
        let (pm, p9, p99) = waiting_latency("python3 -q", "exit()\n", rounds).await;
        let (rm, r9, r99) = waiting_latency("read x", "answer\n", rounds).await;
        println!(
            "\n| waiting_for_input detection, from the program blocking | median ms | p90 ms | p99 ms |"
        );
        println!("| --- | ---: | ---: | ---: |");
        println!("| `python3 -q` | {pm:.1} | {p9:.1} | {p99:.1} |");
        println!("| `read x` | {rm:.1} | {r9:.1} | {r99:.1} |");
    }
    if !part("flood") && !part("idle") {
        return;
    }

    let big = if quick { 64 << 20 } else { 512 << 20 };
    let small = if quick { 16 << 20 } else { 64 << 20 };
    if part("flood") {
        flood_table(big, small).await;
    }
    if part("idle") {
        idle_table(if quick { 20 } else { 100 }).await;
    }
}

async fn flood_table(big: u64, small: u64) {
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
}

async fn idle_table(count: usize) {
    let (rss, (sm, s9, s99)) = idle_sessions(count).await;
    println!("\n| {count} idle `--norc` bash sessions | value |");
    println!("| --- | ---: |");
    println!(
        "| engine RSS added (shells excluded: they are other processes) | {:.1} MB |",
        rss as f64 / 1024.0
    );
    println!("| session start to ready, median / p90 / p99 | {sm:.1} / {s9:.1} / {s99:.1} ms |");
}
