//! Restore bytes for the terminal-wide modes (issue 12): each mode a session
//! leaves changed is undone with exact bytes, nothing is written for modes
//! that are back to their defaults, and the cursor-moving resets keep the
//! cursor where the person expects.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use tether_term::{Baseline, Captured, Screen, ScreenTracker, plan_restore};

fn restore_from(baseline: Baseline, remote: &[u8]) -> String {
    let mut t = ScreenTracker::starting_on(baseline.screen());
    t.written(remote);
    String::from_utf8(plan_restore(&baseline, t.state())).unwrap()
}

fn restore(remote: &[u8]) -> String {
    restore_from(Baseline::Captured(Captured::default()), remote)
}

#[track_caller]
fn check(cases: &[(&[u8], &str)]) {
    for (remote, want) in cases {
        assert_eq!(restore(remote), *want, "after {remote:?}");
    }
}

#[test]
fn each_mode_is_undone_with_exact_bytes() {
    check(&[
        (b"\x1b[?7l", "\x1b[?7h"),
        (b"\x1b[4h", "\x1b[4l"),
        (b"\x1b[?5h", "\x1b[?5l"),
        (b"\x1b[?1h", "\x1b[?1l"),
        (b"\x1b=", "\x1b>"),
        (b"\x1b[?66h", "\x1b>"),
        (b"\x1b(0", "\x1b(B"),
        (b"\x1b)0", "\x1b)B"),
        (b"\x0e", "\x0f"),
        (b"\x1bn", "\x0f"),
        (b"\x1b[1;31m", "\x1b[0m"),
        (b"\x1b[38:2::1:2:3m", "\x1b[0m"),
        (b"\x1b[?25l", "\x1b[?25h"),
        (b"\x1b[5 q", "\x1b[0 q"),
        (b"\x1b[?1004h", "\x1b[?1004l"),
        (b"\x1b[>4;2m", "\x1b[>4;0m"),
    ]);
}

#[test]
fn modes_changed_back_write_nothing() {
    check(&[
        (b"\x1b[?7l\x1b[?7h", ""),
        (b"\x1b[4h\x1b[4l", ""),
        (b"\x1b[?1;5h\x1b[?5;1l", ""),
        (b"\x1b=\x1b>", ""),
        (b"\x1b(0\x1b)0\x0e\x1b(B\x1b)B\x0f", ""),
        (b"\x1b[1m\x1b[m", ""),
        (b"\x1b[38;5;0m\x1b[0m", ""),
        (b"\x1b[?25l\x1b[?25h", ""),
        (b"\x1b[5 q\x1b[0 q", ""),
        (b"\x1b[5;20r\x1b[r", ""),
        (b"\x1b[?6h\x1b[?6l", ""),
        // DECSC/DECRC brings SGR back to what it was saved with.
        (b"\x1b7\x1b[1m\x1b8", ""),
        (b"\x1b7\x1b(0\x1b8", ""),
        // SCORC is not honoured everywhere: what either state set counts.
        (b"\x1b[s\x1b(0\x1b[u", "\x1b(B"),
        // A 0 inside a colour's arguments is no reset.
        (b"\x1b[38;5;0m", "\x1b[0m"),
        (b"\x1b[1m\x1b7\x1b[0m\x1b8", "\x1b[0m"),
    ]);
}

#[test]
fn look_alikes_change_nothing() {
    check(&[
        (b"\x1b]0;\x0e(0\x07", ""),
        (b"\x1b_[?25l\x0e\x1b\\", ""),
        (b"\x1b[?7:1l", ""),
        (b"\x1b[20;5r", ""), // top after bottom: ignored, as xterm does
        (b"\x1b[?25$l", ""),
    ]);
}

#[test]
fn scroll_region_is_reset_without_moving_the_cursor() {
    check(&[
        (b"\x1b[5;20r", "\x1b7\x1b[r\x1b8"),
        (b"\x1b[5r", "\x1b7\x1b[r\x1b8"),
        // Origin mode on: the position cannot be kept; the last line.
        (b"\x1b[?6h", "\x1b[?6l\x1b[9999;1H"),
        (b"\x1b[5;20r\x1b[?6h", "\x1b[?6l\x1b[r\x1b[9999;1H"),
    ]);
}

#[test]
fn leaving_1049_restores_what_decsc_saved_so_only_the_rest_is_reset() {
    // Origin, SGR and the charset were set inside the alternate screen:
    // `1049l` brings back the main screen's saved state, the region stays.
    check(&[
        (
            b"\x1b[?1049h\x1b[5;20r\x1b[?6h\x1b[1m\x1b(0\x1b[?1h",
            "\x1b[?1l\x1b[?1049l\x1b7\x1b[r\x1b8",
        ),
        // Set before 1049h: saved with the cursor, so back after 1049l.
        (
            b"\x1b[1m\x1b(0\x1b[?1049h\x1b[0m\x1b(B",
            "\x1b[?1049l\x1b[0m\x1b(B",
        ),
        // 47 saves nothing.
        (
            b"\x1b[?47h\x1b[?6h\x1b[1m",
            "\x1b[?47l\x1b[?6l\x1b[9999;1H\x1b[0m",
        ),
    ]);
}

#[test]
fn xtrestore_marks_modes_changed() {
    check(&[(b"\x1b[?1;25;2004r", "\x1b[?1;2004l\x1b[?25h")]);
}

#[test]
fn a_sequence_left_unfinished_is_ended_first() {
    check(&[
        (b"\x1b[?25l\x1b]0;half a tit", "\x18\x1b[?25h"),
        (b"\x1b[", "\x18"),
        (b"\x1bP1$r", "\x18"),
        // SO mixed into a cut CSI ran; inside a cut string it did not.
        (b"\x1b[\x0e\x18", "\x0f"),
        (b"\x1b]0;\x0e\x18", ""),
    ]);
}

#[test]
fn soft_reset_counts_as_autowrap_off_and_resets_nothing_else() {
    check(&[
        (b"\x1b[!p", "\x1b[?7h"),
        (b"\x1b[?1h\x1b[!p", "\x1b[?1l\x1b[?7h"),
        (b"\x1b[!p\x1b[?7h", ""),
    ]);
}

#[test]
fn hard_reset_returns_every_mode_to_its_default() {
    // Only the Kitty stacks' base entries, lost to the reset, are set back.
    check(&[(
        b"\x1b[?7l\x1b[4h\x1b[?1h\x1b=\x1b(0\x0e\x1b[1m\x1b[3;9r\x1b[?25l\x1bc",
        "\x1b[=0;1u\x1b7\x1b[?47h\x1b[=0;1u\x1b[?47l\x1b8",
    )]);
}

#[test]
fn everything_at_once_in_order() {
    let all = b"\x1b[?1049h\x1b[?7l\x1b[4h\x1b[?5h\x1b[?1h\x1b=\x1b(0\x1b)0\x0e\x1b[1;4m\
\x1b[?25l\x1b[3 q\x1b[?1004h\x1b[>4;1m\x1b[2;10r\x1b[?2004h\x1b[?1000;1006h";
    assert_eq!(
        restore(all),
        "\x1b[?1;5;1000;1004;1006;2004l\x1b[?7h\x1b[4l\x1b[?1049l\x1b7\x1b[r\x1b8\
\x1b>\x1b[?25h\x1b[0 q\x1b[>4;0m"
    );
    // The same on the main screen: SGR and charsets are not restored by a
    // screen switch, so they are reset too.
    let main = &all[b"\x1b[?1049h".len()..];
    assert_eq!(
        restore(main),
        "\x1b[?1;5;1000;1004;1006;2004l\x1b[?7h\x1b[4l\x1b7\x1b[r\x1b8\
\x1b[0m\x1b(B\x1b)B\x0f\x1b>\x1b[?25h\x1b[0 q\x1b[>4;0m"
    );
}

#[test]
fn outer_alternate_screen_gets_its_region_reset_where_we_end() {
    let outer = Baseline::Captured(Captured {
        screen: Screen::Alternate,
        ..Captured::default()
    });
    assert_eq!(
        restore_from(outer, b"\x1b[?1049l\x1b[3;10r\x1b[?25l"),
        "\x1b[?47h\x1b7\x1b[r\x1b8\x1b[?25h"
    );
}
