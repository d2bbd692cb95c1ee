//! The loop between the person's terminal and the far end ([`FarEnd`]):
//! what the far end says ([`FarEvent`]) and what the person sends it
//! ([`ToFar`]).

use std::time::Duration;

use anyhow::Result;
use tether_term::{EscapeScanner, EscapeSet, Keyed, LineKey, QueryFilter, ResponseFilter};
use tokio::signal::unix::{SignalKind, signal};

use super::far::{FarEnd, FarEvent, LOST, NOT_HERE, ToFar};
use super::keys::Keys;
use crate::local_term::{self, LocalTerminal};

/// The `~C` prompt, as ssh's.
const COMMAND_PROMPT: &str = "ssh> ";

/// The longest `~C` line kept; keys past it are not taken.
const COMMAND_MAX: usize = 1024;

/// How long a lone ESC (or another partial sequence) is held to see
/// whether it is part of a longer sequence.
const PARTIAL_HOLD: Duration = Duration::from_millis(20);

/// Waits [`PARTIAL_HOLD`]. The timer is made when first polled: a
/// `select!` builds every branch's future on each turn, the disabled ones
/// too, and a `sleep` built there reads the clock and is dropped unpolled
/// at every keystroke and output chunk.
async fn hold() {
    tokio::time::sleep(PARTIAL_HOLD).await;
}

/// How the bridge behaves for its far end.
#[derive(Clone, Debug)]
pub struct Settings {
    /// The far end's queries are answered elsewhere (the daemon's
    /// emulator, for attach): they and tether's marks never reach the
    /// person's terminal, so it sends no replies but those to the
    /// capture. Off (ssh), the remote program asked: the terminal answers,
    /// and its replies go to it like keys.
    pub queries_answered_elsewhere: bool,
    /// The escape character (`~`; `None`: escapes off).
    pub escape: Option<u8>,
    /// The escapes beyond `~.`, `~^Z`, `~?`, `~~` this door offers.
    pub escapes: EscapeSet,
    /// The `~?` help text (`tether_term::escape_help`).
    pub escape_help: String,
    /// What `~.` is called in the farewell (`detached`, `disconnected`).
    pub leaving: &'static str,
    /// Exit code when the person leaves with `~.` or input closes.
    pub left_code: i32,
}

/// The bridge: the person's terminal (raw, captured) and the far end.
pub struct Bridge<'a, F: FarEnd> {
    /// The person's terminal.
    pub term: &'a mut LocalTerminal,
    /// How it behaves.
    pub settings: Settings,
    /// The far end.
    pub far: F,
}

impl<F: FarEnd> Bridge<'_, F> {
    /// Runs until the far end ends or the person leaves; returns tether's
    /// exit code and the farewell line. `typed`: keys read during the
    /// capture, sent first.
    pub async fn run(mut self, typed: Vec<u8>) -> Result<(i32, String)> {
        let mut keys = Keys::start();
        let mut winch = signal(SignalKind::window_change())?;
        let mut term_sig = signal(SignalKind::terminate())?;
        let mut hup = signal(SignalKind::hangup())?;
        let mut int = signal(SignalKind::interrupt())?;
        let elsewhere = self.settings.queries_answered_elsewhere;
        // The only replies this terminal sends unasked are late ones to the
        // capture; nothing a key can send is dropped (Shift-F3 is
        // `CSI 1;2R`, shaped like a cursor position report).
        let mut replies = elsewhere.then(ResponseFilter::for_typed_input);
        let mut queries = elsewhere.then(QueryFilter::new);
        let mut escapes = Escapes {
            scanner: EscapeScanner::with_escapes(self.settings.escape, self.settings.escapes),
            line: None,
        };
        let (mut shown, mut typed_now) = (Vec::new(), Vec::new());
        if !typed.is_empty() {
            match replies.as_mut() {
                Some(f) => f.feed(&typed, &mut typed_now),
                None => typed_now.extend_from_slice(&typed),
            }
            if let Some(end) = self.forward(&mut escapes, &typed_now).await? {
                return Ok(end);
            }
        }
        loop {
            let holding_keys =
                replies.as_ref().is_some_and(|f| f.pending() > 0) || escapes.scanner.pending() > 0;
            let holding_output = queries.as_ref().is_some_and(|f| f.pending() > 0);
            tokio::select! {
                ev = self.far.recv() => match ev {
                    FarEvent::Output(bytes) => match queries.as_mut() {
                        Some(q) => {
                            shown.clear();
                            q.feed(&bytes, &mut shown);
                            self.term.write(&shown)?;
                        }
                        None => self.term.write(&bytes)?,
                    },
                    FarEvent::Ended { code, why } => return Ok((code, why)),
                },
                k = keys.recv() => {
                    let Some(input) = k else {
                        let _ = self.far.send(ToFar::Detach).await;
                        return Ok((self.settings.left_code, format!("input closed; {}", self.settings.leaving)));
                    };
                    typed_now.clear();
                    match replies.as_mut() {
                        Some(f) => f.feed(&input, &mut typed_now),
                        None => typed_now.extend_from_slice(&input),
                    }
                    if let Some(end) = self.forward(&mut escapes, &typed_now).await? {
                        return Ok(end);
                    }
                }
                () = hold(), if holding_output => {
                    if let Some(q) = queries.as_mut() {
                        shown.clear();
                        q.flush(&mut shown);
                        self.term.write(&shown)?;
                    }
                }
                () = hold(), if holding_keys => {
                    typed_now.clear();
                    if let Some(f) = replies.as_mut() {
                        f.flush(&mut typed_now);
                    }
                    let mut keyed = escapes.scanner.feed(&typed_now);
                    // A lone ESC still held is the Escape key.
                    keyed.extend(escapes.scanner.flush());
                    if let Some(end) = self.act(&mut escapes, keyed).await? {
                        return Ok(end);
                    }
                }
                _ = winch.recv() => {
                    let (rows, cols) = local_term::size();
                    let _ = self.far.send(ToFar::Resize { rows, cols }).await;
                }
                _ = term_sig.recv() => return Ok(self.signalled(143, "terminated").await),
                _ = hup.recv() => return Ok(self.signalled(129, "hung up").await),
                _ = int.recv() => return Ok(self.signalled(130, "interrupted").await),
            }
        }
    }

    async fn signalled(&mut self, code: i32, what: &str) -> (i32, String) {
        let _ = self.far.send(ToFar::Detach).await;
        (code, format!("{what}; {}", self.settings.leaving))
    }

    /// Sends the person's keys on, acting on escapes; `Some` when they
    /// leave.
    async fn forward(
        &mut self,
        escapes: &mut Escapes,
        input: &[u8],
    ) -> Result<Option<(i32, String)>> {
        let keyed = escapes.scanner.feed(input);
        self.act(escapes, keyed).await
    }

    /// Acts on what the keys meant, in order; `Some` when the person
    /// leaves.
    async fn act(
        &mut self,
        escapes: &mut Escapes,
        keyed: Vec<Keyed>,
    ) -> Result<Option<(i32, String)>> {
        for keyed in keyed {
            match keyed {
                Keyed::Send(bytes) => {
                    if self.far.send(ToFar::Input(bytes)).await.is_err() {
                        return Ok(Some((255, LOST.into())));
                    }
                }
                Keyed::Help => {
                    let help = self.settings.escape_help.clone();
                    self.term.write(help.as_bytes())?;
                }
                Keyed::Suspend => {
                    self.term.suspend("\r\n[suspend tether]\r\n");
                    let stopped = local_term::stop_until_continued();
                    self.term.resume()?;
                    stopped?;
                    // A resize while stopped was not seen (the signal goes
                    // to the foreground job): send the size now.
                    let (rows, cols) = local_term::size();
                    let _ = self.far.send(ToFar::Resize { rows, cols }).await;
                }
                Keyed::Detach => {
                    let _ = self.far.send(ToFar::Detach).await;
                    return Ok(Some((
                        self.settings.left_code,
                        self.settings.leaving.to_owned(),
                    )));
                }
                Keyed::CommandLine => {
                    escapes.line = Some(String::new());
                    self.term
                        .write(format!("\r\n{COMMAND_PROMPT}").as_bytes())?;
                }
                Keyed::Line(key) => self.line_key(escapes, key).await?,
                Keyed::Forwards => {
                    let list = self.far.forwards();
                    self.show(&list)?;
                }
                Keyed::Background => {
                    if self.far.background() {
                        return Ok(Some((0, "backgrounded".to_owned())));
                    }
                    self.show(&format!("background: {NOT_HERE}"))?;
                }
            }
        }
        Ok(None)
    }

    /// One key typed on the `~C` line: echoed, erased, run on Enter,
    /// dropped on a cancel. None of it reaches the far end's program.
    async fn line_key(&mut self, escapes: &mut Escapes, key: LineKey) -> Result<()> {
        let Some(line) = escapes.line.as_mut() else {
            return Ok(());
        };
        match key {
            LineKey::Char(c)
                if line.len() < COMMAND_MAX && !tether_term::printable::is_unsafe(c) =>
            {
                line.push(c);
                self.term.write(c.to_string().as_bytes())?;
            }
            LineKey::Char(_) => {}
            LineKey::Backspace => {
                if line.pop().is_some() {
                    self.term.write(b"\x08 \x08")?;
                }
            }
            LineKey::Cancel => {
                escapes.line = None;
                self.term.write(b"\r\n")?;
            }
            LineKey::Enter => {
                let line = escapes.line.take().unwrap_or_default();
                self.term.write(b"\r\n")?;
                let line = line.trim();
                if !line.is_empty() {
                    let answer = self.far.command_line(line).await;
                    self.show_lines(&answer)?;
                }
            }
        }
        Ok(())
    }

    /// `text` on a line of its own.
    fn show(&mut self, text: &str) -> std::io::Result<()> {
        self.term.write(b"\r\n")?;
        self.show_lines(text)
    }

    /// `text`'s lines, each ended with CRLF (the terminal is raw), and
    /// with what could act on the terminal escaped.
    fn show_lines(&mut self, text: &str) -> std::io::Result<()> {
        let mut out = String::new();
        for line in text.lines() {
            out.push_str(&tether_term::printable::escaped(line, true));
            out.push_str("\r\n");
        }
        self.term.write(out.as_bytes())
    }
}

/// The escape scanner and the `~C` line being typed.
struct Escapes {
    scanner: EscapeScanner,
    line: Option<String>,
}
