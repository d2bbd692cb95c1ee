//! The follow book: offsets, resuming anywhere, bounds, waiting.

#![allow(clippy::unwrap_used)]

use super::*;

fn texts(f: &mut Follower) -> String {
    let mut out = String::new();
    let mut at = None;
    while let Some(p) = f.try_next() {
        match p {
            Piece::Text { offset, text, .. } => {
                let start = *at.get_or_insert(offset);
                assert_eq!(offset - start, out.len() as u64, "pieces are contiguous");
                out.push_str(&text);
            }
            Piece::Omitted { .. } => panic!("nothing omitted here"),
        }
    }
    out
}

#[test]
fn a_follower_gets_every_byte_once_and_a_resumed_one_from_its_offset() {
    let book = FollowBook::new();
    let mut early = book.follow_next();
    let tap = book.begin();
    tap.push("one\n");
    tap.push("twé\n");
    assert_eq!(texts(&mut early), "one\ntwé\n");
    tap.push("three\n");
    assert_eq!(texts(&mut early), "three\n");
    // Cut after 6 bytes ("one\ntw"), resumed there.
    let mut again = book.follow(Some(6));
    assert_eq!(texts(&mut again), "é\nthree\n");
    // Inside a character: from the next one, never half of it.
    let mut inside = book.follow(Some(7));
    assert_eq!(texts(&mut inside), "\nthree\n");
    // Past the end: from the end.
    let mut past = book.follow(Some(1000));
    assert_eq!(past.try_next(), None);
    tap.push("four\n");
    assert_eq!(texts(&mut past), "four\n");
}

#[test]
fn a_new_command_starts_at_zero_and_ends_the_old_ones_followers() {
    let book = FollowBook::new();
    let first = book.begin();
    first.push("a\n");
    let mut old = book.follow(Some(0));
    assert_eq!(old.command(), 1);
    let mut new = book.follow_next();
    let second = book.begin();
    second.push("b\n");
    assert_eq!(old.try_next(), None);
    assert_eq!(new.command(), 2);
    assert_eq!(texts(&mut new), "b\n");
}

#[test]
fn a_follower_behind_the_bound_is_told_what_it_missed() {
    let book = FollowBook::new();
    let tap = book.begin();
    let mut slow = book.follow(Some(0));
    let line = "x".repeat(1023) + "\n";
    let lines = FOLLOW_KEEP / 1024 + 10;
    for _ in 0..lines {
        tap.push(&line);
    }
    let Some(Piece::Omitted { from, to, .. }) = slow.try_next() else {
        panic!("no omission");
    };
    assert_eq!(from, 0);
    // Whole pieces go: at least the 10 KiB over the bound, at most one
    // joined piece more.
    assert!(
        (10 * 1024..=10 * 1024 + PIECE_BYTES as u64).contains(&to),
        "{to}"
    );
    let rest = texts(&mut slow);
    assert_eq!(rest.len() as u64, (lines * 1024) as u64 - to);
    assert_eq!(slow.offset(), (lines * 1024) as u64);
}

#[test]
fn the_partial_line_belongs_to_its_command() {
    let book = FollowBook::new();
    let tap = book.begin();
    tap.partial("Password: ");
    let f = book.follow(Some(0));
    assert_eq!(f.partial(), "Password: ");
    let _next = book.begin();
    assert_eq!(f.partial(), "");
}

#[tokio::test]
async fn next_waits_for_text() {
    let book = FollowBook::new();
    let mut f = book.follow_next();
    let waiter = tokio::spawn(async move { f.next().await });
    tokio::task::yield_now().await;
    let tap = book.begin();
    tap.push("late\n");
    let Piece::Text { text, offset, .. } = waiter.await.unwrap() else {
        panic!("text expected");
    };
    assert_eq!((offset, text.as_str()), (0, "late\n"));
}

#[test]
fn a_follower_without_an_offset_starts_after_what_was_handed_on() {
    let book = FollowBook::new();
    let mut first = book.follow_next();
    let tap = book.begin();
    tap.push("one\n");
    assert_eq!(texts(&mut first), "one\n");
    first.handed_on();
    tap.push("two\n");
    let mut back = book.follow(None);
    assert_eq!(texts(&mut back), "two\n");
    // A new command starts again at 0.
    let mut next = book.follow_next();
    let tap = book.begin();
    tap.push("new\n");
    assert_eq!(texts(&mut next), "new\n");
    // (Nothing of it was handed on yet.)
    assert_eq!(texts(&mut book.follow(None)), "new\n");
}

#[test]
fn nothing_is_kept_of_a_command_nobody_follows() {
    let book = FollowBook::new();
    let tap = book.begin();
    tap.push("unwatched\n");
    // A late follower is told what was not kept, then gets what comes.
    let mut late = book.follow(Some(0));
    assert_eq!(
        late.try_next(),
        Some(Piece::Omitted {
            command: 1,
            from: 0,
            to: 10
        })
    );
    tap.push("seen\n");
    assert_eq!(texts(&mut late), "seen\n");
}

#[test]
fn many_small_pieces_are_bounded_too() {
    let book = FollowBook::new();
    let mut f = book.follow_next();
    let tap = book.begin();
    // More pieces than are kept, each alone in its millisecond or not:
    // either way what is kept is bounded and the rest said omitted.
    for _ in 0..(FOLLOW_PIECES + 100) {
        tap.push("x");
        let n = book.page().chunks.len();
        assert!(n <= FOLLOW_PIECES, "{n}");
    }
    let mut total = 0u64;
    while let Some(p) = f.try_next() {
        match p {
            Piece::Omitted { from, to, .. } => total += to - from,
            Piece::Text { text, .. } => total += text.len() as u64,
        }
    }
    assert_eq!(total, (FOLLOW_PIECES + 100) as u64);
}
