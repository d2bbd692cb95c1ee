//! The master's reading and writing: bytes written at once or queued for
//! the writer thread, read by a thread or by a task on the runtime, arrive
//! whole and in order, with back-pressure and exact counters.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;
use tether_pty::LocalPty;
use tether_transport::{ExitInfo, OutputStream, Terminal};

/// `program` on the runtime path (`spawn_on` the current runtime).
fn spawn_here(program: &str, args: &[&str], raw: bool) -> (LocalPty, OutputStream) {
    let mut s = spec(program, args);
    if raw {
        s.echo = false;
        s.output_processing = false;
    }
    let pty = LocalPty::spawn_on(&s, &tokio::runtime::Handle::current()).unwrap();
    let out = pty.take_output().unwrap();
    (pty, out)
}

/// Numbered lines of printable text, `total` bytes at least: any lost,
/// doubled or swapped piece shows in a comparison.
fn numbered_lines(total: usize) -> Vec<u8> {
    let mut all = Vec::with_capacity(total + 128);
    let mut i = 0u64;
    while all.len() < total {
        all.extend(format!("{i:08} {}\n", "abcdefghijklmnopqrstuvwxyz".repeat(3)).as_bytes());
        i += 1;
    }
    all
}

/// Writes `payload` in pieces of mixed sizes (single bytes, as typed, and
/// pastes of up to 256 KiB), so that some go straight to the kernel and
/// some to the writer thread behind bytes it still holds.
fn write_in_pieces(pty: &LocalPty, payload: &[u8]) {
    let sizes = [1, 1, 7, 4096, 1, 65_536, 3, 262_144, 100];
    let mut at = 0;
    for size in sizes.iter().cycle() {
        if at == payload.len() {
            break;
        }
        let end = (at + size).min(payload.len());
        pty.write(payload[at..end].to_vec()).unwrap();
        at = end;
    }
}

async fn read_exactly(out: &mut OutputStream, len: usize) -> Vec<u8> {
    let deadline = tokio::time::Instant::now() + DEADLINE;
    let mut all = Vec::with_capacity(len);
    while all.len() < len {
        match tokio::time::timeout_at(deadline, out.recv()).await {
            Ok(Some(chunk)) => all.extend(chunk),
            Ok(None) => panic!("stream ended after {} of {len} bytes", all.len()),
            Err(_) => panic!("{} of {len} bytes within {DEADLINE:?}", all.len()),
        }
    }
    all
}

/// `cat` on a terminal with no echo and no output processing gives back
/// exactly what it was given.
async fn a_mebibyte_through_cat_comes_back_whole_and_in_order(
    pty: LocalPty,
    mut out: OutputStream,
) {
    let payload = numbered_lines(1 << 20);
    write_in_pieces(&pty, &payload);
    let back = read_exactly(&mut out, payload.len()).await;
    assert!(back == payload, "bytes lost, doubled or reordered");
    // Every accepted byte reached the kernel, and every byte read counted.
    let i = inspect_until(&pty, "nothing left queued", |i| i.input_queued == Some(0));
    assert_eq!(i.output_delivered, payload.len() as u64);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_paste_through_cat_on_the_runtime_path_arrives_whole() {
    let (pty, out) = spawn_here("cat", &[], true);
    a_mebibyte_through_cat_comes_back_whole_and_in_order(pty, out).await;
}

#[tokio::test(flavor = "current_thread")]
async fn a_paste_through_cat_on_a_current_thread_runtime_arrives_whole() {
    // The reader task shares the one thread with the consumer.
    let (pty, out) = spawn_here("cat", &[], true);
    a_mebibyte_through_cat_comes_back_whole_and_in_order(pty, out).await;
}

#[tokio::test]
async fn a_paste_through_cat_on_the_thread_path_arrives_whole() {
    let mut s = spec("cat", &[]);
    s.echo = false;
    s.output_processing = false;
    let pty = LocalPty::spawn(&s).unwrap();
    let out = pty.take_output().unwrap();
    a_mebibyte_through_cat_comes_back_whole_and_in_order(pty, out).await;
}

/// A flood nobody reads is held by the kernel (the reader stops at a
/// bounded queue), then arrives whole once read.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_on_the_runtime_path_is_held_then_arrives_whole() {
    const TOTAL: u64 = 16 << 20;
    let line = "0123456789abcdef\n";
    let script = format!("yes {} | head -c {TOTAL}", line.trim_end());
    let (pty, mut out) = spawn_here("sh", &["-c", &script], true);
    // Nothing read: the reader stops at its bounded queue (64 chunks of
    // at most 64 KiB, and one in hand) and the kernel holds the program.
    // An unbounded reader would take the whole flood and never settle
    // below it (settled: the same count on four inspections in a row, as
    // a busy machine can pause a running reader for one).
    let (last, same) = (std::cell::Cell::new(u64::MAX), std::cell::Cell::new(0));
    let held = inspect_until(&pty, "the flood held", |i| {
        let now = i.output_delivered;
        same.set(if last.replace(now) == now {
            same.get() + 1
        } else {
            0
        });
        same.get() >= 3 && i.output_unread.is_some_and(|n| n > 0) && now < TOTAL
    });
    assert!(held.output_delivered <= 65 * 64 * 1024, "{held:?}");
    assert!(pty.exit().borrow().is_none(), "the program was not held");
    let all = read_to_end(&mut out).await;
    assert_eq!(all.len() as u64, TOTAL);
    assert!(
        all.chunks(line.len())
            .all(|c| line.as_bytes().starts_with(c)),
        "bytes lost or reordered"
    );
    assert_eq!(pty.inspect().unwrap().output_delivered, TOTAL);
}

#[tokio::test]
async fn the_runtime_path_ends_the_stream_when_the_program_exits() {
    let (pty, mut out) = spawn_here("sh", &["-c", "printf 'hello\\n'; exit 3"], false);
    assert_eq!(read_to_end(&mut out).await, b"hello\r\n");
    let info = *pty.exit().wait_for(|e| e.is_some()).await.unwrap();
    assert_eq!(info, Some(ExitInfo::Code(3)));
}

#[tokio::test]
async fn keystrokes_are_echoed_in_order_on_the_runtime_path() {
    // Echo on, as for a person: each byte written at once, echoed back.
    let (pty, mut out) = spawn_here(
        "sh",
        &["-c", "stty raw; echo ready; exec cat >/dev/null"],
        false,
    );
    read_until(&mut out, &mut Vec::new(), "ready").await;
    let typed = b"the quick brown fox";
    for b in typed {
        pty.write(vec![*b]).unwrap();
    }
    let mut seen = Vec::new();
    read_until(&mut out, &mut seen, "the quick brown fox").await;
}

#[test]
fn the_output_stream_ends_when_its_runtime_shuts_down() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let pty = LocalPty::spawn_on(&spec("cat", &[]), runtime.handle()).unwrap();
    let mut out = pty.take_output().unwrap();
    drop(runtime);
    assert_eq!(out.blocking_recv(), None);
    // Writing still works: the writer does not need the runtime.
    pty.write(b"x".to_vec()).unwrap();
}
