//! Marker scanner cases: OSC 133, engine marks, nonce checks, forgeries.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use tether_term::markers::{MIN_NONCE_LEN, MarkerScanner};
use tether_term::{Marker, MarkerEvent, TermError};

const NONCE: &str = "a1b2c3d4e5f60718293a4b5c";

fn marks(bytes: &[u8]) -> (Vec<MarkerEvent>, u64) {
    let mut m = MarkerScanner::new(NONCE).unwrap();
    let mut out = Vec::new();
    m.feed(bytes, &mut out);
    (out, m.forged())
}

fn engine(kind: &str, fields: &[(&str, &str)]) -> Marker {
    Marker::Engine {
        kind: kind.into(),
        fields: fields
            .iter()
            .map(|(k, v)| ((*k).into(), (*v).into()))
            .collect(),
    }
}

#[test]
fn osc133_marks_with_offsets() {
    let input = b"\x1b]133;A\x07$ \x1b]133;B\x1b\\ls\r\n\x1b]133;C\x07out\r\n\x1b]133;D;2\x07\x1b]133;D\x07";
    let (got, _) = marks(input);
    let kinds: Vec<_> = got.iter().map(|e| e.marker.clone()).collect();
    assert_eq!(
        kinds,
        vec![
            Marker::PromptStart,
            Marker::CommandStart,
            Marker::OutputStart,
            Marker::CommandEnd { exit: Some(2) },
            Marker::CommandEnd { exit: None },
        ]
    );
    assert_eq!((got[0].start, got[0].end), (0, 8));
    let c = &got[2];
    assert_eq!(&input[c.start as usize..c.end as usize], b"\x1b]133;C\x07");
}

#[test]
fn engine_marks_carry_fields() {
    let input = format!(
        "junk\x1b]6973;{NONCE};start\x07hello\n\x1b]6973;{NONCE};end;exit=3;pipe=0 3;cwd=2f746d70\x1b\\"
    );
    let (got, forged) = marks(input.as_bytes());
    assert_eq!(forged, 0);
    assert_eq!(got[0].marker, engine("start", &[]));
    assert_eq!(got[0].start, 4);
    assert_eq!(
        got[1].marker,
        engine(
            "end",
            &[("exit", "3"), ("pipe", "0 3"), ("cwd", "2f746d70")]
        )
    );
    // The command output sits between the two marks.
    assert_eq!(
        &input.as_bytes()[got[0].end as usize..got[1].start as usize],
        b"hello\n"
    );
}

#[test]
fn wrong_or_missing_nonce_is_a_forgery_not_a_mark() {
    let (got, forged) =
        marks(b"\x1b]6973;0000000000000000;end;exit=0\x07\x1b]6973;\x07\x1b]6973\x07");
    assert!(got.is_empty());
    assert_eq!(forged, 3);
}

#[test]
fn echoed_input_cannot_forge_completion() {
    // What a terminal echoes back for a typed command that prints the mark:
    // the ESC arrives as text, in caret or backslash form, and the nonce is
    // split in the command text.
    let echoed = format!(
        "printf '\\033]6973;%s%s;end;exit=%s\\007' {} {} $?\r\n^[]6973;{NONCE};end^G\r\n",
        &NONCE[..8],
        &NONCE[8..]
    );
    let (got, forged) = marks(echoed.as_bytes());
    assert!(got.is_empty());
    assert_eq!(forged, 0);
}

#[test]
fn marks_are_found_across_any_split() {
    let input = format!("a\x1b]6973;{NONCE};end;exit=0\x1b\\b\x1b]133;D;0\x07");
    let (whole, _) = marks(input.as_bytes());
    for cut in 0..input.len() {
        let mut m = MarkerScanner::new(NONCE).unwrap();
        let mut out = Vec::new();
        m.feed(&input.as_bytes()[..cut], &mut out);
        m.feed(&input.as_bytes()[cut..], &mut out);
        assert_eq!(out, whole, "split at {cut}");
        assert_eq!(m.offset(), input.len() as u64);
    }
}

#[test]
fn nonce_rules() {
    assert_eq!(
        MarkerScanner::new("short").unwrap_err(),
        TermError::InvalidNonce {
            len: 5,
            min: MIN_NONCE_LEN
        }
    );
    assert!(MarkerScanner::new("abcdefghijklmno;p").is_err());
    let mut m = MarkerScanner::new(NONCE).unwrap();
    m.set_nonce("ffffffffffffffffffff").unwrap();
    let mut out = Vec::new();
    m.feed(format!("\x1b]6973;{NONCE};end\x07").as_bytes(), &mut out);
    assert!(out.is_empty(), "the old nonce no longer counts");
    assert_eq!(m.forged(), 1);
}

/// A command's marks carry the session secret followed by its number:
/// only that command's number counts, neither the secret alone (the ready
/// mark's) nor another number, nor one that merely begins with it.
#[test]
fn a_sequence_follows_the_secret() {
    let mut m = MarkerScanner::new(NONCE).unwrap();
    m.set_sequence(17);
    let mut out = Vec::new();
    for nonce in [
        NONCE.to_owned(),
        format!("{NONCE}1"),
        format!("{NONCE}170"),
        format!("{NONCE}18"),
    ] {
        m.feed(format!("\x1b]6973;{nonce};end\x07").as_bytes(), &mut out);
    }
    assert!(out.is_empty(), "{out:?}");
    assert_eq!(m.forged(), 4);
    m.feed(
        format!("\x1b]6973;{NONCE}17;end;exit=3\x07").as_bytes(),
        &mut out,
    );
    assert_eq!(out.len(), 1, "{out:?}");
    m.set_sequence(18);
    m.feed(format!("\x1b]6973;{NONCE}17;end\x07").as_bytes(), &mut out);
    assert_eq!(out.len(), 1, "the last command's number no longer counts");
}

/// A shell started inside a command has its own secret; the outer shell's
/// nonce (of the command that started it) is still accepted, told apart by
/// its depth, until the scanner goes back to it.
#[test]
fn an_outer_shells_marks_are_told_apart_until_it_is_current_again() {
    const INNER: &str = "ffeeddccbbaa99887766554433";
    let mut m = MarkerScanner::new(NONCE).unwrap();
    m.set_sequence(3);
    m.watch_outer(INNER, 3).unwrap();
    assert_eq!(m.depth(), 1);
    let feed = |m: &mut MarkerScanner, text: String| {
        let mut out = Vec::new();
        m.feed(text.as_bytes(), &mut out);
        out.into_iter().map(|e| e.outer).collect::<Vec<_>>()
    };
    m.set_sequence(5);
    let got = feed(
        &mut m,
        format!(
            "\x1b]6973;{INNER}5;end;exit=0\x07\x1b]6973;{NONCE}3;end;exit=4\x07\x1b]6973;{NONCE}5;end\x07"
        ),
    );
    assert_eq!(
        got,
        vec![None, Some(0)],
        "the outer nonce of another command is forged"
    );
    assert_eq!(m.forged(), 1);
    m.leave_to(0);
    assert_eq!(m.depth(), 0);
    let got = feed(
        &mut m,
        format!("\x1b]6973;{NONCE}3;ready\x07\x1b]6973;{INNER}5;end\x07"),
    );
    assert_eq!(got, vec![None]);
    m.set_sequence(6);
    assert_eq!(
        feed(&mut m, format!("\x1b]6973;{NONCE}6;end\x07")),
        vec![None]
    );
}
