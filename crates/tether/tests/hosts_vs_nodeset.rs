//! `tether hosts` agrees with ClusterShell's `nodeset` (Debian's
//! `clustershell` package, which `scripts/test` installs): on hand-picked
//! expressions through both command lines, and on a few thousand generated
//! ones through ClusterShell's `NodeSet` library (the code behind
//! `nodeset`) and ours, in one process each. Skips with a message when
//! ClusterShell is missing.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::Value;
use tether_cluster::NodeSet;

const TETHER: &str = env!("CARGO_BIN_EXE_tether");

const HAND: &[&str] = &[
    "web[01-03]",
    "web1,web2,web3,web10",
    "b2,a1,a10,a2",
    "rack[1-2]-n[1-3]",
    "n[1-9/2]",
    "n[1-10]!n5",
    "n[1-10]&n[5-15]",
    "n[1-5]^n[4-8]",
    "node1,node10!node1",
    "node[1-20]!node1",
    "web01,web1,web001",
    "n[01-10],n[5-15]",
    "a1b2,a1b3,a2b2",
    "a1b3,a2b2,a2b3",
    "r[1-2]n[1-2]c[1-2]!r1n1c1",
    "n[08-11]",
    "n[1-3]-[1-2]",
    "n[1-4],n7!n[2-3]",
    "n9,n10,m",
    "10.0.0.[1-3]",
    "a,a1,a1b1,b",
    "n[0-2],n[00-02]",
    "x[1-3]y[1-3]!x2y2",
    "web-[1-4]-eth[0-1]&web-[2-5]-eth0",
];

/// A small deterministic generator (no seed from the clock: a failure
/// reproduces).
struct Gen(u64);

impl Gen {
    fn next(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % n
    }

    fn pick<'a>(&mut self, from: &[&'a str]) -> &'a str {
        from[self.next(from.len() as u64) as usize]
    }

    fn number(&mut self) -> String {
        let v = self.next(30);
        match self.next(4) {
            0 => format!("{v:02}"),
            1 => format!("{v:03}"),
            _ => v.to_string(),
        }
    }

    fn range(&mut self) -> String {
        let a = self.next(25);
        let b = a + self.next(12);
        let pad = [0, 0, 2, 3][self.next(4) as usize];
        let mut r = format!("{a:0pad$}-{b:0pad$}");
        if self.next(5) == 0 {
            r.push_str(&format!("/{}", 1 + self.next(3)));
        }
        if self.next(3) == 0 {
            r.push_str(&format!(",{}", self.number()));
        }
        r
    }

    fn term(&mut self) -> String {
        let mut t = self
            .pick(&["n", "web", "rack", "a", "db.", "x-", "node"])
            .to_owned();
        let dims = 1 + self.next(3);
        for d in 0..dims {
            if d > 0 {
                t.push_str(self.pick(&["-", "n", ".", "c"]));
            }
            if self.next(3) == 0 {
                t.push_str(&self.number());
            } else {
                t.push_str(&format!("[{}]", self.range()));
            }
        }
        if self.next(6) == 0 {
            t.push_str(self.pick(&["-ib", "x", ".lan"]));
        }
        t
    }

    fn expression(&mut self) -> String {
        let mut e = self.term();
        for _ in 0..self.next(4) {
            e.push_str(self.pick(&[",", ",", "!", "&", "^"]));
            e.push_str(&self.term());
        }
        e
    }
}

/// The Python that runs `nodeset` (its shebang): the one with ClusterShell.
fn nodeset_python() -> String {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|d| d.join("nodeset"))
        .find(|p| p.is_file())
        .and_then(|p| std::fs::read_to_string(p).ok())
        .and_then(|text| {
            text.lines()
                .next()
                .and_then(|l| l.strip_prefix("#!"))
                .map(|l| l.trim().to_owned())
        })
        .unwrap_or_else(|| "python3".to_owned())
}

fn ours(expr: &str) -> Value {
    match NodeSet::parse(expr) {
        Ok(s) => serde_json::json!({"e": s.names(), "f": s.fold(), "c": s.len()}),
        Err(e) => serde_json::json!({"error": e.to_string()}),
    }
}

#[test]
fn hosts_agrees_with_nodeset() {
    if Command::new("nodeset").arg("--version").output().is_err() {
        eprintln!(
            "SKIPPED: ClusterShell's nodeset is not installed (scripts/test installs clustershell)"
        );
        return;
    }
    // The command lines, side by side.
    for expr in HAND {
        for mode in ["-e", "-f", "-c"] {
            let theirs = Command::new("nodeset").args([mode, expr]).output().unwrap();
            let mine = Command::new(TETHER)
                .args(["hosts", mode, expr])
                .output()
                .unwrap();
            assert!(theirs.status.success(), "nodeset {mode} {expr}");
            assert_eq!(
                String::from_utf8_lossy(&mine.stdout),
                String::from_utf8_lossy(&theirs.stdout),
                "tether hosts {mode} {expr:?}"
            );
        }
    }
    // Thousands more through the libraries.
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/hosts/clustershell.py");
    let mut py = Command::new(nodeset_python())
        .arg(script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut to = py.stdin.take().unwrap();
    let mut from = BufReader::new(py.stdout.take().unwrap());
    let mut g = Gen(0x7e7e_5eed);
    let mut exprs: Vec<String> = HAND.iter().map(|s| (*s).to_owned()).collect();
    exprs.extend((0..3000).map(|_| g.expression()));
    exprs.extend(["n[3-1]", "n[a-b]", "n[1-3", "n]", "n[1-3][4]", "n[1-3/0]"].map(String::from));
    let (mut agreed, mut errors) = (0, 0);
    for expr in &exprs {
        writeln!(to, "{expr}").unwrap();
        let mut line = String::new();
        from.read_line(&mut line).unwrap();
        let theirs: Value = serde_json::from_str(&line).unwrap();
        let mine = ours(expr);
        if theirs.get("error").is_some() {
            assert!(
                mine.get("error").is_some(),
                "ClusterShell refuses {expr:?} ({theirs}), we made {mine}"
            );
            errors += 1;
            continue;
        }
        assert_eq!(mine, theirs, "for {expr:?}");
        agreed += 1;
    }
    drop(to);
    py.wait().unwrap();
    assert!(
        agreed > 2900 && errors >= 5,
        "{agreed} agreed, {errors} refused by both"
    );
}
