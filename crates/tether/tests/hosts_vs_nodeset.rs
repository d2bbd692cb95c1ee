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
use tether_cluster::{ClusterError, NodeSet, RangeProblem, SyntaxProblem};

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

/// Malformed (or not quite) variants of valid expressions, the typos
/// people make: an operator dropped, doubled or put at an end; a bracket
/// lost, doubled or added; one end of a range padded differently; digits
/// next to a bracket; a range's pieces emptied; spaces next to operators.
impl Gen {
    fn at(&mut self, text: &str) -> usize {
        let bounds: Vec<usize> = (0..=text.len())
            .filter(|&i| text.is_char_boundary(i))
            .collect();
        bounds[self.next(bounds.len() as u64) as usize]
    }

    /// A random position of one of `chars` in `text`.
    fn find(&mut self, text: &str, chars: &[char]) -> Option<usize> {
        let hits: Vec<usize> = text
            .char_indices()
            .filter(|(_, c)| chars.contains(c))
            .map(|(i, _)| i)
            .collect();
        (!hits.is_empty()).then(|| hits[self.next(hits.len() as u64) as usize])
    }

    fn mutate(&mut self, e: &mut String) {
        const OPS: &[char] = &[',', '!', '&', '^'];
        match self.next(11) {
            0 => {
                if let Some(i) = self.find(e, OPS) {
                    e.remove(i);
                }
            }
            1 => {
                if let Some(i) = self.find(e, OPS) {
                    let c = self.pick(&[",", "!", "&", "^"]);
                    e.insert_str(i, c);
                }
            }
            2 => {
                let c = self.pick(&[",", "!", "&", "^"]);
                if self.next(2) == 0 {
                    e.insert_str(0, c);
                } else {
                    e.push_str(c);
                }
            }
            3 => {
                if let Some(i) = self.find(e, &['[', ']']) {
                    e.remove(i);
                }
            }
            4 => {
                let i = self.at(e);
                e.insert_str(i, self.pick(&["[", "]", "[1]", "[]", "]["]));
            }
            5 => {
                // One end of a range padded differently.
                if let Some(i) = self.find(e, &['-']) {
                    let j = if self.next(2) == 0 {
                        i + 1
                    } else {
                        i.saturating_sub(1)
                    };
                    let j = e[..j]
                        .rfind(|c: char| !c.is_ascii_digit())
                        .map_or(0, |k| k + 1);
                    if e[j..].starts_with('0') && self.next(2) == 0 {
                        e.remove(j);
                    } else {
                        e.insert_str(j, self.pick(&["0", "00", "1"]));
                    }
                }
            }
            6 => {
                // Digits next to a bracket.
                if let Some(i) = self.find(e, &['[', ']']) {
                    let at = if e[i..].starts_with(']') { i + 1 } else { i };
                    e.insert_str(at, self.pick(&["0", "1", "7", "05"]));
                }
            }
            7 => {
                // A piece of a range list emptied or cut.
                if let Some(i) = self.find(e, &['0', '1', '2', '3', '4', '5', '6', '7', '8', '9']) {
                    let end = e[i..]
                        .find(|c: char| !c.is_ascii_digit())
                        .map_or(e.len(), |k| i + k);
                    e.replace_range(i..end, "");
                }
            }
            8 => {
                let i = self.at(e);
                e.insert_str(i, self.pick(&["-", "/", "/2", ",", "-3", "0"]));
            }
            9 => {
                if !e.is_empty() {
                    let i = self.at(&e[..e.len() - 1]);
                    let c = e[i..].chars().next().unwrap();
                    e.insert(i, c);
                }
            }
            _ => {
                if !e.is_empty() {
                    let i = self.at(&e[..e.len() - 1]);
                    e.remove(i);
                }
            }
        }
    }

    fn malformed(&mut self) -> String {
        let mut e = self.expression();
        for _ in 0..1 + self.next(3) {
            self.mutate(&mut e);
        }
        // Spaces next to an operator (last: a later change could make
        // them separate two terms, which is a union here).
        if self.next(6) == 0
            && let Some(i) = self.find(&e, &[',', '!', '&', '^'])
        {
            let c = e[i..].chars().next().unwrap();
            e.replace_range(i..i + 1, &format!(" {c} "));
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
    shown(&NodeSet::parse(expr))
}

fn shown(parsed: &Result<NodeSet, ClusterError>) -> Value {
    match parsed {
        Ok(s) => serde_json::json!({"e": s.names(), "f": s.fold(), "c": s.len()}),
        Err(e) => serde_json::json!({"error": e.to_string()}),
    }
}

/// ClusterShell's `NodeSet` in a Python process, one expression a line.
struct ClusterShell {
    py: std::process::Child,
    to: std::process::ChildStdin,
    from: BufReader<std::process::ChildStdout>,
}

impl ClusterShell {
    fn start() -> ClusterShell {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/hosts/clustershell.py");
        let mut py = Command::new(nodeset_python())
            .arg(script)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let to = py.stdin.take().unwrap();
        let from = BufReader::new(py.stdout.take().unwrap());
        ClusterShell { py, to, from }
    }

    /// What ClusterShell makes of `expr`, as [`ours`] has it.
    fn ask(&mut self, expr: &str) -> Value {
        writeln!(self.to, "{expr}").unwrap();
        let mut line = String::new();
        self.from.read_line(&mut line).unwrap();
        serde_json::from_str(&line).unwrap()
    }

    fn finish(self) {
        drop(self.to);
        let mut py = self.py;
        py.wait().unwrap();
    }
}

/// False (with the reason printed) when `nodeset` is not installed.
fn have_nodeset() -> bool {
    if Command::new("nodeset").arg("--version").output().is_err() {
        eprintln!(
            "SKIPPED: ClusterShell's nodeset is not installed (scripts/test installs clustershell)"
        );
        return false;
    }
    true
}

#[test]
fn hosts_agrees_with_nodeset() {
    if !have_nodeset() {
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
    let mut cs = ClusterShell::start();
    let mut g = Gen(0x7e7e_5eed);
    let mut exprs: Vec<String> = HAND.iter().map(|s| (*s).to_owned()).collect();
    exprs.extend((0..3000).map(|_| g.expression()));
    exprs.extend(["n[3-1]", "n[a-b]", "n[1-3", "n]", "n[1-3][4]", "n[1-3/0]"].map(String::from));
    let (mut agreed, mut errors) = (0, 0);
    for expr in &exprs {
        let theirs = cs.ask(expr);
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
    cs.finish();
    assert!(
        agreed > 2900 && errors >= 5,
        "{agreed} agreed, {errors} refused by both"
    );
}

/// Refusals where tether means to differ: a negative index (`n[-5]`,
/// which ClusterShell reads as a name `n-5`), and more than `MAX_NODES`
/// hosts.
fn refused_on_purpose(parsed: &Result<NodeSet, ClusterError>) -> bool {
    matches!(
        parsed,
        Err(ClusterError::Syntax {
            problem: SyntaxProblem::Range {
                problem: RangeProblem::Negative,
                ..
            },
            ..
        } | ClusterError::TooLarge(_))
    )
}

/// Malformed expressions: tether refuses what ClusterShell refuses, and
/// where both accept they agree; through both command lines for the cases
/// issue 10 names, and through the libraries for thousands of mutations.
#[test]
fn malformed_expressions_are_refused_as_nodeset_refuses_them() {
    if !have_nodeset() {
        return;
    }
    for expr in [
        "n[01-104]",
        "n[002-67]",
        "n[1-6]^",
        "a,&b",
        "n[1-3],",
        "n[1-010]",
        "n[01-9]",
        "n[0-9]",
        "n[0-00]",
        "n1[8-10]",
    ] {
        let theirs = Command::new("nodeset").args(["-e", expr]).output().unwrap();
        let mine = Command::new(TETHER)
            .args(["hosts", "-e", expr])
            .output()
            .unwrap();
        assert_eq!(
            mine.status.success(),
            theirs.status.success(),
            "tether hosts -e {expr:?}: {}",
            String::from_utf8_lossy(&mine.stderr)
        );
        assert_eq!(
            String::from_utf8_lossy(&mine.stdout),
            String::from_utf8_lossy(&theirs.stdout),
            "tether hosts -e {expr:?}"
        );
        if !mine.status.success() {
            let err = String::from_utf8_lossy(&mine.stderr);
            assert!(
                err.lines().count() == 1 && err.contains(expr) && err.contains("column"),
                "one line naming the place: {err}"
            );
        }
    }
    let mut cs = ClusterShell::start();
    let mut g = Gen(0xbad_5eed);
    let (mut accepted, mut refused) = (0, 0);
    for _ in 0..3000 {
        let expr = g.malformed();
        // Big sets cost both sides seconds (folding is quadratic) and add
        // nothing here.
        let parsed = NodeSet::parse(&expr);
        if refused_on_purpose(&parsed) || parsed.as_ref().is_ok_and(|s| s.len() > 300) {
            continue;
        }
        let theirs = cs.ask(&expr);
        let mine = shown(&parsed);
        match (theirs.get("error"), mine.get("error")) {
            (Some(_), Some(_)) => refused += 1,
            (None, None) => {
                assert!(
                    mine == theirs,
                    "for {expr:?}: {} against {}",
                    mine["f"],
                    theirs["f"]
                );
                accepted += 1;
            }
            _ => {
                let theirs: String = theirs.to_string().chars().take(300).collect();
                panic!("for {expr:?}: ClusterShell made {theirs}, we made {mine}")
            }
        }
    }
    cs.finish();
    assert!(
        accepted > 500 && refused > 1500,
        "{accepted} accepted and {refused} refused by both"
    );
}

/// `-x` as ClusterShell's `nodeset -x` takes it, and a host file (`^FILE`,
/// pdsh's syntax) as `nodeset` reads the same node sets given inline.
#[test]
fn exclusions_and_host_files_agree_with_nodeset() {
    if !have_nodeset() {
        return;
    }
    let dir = std::env::temp_dir().join(format!("tether-hostfile-{}", std::process::id()));
    // Fresh: an earlier run with the same pid may have left its files.
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("hosts");
    std::fs::write(&file, "# racks\nrack[1-2]-n[1-4]\n\nlogin[1-2]  # front\n").unwrap();
    let hostfile = format!("^{}", file.display());
    for (set, exclude) in [
        ("n[1-20]", "n[5-9]"),
        ("web[01-10]", "web[02-03],web10"),
        ("rack[1-2]-n[1-4],login[1-2]", "rack2-n[1-4]"),
    ] {
        let theirs = Command::new("nodeset")
            .args(["-f", set, "-x", exclude])
            .output()
            .unwrap();
        let mine = Command::new(TETHER)
            .args(["hosts", "-f", set, "-x", exclude])
            .output()
            .unwrap();
        assert_eq!(
            String::from_utf8_lossy(&mine.stdout),
            String::from_utf8_lossy(&theirs.stdout),
            "tether hosts -x {exclude} {set}"
        );
        // The same set from a host file.
        if set.starts_with("rack") {
            let mine = Command::new(TETHER)
                .args(["hosts", "-f", &hostfile, "-x", exclude])
                .output()
                .unwrap();
            assert_eq!(
                String::from_utf8_lossy(&mine.stdout),
                String::from_utf8_lossy(&theirs.stdout),
                "tether hosts -x {exclude} {hostfile}"
            );
        }
    }
    // A filter keeps what its glob matches; nothing left is an error.
    let out = Command::new(TETHER)
        .args(["hosts", "-e", "--filter", "*-n1", &hostfile])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "rack1-n1 rack2-n1\n");
    let out = Command::new(TETHER)
        .args(["hosts", "-x", "n[1-3]", "n[1-3]"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("leave none"));
    let _ = std::fs::remove_dir_all(&dir);
}
