//! Throughput of the filter, tracker and text projection over ~64 MiB
//! corpora, beside the bare `vte` parser on the same bytes.
//!
//! Run: `cargo bench -p tether-term --bench throughput`. Figures go to
//! `docs/BENCHMARKS.md`.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::hint::black_box;
use std::path::Path;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use tether_term::{MarkerScanner, ResponseFilter, ScreenTracker, TextProjector};

const CORPUS: usize = 64 << 20;
const READ: usize = 64 << 10;

/// Plain text: words, punctuation, some UTF-8, newlines every ~70 bytes.
fn plain() -> Vec<u8> {
    let words = [
        "the",
        "quick",
        "brown",
        "fox",
        "jumps",
        "over",
        "lazy",
        "dog",
        "café",
        "naïve",
        "résumé",
        "terminal",
        "session",
        "compile",
        "warning:",
        "error[E0308]",
        "→",
        "世界",
    ];
    let mut out = Vec::with_capacity(CORPUS + 128);
    let mut i = 0usize;
    while out.len() < CORPUS {
        let mut line = String::new();
        while line.len() < 70 {
            line.push_str(words[(i * 7 + i / 3) % words.len()]);
            line.push(' ');
            i += 1;
        }
        line.push('\n');
        out.extend_from_slice(line.as_bytes());
    }
    out.truncate(CORPUS);
    out
}

/// Dense SGR: every word coloured, like `ls --color` or compiler output.
fn dense_sgr() -> Vec<u8> {
    let mut out = Vec::with_capacity(CORPUS + 128);
    let mut i = 0u32;
    while out.len() < CORPUS {
        out.extend_from_slice(format!("\x1b[1;{}mword{}\x1b[0m ", 31 + i % 7, i % 100).as_bytes());
        if i % 8 == 7 {
            out.extend_from_slice(b"\r\n");
        }
        i += 1;
    }
    out.truncate(CORPUS);
    out
}

/// The recorded fixtures, repeated to the corpus size.
fn fixtures() -> Option<Vec<u8>> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures");
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .collect();
    names.sort();
    let mut one = Vec::new();
    for d in names {
        if let Ok(bytes) = std::fs::read(d.join("output.bin")) {
            one.extend_from_slice(&bytes);
        }
    }
    if one.is_empty() {
        return None;
    }
    Some(one.iter().copied().cycle().take(CORPUS).collect())
}

/// The fixtures interleaved with plain text, half and half.
fn mixed(fixtures: &[u8], plain: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(CORPUS);
    for (a, b) in fixtures.chunks(READ).zip(plain.chunks(READ)) {
        out.extend_from_slice(&a[..a.len() / 2]);
        out.extend_from_slice(&b[..b.len() / 2]);
    }
    out
}

struct NullPerform(u64);

impl vte::Perform for NullPerform {
    fn print(&mut self, c: char) {
        self.0 = self.0.wrapping_add(c as u64);
    }
    fn execute(&mut self, b: u8) {
        self.0 = self.0.wrapping_add(u64::from(b));
    }
    fn csi_dispatch(&mut self, _: &vte::Params, _: &[u8], _: bool, action: char) {
        self.0 = self.0.wrapping_add(action as u64);
    }
    fn osc_dispatch(&mut self, params: &[&[u8]], _: bool) {
        self.0 = self.0.wrapping_add(params.len() as u64);
    }
    fn esc_dispatch(&mut self, _: &[u8], _: bool, b: u8) {
        self.0 = self.0.wrapping_add(u64::from(b));
    }
}

fn bench_corpus(c: &mut Criterion, name: &str, data: &[u8]) {
    let mut g = c.benchmark_group(name);
    g.throughput(Throughput::Bytes(data.len() as u64));
    g.sample_size(10);
    g.bench_function(BenchmarkId::from_parameter("vte"), |b| {
        b.iter(|| {
            let mut parser = vte::Parser::new();
            let mut perform = NullPerform(0);
            for chunk in data.chunks(READ) {
                parser.advance(&mut perform, chunk);
            }
            black_box(perform.0)
        })
    });
    g.bench_function(BenchmarkId::from_parameter("filter"), |b| {
        let mut out = Vec::with_capacity(READ + 4096);
        b.iter(|| {
            let mut f = ResponseFilter::new();
            let mut n = 0;
            for chunk in data.chunks(READ) {
                out.clear();
                f.feed(chunk, &mut out);
                n += out.len();
            }
            black_box(n)
        })
    });
    g.bench_function(BenchmarkId::from_parameter("tracker"), |b| {
        b.iter(|| {
            let mut t = ScreenTracker::new();
            for chunk in data.chunks(READ) {
                t.written(chunk);
            }
            black_box(t.state().modify_other_keys)
        })
    });
    g.bench_function(BenchmarkId::from_parameter("projection"), |b| {
        let mut out = String::with_capacity(2 * READ);
        b.iter(|| {
            let mut p = TextProjector::new();
            let mut n = 0;
            for chunk in data.chunks(READ) {
                out.clear();
                p.feed(chunk, &mut out);
                n += out.len();
            }
            black_box(n)
        })
    });
    g.bench_function(BenchmarkId::from_parameter("markers"), |b| {
        let mut out = Vec::new();
        b.iter(|| {
            let mut m = MarkerScanner::new("0123456789abcdef0123").unwrap();
            for chunk in data.chunks(READ) {
                out.clear();
                m.feed(chunk, &mut out);
            }
            black_box(m.offset())
        })
    });
    g.finish();
}

fn throughput(c: &mut Criterion) {
    let plain = plain();
    bench_corpus(c, "plain", &plain);
    bench_corpus(c, "dense-sgr", &dense_sgr());
    match fixtures() {
        Some(fx) => {
            bench_corpus(c, "fixtures", &fx);
            bench_corpus(c, "mixed", &mixed(&fx, &plain));
        }
        None => eprintln!("no recorded fixtures under tests/fixtures: skipping those corpora"),
    }
}

criterion_group!(benches, throughput);
criterion_main!(benches);
