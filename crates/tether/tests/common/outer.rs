//! The person's terminal, played by the test: tether runs in a PTY whose
//! other end this harness owns. It records every byte tether writes and
//! answers the capture's queries as a terminal would, from a small model
//! of its own: which screen is active (and by which mode), the Kitty
//! keyboard flags and stack of each screen, and modifyOtherKeys. Or it
//! stays silent, as a terminal that answers nothing, to test the fallback.
//!
//! The model also follows what tether writes afterwards (setup, session
//! output, restore), so a test can check the terminal's keyboard and
//! screen state after tether left, beside the exact bytes.

use std::sync::{Arc, Mutex};

use tether_pty::LocalPty;
use tether_transport::{ExitInfo, Terminal};

use super::{Daemon, TETHER, spawn_spec, wait_for};

/// The capture's first transaction, as tether writes it.
pub const ACTIVE_QUERY: &[u8] = b"\x1b[?u\x1b[?1049$p\x1b[?1047$p\x1b[?47$p\x1b[?4m\x1b[c";
/// The hidden-screen transaction from the main screen.
pub const HIDDEN_QUERY_FROM_MAIN: &[u8] = b"\x1b7\x1b[?47h\x1b[?u\x1b[c\x1b[?47l\x1b8";
/// The hidden-screen transaction from the alternate screen.
pub const HIDDEN_QUERY_FROM_ALT: &[u8] = b"\x1b7\x1b[?47l\x1b[?u\x1b[c\x1b[?47h\x1b8";

/// The keyboard and screen state of the modelled terminal.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Model {
    /// The alternate screen is shown.
    pub alt: bool,
    /// Which mode showed it (1049, 1047 or 47), for DECRQM.
    pub alt_by: u32,
    /// Kitty flags stack of the main screen (last is current).
    pub kitty_main: Vec<u32>,
    /// Kitty flags stack of the alternate screen.
    pub kitty_alt: Vec<u32>,
    /// modifyOtherKeys level.
    pub modify_other_keys: u32,
    /// The terminal says it lacks modes 47 and 1047 (kitty 0.26): DECRQM
    /// answers 0, and each `47h`/`47l`/`1047h`/`1047l` written is counted
    /// in `mode_47_written` (kitty switches all the same, homing the
    /// cursor on entering, over the person's rows).
    pub lacks_47: bool,
    /// How many mode-47 or 1047 switches were written to a terminal that
    /// lacks them.
    pub mode_47_written: u32,
}

impl Model {
    /// A terminal on the main screen (`alt_by` 0) or on an alternate
    /// screen shown by `alt_by`, with these Kitty flags and level.
    pub fn new(alt_by: u32, kitty_main: u32, kitty_alt: u32, modify_other_keys: u32) -> Model {
        Model {
            alt: alt_by != 0,
            alt_by,
            kitty_main: vec![kitty_main],
            kitty_alt: vec![kitty_alt],
            modify_other_keys,
            lacks_47: false,
            mode_47_written: 0,
        }
    }

    /// The same terminal, lacking modes 47 and 1047 as kitty 0.26 does.
    pub fn lacking_47(self) -> Model {
        Model {
            lacks_47: true,
            ..self
        }
    }

    fn stack(&mut self) -> &mut Vec<u32> {
        if self.alt {
            &mut self.kitty_alt
        } else {
            &mut self.kitty_main
        }
    }

    fn flags(&self) -> u32 {
        let stack = if self.alt {
            &self.kitty_alt
        } else {
            &self.kitty_main
        };
        stack.last().copied().unwrap_or(0)
    }

    /// What a terminal replies to one CSI sequence (`prefix` the private
    /// marker, `params` the digits and separators), and how it changes.
    fn csi(&mut self, prefix: Option<u8>, params: &str, inter: &[u8], fin: u8) -> Vec<u8> {
        let nums: Vec<u32> = params.split(';').map(|p| p.parse().unwrap_or(0)).collect();
        let first = nums.first().copied().unwrap_or(0);
        match (prefix, inter, fin) {
            (Some(b'?'), b"", b'u') => format!("\x1b[?{}u", self.flags()).into_bytes(),
            (Some(b'?'), b"$", b'p') => {
                let on = self.alt && self.alt_by == first;
                let value = match first {
                    47 | 1047 if self.lacks_47 => 0,
                    _ if on => 1,
                    _ => 2,
                };
                format!("\x1b[?{first};{value}$y").into_bytes()
            }
            (Some(b'?'), b"", b'm') if first == 4 => {
                format!("\x1b[>4;{}m", self.modify_other_keys).into_bytes()
            }
            (None, b"", b'c') if first == 0 => b"\x1b[?62;22c".to_vec(),
            (Some(b'?'), b"", b'h' | b'l') => {
                for mode in nums {
                    if self.lacks_47 && matches!(mode, 47 | 1047) {
                        self.mode_47_written += 1;
                    }
                    if matches!(mode, 47 | 1047 | 1049) {
                        self.alt = fin == b'h';
                        self.alt_by = if self.alt { mode } else { 0 };
                    }
                }
                Vec::new()
            }
            (Some(b'='), b"", b'u') => {
                let stack = self.stack();
                match stack.last_mut() {
                    Some(top) => *top = first,
                    None => stack.push(first),
                }
                Vec::new()
            }
            (Some(b'>'), b"", b'u') => {
                self.stack().push(first);
                Vec::new()
            }
            (Some(b'<'), b"", b'u') => {
                let stack = self.stack();
                for _ in 0..first.max(1) {
                    if stack.len() > 1 {
                        stack.pop();
                    } else if let Some(top) = stack.last_mut() {
                        *top = 0;
                    }
                }
                Vec::new()
            }
            (Some(b'>'), b"", b'm') if first == 4 => {
                self.modify_other_keys = nums.get(1).copied().unwrap_or(0);
                Vec::new()
            }
            _ => Vec::new(),
        }
    }
}

/// Splits a byte stream into CSI sequences (and skips strings), across
/// chunks.
#[derive(Default)]
struct CsiReader {
    pending: Vec<u8>,
}

impl CsiReader {
    /// Feeds bytes; calls `f` with each complete CSI sequence's parts.
    fn feed(&mut self, bytes: &[u8], mut f: impl FnMut(Option<u8>, &str, &[u8], u8)) {
        self.pending.extend_from_slice(bytes);
        let buf = std::mem::take(&mut self.pending);
        let mut i = 0;
        while i < buf.len() {
            if buf[i] != 0x1b {
                i += 1;
                continue;
            }
            let Some(&kind) = buf.get(i + 1) else { break };
            if kind == b']' {
                // A string: to BEL or ST.
                match (i + 2..buf.len())
                    .find(|&j| buf[j] == 0x07 || (buf[j] == b'\\' && buf[j - 1] == 0x1b))
                {
                    Some(end) => i = end + 1,
                    None => break,
                }
                continue;
            }
            if kind != b'[' {
                i += 2;
                continue;
            }
            let Some(end) = (i + 2..buf.len()).find(|&j| (0x40..=0x7e).contains(&buf[j])) else {
                break;
            };
            let body = &buf[i + 2..end];
            let (prefix, body) = match body.first() {
                Some(p @ (b'?' | b'>' | b'<' | b'=')) => (Some(*p), &body[1..]),
                _ => (None, body),
            };
            let split = body
                .iter()
                .position(|b| (0x20..=0x2f).contains(b))
                .unwrap_or(body.len());
            let params = String::from_utf8_lossy(&body[..split]);
            f(prefix, &params, &body[split..], buf[end]);
            i = end + 1;
        }
        self.pending = buf[i.min(buf.len())..].to_vec();
    }
}

/// tether in a PTY, with the test as its terminal.
pub struct Outer {
    pub pty: Arc<LocalPty>,
    seen: Arc<Mutex<Vec<u8>>>,
    model: Arc<Mutex<Model>>,
    closed: Arc<Mutex<bool>>,
}

impl Outer {
    /// `tether ARGS` against `d`, with `env` added, on a terminal like
    /// `model`; `answers` false: a terminal that replies to nothing.
    pub fn spawn(
        args: &[&str],
        d: &Daemon,
        env: &[(&str, String)],
        model: Model,
        answers: bool,
    ) -> Outer {
        let pty = Arc::new(LocalPty::spawn(&spawn_spec(TETHER, args, d, env)).unwrap());
        let mut out = pty.take_output().unwrap();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let model = Arc::new(Mutex::new(model));
        let closed = Arc::new(Mutex::new(false));
        let (sink, state, done, replier) = (
            Arc::clone(&seen),
            Arc::clone(&model),
            Arc::clone(&closed),
            Arc::clone(&pty),
        );
        std::thread::spawn(move || {
            let mut reader = CsiReader::default();
            while let Some(chunk) = out.blocking_recv() {
                sink.lock().unwrap().extend_from_slice(&chunk);
                let mut replies = Vec::new();
                let mut m = state.lock().unwrap();
                reader.feed(&chunk, |prefix, params, inter, fin| {
                    replies.extend(m.csi(prefix, params, inter, fin));
                });
                drop(m);
                if answers && !replies.is_empty() {
                    let _ = replier.write(replies);
                }
            }
            *done.lock().unwrap() = true;
        });
        Outer {
            pty,
            seen,
            model,
            closed,
        }
    }

    /// Every byte tether wrote so far.
    pub fn bytes(&self) -> Vec<u8> {
        self.seen.lock().unwrap().clone()
    }

    /// Waits until tether wrote `what`.
    pub fn sees(&self, what: &[u8]) {
        wait_for(20, &format!("{:?}", String::from_utf8_lossy(what)), || {
            let seen = self.seen.lock().unwrap();
            seen.windows(what.len()).any(|w| w == what).then_some(())
        });
    }

    /// Waits for tether to exit and for all it wrote; returns how it
    /// ended, every byte it wrote, and the terminal's state after.
    pub fn finish(&self) -> (ExitInfo, Vec<u8>, Model) {
        let exit = self.pty.exit();
        let info = wait_for(20, "tether to exit", || *exit.borrow());
        wait_for(20, "tether's output to end", || {
            (*self.closed.lock().unwrap()).then_some(())
        });
        (info, self.bytes(), self.model.lock().unwrap().clone())
    }

    /// Types `bytes` on the terminal.
    pub fn write(&self, bytes: &[u8]) {
        self.pty.write(bytes.to_vec()).unwrap();
    }

    /// Sends `sig` (`TERM`, `HUP`) to tether itself.
    pub fn signal(&self, sig: &str) {
        let status = std::process::Command::new("kill")
            .args([&format!("-{sig}"), &self.pty.pid().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
    }
}

/// Asserts the terminal's screen and keyboard after tether are as before
/// (which mode showed the alternate screen may differ: mode 47 returns
/// to it).
pub fn assert_keyboard_back(after: &Model, before: &Model) {
    assert_eq!(
        (
            after.alt,
            &after.kitty_main,
            &after.kitty_alt,
            after.modify_other_keys
        ),
        (
            before.alt,
            &before.kitty_main,
            &before.kitty_alt,
            before.modify_other_keys
        ),
        "the terminal's screen and keyboard after tether"
    );
}

/// Shows bytes with escapes visible, for assertion messages.
pub fn show(bytes: &[u8]) -> String {
    bytes.escape_ascii().to_string()
}
