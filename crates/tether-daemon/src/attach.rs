//! The daemon's side of `tether attach`: a person's terminal joins a
//! session's live terminal. They get the current screen, then every byte
//! of output (while commands from agents run too), and what they type goes
//! to the terminal. The session keeps the size of the latest attached
//! terminal and gets its own size back when the last person leaves; the
//! shell's line echo is on while someone is attached and the shell itself
//! is at its prompt.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tether_shell::Live;
use tether_transport::TermSize;
use tokio::io::{AsyncWriteExt, BufReader};
use tokio::sync::watch;

use crate::frame::{Frame, FrameReader};
use crate::ops;
use crate::protocol::{AttachReply, FailureKind, Reply, Response};
use crate::quiet::{QuietReader, QuietWriter};
use crate::server::{State, write_line};

/// How often echo is retried while the shell was not at its prompt.
const ECHO_CHECK: std::time::Duration = std::time::Duration::from_millis(250);

struct Slot {
    count: u32,
    saved: TermSize,
    echo: bool,
}

/// Who is attached where.
pub(crate) struct Attachments {
    slots: Mutex<HashMap<String, Slot>>,
    stopping: watch::Sender<Option<String>>,
}

impl Default for Attachments {
    fn default() -> Self {
        Attachments {
            slots: Mutex::new(HashMap::new()),
            stopping: watch::Sender::new(None),
        }
    }
}

impl Attachments {
    fn slots(&self) -> std::sync::MutexGuard<'_, HashMap<String, Slot>> {
        self.slots.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// People attached to `address` now.
    pub(crate) fn count(&self, address: &str) -> u32 {
        self.slots().get(address).map_or(0, |s| s.count)
    }

    /// Tells every attached person why their session ends.
    pub(crate) fn end_all(&self, why: &str) {
        self.stopping.send_replace(Some(why.to_owned()));
    }

    fn join(&self, address: &str, live: &Live) {
        let mut slots = self.slots();
        let slot = slots.entry(address.to_owned()).or_insert_with(|| Slot {
            count: 0,
            saved: live.size(),
            echo: false,
        });
        slot.count += 1;
        slot.echo |= live.set_echo(true);
    }

    /// Turns echo on if it is not yet (the shell was busy when the person
    /// came), or again after a restart (`force`: a new shell starts with
    /// echo off).
    fn ensure_echo(&self, address: &str, live: &Live, force: bool) {
        if let Some(slot) = self.slots().get_mut(address)
            && (force || !slot.echo)
        {
            slot.echo |= live.set_echo(true);
        }
    }

    fn leave(&self, address: &str, live: &Live) {
        let mut slots = self.slots();
        let Some(slot) = slots.get_mut(address) else {
            return;
        };
        slot.count -= 1;
        if slot.count > 0 {
            return;
        }
        let _ = live.resize(slot.saved);
        // Even when no echo change was seen to take (one may be in flight).
        live.set_echo(false);
        slots.remove(address);
    }
}

async fn send(write: &mut QuietWriter, frame: Frame) -> bool {
    write.write_all(&frame.encode()).await.is_ok()
}

/// What ended an attachment.
enum End {
    /// The person detached or went away.
    Left,
    /// The session (or the daemon) ended; tell them why.
    Ended(String),
    /// The session's shell ended and no new one took its place.
    ShellEnded(i32, String),
}

/// How long a shell killed by a signal may take to be replaced (a reset or
/// restart) before a person attached to it is told it ended.
const REPLACEMENT_GRACE: std::time::Duration = std::time::Duration::from_secs(3);

/// Why a terminal that ended ends the attachment: at once when its shell
/// exited by itself (`exit`); after [`REPLACEMENT_GRACE`] when it was
/// killed or its link lost (a restart replaces it within that time).
async fn shell_end(live: &Live) -> (std::time::Duration, End) {
    match live
        .exit_within(std::time::Duration::from_millis(500))
        .await
    {
        Some(tether_transport::ExitInfo::Code(c)) => (
            std::time::Duration::ZERO,
            End::ShellEnded(c, format!("the session's shell exited with status {c}")),
        ),
        Some(tether_transport::ExitInfo::Signal(s)) => (
            REPLACEMENT_GRACE,
            End::ShellEnded(
                128 + s,
                format!(
                    "the session's shell ended by signal {s} (killed, or its terminal's connection lost)"
                ),
            ),
        ),
        Some(tether_transport::ExitInfo::LinkLost) => (
            REPLACEMENT_GRACE,
            End::ShellEnded(
                255,
                "the connection to the session's host was lost (its shell may still run there until the next call ends it)".into(),
            ),
        ),
        None => (
            REPLACEMENT_GRACE,
            End::ShellEnded(255, "the session's terminal ended".into()),
        ),
    }
}

/// Serves one attached connection until the person detaches or the
/// session ends.
pub(crate) async fn serve(
    state: Arc<State>,
    ns: &str,
    session: &str,
    (rows, cols): (u16, u16),
    resume: Option<u64>,
    read: BufReader<QuietReader>,
    mut write: QuietWriter,
) {
    if let Err(why) = check_size(rows, cols) {
        let f = ops::failure(FailureKind::BadRequest, why);
        write_line(&mut write, &Reply::Error(f)).await;
        return;
    }
    let found = ops::resolve_loose(&state.registry, ns, session).and_then(|a| {
        let lives = state
            .registry
            .live(&a.owner, &a.name)
            .map_err(|e| ops::failure(FailureKind::UnknownSession, e.to_string()))?;
        Ok((a, lives))
    });
    let (address, mut lives) = match found {
        Ok(f) => f,
        Err(f) => {
            write_line(&mut write, &Reply::Error(f)).await;
            return;
        }
    };
    let key = address.display();
    let ok = Response::Attach(AttachReply {
        session: key.clone(),
    });
    if !write_line(&mut write, &Reply::Ok(ok)).await {
        return;
    }
    // Read in this loop (cancel-safe), not by a task of its own: one
    // wake-up less a key.
    let mut frames = FrameReader::new(read, Vec::new());
    let mut size = TermSize { rows, cols };
    let mut live = lives.borrow_and_update().clone();
    state.attachments.join(&key, &live);
    let mut stopping = state.attachments.stopping.subscribe();
    // A person coming back (a relay after a lost link) first gets what
    // scrolled past meanwhile, when it is still kept.
    let mut resume = resume;
    let end = loop {
        let _ = live.resize(size);
        let Some(watching) = live.watch(resume.take()) else {
            // This terminal ended: wait for the restarted one, the end, or
            // (a shell that ended with nothing to replace it) say so.
            let (grace, ended) = shell_end(&live).await;
            tokio::select! {
                () = tokio::time::sleep(grace) => break ended,
                changed = lives.changed() => {
                    if changed.is_err() {
                        break End::Ended("the session ended".into());
                    }
                    live = lives.borrow_and_update().clone();
                    state.attachments.ensure_echo(&key, &live, true);
                    continue;
                }
                f = next_frame(&mut frames) => match from(f) {
                    Step::Resize(s) => size = s,
                    Step::End(end) => break end,
                    Step::Input(_) | Step::Nothing => {}
                },
                _ = stopping.changed() => break End::Ended(stop_reason(&stopping)),
            }
            continue;
        };
        let mut rx = watching.rx;
        if let Some(replay) = watching.replay.filter(|r| !r.is_empty())
            && !send(&mut write, Frame::Output(replay)).await
        {
            break End::Left;
        }
        if !send(&mut write, Frame::Output(watching.redraw)).await
            || !send(&mut write, Frame::Mark(watching.from)).await
        {
            break End::Left;
        }
        let mut echo_check = tokio::time::interval(ECHO_CHECK);
        let step = loop {
            tokio::select! {
                _ = echo_check.tick() => state.attachments.ensure_echo(&key, &live, false),
                out = rx.recv() => {
                    let bytes = match out {
                        Ok(b) => b.to_vec(),
                        // Fallen behind, or this terminal ended: watched
                        // afresh (a redraw and the numbering from there,
                        // or the restarted terminal).
                        Err(_) => break None,
                    };
                    if !send(&mut write, Frame::Output(bytes)).await {
                        break Some(End::Left);
                    }
                }
                f = next_frame(&mut frames) => match from(f) {
                    Step::Input(bytes) => {
                        let _ = live.write(bytes);
                    }
                    Step::Resize(s) => {
                        size = s;
                        let _ = live.resize(size);
                    }
                    Step::End(end) => break Some(end),
                    Step::Nothing => {}
                },
                _ = stopping.changed() => break Some(End::Ended(stop_reason(&stopping))),
            }
        };
        if let Some(end) = step {
            break end;
        }
    };
    state.attachments.leave(&key, &live);
    match end {
        End::Ended(why) => {
            let _ = send(&mut write, Frame::Ended(why)).await;
        }
        End::ShellEnded(code, why) => {
            let _ = send(&mut write, Frame::ShellEnded { code, why }).await;
        }
        End::Left => {}
    }
    let _ = write.shutdown().await;
}

/// The next frame from the person's side as [`from`] takes it: `None` at
/// the end, the error's reason for a broken frame. Cancel-safe.
async fn next_frame(
    frames: &mut FrameReader<BufReader<QuietReader>>,
) -> Option<Result<Frame, String>> {
    match frames.next().await {
        Ok(Some(f)) => Some(Ok(f)),
        Ok(None) => None,
        Err(e) => Some(Err(format!(
            "tether: the attach connection sent a bad frame: {e}"
        ))),
    }
}

/// What a frame from the person's side asks for.
enum Step {
    /// Bytes typed.
    Input(Vec<u8>),
    /// Nothing (a frame only the daemon sends).
    Nothing,
    /// A new size, in range.
    Resize(TermSize),
    /// The attachment ends.
    End(End),
}

/// What the frame (or the connection's end, or its error) from the
/// person's side asks for: a size out of range or a broken frame ends the
/// attachment with the reason.
fn from(f: Option<Result<Frame, String>>) -> Step {
    match f {
        Some(Ok(Frame::Input(bytes))) => Step::Input(bytes),
        Some(Ok(Frame::Resize { rows, cols })) => match check_size(rows, cols) {
            Ok(size) => Step::Resize(size),
            Err(why) => Step::End(End::Ended(format!("tether: {why}; detached"))),
        },
        Some(Ok(Frame::Detach)) | None => Step::End(End::Left),
        Some(Err(why)) => Step::End(End::Ended(why)),
        Some(Ok(
            Frame::Output(_)
            | Frame::Ended(_)
            | Frame::ShellEnded { .. }
            | Frame::Away(_)
            | Frame::Mark(_),
        )) => Step::Nothing,
    }
}

/// The size, when a session's terminal may have it; else why not.
fn check_size(rows: u16, cols: u16) -> Result<TermSize, String> {
    let size = TermSize { rows, cols };
    if size.in_range() {
        return Ok(size);
    }
    Err(format!(
        "the terminal size {rows} rows x {cols} columns is out of range: a session's terminal has 1 to {} rows and 1 to {} columns; make the terminal smaller (tether attach sends at most that)",
        TermSize::MAX_ROWS,
        TermSize::MAX_COLS
    ))
}

fn stop_reason(stopping: &watch::Receiver<Option<String>>) -> String {
    stopping
        .borrow()
        .clone()
        .unwrap_or_else(|| "the tether daemon stopped".into())
}
