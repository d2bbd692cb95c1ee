//! The restore planner: the exact bytes that return the local terminal to
//! the state it was in before a remote session, whatever the remote left.
//!
//! Rules (from the interactive-mode design this grows from):
//! - the hidden screen is visited as [`ScreenSwitch`] says: with DEC mode
//!   47, which switches buffers without clearing, inside DECSC/DECRC
//!   (`ESC 7` … `ESC 8`) so the cursor stays where it was; on a terminal
//!   whose DECRQM answer says it lacks mode 47 (kitty 0.26 answers
//!   `CSI ? 47 ; 0 $ y`, yet switches on `47h`, homing the cursor), never
//!   with 47: from the main screen with 1049 (which saves and restores the
//!   cursor, and clears only the alternate screen, not shown), from an
//!   alternate screen not at all (1049 back to it would clear it);
//! - `1049l` is used only when we began on the main screen and the remote
//!   left us in a 1049 alternate screen (it restores the remote-saved
//!   cursor); when we began inside an outer alternate screen and the remote
//!   left it, mode 47 returns us there: `1049h` is never sent there,
//!   because it would clear the outer program's screen, except on a
//!   terminal without mode 47, where it is the only way back (the outer
//!   program redraws; staying on the main screen would let it draw over
//!   the person's rows);
//! - the screen is repaired first, then each screen's Kitty stack is popped
//!   by the entries the remote pushed and its captured flags are set back,
//!   then modifyOtherKeys;
//! - when the capture failed, the baseline is an ordinary shell: main
//!   screen, Kitty flags 0 on both screens, modifyOtherKeys 0, and every
//!   mode is reset unconditionally (but the scroll region and origin mode,
//!   whose reset moves the cursor, only when the session changed them).
//!
//! - when the session's bytes end inside a sequence (a connection cut
//!   mid-escape, a control string never terminated), the plan begins with
//!   CAN, which ends any sequence or string, so the terminal does not take
//!   the plan as part of it.
//!
//! The terminal-wide modes of [`crate::modes`] go back to the terminal's
//! defaults, each only when it changed, in this order:
//! 1. DEC private modes reset (`?1;5;…l`: cursor keys, reverse video, mouse,
//!    focus, paste), autowrap back on (`?7h`), replace mode (`CSI 4 l`);
//! 2. the screen repaired (`1049l` restores origin mode, SGR and charsets
//!    from the main screen's DECSC slot, so those are judged after it);
//! 3. the scroll region and origin mode: both move the cursor, so with
//!    origin mode off the region is reset inside DECSC/DECRC (`ESC 7 CSI r
//!    ESC 8`), which keeps the cursor where the session left it (and
//!    overwrites the DECSC slot of the screen we end on); with origin mode
//!    on the position cannot be kept (resetting DECOM homes the cursor and
//!    DECRC would turn it back on), so `?6l` and `CSI r` are followed by
//!    `CSI 9999;1 H`: the last line, where the next output goes below what
//!    is on screen;
//! 4. SGR 0, G0 and G1 back to ASCII (`ESC ( B`, `ESC ) B`), SI; the
//!    numeric keypad (`ESC >`);
//! 5. the cursor: shown (`?25h`), default shape (`CSI 0 SP q`);
//! 6. the Kitty stacks and modifyOtherKeys, as above.

use crate::modes::CursorState;
use crate::tracker::{AltScreenMode, KittyStack, Screen, ScreenState};

/// What the local terminal looked like before the session started.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Baseline {
    /// Captured by the query transaction.
    Captured(Captured),
    /// The capture failed: assume an ordinary shell on the main screen and
    /// reset everything unconditionally.
    Fallback,
}

/// How tether visits the screen that is not shown, to read or set its
/// Kitty flags (see the module docs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ScreenSwitch {
    /// Mode 47 inside DECSC/DECRC: the terminal has mode 47 (or did not
    /// say it lacks it).
    #[default]
    Mode47,
    /// The terminal lacks mode 47 (DECRQM 0 or 4): 1049 from the main
    /// screen, nothing from an alternate one.
    Without47,
}

impl ScreenSwitch {
    /// What a terminal's DECRQM answer for mode 47 (`None`: no answer)
    /// allows.
    pub fn from_decrqm(mode_47: Option<u32>) -> ScreenSwitch {
        match mode_47 {
            Some(0 | 4) => ScreenSwitch::Without47,
            _ => ScreenSwitch::Mode47,
        }
    }

    /// The bytes that go from `here` to the other screen and back; `None`
    /// when it cannot be visited.
    pub fn visit(self, here: Screen) -> Option<(&'static [u8], &'static [u8])> {
        match (self, here) {
            (ScreenSwitch::Mode47, Screen::Main) => Some((b"\x1b7\x1b[?47h", b"\x1b[?47l\x1b8")),
            (ScreenSwitch::Mode47, Screen::Alternate) => {
                Some((b"\x1b7\x1b[?47l", b"\x1b[?47h\x1b8"))
            }
            (ScreenSwitch::Without47, Screen::Main) => Some((b"\x1b[?1049h", b"\x1b[?1049l")),
            (ScreenSwitch::Without47, Screen::Alternate) => None,
        }
    }
}

/// A successfully captured baseline.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Captured {
    /// The screen that was active.
    pub screen: Screen,
    /// Kitty keyboard flags of the main screen.
    pub kitty_main: u32,
    /// Kitty keyboard flags of the alternate screen.
    pub kitty_alt: u32,
    /// xterm modifyOtherKeys level.
    pub modify_other_keys: u32,
    /// How the screen not shown may be visited.
    pub switch: ScreenSwitch,
}

impl Captured {
    fn kitty(&self, screen: Screen) -> u32 {
        match screen {
            Screen::Main => self.kitty_main,
            Screen::Alternate => self.kitty_alt,
        }
    }
}

impl Baseline {
    fn resolved(&self) -> (Captured, bool) {
        match self {
            Baseline::Captured(c) => (*c, false),
            Baseline::Fallback => (Captured::default(), true),
        }
    }

    /// The screen the session starts on.
    pub fn screen(&self) -> Screen {
        self.resolved().0.screen
    }
}

/// Bytes that put both screens in the legacy keyboard baseline before the
/// remote session starts (without popping the outer program's Kitty
/// stacks), and return to the original screen. Empty for a fallback
/// baseline, whose state is unknown.
pub fn plan_setup(baseline: &Baseline) -> Vec<u8> {
    let Baseline::Captured(c) = baseline else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let set_zero = |flags: u32| -> &'static [u8] { if flags != 0 { b"\x1b[=0;1u" } else { b"" } };
    out.extend_from_slice(set_zero(c.kitty(c.screen)));
    let hidden = set_zero(c.kitty(c.screen.other()));
    visit_hidden(&mut out, c.screen, c.switch, hidden);
    if c.modify_other_keys != 0 {
        out.extend_from_slice(b"\x1b[>4;0m");
    }
    out
}

/// The exact bytes that return the terminal from `state` to `baseline`.
pub fn plan_restore(baseline: &Baseline, state: &ScreenState) -> Vec<u8> {
    let (want, fallback) = baseline.resolved();
    let mut out = Vec::new();
    if state.unfinished {
        // CAN ends any sequence or control string, so the plan is not
        // taken as part of one the session left unfinished.
        out.push(0x18);
    }
    reset_modes(&mut out, state, fallback);
    let m = &state.modes;
    if fallback || m.autowrap_off {
        out.extend_from_slice(b"\x1b[?7h");
    }
    if fallback || m.insert {
        out.extend_from_slice(b"\x1b[4l");
    }
    let after = repair_screen(&mut out, want.screen, want.switch, state);
    reset_region(&mut out, state, &after);
    reset_cursor_state(&mut out, &after, fallback);
    if fallback || m.app_keypad {
        out.extend_from_slice(b"\x1b>");
    }
    if fallback || m.cursor_hidden {
        out.extend_from_slice(b"\x1b[?25h");
    }
    if fallback || m.cursor_style != 0 {
        out.extend_from_slice(b"\x1b[0 q");
    }
    let here = want.screen;
    out.extend_from_slice(&kitty_ops(state.kitty(here), want.kitty(here), fallback));
    let hidden = kitty_ops(
        state.kitty(here.other()),
        want.kitty(here.other()),
        fallback,
    );
    visit_hidden(&mut out, here, want.switch, &hidden);
    if fallback || state.modify_other_keys != want.modify_other_keys {
        out.extend_from_slice(format!("\x1b[>4;{}m", want.modify_other_keys).as_bytes());
    }
    out
}

/// Every mode [`ScreenState::modes_on`] can report, for the fallback reset.
const ALL_MODES: [u32; 11] = [1, 5, 9, 1000, 1002, 1003, 1004, 1005, 1006, 1015, 2004];

fn reset_modes(out: &mut Vec<u8>, state: &ScreenState, fallback: bool) {
    let modes = if fallback {
        ALL_MODES.to_vec()
    } else {
        state.modes_on()
    };
    if modes.is_empty() {
        return;
    }
    let list: Vec<String> = modes.iter().map(u32::to_string).collect();
    out.extend_from_slice(format!("\x1b[?{}l", list.join(";")).as_bytes());
}

/// Returns to the `want` screen; returns what DECSC would save after that
/// (`1049l` restores the main screen's slot). Without mode 47, an
/// alternate screen the session entered with 47 or 1047 is left with 1047
/// (kitty 0.26 switches on both, though it answers DECRQM 0 for both, and
/// keeps the cursor on `1047l` as on `47l`; a terminal that ignored the
/// switch ignores this too), and the way back to an outer alternate screen
/// is 1049 (which clears it: the outer program redraws; staying on the
/// main screen would let it draw over the person's rows).
fn repair_screen(
    out: &mut Vec<u8>,
    want: Screen,
    switch: ScreenSwitch,
    state: &ScreenState,
) -> CursorState {
    match (want, state.screen, switch) {
        (Screen::Main, Screen::Alternate, _) => match state.alt_mode {
            Some(AltScreenMode::Save1049) => {
                out.extend_from_slice(b"\x1b[?1049l");
                let mut after = state.saved_main;
                after.sgr |= state.saved_sgr_last;
                return after;
            }
            _ if switch == ScreenSwitch::Mode47 => out.extend_from_slice(b"\x1b[?47l"),
            _ => out.extend_from_slice(b"\x1b[?1047l"),
        },
        (Screen::Alternate, Screen::Main, ScreenSwitch::Mode47) => {
            out.extend_from_slice(b"\x1b[?47h");
        }
        (Screen::Alternate, Screen::Main, ScreenSwitch::Without47) => {
            out.extend_from_slice(b"\x1b[?1049h");
        }
        _ => {}
    }
    state.cursor
}

/// Resets the scroll region and origin mode, when changed; see the module
/// docs for where the cursor ends.
fn reset_region(out: &mut Vec<u8>, state: &ScreenState, after: &CursorState) {
    if after.origin {
        out.extend_from_slice(b"\x1b[?6l");
        if state.modes.scroll_region {
            out.extend_from_slice(b"\x1b[r");
        }
        out.extend_from_slice(b"\x1b[9999;1H");
    } else if state.modes.scroll_region {
        out.extend_from_slice(b"\x1b7\x1b[r\x1b8");
    }
}

/// SGR, the G0/G1 designations and the shift, when changed.
fn reset_cursor_state(out: &mut Vec<u8>, after: &CursorState, fallback: bool) {
    if fallback || after.sgr {
        out.extend_from_slice(b"\x1b[0m");
    }
    if fallback || after.g0 {
        out.extend_from_slice(b"\x1b(B");
    }
    if fallback || after.g1 {
        out.extend_from_slice(b"\x1b)B");
    }
    if fallback || after.shifted {
        out.push(0x0f);
    }
}

/// Pops what the remote pushed on one screen, then sets the captured flags
/// when the base entry differs from them.
fn kitty_ops(stack: &KittyStack, want: u32, fallback: bool) -> Vec<u8> {
    let mut ops = Vec::new();
    if !stack.pushed.is_empty() {
        ops.extend_from_slice(format!("\x1b[<{}u", stack.pushed.len()).as_bytes());
    }
    if fallback || stack.base_lost || stack.base != want {
        ops.extend_from_slice(format!("\x1b[={want};1u").as_bytes());
    }
    ops
}

/// Runs `ops` on the screen that is not `here`, getting there and back as
/// `switch` allows. Nothing is written when `ops` is empty or the screen
/// cannot be visited.
fn visit_hidden(out: &mut Vec<u8>, here: Screen, switch: ScreenSwitch, ops: &[u8]) {
    if ops.is_empty() {
        return;
    }
    let Some((go, back)) = switch.visit(here) else {
        return;
    };
    out.extend_from_slice(go);
    out.extend_from_slice(ops);
    out.extend_from_slice(back);
}
