//! `tether-term`: the pure, streaming terminal-protocol core of tether.
//!
//! Everything tether reads from a shell or a remote host passes through this
//! crate. It does:
//! - [`Scanner`]: classify a byte stream into text, C0 controls, ESC, CSI,
//!   OSC/DCS/APC/PM/SOS strings and single shifts, keeping each piece's
//!   exact bytes;
//! - [`ResponseFilter`]: remove terminal *replies* that leak into output;
//! - [`ScreenTracker`]: follow the modes a program changes (alternate
//!   screen, bracketed paste, mouse, focus, Kitty keyboard, modifyOtherKeys,
//!   and the terminal-wide [`modes`]: autowrap, insert, reverse video,
//!   cursor keys, keypad, cursor, scroll region, origin, SGR, charsets);
//! - [`restore`]: plan the bytes that return the local terminal to its
//!   captured baseline, and parse the capture transaction's replies
//!   ([`capture`]);
//! - [`MarkerScanner`]: find OSC 133 marks and the engine's nonce marks;
//! - [`TextProjector`]: turn terminal output into the text a program reads;
//! - [`ByteLog`] and [`HeadTailClip`]: bounded buffers;
//! - [`Redactor`]: replace secrets in a stream;
//! - [`printable`]: text from elsewhere escaped for printing on a terminal;
//! - [`EscapeScanner`]: the ssh-style escapes (`~.`) of a person's keys, read
//!   in every keyboard encoding ([`keys`]: legacy, Kitty, modifyOtherKeys).
//!
//! In more detail:
//! - [`ScreenTracker`] keeps the Kitty keyboard stack per screen and
//!   everything else terminal-wide; [`modes`] holds the terminal-wide modes
//!   and what DECSC saves (origin mode, SGR, G0/G1 and the shift).
//! - [`restore`] undoes each mode only when it changed and keeps the cursor
//!   in place. The screen not shown is visited with mode 47 inside
//!   DECSC/DECRC; where DECRQM says the terminal lacks 47 (kitty), with 1049
//!   from the main screen and not at all from an alternate one
//!   ([`ScreenSwitch`]).
//! - [`QueryFilter`]: a session's queries and tether's marks kept from a
//!   person's terminal (when the daemon's emulator has answered them).
//! - [`utf8::Utf8Decoder`]: incremental UTF-8 decoding.
//! - [`escape`]: `~.` `~^Z` `~?` `~~`, and where a door offers them
//!   ([`EscapeSet`]) `~C` (its line's keys as [`Keyed::Line`]), `~#`, `~&`;
//!   [`escape_help`] is the one help text. Escape keys are consumed, every
//!   other byte is sent as it came.
//! - [`keys`]: `KeyReader` cuts typed input into keys with their exact
//!   bytes, across reads; `keys::meaning` reads legacy bytes, Kitty
//!   `CSI … u` under any flags (releases and modifier keys ignored,
//!   alternate keys, associated text), modifyOtherKeys 1/2 (`CSI 27;m;k~`,
//!   `CSI k;m u`) and keypad Enter `ESC O M`, so the escapes work whatever
//!   mode the far program turned on.
//! - [`printable`] escapes controls, C1, bidi and zero-width characters.
//!
//! Every component is incremental: input may arrive in any chunking, and the
//! result equals that of the unsplit stream. Memory is bounded by the limits
//! each component documents.
//!
//! It does not do I/O, spawn anything, use an async runtime, or emulate a
//! screen grid (the engine uses a headless emulator for that).

pub mod bytelog;
pub mod capture;
pub mod clip;
mod error;
pub mod escape;
pub mod filter;
pub mod keys;
mod kitty;
pub mod markers;
pub mod modes;
pub mod printable;
pub mod project;
pub mod queries;
pub mod redact;
pub mod restore;
pub mod scan;
pub mod status_line;
pub mod token;
pub mod tracker;
pub mod utf8;

pub use bytelog::{ByteLog, Since};
pub use capture::{CaptureParser, CaptureReplies};
pub use clip::{Clipped, HeadTailClip, omitted_marker};
pub use error::TermError;
pub use escape::{EscapeScanner, EscapeSet, Keyed, LineKey, escape_help};
pub use filter::ResponseFilter;
pub use markers::{Marker, MarkerEvent, MarkerScanner};
pub use modes::{CursorState, Modes};
pub use project::TextProjector;
pub use queries::QueryFilter;
pub use redact::Redactor;
pub use restore::{Baseline, Captured, ScreenSwitch, plan_restore, plan_setup};
pub use scan::{MAX_PENDING, Scanner};
pub use status_line::status_line;
pub use token::{Csi, Event, StringKind, Terminator, Token};
pub use tracker::{Screen, ScreenState, ScreenTracker};
