//! The terminal-wide modes a program can leave behind, beyond the screen,
//! mouse, paste and keyboard state of [`ScreenState`](crate::ScreenState),
//! and how the tracker follows them.
//!
//! Every field's default is the terminal's power-on default, so a default
//! value means "never changed (or changed back)".
//!
//! Which screen each belongs to, per xterm:
//! - global (one value whichever buffer is shown, kept across 1049/1047/47):
//!   autowrap (DECAWM, `?7`), insert (IRM, `4`), reverse video (DECSCNM,
//!   `?5`), application cursor keys (DECCKM, `?1`), application keypad
//!   (DECKPAM/DECKPNM, `?66`), cursor visibility (DECTCEM, `?25`) and
//!   shape (DECSCUSR), the scroll region (DECSTBM; xterm keeps one pair of
//!   margins; some emulators, the `vt100` crate among them, keep one per
//!   buffer, so the region is reset on the screen the person ends on);
//! - global but saved and restored with the cursor ([`CursorState`]):
//!   origin mode (DECOM, `?6`), SGR attributes, the G0/G1 designations and
//!   the SO/SI shift. DECSC (`ESC 7`) saves them and DECRC (`ESC 8`)
//!   restores them (SCOSC and SCORC, `CSI s` and `CSI u`, are not honoured
//!   everywhere: after them a flag set in either state counts; SGR restored
//!   counts as set when the last SGR saved on either screen was, since the
//!   `vt100` crate keeps one SGR slot); xterm keeps one save slot per buffer,
//!   `1049h` saves into the current buffer's slot before switching and
//!   `1049l` restores from the main buffer's slot after switching back, so
//!   leaving a 1049 screen can put them back by itself. Focus events and
//!   modifyOtherKeys are global too (tracked in `ScreenState`).
//!
//! SGR is followed as "possibly not default": any attribute set makes it
//! dirty and only a full reset (`CSI m`, `CSI 0 m`) cleans it; a
//! non-strict SGR (colon sub-parameters) counts as dirty. XTRESTORE
//! (`CSI ? Pm r`) of a mode marks it changed, since the saved value is not
//! known. DECSTR (`CSI ! p`) turns autowrap off on a VT510 and resets the
//! rest to defaults, but not every emulator honours it: it counts as
//! autowrap off and leaves the rest as it was (at worst a reset too many).

use crate::token::{Csi, Params};

/// What DECSC saves and DECRC restores (the cursor position aside).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct CursorState {
    /// DECOM (`?6`): cursor addressing relative to the scroll region.
    pub origin: bool,
    /// SGR attributes possibly left set.
    pub sgr: bool,
    /// G0 holds a set other than ASCII (`ESC ( F`, F not `B`).
    pub g0: bool,
    /// G1 holds a set other than ASCII (`ESC ) F`, F not `B`).
    pub g1: bool,
    /// GL is not G0: shifted out (SO), or locking shift LS2/LS3.
    pub shifted: bool,
}

impl CursorState {
    /// Each flag set in either.
    pub(crate) fn union(&self, other: &CursorState) -> CursorState {
        CursorState {
            origin: self.origin || other.origin,
            sgr: self.sgr || other.sgr,
            g0: self.g0 || other.g0,
            g1: self.g1 || other.g1,
            shifted: self.shifted || other.shifted,
        }
    }

    /// Follows the SO/SI controls in `raw`, bytes a terminal executes.
    pub(crate) fn shift_by(&mut self, raw: &[u8]) {
        if let Some(i) = memchr::memrchr2(0x0e, 0x0f, raw) {
            self.shifted = raw.get(i) == Some(&0x0e);
        }
    }

    /// Follows one SGR sequence.
    pub(crate) fn sgr(&mut self, csi: &Csi<'_>) {
        let Some(params) = csi.strict_params() else {
            // Colon sub-parameters: some attribute was set.
            self.sgr = true;
            return;
        };
        if params.is_empty() {
            self.sgr = false;
            return;
        }
        let mut it = params.iter();
        while let Some(p) = it.next() {
            match p.unwrap_or(0) {
                0 => self.sgr = false,
                38 | 48 | 58 => {
                    self.sgr = true;
                    // Skip the colour's arguments, so a 0 in them is no reset.
                    let skip = match it.next().flatten() {
                        Some(5) => 1,
                        Some(2) => 3,
                        _ => 0,
                    };
                    for _ in 0..skip {
                        it.next();
                    }
                }
                _ => self.sgr = true,
            }
        }
    }

    /// Follows a designation `ESC I F` (`I` starting with `(` or `)`).
    pub(crate) fn designate(&mut self, intermediates: &[u8], final_byte: u8) {
        let other = intermediates.len() > 1 || final_byte != b'B';
        match intermediates.first() {
            Some(b'(') => self.g0 = other,
            Some(b')') => self.g1 = other,
            _ => {}
        }
    }
}

/// The terminal-wide modes that are not saved with the cursor.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Modes {
    /// DECAWM reset (`?7l`): lines do not wrap.
    pub autowrap_off: bool,
    /// IRM (`CSI 4 h`): insert instead of replace.
    pub insert: bool,
    /// DECSCNM (`?5h`): reverse video.
    pub reverse_video: bool,
    /// DECCKM (`?1h`): application cursor keys.
    pub app_cursor_keys: bool,
    /// DECKPAM (`ESC =`, or `?66h`): application keypad.
    pub app_keypad: bool,
    /// DECTCEM reset (`?25l`): the cursor is hidden.
    pub cursor_hidden: bool,
    /// DECSCUSR (`CSI n SP q`) value; 0 is the terminal's default shape.
    pub cursor_style: u32,
    /// DECSTBM set a region that may not be the whole screen.
    pub scroll_region: bool,
}

impl Modes {
    /// Sets or resets a DEC private mode this struct owns; false when it
    /// owns none by that number.
    pub(crate) fn set_private(&mut self, mode: u32, on: bool) -> bool {
        let (flag, value) = match mode {
            1 => (&mut self.app_cursor_keys, on),
            5 => (&mut self.reverse_video, on),
            7 => (&mut self.autowrap_off, !on),
            25 => (&mut self.cursor_hidden, !on),
            66 => (&mut self.app_keypad, on),
            _ => return false,
        };
        *flag = value;
        true
    }

    /// Follows DECSTBM: `CSI r` or `CSI 1 r` (or `;0`) is the whole screen;
    /// `top >= bottom` is ignored, as xterm ignores it.
    pub(crate) fn set_region(&mut self, params: &Params<'_>) {
        let top = params.get(0, 1).max(1);
        let bottom = params.get(1, 0);
        if bottom != 0 && top >= bottom {
            return;
        }
        self.scroll_region = top > 1 || bottom != 0;
    }
}
