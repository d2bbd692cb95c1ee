//! Text projection cases.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use tether_term::TextProjector;

fn project(bytes: &[u8]) -> String {
    let mut p = TextProjector::new();
    let mut out = String::new();
    p.feed(bytes, &mut out);
    p.finish(&mut out);
    out
}

#[test]
fn strips_sequences_and_keeps_tabs_and_newlines() {
    assert_eq!(
        project(b"\x1b[1;31mred\x1b[m\tx\x1b]0;title\x07\n\x1bP+q544e\x1b\\y\x1b7\x1b(B\n"),
        "red\tx\ny\n"
    );
}

#[test]
fn crlf_becomes_lf() {
    assert_eq!(project(b"a\r\nb\r\n"), "a\nb\n");
}

#[test]
fn carriage_return_overwrites() {
    assert_eq!(project(b"hello\rj"), "jello");
    // Like a terminal: a shorter redraw leaves the old tail visible.
    assert_eq!(project(b"100%\r 5%\n"), " 5%%\n");
}

#[test]
fn backspace_overwrites() {
    assert_eq!(project(b"abc\x08\x08X\n"), "aXc\n");
    assert_eq!(project(b"\x08\x08a"), "a");
    // A man-page style bold: c BS c.
    assert_eq!(project(b"b\x08bo\x08old"), "bold");
}

#[test]
fn progress_bar_redrawn_500_times_yields_its_final_frame() {
    let mut bytes = Vec::new();
    for i in 0..=500 {
        let pct = i * 100 / 500;
        let bar = "#".repeat(pct / 5);
        bytes.extend(format!("\r{pct:3}%|{bar:<20}| {i}/500\x1b[K").as_bytes());
    }
    bytes.extend(b"\ndone\n");
    assert_eq!(
        project(&bytes),
        "100%|####################| 500/500\ndone\n"
    );
}

#[test]
fn erase_in_line_and_column_moves() {
    assert_eq!(project(b"abcdef\r\x1b[Kxy\n"), "xy\n");
    assert_eq!(project(b"abcdef\x1b[3D\x1b[K!\n"), "abc!\n");
    assert_eq!(project(b"abcdef\x1b[3G\x1b[1K\n"), "   def\n");
    assert_eq!(project(b"abc\x1b[2K\rz\n"), "z  \n");
    assert_eq!(project(b"a\x1b[3Cb\n"), "a   b\n");
}

#[test]
fn utf8_split_across_chunks_is_never_mangled() {
    let text = "héllo → 世界 🦀\n";
    let bytes = text.as_bytes();
    for cut in 0..bytes.len() {
        let mut p = TextProjector::new();
        let mut out = String::new();
        p.feed(&bytes[..cut], &mut out);
        p.feed(&bytes[cut..], &mut out);
        p.finish(&mut out);
        assert_eq!(out, text, "split at {cut}");
    }
}

#[test]
fn invalid_bytes_become_replacement_characters() {
    assert_eq!(project(b"a\xffb\xe2\x82c\n"), "a\u{FFFD}b\u{FFFD}c\n");
    assert_eq!(project(b"\xe2\x82"), "\u{FFFD}");
    // An escape sequence cuts a character short.
    assert_eq!(project(b"\xe2\x82\x1b[mx"), "\u{FFFD}x");
}

#[test]
fn current_line_shows_a_pending_prompt() {
    let mut p = TextProjector::new();
    let mut out = String::new();
    p.feed(b"line\r\n[sudo] password for me: ", &mut out);
    assert_eq!(out, "line\n");
    assert_eq!(p.current_line(), "[sudo] password for me: ");
}

#[test]
fn long_lines_are_released_at_the_bound() {
    let mut p = TextProjector::with_max_line(10);
    let mut out = String::new();
    p.feed(b"0123456789abc\rX", &mut out);
    assert_eq!(out, "0123456789");
    p.finish(&mut out);
    assert_eq!(out, "0123456789Xbc");
}

/// Every split of `bytes` in two projects as the whole does.
fn project_any_split(bytes: &[u8]) -> String {
    let whole = project(bytes);
    for cut in 0..=bytes.len() {
        let mut p = TextProjector::new();
        let mut out = String::new();
        p.feed(&bytes[..cut], &mut out);
        p.feed(&bytes[cut..], &mut out);
        p.finish(&mut out);
        assert_eq!(out, whole, "split at {cut}");
    }
    whole
}

#[test]
fn an_unterminated_string_gives_back_what_follows_its_first_control() {
    // Still open at the end of the output (the end of the command).
    assert_eq!(project_any_split(b"\x1b]0;title\nok\n"), "\nok\n");
    assert_eq!(project_any_split(b"a\x1bPq#0;2\r\nok\n"), "a\nok\n");
    assert_eq!(project_any_split(b"\x1b_Gf=24\nok"), "\nok");
    assert_eq!(project_any_split(b"\x1b^pm\nok\n\x1b"), "\nok\n");
    // Aborted by another sequence, or cancelled.
    assert_eq!(
        project_any_split(b"\x1b]0;title\nok\n\x1b[1mafter\n"),
        "\nok\nafter\n"
    );
    assert_eq!(project_any_split(b"\x1bXsos\tx\n\x18y\n"), "\tx\ny\n");
    // A string that ends properly is still dropped whole.
    assert_eq!(project_any_split(b"\x1bPq\n#0\x1b\\ok\n"), "ok\n");
    assert_eq!(project_any_split(b"\x1b]0;a\nb\x07ok\n"), "ok\n");
}

#[test]
fn an_overflowing_string_gives_back_everything_past_the_bound() {
    let over = tether_term::MAX_PENDING + 900;
    let mut bytes = b"\x1b]".to_vec();
    bytes.extend(std::iter::repeat_n(b'A', over));
    bytes.extend(b"\nok\n");
    let mut chunked = String::new();
    let mut p = TextProjector::new();
    for c in bytes.chunks(7) {
        p.feed(c, &mut chunked);
    }
    p.finish(&mut chunked);
    let whole = project(&bytes);
    assert_eq!(chunked, whole);
    let a = over - (tether_term::MAX_PENDING - 2);
    assert_eq!(whole, format!("{}\nok\n", "A".repeat(a)));
    // Its first line break inside the bound starts the given-back text.
    let mut bytes = b"\x1bPtitle\n".to_vec();
    bytes.extend(std::iter::repeat_n(b'B', tether_term::MAX_PENDING));
    bytes.extend("é\x1b\\ok\n".as_bytes());
    let out = project(&bytes);
    assert_eq!(
        out,
        format!("\n{}éok\n", "B".repeat(tether_term::MAX_PENDING))
    );
}
