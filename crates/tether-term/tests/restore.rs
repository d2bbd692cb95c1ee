//! Restore planner and capture-transaction cases, with exact bytes.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use tether_term::capture::{ACTIVE_SCREEN_QUERY, baseline_from, hidden_screen_query};
use tether_term::{
    Baseline, CaptureParser, CaptureReplies, Captured, Screen, ScreenSwitch, ScreenTracker,
    plan_restore, plan_setup,
};

fn restore(baseline: Baseline, remote: &[u8]) -> String {
    let mut t = ScreenTracker::starting_on(baseline.screen());
    t.written(remote);
    String::from_utf8(plan_restore(&baseline, t.state())).unwrap()
}

fn main_shell() -> Baseline {
    Baseline::Captured(Captured::default())
}

#[test]
fn nothing_changed_means_nothing_written() {
    assert_eq!(restore(main_shell(), b"ls\r\n\x1b[1mbold\x1b[m"), "");
}

#[test]
fn leaked_kitty_flags_on_exit_are_popped() {
    // `printf '\033[>15u'; exit` from the seed's manual test.
    assert_eq!(restore(main_shell(), b"\x1b[>15u"), "\x1b[<1u");
}

#[test]
fn remote_owned_1049_is_left_with_1049l_before_keyboard_repair() {
    let got = restore(main_shell(), b"\x1b[?1049h\x1b[>1u\x1b[?2004h");
    assert_eq!(
        got,
        "\x1b[?2004l\x1b[?1049l\x1b7\x1b[?47h\x1b[<1u\x1b[?47l\x1b8"
    );
}

#[test]
fn remote_47_alt_screen_is_left_with_47l() {
    assert_eq!(restore(main_shell(), b"\x1b[?47h"), "\x1b[?47l");
    assert_eq!(restore(main_shell(), b"\x1b[?1047h"), "\x1b[?47l");
}

#[test]
fn outer_alternate_screen_is_reselected_with_47_never_1049h() {
    let outer = Baseline::Captured(Captured {
        screen: Screen::Alternate,
        kitty_main: 0,
        kitty_alt: 1,
        modify_other_keys: 0,
        switch: ScreenSwitch::Mode47,
    });
    // The remote resets 1049 and sets different flags on the main screen.
    let got = restore(outer, b"\x1b[?1049l\x1b[=31u");
    assert_eq!(
        got,
        "\x1b[?47h\x1b[=1;1u\x1b7\x1b[?47l\x1b[=0;1u\x1b[?47h\x1b8"
    );
    assert!(!got.contains("1049h"));
}

#[test]
fn captured_flags_and_modify_other_keys_are_restored_on_both_screens() {
    let b = Baseline::Captured(Captured {
        screen: Screen::Main,
        kitty_main: 3,
        kitty_alt: 9,
        modify_other_keys: 1,
        switch: ScreenSwitch::Mode47,
    });
    // tether set both screens to 0 and modifyOtherKeys to 0 at start; the
    // remote changed nothing, so every captured value is written back.
    assert_eq!(
        restore(b, b""),
        "\x1b[=3;1u\x1b7\x1b[?47h\x1b[=9;1u\x1b[?47l\x1b8\x1b[>4;1m"
    );
    assert_eq!(
        String::from_utf8(plan_setup(&b)).unwrap(),
        "\x1b[=0;1u\x1b7\x1b[?47h\x1b[=0;1u\x1b[?47l\x1b8\x1b[>4;0m"
    );
}

#[test]
fn seed_scenario_all_enhancements_left_on() {
    let got = restore(
        main_shell(),
        b"\x1b[>15u\x1b[?1049h\x1b[>1u\x1b[=5;1u\x1b[?2004h\x1b[?1000h\x1b[?1006h\x1b[?1004h\x1b[>4;2m",
    );
    assert_eq!(
        got,
        "\x1b[?1000;1004;1006;2004l\x1b[?1049l\x1b[<1u\x1b7\x1b[?47h\x1b[<1u\x1b[?47l\x1b8\x1b[>4;0m"
    );
}

#[test]
fn popped_below_own_entries_sets_the_baseline_back() {
    assert_eq!(restore(main_shell(), b"\x1b[<5u"), "\x1b[=0;1u");
}

#[test]
fn fallback_resets_everything_unconditionally() {
    let got = restore(Baseline::Fallback, b"");
    assert_eq!(
        got,
        "\x1b[?1;5;9;1000;1002;1003;1004;1005;1006;1015;2004l\x1b[?7h\x1b[4l\x1b[0m\x1b(B\x1b)B\x0f\x1b>\x1b[?25h\x1b[0 q\x1b[=0;1u\x1b7\x1b[?47h\x1b[=0;1u\x1b[?47l\x1b8\x1b[>4;0m"
    );
    let got = restore(Baseline::Fallback, b"\x1b[?1049h\x1b[>1u");
    assert_eq!(
        got,
        "\x1b[?1;5;9;1000;1002;1003;1004;1005;1006;1015;2004l\x1b[?7h\x1b[4l\x1b[?1049l\x1b[0m\x1b(B\x1b)B\x0f\x1b>\x1b[?25h\x1b[0 q\x1b[=0;1u\x1b7\x1b[?47h\x1b[<1u\x1b[=0;1u\x1b[?47l\x1b8\x1b[>4;0m"
    );
    assert!(plan_setup(&Baseline::Fallback).is_empty());
}

fn parse(chunks: &[&[u8]]) -> (CaptureReplies, Vec<u8>) {
    let mut p = CaptureParser::new();
    for c in chunks {
        p.feed(c);
    }
    p.finish()
}

#[test]
fn capture_replies_are_consumed_and_everything_else_kept_in_order() {
    let input: &[u8] =
        b"l\x1b[?7u\x1b[?1049;2$yx\x1b[?1047;2$y\x1b[?47;2$y\x1b[Ay\x1b[>4;1m\x1b[?62;22cs\x1b[?3u";
    let (replies, forward) = parse(&[input]);
    assert_eq!(
        replies,
        CaptureReplies {
            kitty_flags: Some(7),
            modes: vec![(1049, 2), (1047, 2), (47, 2)],
            modify_other_keys: Some(1),
            complete: true,
        }
    );
    // User keys before DA, an unrelated sequence, and everything after DA
    // (even a reply look-alike) are forwarded.
    assert_eq!(forward, b"lx\x1b[Ays\x1b[?3u");
    // Split at every byte: same result.
    for cut in 0..input.len() {
        assert_eq!(
            parse(&[&input[..cut], &input[cut..]]),
            (replies.clone(), forward.clone())
        );
    }
}

#[test]
fn malformed_replies_are_forwarded_not_consumed() {
    let (replies, forward) = parse(&[b"\x1b[?7:1u\x1b[?1049;2;3$y\x1b[?62c"]);
    assert_eq!(replies.kitty_flags, None);
    assert!(replies.modes.is_empty());
    assert_eq!(forward, b"\x1b[?7:1u\x1b[?1049;2;3$y");
}

#[test]
fn baseline_from_two_transactions() {
    let (active, _) =
        parse(&[b"\x1b[?5u\x1b[?1049;1$y\x1b[?1047;2$y\x1b[?47;2$y\x1b[>4;2m\x1b[?62c"]);
    let (hidden, _) = parse(&[b"\x1b[?0u\x1b[?62c"]);
    assert_eq!(
        baseline_from(&active, &hidden),
        Baseline::Captured(Captured {
            screen: Screen::Alternate,
            kitty_main: 0,
            kitty_alt: 5,
            modify_other_keys: 2,
            switch: ScreenSwitch::Mode47,
        })
    );
    // A terminal without Kitty or modifyOtherKeys support: values are 0.
    let (plain, _) = parse(&[b"\x1b[?1049;2$y\x1b[?1;2c"]);
    let (plain_hidden, _) = parse(&[b"\x1b[?1;2c"]);
    assert_eq!(baseline_from(&plain, &plain_hidden), main_shell());
    // No DA (timeout), or no 1049 report: fall back.
    let (timeout, _) = parse(&[b"\x1b[?5u"]);
    assert_eq!(baseline_from(&timeout, &hidden), Baseline::Fallback);
    let (no_mode, _) = parse(&[b"\x1b[?5u\x1b[?62c"]);
    assert_eq!(baseline_from(&no_mode, &hidden), Baseline::Fallback);
    let (unknown, _) = parse(&[b"\x1b[?1049;0$y\x1b[?62c"]);
    assert_eq!(baseline_from(&unknown, &hidden), Baseline::Fallback);
}

#[test]
fn query_bytes() {
    assert_eq!(
        ACTIVE_SCREEN_QUERY,
        b"\x1b[?u\x1b[?1049$p\x1b[?1047$p\x1b[?47$p\x1b[?4m\x1b[c"
    );
    assert_eq!(
        hidden_screen_query(Screen::Main, ScreenSwitch::Mode47).unwrap(),
        b"\x1b7\x1b[?47h\x1b[?u\x1b[c\x1b[?47l\x1b8"
    );
    assert_eq!(
        hidden_screen_query(Screen::Alternate, ScreenSwitch::Mode47).unwrap(),
        b"\x1b7\x1b[?47l\x1b[?u\x1b[c\x1b[?47h\x1b8"
    );
    // Without mode 47: 1049 from the main screen, nothing from an
    // alternate one.
    assert_eq!(
        hidden_screen_query(Screen::Main, ScreenSwitch::Without47).unwrap(),
        b"\x1b[?1049h\x1b[?u\x1b[c\x1b[?1049l"
    );
    assert_eq!(
        hidden_screen_query(Screen::Alternate, ScreenSwitch::Without47),
        None
    );
}

/// kitty answers DECRQM 47 with 0 (and homes the cursor on `47h`/`47l`):
/// no mode-47 byte in the setup or any restore; the main screen's hidden
/// alternate screen is visited with 1049 (which keeps the cursor), an
/// outer alternate screen's hidden main screen not at all.
#[test]
fn a_terminal_without_mode_47_never_gets_it() {
    let (active, _) = parse(&[b"\x1b[?0u\x1b[?1049;2$y\x1b[?1047;0$y\x1b[?47;0$y\x1b[?62c"]);
    let (hidden, _) = parse(&[b"\x1b[?3u\x1b[?62c"]);
    let b = baseline_from(&active, &hidden);
    assert_eq!(
        b,
        Baseline::Captured(Captured {
            kitty_alt: 3,
            switch: ScreenSwitch::Without47,
            ..Captured::default()
        })
    );
    assert_eq!(
        String::from_utf8(plan_setup(&b)).unwrap(),
        "\x1b[?1049h\x1b[=0;1u\x1b[?1049l"
    );
    for remote in [
        &b""[..],
        b"\x1b[?1049h\x1b[>15u",
        b"\x1b[?47h\x1b[>1u",
        b"\x1b[?1047h",
        b"\x1b[>1u\x1b[?2004h",
    ] {
        let got = restore(b, remote);
        assert!(!got.contains("[?47"), "{got:?} after {remote:?}");
    }
    assert_eq!(
        restore(b, b"\x1b[?1049h\x1b[>15u"),
        "\x1b[?1049l\x1b[?1049h\x1b[<1u\x1b[=3;1u\x1b[?1049l"
    );
    assert_eq!(
        restore(b, b"\x1b[?1047h"),
        "\x1b[?1047l\x1b[?1049h\x1b[=3;1u\x1b[?1049l"
    );
    // kitty switches on 47 all the same: left with 1047, which keeps the
    // cursor there.
    assert_eq!(
        restore(b, b"\x1b[?47h\x1b[>1u"),
        "\x1b[?1047l\x1b[?1049h\x1b[<1u\x1b[=3;1u\x1b[?1049l"
    );
    // Inside an outer alternate screen: the hidden main screen is left
    // alone, and a way back to the outer screen is 1049.
    let outer = Baseline::Captured(Captured {
        screen: Screen::Alternate,
        kitty_alt: 1,
        switch: ScreenSwitch::Without47,
        ..Captured::default()
    });
    assert_eq!(String::from_utf8(plan_setup(&outer)).unwrap(), "\x1b[=0;1u");
    assert_eq!(restore(outer, b"\x1b[>5u"), "\x1b[<1u\x1b[=1;1u");
    assert_eq!(restore(outer, b"\x1b[?1049l"), "\x1b[?1049h\x1b[=1;1u");
    // A terminal that has mode 47 keeps it (1 or 2), or that did not say.
    for answer in [&b"\x1b[?47;2$y"[..], b"\x1b[?47;1$y", b""] {
        let (a, _) = parse(&[b"\x1b[?1049;2$y", answer, b"\x1b[?62c"]);
        assert_eq!(a.switch(), ScreenSwitch::Mode47);
    }
    let (a, _) = parse(&[b"\x1b[?1049;2$y\x1b[?47;4$y\x1b[?62c"]);
    assert_eq!(a.switch(), ScreenSwitch::Without47);
}
