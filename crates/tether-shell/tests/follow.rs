//! Following a command as it runs: each line reaches a follower while the
//! command is still running (before it writes the next one), every byte
//! once, a follower resumed from its offset gets the rest, and a secret
//! written in two pieces never reaches a follower, whole or in part.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use tether_shell::{Follower, Piece, Session, SessionOptions, Status};

fn random_secret() -> String {
    let mut buf = [0u8; 16];
    getrandom::fill(&mut buf).unwrap();
    let hex: String = buf.iter().map(|b| format!("{b:02x}")).collect();
    format!("tok-{hex}")
}

/// The next text piece, within 20 s.
async fn next_text(f: &mut Follower) -> (u64, String) {
    let piece = tokio::time::timeout(Duration::from_secs(20), f.next())
        .await
        .expect("a piece within 20 s");
    match piece {
        Piece::Text { offset, text, .. } => (offset, text),
        other => panic!("{other:?}"),
    }
}

/// Text until `want` is in it.
async fn until(f: &mut Follower, got: &mut String, want: &str) {
    while !got.contains(want) {
        let (offset, text) = next_text(f).await;
        assert_eq!(offset as usize, got.len(), "contiguous: {got:?}");
        got.push_str(&text);
    }
}

#[tokio::test]
async fn a_follower_sees_each_line_as_it_is_written_and_never_a_secret() {
    let secret = random_secret();
    let opts = SessionOptions {
        run_rc_files: false,
        env_overrides: vec![("TETHER_TEST_API_TOKEN".to_owned(), secret.clone())],
        ..SessionOptions::default()
    };
    let mut s = Session::start(opts).await.unwrap();
    let dir = std::env::temp_dir().join(format!("tether-follow-{}", std::process::id()));
    // Fresh: an earlier run with the same pid may have left its files.
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let go = |n: u32| dir.join(format!("go{n}"));
    let wait = |n: u32| format!("while [ ! -e '{}' ]; do sleep 0.01; done", go(n).display());
    // Each step waits for the test's go-ahead, so a line seen before it is
    // given was seen while the command ran.
    let code = format!(
        "echo first; {w1}; printf '%s' \"${{TETHER_TEST_API_TOKEN:0:20}}\"; {w2}; printf '%s\\n' \"${{TETHER_TEST_API_TOKEN:20}} second\"; {w3}; echo third",
        w1 = wait(1),
        w2 = wait(2),
        w3 = wait(3),
    );
    let mut f = s.follow_next();
    let control = s.control();
    let run = tokio::spawn(async move {
        let r = s.run(&code, &common::within(30)).await.unwrap();
        (s, r)
    });
    let mut got = String::new();
    until(&mut f, &mut got, "first\n").await;
    std::fs::write(go(1), "").unwrap();
    // The first half of the secret is written now; nothing of it may come
    // out until the rest decides it.
    std::fs::write(go(2), "").unwrap();
    until(&mut f, &mut got, "second\n").await;
    assert_eq!(got, "first\n[redacted] second\n");
    // A follower cut after "first\n" and resumed there gets the rest once.
    let mut resumed = control.follow(Some(6));
    let mut again = "first\n".to_owned();
    until(&mut resumed, &mut again, "second\n").await;
    assert_eq!(again, got);
    std::fs::write(go(3), "").unwrap();
    until(&mut f, &mut got, "third\n").await;
    let (_s, r) = run.await.unwrap();
    assert_eq!(r.status, Status::Exited);
    assert_eq!(r.output, got);
    assert!(!got.contains(&secret[..20]), "{got:?}");
    assert_eq!(f.try_next(), None);
    let _ = std::fs::remove_dir_all(&dir);
}
