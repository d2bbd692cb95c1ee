//! Streaming redactor cases.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use tether_term::redact::{REDACTED, is_secret_name};
use tether_term::{Redactor, TermError};

fn redact_chunks(r: &mut Redactor, chunks: &[&[u8]]) -> String {
    let mut out = Vec::new();
    for c in chunks {
        r.feed(c, &mut out);
    }
    r.finish(&mut out);
    String::from_utf8(out).unwrap()
}

#[test]
fn replaces_every_occurrence() {
    let mut r = Redactor::new(&["hunter2", "s3cr3t"]).unwrap();
    let got = redact_chunks(&mut r, &[b"pw=hunter2 and s3cr3t, hunter2!"]);
    assert_eq!(got, format!("pw={REDACTED} and {REDACTED}, {REDACTED}!"));
    assert_eq!(r.redactions(), 3);
}

#[test]
fn secret_split_at_every_position_is_still_redacted() {
    let input = b"token: ghp_abcdefghijklmnop end";
    for cut in 0..=input.len() {
        let mut r = Redactor::new(&["ghp_abcdefghijklmnop"]).unwrap();
        let mut out = Vec::new();
        r.feed(&input[..cut], &mut out);
        let shown = String::from_utf8_lossy(&out).to_string();
        assert!(!shown.contains("ghp_abcdefghijklmnop"));
        assert!(
            !shown.contains("ghp_abcdefghij") || cut < 7,
            "no long prefix leaks early: {shown}"
        );
        r.feed(&input[cut..], &mut out);
        r.finish(&mut out);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            format!("token: {REDACTED} end")
        );
    }
}

#[test]
fn byte_by_byte_with_overlapping_secrets() {
    let mut r = Redactor::new(&["abc", "abcdef", "cde"]).unwrap();
    let input = b"xxabcdefxxabcxcdex";
    let chunks: Vec<&[u8]> = input.chunks(1).collect();
    let got = redact_chunks(&mut r, &chunks);
    assert_eq!(got, format!("xx{REDACTED}xx{REDACTED}x{REDACTED}x"));
}

#[test]
fn secret_looking_environment_names() {
    for name in [
        "GITHUB_TOKEN",
        "AWS_SECRET_ACCESS_KEY",
        "DB_PASSWORD",
        "OPENAI_API_KEY",
        "ssh_key",
        "MY_PAT",
        "PGPASSWD",
    ] {
        assert!(is_secret_name(name), "{name}");
    }
    for name in ["PATH", "HOME", "KEYBOARD", "TERM", "PAGER"] {
        assert!(!is_secret_name(name), "{name}");
    }
}

#[test]
fn from_env_picks_secret_values_of_useful_length() {
    let env = [
        ("GITHUB_TOKEN", "ghp_0123456789"),
        ("HOME", "/root"),
        ("SHORT_TOKEN", "abc"),
    ];
    let mut r = Redactor::from_env(env, &["extra-secret".to_string()]).unwrap();
    let got = redact_chunks(&mut r, &[b"ghp_0123456789 /root abc extra-secret"]);
    assert_eq!(got, format!("{REDACTED} /root abc {REDACTED}"));
}

#[test]
fn no_secrets_passes_through_and_empty_secret_is_an_error() {
    let mut r = Redactor::new::<&str>(&[]).unwrap();
    assert_eq!(redact_chunks(&mut r, &[b"abc", b"def"]), "abcdef");
    assert_eq!(Redactor::new(&[""]).unwrap_err(), TermError::EmptySecret);
}

#[test]
fn holds_back_only_a_tail_that_can_still_become_a_secret() {
    let secret = "sk-0123456789abcdefghij";
    let mut r = Redactor::new(&[secret]).unwrap();
    let mut out = Vec::new();
    // Nothing here can begin the secret: all of it is decided at once.
    r.feed(b"42\n>>> ", &mut out);
    assert_eq!(String::from_utf8_lossy(&out), "42\n>>> ");
    assert_eq!(r.pending(), 0);
    // "sk-01" may still become the secret: only it is held.
    r.feed(b"tb-tick1 sk-01", &mut out);
    assert_eq!(String::from_utf8_lossy(&out), "42\n>>> tb-tick1 ");
    assert_eq!(r.held(), b"sk-01");
    // "sk-0x" cannot: released, except nothing (no suffix is a prefix).
    r.feed(b"x s", &mut out);
    assert_eq!(String::from_utf8_lossy(&out), "42\n>>> tb-tick1 sk-01x ");
    assert_eq!(r.held(), b"s");
}

#[test]
fn flush_releases_everything_and_the_stream_goes_on() {
    let mut r = Redactor::new(&["hunter2-hunter2"]).unwrap();
    let mut out = Vec::new();
    r.feed(b"pw: hunter2-h", &mut out);
    assert_eq!(String::from_utf8_lossy(&out), "pw: ");
    r.flush(&mut out);
    assert_eq!(String::from_utf8_lossy(&out), "pw: hunter2-h");
    assert_eq!(r.pending(), 0);
    r.feed(b" and hunter2-hunter2 again", &mut out);
    r.flush(&mut out);
    assert_eq!(
        String::from_utf8_lossy(&out),
        format!("pw: hunter2-h and {REDACTED} again")
    );
    assert_eq!(r.redactions(), 1);
}

#[test]
fn overlapping_secrets_are_decided_as_soon_as_they_can_be() {
    // "abcd" starts before "cdXYZ" could: leftmost wins, decided at once.
    let mut r = Redactor::new(&["abcd", "cdXYZ"]).unwrap();
    let mut out = Vec::new();
    r.feed(b"abcd", &mut out);
    assert_eq!(String::from_utf8_lossy(&out), REDACTED);
    r.feed(b"XYZ", &mut out);
    r.finish(&mut out);
    assert_eq!(String::from_utf8_lossy(&out), format!("{REDACTED}XYZ"));

    // "abc" is complete, but "abcdef" may still follow: held.
    let mut r = Redactor::new(&["abc", "abcdef"]).unwrap();
    let mut out = Vec::new();
    r.feed(b"x abc", &mut out);
    assert_eq!(String::from_utf8_lossy(&out), "x ");
    r.feed(b"d", &mut out);
    assert_eq!(String::from_utf8_lossy(&out), "x ");
    r.feed(b"!", &mut out);
    assert_eq!(String::from_utf8_lossy(&out), format!("x {REDACTED}d!"));

    // "xabcY" began earlier than "abc": the inner match waits for it.
    let mut r = Redactor::new(&["xabcY", "abc"]).unwrap();
    let mut out = Vec::new();
    r.feed(b"-xabc", &mut out);
    assert_eq!(String::from_utf8_lossy(&out), "-");
    r.feed(b"Y-", &mut out);
    assert_eq!(String::from_utf8_lossy(&out), format!("-{REDACTED}-"));
    let mut out = Vec::new();
    r.feed(b"xabc-", &mut out);
    assert_eq!(String::from_utf8_lossy(&out), format!("x{REDACTED}-"));
}
