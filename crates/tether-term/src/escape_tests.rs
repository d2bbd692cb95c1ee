#![allow(clippy::unwrap_used)]

use super::*;

fn all(chunks: &[&[u8]]) -> Vec<Keyed> {
    let mut s = EscapeScanner::new();
    chunks.iter().flat_map(|c| s.feed(c)).collect()
}

/// Everything `s` makes of `chunks`, with a final flush, and adjacent
/// `Send`s joined (how the bytes were cut is not a difference).
fn joined(mut s: EscapeScanner, chunks: &[&[u8]]) -> Vec<Keyed> {
    let mut out: Vec<Keyed> = Vec::new();
    let mut put = |k: Keyed| match (out.last_mut(), k) {
        (Some(Keyed::Send(a)), Keyed::Send(b)) => a.extend_from_slice(&b),
        (_, k) => out.push(k),
    };
    for c in chunks {
        s.feed(c).into_iter().for_each(&mut put);
    }
    s.flush().into_iter().for_each(&mut put);
    out
}

/// `got` without the bytes of keys that type nothing (the modifier keys
/// and releases around an escape, sent on as they came).
fn typed_only(got: &[Keyed]) -> Vec<Keyed> {
    let mut out = Vec::new();
    for k in got {
        if let Keyed::Send(b) = k {
            let mut reader = crate::keys::KeyReader::new();
            let mut typed = Vec::new();
            reader.feed(b, |key| {
                if crate::keys::meaning(key) != crate::keys::KeyKind::Transparent {
                    typed.extend_from_slice(key);
                }
            });
            reader.flush(|key| typed.extend_from_slice(key));
            if !typed.is_empty() {
                out.push(Keyed::Send(typed));
            }
        } else {
            out.push(k.clone());
        }
    }
    out
}

/// Asserts `input` means `want` however it is cut in two, or byte by byte.
fn same_at_every_split(s: &EscapeScanner, input: &[u8], want: &[Keyed]) {
    for i in 0..=input.len() {
        assert_eq!(
            joined(s.clone(), &[&input[..i], &input[i..]]),
            want,
            "{} cut at {i}",
            input.escape_ascii()
        );
    }
    let bytes: Vec<&[u8]> = input.chunks(1).collect();
    assert_eq!(joined(s.clone(), &bytes), want, "byte by byte");
}

/// How kitty sends `text` with keyboard `flags` (1 disambiguate, 2 event
/// types, 4 alternate keys, 8 every key as an escape code, 16 associated
/// text), on a US layout. `\r` is Return, `\x1a` Ctrl-Z.
fn kitty(text: &str, flags: u32) -> Vec<u8> {
    let (events, alternates, all_keys, with_text) = (
        flags & 2 != 0,
        flags & 4 != 0,
        flags & 8 != 0,
        flags & 16 != 0,
    );
    let mut out = String::new();
    let release = |out: &mut String, key: &str, mods: u32| {
        if events {
            out.push_str(&format!("\x1b[{key};{mods}:3u"));
        }
    };
    for c in text.chars() {
        match c {
            '\r' if all_keys => {
                out.push_str("\x1b[13u");
                release(&mut out, "13", 1);
            }
            '\r' => out.push('\r'),
            '\x1a' => {
                out.push_str("\x1b[122;5u");
                release(&mut out, "122", 5);
            }
            c if !all_keys => out.push(c),
            c => {
                let shifted = "~!@#$%^&*()_+{}|:\"<>?";
                let plain = "`1234567890-=[]\\;',./";
                let (base, shift) = match shifted.find(c) {
                    Some(i) => (plain.as_bytes()[i] as u32, true),
                    None if c.is_ascii_uppercase() => (c.to_ascii_lowercase() as u32, true),
                    None => (c as u32, false),
                };
                let key = if shift && alternates {
                    format!("{base}:{}", c as u32)
                } else {
                    base.to_string()
                };
                let mods = if shift { 2 } else { 1 };
                if shift {
                    out.push_str("\x1b[57441;2u");
                }
                let text = if with_text {
                    format!(";{}", c as u32)
                } else {
                    String::new()
                };
                if shift || with_text {
                    out.push_str(&format!("\x1b[{key};{mods}{text}u"));
                } else {
                    out.push_str(&format!("\x1b[{key}u"));
                }
                release(&mut out, &key, mods);
                if shift {
                    release(&mut out, "57441", 1);
                }
            }
        }
    }
    out.into_bytes()
}

/// How xterm sends `text` with modifyOtherKeys `level` (1 or 2), with
/// formatOtherKeys `csi_u` (`CSI code ; mods u`) or not.
fn xterm(text: &str, level: u32, csi_u: bool) -> Vec<u8> {
    let mut out = String::new();
    for c in text.chars() {
        let (code, mods) = match c {
            '\x1a' => (122, 5),
            c if c.is_ascii_punctuation() && "~!@#$%^&*()_+{}|:\"<>?".contains(c) => (c as u32, 2),
            c if c.is_ascii_uppercase() => (c as u32, 2),
            c => {
                out.push(c);
                continue;
            }
        };
        // Level 1 leaves the keys whose meaning is well known (Shift with
        // a printable key, Ctrl with a letter) alone.
        match (level, c) {
            (1, _) => out.push(c),
            (_, _) if csi_u => out.push_str(&format!("\x1b[{code};{mods}u")),
            _ => out.push_str(&format!("\x1b[27;{mods};{code}~")),
        }
    }
    out.into_bytes()
}

/// Every encoding the tests type in: kitty's flags one by one and
/// together, xterm's levels and formats.
/// A terminal's encoding of typed text.
type Encoder = Box<dyn Fn(&str) -> Vec<u8>>;

fn encodings() -> Vec<(String, Encoder)> {
    let mut e: Vec<(String, Encoder)> = Vec::new();
    for flags in [0, 1, 3, 5, 8, 9, 11, 13, 15, 17, 24, 31] {
        e.push((format!("kitty {flags}"), Box::new(move |t| kitty(t, flags))));
    }
    for (level, csi_u) in [(1, false), (2, false), (2, true)] {
        e.push((
            format!("xterm modifyOtherKeys {level} csi_u {csi_u}"),
            Box::new(move |t| xterm(t, level, csi_u)),
        ));
    }
    e
}

#[test]
fn tilde_dot_after_enter_detaches_even_across_reads() {
    assert_eq!(
        all(&[b"ls\r~", b"."]),
        [Keyed::Send(b"ls\r".to_vec()), Keyed::Detach]
    );
    assert_eq!(all(&[b"~."]), [Keyed::Detach]);
    assert_eq!(
        all(&[b"echo\n~?"]),
        [Keyed::Send(b"echo\n".to_vec()), Keyed::Help]
    );
}

#[test]
fn a_tilde_elsewhere_or_doubled_is_sent() {
    assert_eq!(all(&[b"a~."]), [Keyed::Send(b"a~.".to_vec())]);
    assert_eq!(all(&[b"~~."]), [Keyed::Send(b"~.".to_vec())]);
    assert_eq!(all(&[b"~x"]), [Keyed::Send(b"~x".to_vec())]);
    // After `~x` the line has started: a later `~.` is text.
    assert_eq!(all(&[b"~x~."]), [Keyed::Send(b"~x~.".to_vec())]);
    assert_eq!(
        all(&[b"~\r~."]),
        [Keyed::Send(b"~\r".to_vec()), Keyed::Detach]
    );
}

#[test]
fn tilde_ctrl_z_suspends_and_the_line_goes_on_after_it() {
    assert_eq!(
        all(&[b"ls\r~\x1a"]),
        [Keyed::Send(b"ls\r".to_vec()), Keyed::Suspend]
    );
    assert_eq!(
        all(&[b"~", b"\x1a", b"~."]),
        [Keyed::Suspend, Keyed::Detach]
    );
    // Ctrl-Z elsewhere, or after `~~`, is sent like any key.
    assert_eq!(all(&[b"a~\x1a"]), [Keyed::Send(b"a~\x1a".to_vec())]);
    assert_eq!(all(&[b"~~\x1a"]), [Keyed::Send(b"~\x1a".to_vec())]);
    let mut s = EscapeScanner::with_escape(Some(b'%'));
    assert_eq!(
        s.feed(b"~\x1a\r%\x1a"),
        [Keyed::Send(b"~\x1a\r".to_vec()), Keyed::Suspend]
    );
}

#[test]
fn another_escape_character_or_none() {
    let mut s = EscapeScanner::with_escape(Some(b'%'));
    assert_eq!(
        s.feed(b"~.\r%%\r%."),
        [Keyed::Send(b"~.\r%\r".to_vec()), Keyed::Detach]
    );
    let mut s = EscapeScanner::with_escape(None);
    assert_eq!(s.feed(b"~.~?"), [Keyed::Send(b"~.~?".to_vec())]);
}

/// `ls`, Return, `~.` as each terminal encodes them: the escape is seen
/// wherever the reads cut, and what comes before it is sent as typed.
#[test]
fn tilde_dot_is_seen_in_every_keyboard_encoding_at_every_split() {
    for (name, encode) in encodings() {
        let before = encode("ls\r");
        let input = [before.clone(), encode("~.")].concat();
        let s = EscapeScanner::new();
        let got = joined(s.clone(), &[&input]);
        // Everything before the `~` key is sent as it came.
        assert!(
            matches!(&got[..], [Keyed::Send(b), Keyed::Detach, ..] if b.starts_with(&before) && input.starts_with(b)),
            "{name}: {got:?}"
        );
        let mut typed_want = typed_only(&[Keyed::Send(before)]);
        typed_want.push(Keyed::Detach);
        assert_eq!(typed_only(&got), typed_want, "{name}");
        same_at_every_split(&s, &input, &got);
        // And at the very start, with nothing before.
        let got = typed_only(&joined(s, &[&encode("~.")]));
        assert_eq!(got, [Keyed::Detach], "{name}");
    }
}

/// Every escape letter in every encoding; an escape's keys are consumed,
/// and what is not an escape is sent exactly as it came.
#[test]
fn every_escape_in_every_encoding_and_the_rest_unchanged() {
    for (name, encode) in encodings() {
        for (typed, want) in [
            ("~?", Keyed::Help),
            ("~\x1a", Keyed::Suspend),
            ("~C", Keyed::CommandLine),
            ("~#", Keyed::Forwards),
            ("~&", Keyed::Background),
        ] {
            let input = encode(&format!("\r{typed}"));
            let s = EscapeScanner::with_escapes(Some(b'~'), EscapeSet::ALL);
            let got = joined(s.clone(), &[&input]);
            let escapes: Vec<&Keyed> = got
                .iter()
                .filter(|k| !matches!(k, Keyed::Send(_)))
                .collect();
            assert_eq!(escapes, [&want], "{name} {typed:?}: {got:?}");
            let mut typed_want = typed_only(&[Keyed::Send(encode("\r"))]);
            typed_want.push(want.clone());
            assert_eq!(typed_only(&got), typed_want, "{name} {typed:?}");
            same_at_every_split(&s, &input, &got);
        }
        // Not escapes: sent byte for byte.
        for typed in ["\r~x.", "a~.", "~x~.", "\r~C"] {
            let input = encode(typed);
            let s = EscapeScanner::with_escapes(Some(b'~'), EscapeSet::BASIC);
            let got = joined(s.clone(), &[&input]);
            assert_eq!(got, [Keyed::Send(input.clone())], "{name} {typed:?}");
            same_at_every_split(&s, &input, &got);
        }
    }
}

/// `~~` sends the second escape character's key as it was typed, and the
/// line has then started.
#[test]
fn a_doubled_tilde_in_kitty_form_sends_one() {
    let tilde = b"\x1b[96:126;2u";
    let input = [&b"\x1b[13u"[..], tilde, tilde, b"\x1b[46u"].concat();
    let want = [&b"\x1b[13u"[..], tilde, b"\x1b[46u"].concat();
    same_at_every_split(&EscapeScanner::new(), &input, &[Keyed::Send(want)]);
}

/// A lone ESC is held as a possible sequence's start, and taken as the
/// Escape key on flush.
#[test]
fn a_lone_escape_waits_for_flush() {
    let mut s = EscapeScanner::new();
    assert_eq!(s.feed(b"a\x1b"), [Keyed::Send(b"a".to_vec())]);
    assert_eq!(s.pending(), 1);
    assert_eq!(s.flush(), [Keyed::Send(b"\x1b".to_vec())]);
    assert_eq!(s.pending(), 0);
}

/// `~C` reads a line: printable keys, Backspace, Enter or a cancel, in any
/// encoding, none of it sent; the next line starts after it.
#[test]
fn the_command_line_reads_keys_until_enter_or_cancel() {
    let s = EscapeScanner::with_escapes(Some(b'~'), EscapeSet::ALL);
    for (name, encode) in encodings() {
        let input = [encode("~C-L 1x"), b"\x7f2\r".to_vec(), encode("~.")].concat();
        let want = [
            Keyed::CommandLine,
            Keyed::Line(LineKey::Char('-')),
            Keyed::Line(LineKey::Char('L')),
            Keyed::Line(LineKey::Char(' ')),
            Keyed::Line(LineKey::Char('1')),
            Keyed::Line(LineKey::Char('x')),
            Keyed::Line(LineKey::Backspace),
            Keyed::Line(LineKey::Char('2')),
            Keyed::Line(LineKey::Enter),
            Keyed::Detach,
        ];
        let got = joined(s.clone(), &[&input]);
        assert_eq!(typed_only(&got), want, "{name}");
        same_at_every_split(&s, &input, &got);
    }
    let mut s = EscapeScanner::with_escapes(Some(b'~'), EscapeSet::ALL);
    assert_eq!(
        s.feed(b"~Cab\x03x"),
        [
            Keyed::CommandLine,
            Keyed::Line(LineKey::Char('a')),
            Keyed::Line(LineKey::Char('b')),
            Keyed::Line(LineKey::Cancel),
            Keyed::Send(b"x".to_vec()),
        ]
    );
    // The Escape key cancels once it is known to be alone.
    let mut s = EscapeScanner::with_escapes(Some(b'~'), EscapeSet::ALL);
    assert_eq!(s.feed(b"~C\x1b"), [Keyed::CommandLine]);
    assert_eq!(s.flush(), [Keyed::Line(LineKey::Cancel)]);
}

#[test]
fn a_held_escape_is_bounded() {
    let mut s = EscapeScanner::new();
    let release = b"\x1b[57441;1:3u";
    let mut input = b"~".to_vec();
    for _ in 0..200 {
        input.extend_from_slice(release);
    }
    input.push(b'.');
    // Past the bound the escape is given up: everything is sent.
    assert_eq!(joined(s.clone(), &[&input]), [Keyed::Send(input.clone())]);
    assert_eq!(s.feed(b"~"), []);
    assert!(s.holding());
}

#[test]
fn the_help_lists_what_the_door_offers() {
    let ssh = escape_help(b'~', EscapeSet::ALL, "disconnect");
    for line in [
        " ~.  disconnect",
        " ~C  open",
        " ~#  list",
        " ~&  background",
    ] {
        assert!(ssh.contains(line), "{line:?} in {ssh:?}");
    }
    let attach = escape_help(b'~', EscapeSet::BASIC, "detach");
    assert!(!attach.contains("~C") && !attach.contains("~#") && !attach.contains("~&"));
    assert!(escape_help(0x1d, EscapeSet::BASIC, "x").contains(" ^].  x"));
}
