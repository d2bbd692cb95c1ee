//! Screen tracker cases: each mode family, per-screen Kitty stacks,
//! modifyOtherKeys, commit-on-write, and look-alikes that must not count.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use tether_term::tracker::{AltScreenMode, KittyStack, MouseModes};
use tether_term::{Screen, ScreenState, ScreenTracker};

fn track(bytes: &[u8]) -> ScreenState {
    let mut t = ScreenTracker::new();
    t.written(bytes);
    t.state().clone()
}

fn stack(pushed: &[u32], base: u32, base_lost: bool) -> KittyStack {
    KittyStack {
        pushed: pushed.to_vec(),
        base,
        base_lost,
    }
}

#[test]
fn alternate_screen_modes() {
    for (mode, alt) in [
        ("1049", AltScreenMode::Save1049),
        ("1047", AltScreenMode::Clear1047),
        ("47", AltScreenMode::Plain47),
    ] {
        let on = track(format!("\x1b[?{mode}h").as_bytes());
        assert_eq!(
            (on.screen, on.alt_mode),
            (Screen::Alternate, Some(alt)),
            "{mode}"
        );
        let off = track(format!("\x1b[?{mode}h\x1b[?{mode}l").as_bytes());
        assert_eq!((off.screen, off.alt_mode), (Screen::Main, None), "{mode}");
    }
    // Entering again while on the alternate screen keeps the first mode.
    let s = track(b"\x1b[?1049h\x1b[?47h");
    assert_eq!(s.alt_mode, Some(AltScreenMode::Save1049));
}

#[test]
fn paste_mouse_focus_modes_in_one_sequence() {
    let s = track(b"\x1b[?2004;1000;1002;1003;1006;1015;1004h");
    assert!(s.bracketed_paste && s.focus_events);
    assert_eq!(
        s.mouse,
        MouseModes {
            normal: true,
            button: true,
            any: true,
            sgr: true,
            urxvt: true,
            ..MouseModes::default()
        }
    );
    assert_eq!(s.modes_on(), vec![1000, 1002, 1003, 1004, 1006, 1015, 2004]);
    let s = track(b"\x1b[?2004;1000;1002;1003;1006;1015;1004h\x1b[?1002;2004l");
    assert_eq!(s.modes_on(), vec![1000, 1003, 1004, 1006, 1015]);
}

#[test]
fn kitty_stacks_are_per_screen() {
    let s = track(b"\x1b[>15u\x1b[?1049h\x1b[>1u\x1b[=5;1u");
    assert_eq!(s.kitty_main, stack(&[15], 0, false));
    assert_eq!(s.kitty_alt, stack(&[5], 0, false));
    assert_eq!(s.kitty(Screen::Alternate).flags(), 5);
}

#[test]
fn kitty_set_modes_and_pops() {
    assert_eq!(track(b"\x1b[>1u\x1b[=6;2u").kitty_main.flags(), 7);
    assert_eq!(track(b"\x1b[>7u\x1b[=2;3u").kitty_main.flags(), 5);
    assert_eq!(track(b"\x1b[=3u").kitty_main, stack(&[], 3, false));
    assert_eq!(
        track(b"\x1b[>1u\x1b[>2u\x1b[>3u\x1b[<2u").kitty_main,
        stack(&[1], 0, false)
    );
    // Popping below what the program pushed loses the base entry.
    assert_eq!(track(b"\x1b[>1u\x1b[<3u").kitty_main, stack(&[], 0, true));
    // Default pop count is 1.
    assert_eq!(
        track(b"\x1b[>1u\x1b[>2u\x1b[<u").kitty_main,
        stack(&[1], 0, false)
    );
}

#[test]
fn kitty_stack_is_bounded() {
    let many = "\x1b[>1u".repeat(tether_term::tracker::KITTY_STACK_MAX + 10);
    let s = track(many.as_bytes());
    assert_eq!(
        s.kitty_main.pushed.len(),
        tether_term::tracker::KITTY_STACK_MAX
    );
}

#[test]
fn modify_other_keys() {
    assert_eq!(track(b"\x1b[>4;2m").modify_other_keys, 2);
    assert_eq!(track(b"\x1b[>4;2m\x1b[>4;1m").modify_other_keys, 1);
    assert_eq!(track(b"\x1b[>4;2m\x1b[>4m").modify_other_keys, 0);
    assert_eq!(track(b"\x1b[>4;2m\x1b[>4n").modify_other_keys, 0);
    // Other key-modifier resources are not modifyOtherKeys.
    assert_eq!(track(b"\x1b[>1;2m").modify_other_keys, 0);
}

#[test]
fn look_alikes_never_change_state() {
    let cases: &[&[u8]] = &[
        b"\x1b]0;\x1b[?1049h\x07",  // OSC aborted by ESC: the CSI is real!
        b"\x1b]0;[?1049h\x07",      // inside OSC payload
        b"\x1bP+q\x9b?1049h\x1b\\", // 8-bit CSI inside DCS
        b"\x1b_[?1049h\x1b\\",      // APC
        b"\x1b^[?2004h\x1b\\",      // PM
        b"\x1bX[>15u\x1b\\",        // SOS
        b"\x9b?1049h",              // raw C1 CSI is data
        b"\x1b[?1049:1h",           // sub-parameter: not validated
        b"\x1b[?10a49h",            // not digits
        b"\x1b[?1049$h",            // intermediate
        b"\x1b[?99999999999h",      // overflow
        b"\x1b[?1049\x18h",         // cancelled by CAN
    ];
    for (i, case) in cases.iter().enumerate() {
        let s = track(case);
        let expect_alt = i == 0;
        assert_eq!(
            s.screen == Screen::Alternate,
            expect_alt,
            "case {i}: {case:?}"
        );
    }
}

#[test]
fn controls_mixed_into_a_sequence_do_not_hide_it() {
    // A terminal runs the control (or ignores DEL) and still acts on the CSI.
    for case in [
        &b"\x1b\x01[?1049h"[..],
        b"\x1b[?1049\x7fh",
        b"\x1b[?10\r49h",
    ] {
        assert_eq!(track(case).screen, Screen::Alternate, "{case:?}");
    }
}

#[test]
fn commits_only_bytes_written() {
    let mut t = ScreenTracker::new();
    t.written(b"\x1b[?104");
    assert_eq!(
        t.state().screen,
        Screen::Main,
        "half a sequence is not a transition"
    );
    t.written(b"9h");
    assert_eq!(t.state().screen, Screen::Alternate);
    t.written(b"\x1b[?1049");
    assert_eq!(t.state().screen, Screen::Alternate);
    t.written(b"l");
    assert_eq!(t.state().screen, Screen::Main);
}

#[test]
fn hard_reset_returns_to_defaults_and_loses_the_base() {
    let s = track(b"\x1b[?1049h\x1b[?2004h\x1b[>5u\x1b[>4;2m\x1bc");
    assert_eq!(s.screen, Screen::Main);
    assert!(s.modes_on().is_empty());
    assert_eq!(s.modify_other_keys, 0);
    assert_eq!(s.kitty_main, stack(&[], 0, true));
}

#[test]
fn starting_on_the_alternate_screen() {
    let mut t = ScreenTracker::starting_on(Screen::Alternate);
    t.written(b"\x1b[?1049l");
    assert_eq!(t.state().screen, Screen::Main);
}

#[test]
fn terminal_wide_modes_are_followed() {
    use tether_term::{CursorState, Modes};
    let s = track(b"\x1b[?7l\x1b[4h\x1b[?5h\x1b[?1h\x1b=\x1b[?25l\x1b[4 q\x1b[2;9r");
    assert_eq!(
        s.modes,
        Modes {
            autowrap_off: true,
            insert: true,
            reverse_video: true,
            app_cursor_keys: true,
            app_keypad: true,
            cursor_hidden: true,
            cursor_style: 4,
            scroll_region: true,
        }
    );
    let s = track(b"\x1b[?6h\x1b[1m\x1b(0\x1b)0\x0e");
    let all = CursorState {
        origin: true,
        sgr: true,
        g0: true,
        g1: true,
        shifted: true,
    };
    assert_eq!(s.cursor, all);
    // 1049 saves them on the main screen and brings them back.
    let s = track(b"\x1b[?6h\x1b[1m\x1b[?1049h\x1b[?6l\x1b[0m");
    assert_eq!((s.cursor.origin, s.cursor.sgr), (false, false));
    assert!(s.saved(Screen::Main).origin);
    let s = track(b"\x1b[?6h\x1b[1m\x1b[?1049h\x1b[?6l\x1b[0m\x1b[?1049l");
    assert_eq!((s.cursor.origin, s.cursor.sgr), (true, true));
}

#[test]
fn terminal_wide_modes_commit_on_their_last_byte() {
    let mut t = ScreenTracker::new();
    t.written(b"\x1b[?25");
    assert!(!t.state().modes.cursor_hidden);
    t.written(b"l\x1b(");
    assert!(t.state().modes.cursor_hidden && !t.state().cursor.g0);
    t.written(b"0");
    assert!(t.state().cursor.g0);
}
