//! The screen tracker: follows the terminal modes a program changes, so the
//! restore planner can undo them.
//!
//! It is fed only bytes that were actually written to the terminal
//! ([`ScreenTracker::written`]); a transition commits when its last byte is
//! written. Look-alikes inside OSC, DCS, APC, PM and SOS payloads, malformed
//! sequences, and private CSI parameters that are not strictly
//! `digits(;digits)*` never change state.
//!
//! Which screen each mode belongs to: the Kitty keyboard stack is kept per
//! screen (as Kitty does); everything else is global, per xterm: mouse,
//! focus, bracketed paste, modifyOtherKeys here, and the modes of
//! [`crate::modes`] (which documents the ones saved with the cursor).

pub use crate::kitty::{KITTY_STACK_MAX, KittyStack};
use crate::modes::{CursorState, Modes};
use crate::scan::Scanner;
use crate::token::{Csi, Event, Token};

/// Which screen buffer is shown.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Screen {
    /// The normal screen, with scrollback.
    #[default]
    Main,
    /// The alternate screen, used by full-screen programs.
    Alternate,
}

impl Screen {
    /// The other screen.
    pub fn other(self) -> Screen {
        match self {
            Screen::Main => Screen::Alternate,
            Screen::Alternate => Screen::Main,
        }
    }
}

/// The DEC private mode that switched to the alternate screen.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AltScreenMode {
    /// Mode 1049: save cursor, switch, clear.
    Save1049,
    /// Mode 1047: switch (clears on leave).
    Clear1047,
    /// Mode 47: plain switch.
    Plain47,
}

/// Mouse reporting modes (DEC private modes).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct MouseModes {
    /// 9: X10 compatibility.
    pub x10: bool,
    /// 1000: press and release.
    pub normal: bool,
    /// 1002: button-event (drag) tracking.
    pub button: bool,
    /// 1003: any-event (motion) tracking.
    pub any: bool,
    /// 1005: UTF-8 coordinates.
    pub utf8: bool,
    /// 1006: SGR coordinates.
    pub sgr: bool,
    /// 1015: urxvt coordinates.
    pub urxvt: bool,
}

/// The terminal state a program can leave behind.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ScreenState {
    /// The screen shown now.
    pub screen: Screen,
    /// How the alternate screen was entered, while it is shown.
    pub alt_mode: Option<AltScreenMode>,
    /// Mode 2004.
    pub bracketed_paste: bool,
    /// Mode 1004.
    pub focus_events: bool,
    /// Mouse modes.
    pub mouse: MouseModes,
    /// Kitty keyboard stack of the main screen.
    pub kitty_main: KittyStack,
    /// Kitty keyboard stack of the alternate screen.
    pub kitty_alt: KittyStack,
    /// xterm modifyOtherKeys level (`CSI > 4 ; n m`).
    pub modify_other_keys: u32,
    /// Autowrap, insert, reverse video, cursor keys, keypad, the cursor's
    /// visibility and shape, the scroll region.
    pub modes: Modes,
    /// Origin mode, SGR and charsets: what DECSC saves.
    pub cursor: CursorState,
    /// The main screen's DECSC slot.
    pub saved_main: CursorState,
    /// The alternate screen's DECSC slot.
    pub saved_alt: CursorState,
    /// SGR as last saved on either screen: emulators with one SGR slot
    /// (the `vt100` crate) restore this, so a restore counts it too.
    pub saved_sgr_last: bool,
    /// The bytes written so far end inside a sequence: the terminal takes
    /// the next bytes as part of it.
    pub unfinished: bool,
}

impl ScreenState {
    /// The Kitty stack of `screen`.
    pub fn kitty(&self, screen: Screen) -> &KittyStack {
        match screen {
            Screen::Main => &self.kitty_main,
            Screen::Alternate => &self.kitty_alt,
        }
    }

    fn kitty_mut(&mut self) -> &mut KittyStack {
        match self.screen {
            Screen::Main => &mut self.kitty_main,
            Screen::Alternate => &mut self.kitty_alt,
        }
    }

    /// The DEC private modes that are on, in the order a reset lists them.
    pub fn modes_on(&self) -> Vec<u32> {
        let m = &self.mouse;
        [
            (1, self.modes.app_cursor_keys),
            (5, self.modes.reverse_video),
            (9, m.x10),
            (1000, m.normal),
            (1002, m.button),
            (1003, m.any),
            (1004, self.focus_events),
            (1005, m.utf8),
            (1006, m.sgr),
            (1015, m.urxvt),
            (2004, self.bracketed_paste),
        ]
        .into_iter()
        .filter_map(|(mode, on)| on.then_some(mode))
        .collect()
    }

    fn set_private_mode(&mut self, mode: u32, on: bool) {
        let alt = match mode {
            1049 => Some(AltScreenMode::Save1049),
            1047 => Some(AltScreenMode::Clear1047),
            47 => Some(AltScreenMode::Plain47),
            _ => None,
        };
        if let Some(alt) = alt {
            // 1049 saves the cursor before it switches and restores it
            // after it switches back, in that screen's slot.
            if alt == AltScreenMode::Save1049 && on {
                self.save_cursor();
            }
            self.switch_screen(alt, on);
            if alt == AltScreenMode::Save1049 && !on {
                self.restore_cursor();
            }
            return;
        }
        if mode == 6 {
            self.cursor.origin = on;
            return;
        }
        if self.modes.set_private(mode, on) {
            return;
        }
        let m = &mut self.mouse;
        let flag = match mode {
            9 => &mut m.x10,
            1000 => &mut m.normal,
            1002 => &mut m.button,
            1003 => &mut m.any,
            1005 => &mut m.utf8,
            1006 => &mut m.sgr,
            1015 => &mut m.urxvt,
            1004 => &mut self.focus_events,
            2004 => &mut self.bracketed_paste,
            _ => return,
        };
        *flag = on;
    }

    /// XTRESTORE of `mode`: the value saved is unknown, so the mode counts
    /// as changed (screen switches are left alone).
    fn restored_private_mode(&mut self, mode: u32) {
        match mode {
            47 | 1047 | 1049 => {}
            7 | 25 => self.set_private_mode(mode, false),
            _ => self.set_private_mode(mode, true),
        }
    }

    /// The DECSC slot of `screen`.
    pub fn saved(&self, screen: Screen) -> &CursorState {
        match screen {
            Screen::Main => &self.saved_main,
            Screen::Alternate => &self.saved_alt,
        }
    }

    fn saved_mut(&mut self) -> &mut CursorState {
        match self.screen {
            Screen::Main => &mut self.saved_main,
            Screen::Alternate => &mut self.saved_alt,
        }
    }

    fn save_cursor(&mut self) {
        *self.saved_mut() = self.cursor;
        self.saved_sgr_last = self.cursor.sgr;
    }

    fn restore_cursor(&mut self) {
        self.cursor = *self.saved(self.screen);
        self.cursor.sgr |= self.saved_sgr_last;
    }

    fn switch_screen(&mut self, alt: AltScreenMode, on: bool) {
        match (on, self.screen) {
            (true, Screen::Main) => {
                self.screen = Screen::Alternate;
                self.alt_mode = Some(alt);
            }
            (false, Screen::Alternate) => {
                self.screen = Screen::Main;
                self.alt_mode = None;
            }
            _ => {}
        }
    }

    fn hard_reset(&mut self) {
        let mut fresh = ScreenState::default();
        fresh.kitty_main.reset();
        fresh.kitty_alt.reset();
        *self = fresh;
    }
}

/// Follows [`ScreenState`] over the bytes written to a terminal.
#[derive(Clone, Debug, Default)]
pub struct ScreenTracker {
    scanner: Scanner,
    state: ScreenState,
}

impl ScreenTracker {
    /// A tracker starting from the state tether sets up: main screen, every
    /// mode off, both Kitty stacks at flags 0, modifyOtherKeys 0.
    pub fn new() -> Self {
        Self::starting_on(Screen::Main)
    }

    /// A tracker whose terminal starts on `screen` (for example inside an
    /// outer program's alternate screen).
    pub fn starting_on(screen: Screen) -> Self {
        ScreenTracker {
            scanner: Scanner::escapes_only(),
            state: ScreenState {
                screen,
                ..ScreenState::default()
            },
        }
    }

    /// Records bytes that were actually written to the terminal. A sequence
    /// split across calls commits when its last byte arrives.
    pub fn written(&mut self, bytes: &[u8]) {
        let state = &mut self.state;
        self.scanner.feed(bytes, |ev| apply(state, &ev));
        self.state.unfinished = self.scanner.in_sequence();
        // A terminal runs SO and SI the moment they arrive, even inside a
        // sequence that has not ended yet; the completed sequence sets the
        // same shift again.
        self.state.cursor.shift_by(self.scanner.held_sequence());
    }

    /// The state as of the last byte written.
    pub fn state(&self) -> &ScreenState {
        &self.state
    }
}

fn apply(state: &mut ScreenState, ev: &Event<'_>) {
    match ev.token {
        // SO and SI run wherever a terminal executes controls: in text and
        // mixed into an escape or control sequence (not in string payloads).
        Token::Text(_) | Token::Control(_) | Token::SingleShift { .. } => {
            state.cursor.shift_by(ev.raw);
        }
        // A cut ESC or CSI ran its controls; a cut string did not.
        Token::Cancelled if !matches!(ev.raw, [0x1b, b']' | b'P' | b'_' | b'^' | b'X', ..]) => {
            state.cursor.shift_by(ev.raw);
        }
        Token::Csi(ref csi) => {
            state.cursor.shift_by(ev.raw);
            apply_csi(state, csi);
        }
        Token::Esc {
            intermediates,
            final_byte,
        } => {
            state.cursor.shift_by(ev.raw);
            apply_esc(state, intermediates, final_byte);
        }
        _ => {}
    }
}

fn apply_esc(state: &mut ScreenState, intermediates: &[u8], final_byte: u8) {
    match (intermediates, final_byte) {
        (b"", b'c') => state.hard_reset(),
        (b"", b'7') => state.save_cursor(),
        (b"", b'8') => state.restore_cursor(),
        (b"", b'=') => state.modes.app_keypad = true,
        (b"", b'>') => state.modes.app_keypad = false,
        // LS2, LS3: G2 or G3 into GL.
        (b"", b'n' | b'o') => state.cursor.shifted = true,
        ([b'(' | b')', ..], _) => state.cursor.designate(intermediates, final_byte),
        _ => {}
    }
}

fn apply_csi(state: &mut ScreenState, csi: &Csi<'_>) {
    if csi.malformed {
        return;
    }
    if (csi.prefix(), csi.intermediates, csi.final_byte) == (None, b"", b'm') {
        state.cursor.sgr(csi);
        return;
    }
    let Some(params) = csi.strict_params() else {
        return;
    };
    match (csi.prefix(), csi.intermediates, csi.final_byte) {
        (Some(b'?'), b"", b'h' | b'l') => {
            let on = csi.final_byte == b'h';
            for mode in params.iter().flatten() {
                state.set_private_mode(mode, on);
            }
        }
        (Some(b'?'), b"", b'r') => {
            for mode in params.iter().flatten() {
                state.restored_private_mode(mode);
            }
        }
        (None, b"", b'h' | b'l') if params.iter().any(|m| m == Some(4)) => {
            state.modes.insert = csi.final_byte == b'h';
        }
        (None, b"", b'r') => state.modes.set_region(&params),
        // SCOSC and SCORC: not every emulator honours them (the `vt100`
        // crate does not), so what may be set either way counts as set.
        (None, b"", b's') if params.is_empty() => {
            let (before, last) = (*state.saved(state.screen), state.saved_sgr_last);
            state.save_cursor();
            let slot = state.saved_mut();
            *slot = slot.union(&before);
            state.saved_sgr_last |= last;
        }
        (None, b"", b'u') if params.is_empty() => {
            let before = state.cursor;
            state.restore_cursor();
            state.cursor = state.cursor.union(&before);
        }
        (None, b" ", b'q') => state.modes.cursor_style = params.get(0, 0),
        // DECSTR resets most modes to their defaults, but DECAWM to *off*
        // (VT510); an emulator may also ignore it, so only that counts.
        (None, b"!", b'p') => state.modes.autowrap_off = true,
        (Some(b'>'), b"", b'u') => state.kitty_mut().push(params.get(0, 0)),
        (Some(b'<'), b"", b'u') => state.kitty_mut().pop(params.get(0, 1)),
        (Some(b'='), b"", b'u') => state.kitty_mut().set(params.get(0, 0), params.get(1, 1)),
        (Some(b'>'), b"", b'm') if params.get(0, 0) == 4 => {
            state.modify_other_keys = params.get(1, 0);
        }
        (Some(b'>'), b"", b'n') if params.get(0, 0) == 4 && params.len() == 1 => {
            state.modify_other_keys = 0;
        }
        _ => {}
    }
}
