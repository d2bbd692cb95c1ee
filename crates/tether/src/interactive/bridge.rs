//! The loop between the person's terminal and the far end ([`FarEnd`]):
//! what the far end says ([`FarEvent`]) and what the person sends it
//! ([`ToFar`]).

use std::time::Duration;

use anyhow::Result;
use tether_term::{EscapeScanner, Keyed, QueryFilter, ResponseFilter};
use tokio::signal::unix::{SignalKind, signal};

use super::far::{FarEnd, FarEvent, LOST, ToFar};
use super::keys::Keys;
use crate::local_term::{self, LocalTerminal};

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
    /// The `~?` help text.
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
        let mut escapes = EscapeScanner::with_escape(self.settings.escape);
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
            let holding_keys = replies.as_ref().is_some_and(|f| f.pending() > 0);
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
                    if let Some(end) = self.forward(&mut escapes, &typed_now).await? {
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
        escapes: &mut EscapeScanner,
        input: &[u8],
    ) -> Result<Option<(i32, String)>> {
        for keyed in escapes.feed(input) {
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
            }
        }
        Ok(None)
    }
}
