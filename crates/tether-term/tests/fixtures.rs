//! Assertions on recorded output of real programs (`tests/fixtures/`, made by
//! `scripts/record-fixture.py` in a real PTY): no reply leaks, no query or
//! write dropped, the tracker's end state, and the projected text.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;

use tether_term::{
    Baseline, Captured, ResponseFilter, Scanner, Screen, ScreenState, ScreenTracker, TextProjector,
    filter::is_reply, plan_restore,
};

const ALL: &[&str] = &[
    "echo-leak",
    "git-log",
    "htop",
    "kitty-keyboard",
    "less",
    "progress-curl",
    "progress-python",
    "python-repl",
    "tmux",
    "top",
    "vim",
];

fn dir(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures")
        .join(name)
}

fn output(name: &str) -> Vec<u8> {
    std::fs::read(dir(name).join("output.bin")).unwrap()
}

fn meta(name: &str) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(dir(name).join("meta.json")).unwrap()).unwrap()
}

fn filter(bytes: &[u8], chunk: usize) -> Vec<u8> {
    let mut f = ResponseFilter::new();
    let mut out = Vec::new();
    for c in bytes.chunks(chunk) {
        f.feed(c, &mut out);
    }
    f.flush(&mut out);
    out
}

fn project(bytes: &[u8], chunk: usize) -> String {
    let mut p = TextProjector::new();
    let mut out = String::new();
    for c in bytes.chunks(chunk) {
        p.feed(c, &mut out);
    }
    p.finish(&mut out);
    out
}

fn track(bytes: &[u8]) -> ScreenState {
    let mut t = ScreenTracker::new();
    for c in bytes.chunks(5) {
        t.written(c);
    }
    t.state().clone()
}

fn replies_in(bytes: &[u8]) -> usize {
    let mut s = Scanner::escapes_only();
    let mut n = 0;
    s.feed(bytes, |e| n += usize::from(is_reply(&e.token)));
    n
}

#[test]
fn every_fixture_is_present() {
    for name in ALL {
        assert!(
            !output(name).is_empty(),
            "{name}/output.bin is missing or empty"
        );
    }
}

#[test]
fn echo_leak_loses_exactly_the_labelled_replies() {
    let out = output("echo-leak");
    let sequences = meta("echo-leak")["sequences"].as_array().unwrap().clone();
    let mut want = Vec::new();
    let mut at = 0;
    let mut kept = Vec::new();
    let mut replies = 0;
    for s in &sequences {
        let offset = s["offset"].as_u64().unwrap() as usize;
        let len = s["length"].as_u64().unwrap() as usize;
        if s["role"] == "reply" {
            want.extend_from_slice(&out[at..offset]);
            at = offset + len;
            replies += 1;
        } else {
            kept.push(out[offset..offset + len].to_vec());
        }
    }
    want.extend_from_slice(&out[at..]);
    assert_eq!(replies, 6, "the recording has six echoed replies");
    assert!(kept.len() >= 10, "and queries and writes");
    for chunk in [1, 2, 3, 7, 64, 4096] {
        let got = filter(&out, chunk);
        assert_eq!(got, want, "chunk size {chunk}");
    }
    let got = filter(&out, 4096);
    for seq in kept {
        assert!(
            got.windows(seq.len()).any(|w| w == seq),
            "kept {:?}",
            String::from_utf8_lossy(&seq)
        );
    }
    assert_eq!(replies_in(&got), 0);
}

#[test]
fn reply_free_recordings_pass_through_byte_for_byte() {
    for name in ALL.iter().filter(|n| **n != "echo-leak") {
        let out = output(name);
        for chunk in [1, 3, 4096] {
            assert!(
                filter(&out, chunk) == out,
                "{name}: the filter changed bytes (chunk {chunk})"
            );
        }
    }
}

#[test]
fn queries_in_recordings_are_kept() {
    // vim and tmux send queries (DA2, XTGETTCAP, XTVERSION, OSC 11 ?...).
    let vim = filter(&output("vim"), 4096);
    for q in [&b"\x1b[>c"[..], b"\x1bP+q", b"\x1b]11;?"] {
        assert!(
            vim.windows(q.len()).any(|w| w == q),
            "vim query {:?}",
            String::from_utf8_lossy(q)
        );
    }
    let tmux = filter(&output("tmux"), 4096);
    assert!(tmux.windows(4).any(|w| w == b"\x1b[>c" || w == b"\x1b[>q"));
}

fn state_summary(s: &ScreenState) -> (Screen, Vec<u32>, u32, Vec<u32>, Vec<u32>) {
    (
        s.screen,
        s.modes_on(),
        s.modify_other_keys,
        s.kitty_main.pushed.clone(),
        s.kitty_alt.pushed.clone(),
    )
}

#[test]
fn tracker_end_states() {
    let clean = (Screen::Main, vec![], 0, vec![], vec![]);
    for name in [
        "vim",
        "less",
        "htop",
        "top",
        "tmux",
        "git-log",
        "python-repl",
        "progress-curl",
        "progress-python",
        "echo-leak",
    ] {
        assert_eq!(
            state_summary(&track(&output(name))),
            clean,
            "{name} resets what it sets"
        );
    }
    let kitty = track(&output("kitty-keyboard"));
    assert_eq!(
        state_summary(&kitty),
        (
            Screen::Alternate,
            vec![1000, 1004, 1006, 2004],
            2,
            vec![15],
            vec![5]
        )
    );
    assert_eq!(
        plan_restore(&Baseline::Captured(Captured::default()), &kitty),
        b"\x1b[?1000;1004;1006;2004l\x1b[?1049l\x1b[<1u\x1b7\x1b[?47h\x1b[<1u\x1b[?47l\x1b8\x1b[>4;0m"
    );
}

#[test]
fn tracker_sees_modes_while_programs_run() {
    // Cut each recording where its program is surely running (half way).
    let running = |name: &str| {
        let out = output(name);
        track(&out[..out.len() / 2])
    };
    let vim = running("vim");
    assert_eq!(vim.screen, Screen::Alternate);
    assert!(vim.bracketed_paste);
    assert_eq!(vim.modify_other_keys, 2);
    let htop = running("htop");
    assert_eq!(htop.screen, Screen::Alternate);
    assert!(htop.mouse.normal && htop.mouse.sgr);
    assert_eq!(running("less").screen, Screen::Alternate);
    assert_eq!(running("top").screen, Screen::Main);
}

#[test]
fn projection_is_independent_of_chunking() {
    for name in ALL {
        let out = output(name);
        let whole = project(&out, out.len().max(1));
        for chunk in [1, 2, 5, 4096] {
            assert_eq!(project(&out, chunk), whole, "{name} chunk {chunk}");
        }
        assert!(
            !whole.contains('\x1b'),
            "{name}: no escape survives projection"
        );
    }
}

#[test]
fn progress_bars_project_to_their_final_frames() {
    let text = project(&output("progress-python"), 4096);
    assert_eq!(text.matches("500/500").count(), 1, "{text}");
    assert!(text.lines().count() < 20, "{text}");
    let curl = project(&output("progress-curl"), 4096);
    assert!(curl.contains("100.0%"), "{curl}");
    assert!(curl.lines().count() < 5, "{curl}");
}

#[test]
fn projection_snapshots() {
    for name in [
        "git-log",
        "python-repl",
        "progress-python",
        "progress-curl",
        "echo-leak",
        "kitty-keyboard",
        "less",
    ] {
        let text = project(&output(name), 4096);
        insta::assert_snapshot!(name, text);
    }
}
