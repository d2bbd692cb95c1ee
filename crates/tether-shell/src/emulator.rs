//! The headless emulator: a zero-scrollback screen that consumes a
//! session's raw output, answers the terminal queries programs send (so a
//! REPL or TUI that probes the terminal does not hang), and renders the
//! current screen as text for full-screen programs.

use tether_term::token::DcsHeader;
use tether_term::{Scanner, StringKind, Token};

/// What the emulator says it is (XTVERSION).
const NAME: &str = "tether(0.1)";

/// A vt100 screen plus query answering.
pub struct Emulator {
    screen: vt100::Parser,
    scanner: Scanner,
    rows: u16,
    lf_is_newline: bool,
    scratch: Vec<u8>,
}

impl std::fmt::Debug for Emulator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Emulator").finish_non_exhaustive()
    }
}

impl Emulator {
    /// A `rows` x `cols` screen with no scrollback. `lf_is_newline` when
    /// the terminal does not turn LF into CRLF itself (OPOST off), so a bare
    /// LF on the main screen also returns the cursor to the left edge (as
    /// the line output of ordinary programs means).
    pub fn new(rows: u16, cols: u16, lf_is_newline: bool) -> Self {
        let (rows, cols) = in_range(rows, cols);
        Emulator {
            screen: vt100::Parser::new(nonzero(rows), nonzero(cols), 0),
            scanner: Scanner::escapes_only(),
            rows,
            lf_is_newline,
            scratch: Vec::new(),
        }
    }

    /// Consumes output; returns the replies to write to the terminal, in
    /// order. Each reply reflects the screen as of its query (a cursor
    /// position report sees every byte before the query). With `display`,
    /// also appends the bytes a real terminal watching the session should
    /// get: the output as it is, except that a bare LF on the main screen
    /// becomes CRLF when the terminal does not do that itself.
    pub fn feed(&mut self, bytes: &[u8], mut display: Option<&mut Vec<u8>>) -> Vec<u8> {
        let mut replies = Vec::new();
        let (screen, scratch) = (&mut self.screen, &mut self.scratch);
        let (rows, lf_is_newline) = (usize::from(self.rows), self.lf_is_newline);
        self.scanner.feed(bytes, |ev| {
            if let Token::Text(text) = ev.token {
                let main = !screen.screen().alternate_screen();
                if let Some(d) = display.as_deref_mut() {
                    push_display(d, text, lf_is_newline && main);
                }
                // Full-screen programs (alternate screen) address the cursor
                // themselves, may use LF to move straight down, and set
                // scroll regions: their text is fed whole and as it is.
                let text = if main { visible_tail(text, rows) } else { text };
                let newline = lf_is_newline && main;
                if newline && memchr::memchr(b'\n', text).is_some() {
                    scratch.clear();
                    for &b in text {
                        if b == b'\n' {
                            scratch.push(b'\r');
                        }
                        scratch.push(b);
                    }
                    screen.process(scratch);
                } else {
                    screen.process(text);
                }
                return;
            }
            if let Some(d) = display.as_deref_mut() {
                d.extend_from_slice(ev.raw);
            }
            screen.process(ev.raw);
            answer(screen.screen(), &ev.token, &mut replies);
        });
        replies
    }

    /// The screen as text, one line per row, trailing blanks trimmed.
    pub fn contents(&self) -> String {
        self.screen.screen().contents()
    }

    /// Bytes that draw the current screen on a real terminal from any
    /// state: the screen (alternate or main), its contents with colours,
    /// the cursor, and the input modes programs turned on.
    pub fn redraw(&self) -> Vec<u8> {
        let screen = self.screen.screen();
        let mut out = Vec::new();
        if screen.alternate_screen() {
            out.extend_from_slice(b"\x1b[?1049h");
        }
        out.extend_from_slice(screen.state_formatted().as_bytes());
        out
    }

    /// The screen size, rows then columns.
    pub fn size(&self) -> (u16, u16) {
        let (rows, cols) = self.screen.screen().size();
        (rows.get(), cols.get())
    }

    /// Changes the screen size.
    pub fn resize(&mut self, rows: u16, cols: u16) {
        let (rows, cols) = in_range(rows, cols);
        self.rows = rows;
        self.screen
            .screen_mut()
            .set_size(nonzero(rows), nonzero(cols));
    }
}

/// Appends a text run for a watching terminal, LF as CRLF when `newline`.
fn push_display(out: &mut Vec<u8>, text: &[u8], newline: bool) {
    if !newline {
        out.extend_from_slice(text);
        return;
    }
    let mut at = 0;
    for lf in memchr::memchr_iter(b'\n', text) {
        out.extend_from_slice(&text[at..lf]);
        if lf == 0 || text[lf - 1] != b'\r' {
            out.push(b'\r');
        }
        at = lf;
    }
    out.extend_from_slice(&text[at..]);
}

/// The part of a text run (no escape sequences) that can still be on
/// screen: after its last `rows + 1` line feeds everything before has
/// scrolled off a zero-scrollback screen, so only the last `rows` lines and
/// the partial line after them are fed. (Not when SO/SI, which switch
/// character sets for what follows, are in the part skipped.)
fn visible_tail(text: &[u8], rows: usize) -> &[u8] {
    let mut feeds = memchr::memrchr_iter(b'\n', text);
    let Some(cut) = feeds.nth(rows) else {
        return text;
    };
    let skipped = &text[..=cut];
    if memchr::memchr2(0x0e, 0x0f, skipped).is_some() {
        return text;
    }
    &text[cut + 1..]
}

/// A size the screen can hold: every cell is allocated, so a size past
/// `TermSize::MAX_ROWS` x `MAX_COLS` (the daemon refuses those) is cut to
/// it rather than exhausting memory.
fn in_range(rows: u16, cols: u16) -> (u16, u16) {
    let size = tether_transport::TermSize { rows, cols }.clamped();
    (size.rows, size.cols)
}

fn nonzero(n: u16) -> std::num::NonZeroU16 {
    std::num::NonZeroU16::new(n).unwrap_or(std::num::NonZeroU16::MIN)
}

fn answer(screen: &vt100::Screen, token: &Token<'_>, out: &mut Vec<u8>) {
    match token {
        Token::Csi(csi) if csi.intermediates.is_empty() || csi.intermediates == b"$" => {
            let params = csi.param_bytes();
            let reply = match (csi.prefix(), csi.intermediates, csi.final_byte, params) {
                (None, b"", b'c', b"" | b"0") => "\x1b[?62;22c".to_owned(),
                (Some(b'>'), b"", b'c', b"" | b"0") => "\x1b[>1;10;0c".to_owned(),
                (Some(b'='), b"", b'c', b"" | b"0") => "\x1bP!|00000000\x1b\\".to_owned(),
                (None, b"", b'n', b"5") => "\x1b[0n".to_owned(),
                (None, b"", b'n', b"6") => {
                    let (row, col) = screen.cursor_position();
                    format!("\x1b[{};{}R", row + 1, col + 1)
                }
                (Some(b'?'), b"", b'n', b"6") => {
                    let (row, col) = screen.cursor_position();
                    format!("\x1b[?{};{};1R", row + 1, col + 1)
                }
                (Some(b'?'), b"", b'u', b"") => "\x1b[?0u".to_owned(),
                (Some(b'>'), b"", b'q', b"" | b"0") => format!("\x1bP>|{NAME}\x1b\\"),
                (Some(b'?'), b"$", b'p', mode) if !mode.is_empty() => {
                    let mode = String::from_utf8_lossy(mode);
                    let set = mode == "1049" && screen.alternate_screen();
                    format!("\x1b[?{mode};{}$y", if set { 1 } else { 2 })
                }
                _ => return,
            };
            out.extend_from_slice(reply.as_bytes());
        }
        Token::Str {
            kind: StringKind::Osc,
            payload,
            terminator,
        } => {
            let st: &[u8] = match terminator {
                tether_term::Terminator::Bel => b"\x07",
                _ => b"\x1b\\",
            };
            let colour = match *payload {
                b"10;?" => Some("10;rgb:ffff/ffff/ffff"),
                b"11;?" => Some("11;rgb:0000/0000/0000"),
                b"12;?" => Some("12;rgb:ffff/ffff/ffff"),
                _ => None,
            };
            if let Some(c) = colour {
                out.extend_from_slice(b"\x1b]");
                out.extend_from_slice(c.as_bytes());
                out.extend_from_slice(st);
            }
        }
        Token::Str {
            kind: StringKind::Dcs,
            payload,
            ..
        } => {
            // XTGETTCAP: no capabilities are known; say so for each.
            if let Some(h) = DcsHeader::parse(payload)
                && h.intermediates == b"+"
                && h.final_byte == b'q'
            {
                out.extend_from_slice(b"\x1bP0+r\x1b\\");
            }
        }
        _ => {}
    }
}
