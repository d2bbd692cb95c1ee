//! ScreenTracker + plan_setup + plan_restore.
//!
//! - the tracker's state is the same whole and chunked, and each Kitty
//!   stack stays within KITTY_STACK_MAX;
//! - end to end, with a second tracker standing in for the real terminal:
//!   a terminal primed to a Baseline built from fuzz bytes, after
//!   plan_setup, is in the state a fresh session tracker assumes; after the
//!   program output (the fuzz stream) and plan_restore, it is back at the
//!   baseline: original screen, every mode off (the terminal-wide modes
//!   and what DECSC saves at their defaults), no pushed Kitty entries,
//!   each screen's Kitty flags and modifyOtherKeys as captured;
//! - neither plan ever contains `CSI ? 1049 h`; a Fallback setup is empty.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tether_term::tracker::KITTY_STACK_MAX;
use tether_term::{
    Baseline, Captured, CursorState, Modes, Screen, ScreenState, ScreenSwitch, ScreenTracker,
    plan_restore, plan_setup,
};
use tether_term_fuzz::{Case, u32_from};

/// extra[0]: bit 0 Captured (else Fallback), bit 1 alternate screen,
/// bit 2 keep values small (so they collide with what the stream sets);
/// extra[1..5], [5..9], [9..13]: Kitty main, Kitty alt, modifyOtherKeys.
const EXTRA: usize = 13;

fn baseline(extra: &[u8]) -> Baseline {
    if extra[0] & 1 == 0 {
        return Baseline::Fallback;
    }
    let v = |r: std::ops::Range<usize>| {
        let x = u32_from(&extra[r]);
        if extra[0] & 4 != 0 { x % 32 } else { x }
    };
    Baseline::Captured(Captured {
        screen: if extra[0] & 2 != 0 {
            Screen::Alternate
        } else {
            Screen::Main
        },
        kitty_main: v(1..5),
        kitty_alt: v(5..9),
        modify_other_keys: v(9..13),
        // The stand-in terminal switches with mode 47; a terminal without
        // it is the restore tests' and restore_model's.
        switch: ScreenSwitch::Mode47,
    })
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

/// The state with `alt_mode` cleared: how a screen was entered is not
/// known for the screen the session starts on.
fn norm(s: &ScreenState) -> ScreenState {
    ScreenState {
        alt_mode: None,
        ..s.clone()
    }
}

fn kitty_set(flags: u32) -> String {
    format!("\x1b[={flags};1u")
}

/// A tracker standing in for the local terminal as the capture found it.
fn terminal(baseline: &Baseline) -> ScreenTracker {
    let mut t = ScreenTracker::starting_on(baseline.screen());
    if let Baseline::Captured(c) = baseline {
        let (here, there, go, back): (u32, u32, &str, &str) = match c.screen {
            Screen::Main => (c.kitty_main, c.kitty_alt, "\x1b[?47h", "\x1b[?47l"),
            Screen::Alternate => (c.kitty_alt, c.kitty_main, "\x1b[?47l", "\x1b[?47h"),
        };
        let prime = format!(
            "{}{go}{}{back}\x1b[>4;{}m",
            kitty_set(here),
            kitty_set(there),
            c.modify_other_keys
        );
        t.written(prime.as_bytes());
        let s = t.state();
        assert_eq!(s.screen, c.screen, "model priming");
        assert_eq!(s.kitty_main.flags(), c.kitty_main, "model priming");
        assert_eq!(s.kitty_alt.flags(), c.kitty_alt, "model priming");
        assert_eq!(s.modify_other_keys, c.modify_other_keys, "model priming");
    }
    t
}

fuzz_target!(|input: &[u8]| {
    let case = Case::parse(input, EXTRA);
    let baseline = baseline(&case.extra);
    let start = baseline.screen();

    // The session tracker, whole vs chunked.
    let mut whole = ScreenTracker::starting_on(start);
    whole.written(&case.data);
    let mut parts = ScreenTracker::starting_on(start);
    for c in case.chunks() {
        parts.written(c);
    }
    assert_eq!(
        parts.state(),
        whole.state(),
        "chunked tracker state differs"
    );
    let state = whole.state();
    assert!(state.kitty_main.pushed.len() <= KITTY_STACK_MAX);
    assert!(state.kitty_alt.pushed.len() <= KITTY_STACK_MAX);

    let setup = plan_setup(&baseline);
    let restore = plan_restore(&baseline, state);
    assert_eq!(plan_restore(&baseline, parts.state()), restore);
    assert!(!contains(&setup, b"1049h"), "setup sends 1049h: {setup:?}");
    assert!(
        !contains(&restore, b"1049h"),
        "restore sends 1049h: {restore:?}"
    );
    if baseline == Baseline::Fallback {
        assert!(setup.is_empty(), "fallback setup not empty");
    }

    // End to end on a model terminal.
    let mut term = terminal(&baseline);
    term.written(&setup);
    let fresh = ScreenTracker::starting_on(start);
    assert_eq!(
        norm(term.state()),
        norm(fresh.state()),
        "after plan_setup {setup:?} the terminal is not what a fresh tracker assumes"
    );
    term.written(&case.data);
    assert_eq!(
        norm(term.state()),
        norm(state),
        "terminal and session tracker disagree after the program output"
    );
    term.written(&restore);
    let want = match baseline {
        Baseline::Captured(c) => c,
        Baseline::Fallback => Captured::default(),
    };
    let got = term.state();
    let ctx =
        || format!("baseline {baseline:?}, state {state:?}, restore {restore:?}, after {got:?}");
    assert_eq!(got.screen, want.screen, "screen not restored: {}", ctx());
    assert!(got.modes_on().is_empty(), "modes left on: {}", ctx());
    assert_eq!(got.modes, Modes::default(), "terminal-wide modes: {}", ctx());
    assert_eq!(got.cursor, CursorState::default(), "origin, SGR, charsets: {}", ctx());
    assert!(
        got.kitty_main.pushed.is_empty(),
        "kitty main entries left: {}",
        ctx()
    );
    assert!(
        got.kitty_alt.pushed.is_empty(),
        "kitty alt entries left: {}",
        ctx()
    );
    assert_eq!(
        got.kitty_main.flags(),
        want.kitty_main,
        "kitty main flags: {}",
        ctx()
    );
    assert_eq!(
        got.kitty_alt.flags(),
        want.kitty_alt,
        "kitty alt flags: {}",
        ctx()
    );
    assert_eq!(
        got.modify_other_keys,
        want.modify_other_keys,
        "modifyOtherKeys: {}",
        ctx()
    );
});
