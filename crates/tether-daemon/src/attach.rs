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
use tokio::net::unix::{OwnedReadHalf, OwnedWriteHalf};
use tokio::sync::{broadcast, mpsc, watch};

use crate::frame::{Frame, read_frame_async};
use crate::ops;
use crate::protocol::{AttachReply, FailureKind, Reply};
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
        if slot.echo {
            live.set_echo(false);
        }
        slots.remove(address);
    }
}

async fn send(write: &mut OwnedWriteHalf, frame: Frame) -> bool {
    write.write_all(&frame.encode()).await.is_ok()
}

/// What ended an attachment.
enum End {
    /// The person detached or went away.
    Left,
    /// The session (or the daemon) ended; tell them why.
    Ended(String),
}

/// Serves one attached connection until the person detaches or the
/// session ends.
pub(crate) async fn serve(
    state: Arc<State>,
    ns: &str,
    session: &str,
    rows: u16,
    cols: u16,
    read: BufReader<OwnedReadHalf>,
    mut write: OwnedWriteHalf,
) {
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
    let ok = serde_json::to_value(AttachReply {
        session: key.clone(),
    })
    .unwrap_or_default();
    if !write_line(&mut write, &Reply::Ok(ok)).await {
        return;
    }
    let (tx, mut from_client) = mpsc::channel::<Frame>(64);
    tokio::spawn(async move {
        let mut read = read;
        while let Ok(Some(f)) = read_frame_async(&mut read).await {
            if tx.send(f).await.is_err() {
                break;
            }
        }
    });
    let mut size = TermSize { rows, cols };
    let mut live = lives.borrow_and_update().clone();
    state.attachments.join(&key, &live);
    let mut stopping = state.attachments.stopping.subscribe();
    let end = loop {
        let _ = live.resize(size);
        let Some((screen, mut rx)) = live.watch() else {
            // This terminal ended: wait for the restarted one, or the end.
            tokio::select! {
                changed = lives.changed() => {
                    if changed.is_err() {
                        break End::Ended("the session ended".into());
                    }
                    live = lives.borrow_and_update().clone();
                    state.attachments.ensure_echo(&key, &live, true);
                    continue;
                }
                f = from_client.recv() => match f {
                    Some(Frame::Detach) | None => break End::Left,
                    Some(Frame::Resize { rows, cols }) => size = TermSize { rows, cols },
                    Some(_) => {}
                },
                _ = stopping.changed() => break End::Ended(stop_reason(&stopping)),
            }
            continue;
        };
        if !send(&mut write, Frame::Output(screen)).await {
            break End::Left;
        }
        let mut echo_check = tokio::time::interval(ECHO_CHECK);
        let step = loop {
            tokio::select! {
                _ = echo_check.tick() => state.attachments.ensure_echo(&key, &live, false),
                out = rx.recv() => {
                    let bytes = match out {
                        Ok(b) => b.to_vec(),
                        Err(broadcast::error::RecvError::Lagged(_)) => live.redraw(),
                        Err(broadcast::error::RecvError::Closed) => break None,
                    };
                    if !send(&mut write, Frame::Output(bytes)).await {
                        break Some(End::Left);
                    }
                }
                f = from_client.recv() => match f {
                    Some(Frame::Input(bytes)) => {
                        let _ = live.write(bytes);
                    }
                    Some(Frame::Resize { rows, cols }) => {
                        size = TermSize { rows, cols };
                        let _ = live.resize(size);
                    }
                    Some(Frame::Detach) | None => break Some(End::Left),
                    Some(_) => {}
                },
                _ = stopping.changed() => break Some(End::Ended(stop_reason(&stopping))),
            }
        };
        if let Some(end) = step {
            break end;
        }
    };
    state.attachments.leave(&key, &live);
    if let End::Ended(why) = end {
        let _ = send(&mut write, Frame::Ended(why)).await;
    }
    let _ = write.shutdown().await;
}

fn stop_reason(stopping: &watch::Receiver<Option<String>>) -> String {
    stopping
        .borrow()
        .clone()
        .unwrap_or_else(|| "the tether daemon stopped".into())
}
