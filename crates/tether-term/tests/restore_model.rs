//! Model check of the restore planner: a session's bytes, then the restore
//! bytes, fed to the `vt100` emulator leave every mode it reports at its
//! default, and a reset of the scroll region leaves the cursor in place.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::num::NonZeroU16;

use proptest::prelude::*;
use tether_term::{
    Baseline, Captured, CursorState, Modes, Screen, ScreenSwitch, ScreenTracker, plan_restore,
};

mod common;

use common::{MODE_VOCAB, mode_stream};

fn session() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(prop::sample::select(MODE_VOCAB), 0..40).prop_map(|v| v.concat())
}

/// Feeds `remote` then its restore bytes (for a plain shell on the main
/// screen) to a 24x80 `vt100` screen.
fn emulate(remote: &[u8]) -> vt100::Parser {
    emulate_from(&Baseline::Captured(Captured::default()), remote)
}

fn emulate_from(baseline: &Baseline, remote: &[u8]) -> vt100::Parser {
    let mut tracker = ScreenTracker::new();
    tracker.written(remote);
    let restore = plan_restore(baseline, tracker.state());
    let (rows, cols) = (NonZeroU16::new(24).unwrap(), NonZeroU16::new(80).unwrap());
    let mut p = vt100::Parser::new(rows, cols, 0);
    p.process(remote);
    p.process(&restore);
    p
}

fn assert_defaults(p: &vt100::Parser, remote: &[u8]) {
    let s = p.screen();
    let modes = (
        s.alternate_screen(),
        s.application_cursor(),
        s.application_keypad(),
        s.hide_cursor(),
        s.bracketed_paste(),
        s.mouse_protocol_mode(),
        s.mouse_protocol_encoding(),
        s.cursor_style(),
    );
    let want = (
        false,
        false,
        false,
        false,
        false,
        vt100::MouseProtocolMode::None,
        vt100::MouseProtocolEncoding::Default,
        vt100::CursorStyle::Default,
    );
    assert_eq!(modes, want, "after {remote:?}");
    let attrs = (
        s.bold(),
        s.dim(),
        s.italic(),
        s.underline(),
        s.inverse(),
        s.fgcolor(),
        s.bgcolor(),
    );
    let plain = (
        false,
        false,
        false,
        false,
        false,
        vt100::Color::Default,
        vt100::Color::Default,
    );
    assert_eq!(attrs, plain, "after {remote:?}");
}

#[test]
fn every_mode_at_once_is_back_to_defaults() {
    for remote in [
        &b"\x1b[?1049h\x1b[?1h\x1b=\x1b[?25l\x1b[?2004h\x1b[?1003;1006h\x1b[1;31m\x1b[5 q"[..],
        b"\x1b[?1h\x1b=\x1b[?25l\x1b[?2004h\x1b[?1002;1005h\x1b[1;31m\x1b[5 q",
        b"\x1b[1m\x1b[?1049h\x1b[0m\x1b7\x1b[4m\x1b[?1049l\x1b8",
        b"\x1b[?47h\x1b[7m\x1b[?9h",
    ] {
        assert_defaults(&emulate(remote), remote);
    }
}

#[test]
fn text_after_a_session_cut_inside_a_string_is_shown() {
    // Nothing to undo, but the session ended inside a title: what follows
    // the plan (the farewell) must not become part of it.
    for remote in [&b"\x1b]0;a title never ended"[..], b"\x1bP1$qm", b"\x1b"] {
        let mut p = emulate(remote);
        p.process(b"[detached]");
        assert!(
            p.screen().contents().contains("detached]"),
            "after {remote:?}"
        );
    }
}

#[test]
fn region_reset_keeps_the_cursor_where_the_session_left_it() {
    let remote = b"\x1b[3;10r\x1b[7;12Hx";
    let p = emulate(remote);
    assert_eq!(p.screen().cursor_position(), (6, 12));
    // The region is gone: a line feed on the last line scrolls the screen.
    let mut p = p;
    p.process(b"\x1b[24;1Hbottom\n");
    assert_eq!(p.screen().contents().lines().nth(22), Some("bottom"));
}

#[test]
fn origin_mode_left_on_ends_on_the_last_line() {
    let p = emulate(b"\x1b[3;10r\x1b[?6h\x1b[2;5Hx");
    assert_eq!(p.screen().cursor_position(), (23, 0));
}

proptest! {
    #![proptest_config(common::config(300))]

    #[test]
    fn restore_brings_the_tracker_itself_back_to_defaults(remote in mode_stream(), alt in any::<bool>()) {
        // The tracker as the model terminal: every byte, random ones too.
        let screen = if alt { Screen::Alternate } else { Screen::Main };
        let captured = Baseline::Captured(Captured { screen, ..Captured::default() });
        // A terminal without mode 47 (kitty: it switches on 47 and 1047
        // all the same, as the tracker does).
        let without_47 = Baseline::Captured(Captured {
            screen,
            switch: ScreenSwitch::Without47,
            ..Captured::default()
        });
        for baseline in [captured, without_47, Baseline::Fallback] {
            let mut term = ScreenTracker::starting_on(baseline.screen());
            term.written(&remote);
            let restore = plan_restore(&baseline, term.state());
            term.written(&restore);
            let s = term.state();
            prop_assert_eq!(s.screen, baseline.screen());
            prop_assert!(s.modes_on().is_empty(), "{:?}", s);
            prop_assert_eq!(s.modes, Modes::default());
            prop_assert_eq!(s.cursor, CursorState::default());
        }
    }

    #[test]
    fn any_session_is_restored_to_defaults(remote in session()) {
        assert_defaults(&emulate(&remote), &remote);
        assert_defaults(&emulate_from(&Baseline::Fallback, &remote), &remote);
    }
}
