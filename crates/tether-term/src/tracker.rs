//! The screen tracker: follows the terminal modes a program changes, so the
//! restore planner can undo them.
//!
//! It is fed only bytes that were actually written to the terminal
//! ([`ScreenTracker::written`]); a transition commits when its last byte is
//! written. Look-alikes inside OSC, DCS, APC, PM and SOS payloads, malformed
//! sequences, and private CSI parameters that are not strictly
//! `digits(;digits)*` never change state.

use crate::scan::Scanner;
use crate::token::{Csi, Token};

/// Most Kitty keyboard entries tracked per screen; a push past this drops
/// the oldest tracked entry, as Kitty drops the oldest entry of a full stack.
pub const KITTY_STACK_MAX: usize = 64;

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

/// One screen's Kitty keyboard stack, relative to what was there when
/// tracking began (the *base* entry, which belongs to whoever ran us).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KittyStack {
    /// Entries the program pushed, oldest first.
    pub pushed: Vec<u32>,
    /// Flags of the base entry (changed by `CSI = f ; m u` when nothing
    /// was pushed above it).
    pub base: u32,
    /// True when the program popped (or reset) below its own entries, so
    /// the entries beneath are gone.
    pub base_lost: bool,
}

impl KittyStack {
    /// The flags currently in force.
    pub fn flags(&self) -> u32 {
        self.pushed.last().copied().unwrap_or(self.base)
    }

    fn push(&mut self, flags: u32) {
        if self.pushed.len() == KITTY_STACK_MAX {
            self.pushed.remove(0);
        }
        self.pushed.push(flags);
    }

    fn pop(&mut self, n: u32) {
        for _ in 0..n.max(1) {
            if self.pushed.pop().is_none() {
                self.base = 0;
                self.base_lost = true;
                break;
            }
        }
    }

    fn set(&mut self, flags: u32, mode: u32) {
        let top = self.pushed.last_mut().unwrap_or(&mut self.base);
        match mode {
            2 => *top |= flags,
            3 => *top &= !flags,
            _ => *top = flags,
        }
    }

    fn reset(&mut self) {
        *self = KittyStack {
            base_lost: true,
            ..KittyStack::default()
        };
    }
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
            self.switch_screen(alt, on);
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
        self.scanner.feed(bytes, |ev| apply(state, &ev.token));
    }

    /// The state as of the last byte written.
    pub fn state(&self) -> &ScreenState {
        &self.state
    }
}

fn apply(state: &mut ScreenState, token: &Token<'_>) {
    match token {
        Token::Csi(csi) => apply_csi(state, csi),
        Token::Esc {
            intermediates: b"",
            final_byte: b'c',
        } => state.hard_reset(),
        _ => {}
    }
}

fn apply_csi(state: &mut ScreenState, csi: &Csi<'_>) {
    if csi.prefix().is_none() || !csi.intermediates.is_empty() {
        return;
    }
    let Some(params) = csi.strict_params() else {
        return;
    };
    match (csi.prefix(), csi.final_byte) {
        (Some(b'?'), b'h' | b'l') => {
            let on = csi.final_byte == b'h';
            for mode in params.iter().flatten() {
                state.set_private_mode(mode, on);
            }
        }
        (Some(b'>'), b'u') => state.kitty_mut().push(params.get(0, 0)),
        (Some(b'<'), b'u') => state.kitty_mut().pop(params.get(0, 1)),
        (Some(b'='), b'u') => state.kitty_mut().set(params.get(0, 0), params.get(1, 1)),
        (Some(b'>'), b'm') if params.get(0, 0) == 4 => {
            state.modify_other_keys = params.get(1, 0);
        }
        (Some(b'>'), b'n') if params.get(0, 0) == 4 && params.len() == 1 => {
            state.modify_other_keys = 0;
        }
        _ => {}
    }
}
