//! A person attached to a session on a host, carried across a lost link.
//!
//! While the link holds, frames pass both ways as they are. When it ends
//! (or stops answering a round trip after a few seconds of silence), the
//! person is told once on one status line ([`Frame::Away`]) and then at
//! each try to reach the host again; keys typed meanwhile are discarded,
//! never sent late into a screen the person no longer sees (the status
//! line says so); a resize is kept for the next attach. Each try reaches
//! the host's daemon afresh and attaches again with the terminal's size
//! and the number of the first display byte not received (counted from
//! the host's last [`Frame::Mark`]): the host replays what was shown from
//! there (what scrolled past meanwhile, up to its bound), then redraws the
//! screen from its emulator, so the person's screen comes back exactly. Tries wait 0.25 s, then twice as
//! long each time up to the route's cap (`reconnect_max`, 2 s by
//! default), until the link is back, the session is gone there, or the
//! person detaches (`~.`). A try that reached nothing (no route to the
//! host, its name not resolved: a laptop offline) cost the host nothing,
//! so the next one comes 0.25 s later: the screen is back within a
//! fraction of a second of the network.

use std::sync::Arc;
use std::time::Duration;

use tether_transport::{HostFailure, RemoteHost};
use tokio::io::{AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

use crate::frame::{Frame, FrameReader};
use crate::protocol::{FailureKind, HostRoute, Reply, Request, Response};
use crate::quiet::{QuietReader, QuietWriter};
use crate::relay::{self, ANSWER_WITHIN, HostLines, HostWrite, Opened, QUIET_CHECK};
use crate::server::State;

/// The first wait before trying the host again.
const FIRST_WAIT: Duration = Duration::from_millis(250);

/// The longest wait between tries unless the route sets one.
pub(crate) const DEFAULT_CAP: Duration = Duration::from_secs(2);

/// How long one try may take (a link that drops SYNs would otherwise hold
/// a try for the whole connect timeout).
const TRY_WITHIN: Duration = Duration::from_secs(6);

/// The session an attachment follows on the host.
pub(crate) struct Followed {
    /// How the host is reached.
    pub route: HostRoute,
    /// The namespace there.
    pub owner: String,
    /// The session's name there.
    pub name: String,
    /// The person's terminal size.
    pub rows: u16,
    /// Its columns.
    pub cols: u16,
    /// The number of the next display byte, counted from the host's last
    /// [`Frame::Mark`]: where to resume after a lost link.
    pub at: Option<u64>,
}

/// The live link of an attachment.
struct Link {
    host: Arc<dyn RemoteHost>,
    frames: FrameReader<HostLines>,
    w: HostWrite,
}

/// How a stretch of the attachment ended.
enum Stretch {
    /// The attachment is over (the person left, or the session ended).
    Over,
    /// The link was lost; the person is still there.
    Lost(&'static str),
}

/// Carries an attachment whose host has just replied to `attach`: frames
/// both ways, and across every lost link, until the person leaves or the
/// session ends.
pub(crate) async fn carry(
    state: &Arc<State>,
    mut followed: Followed,
    host: Arc<dyn RemoteHost>,
    read: &mut BufReader<QuietReader>,
    write: &mut QuietWriter,
    hr: HostLines,
    hw: HostWrite,
) {
    let mut person = FrameReader::new(read, Vec::new());
    let mut link = Link {
        host,
        frames: FrameReader::new(hr, Vec::new()),
        w: hw,
    };
    loop {
        let how = match attached(&mut person, write, &mut link, &mut followed).await {
            Stretch::Over => return,
            Stretch::Lost(how) => how,
        };
        eprintln!(
            "tether daemon: {}: an attachment's link {how}; reaching it again",
            followed.route.name
        );
        match away(state, &mut person, write, &mut followed, how).await {
            Some(back) => link = back,
            None => return,
        }
    }
}

/// Frames both ways while the link holds.
async fn attached(
    person: &mut FrameReader<&mut BufReader<QuietReader>>,
    write: &mut QuietWriter,
    link: &mut Link,
    followed: &mut Followed,
) -> Stretch {
    let host = link.host.clone();
    let mut quiet = Box::pin(tokio::time::sleep(QUIET_CHECK));
    let mut check = None;
    loop {
        tokio::select! {
            f = person.next() => match f {
                Ok(Some(frame @ Frame::Input(_))) => {
                    if link.w.write_all(&frame.encode()).await.is_err() {
                        return Stretch::Lost("ended");
                    }
                }
                Ok(Some(Frame::Resize { rows, cols })) => {
                    (followed.rows, followed.cols) = (rows, cols);
                    let frame = Frame::Resize { rows, cols };
                    if link.w.write_all(&frame.encode()).await.is_err() {
                        return Stretch::Lost("ended");
                    }
                }
                Ok(Some(Frame::Detach) | None) | Err(_) => {
                    let _ = link.w.write_all(&Frame::Detach.encode()).await;
                    let _ = link.w.shutdown().await;
                    return Stretch::Over;
                }
                Ok(Some(_)) => {}
            },
            f = link.frames.next() => match f {
                Ok(Some(Frame::Mark(at))) => followed.at = Some(at),
                Ok(Some(frame)) => {
                    quiet.as_mut().reset(tokio::time::Instant::now() + QUIET_CHECK);
                    check = None;
                    if let (Frame::Output(bytes), Some(at)) = (&frame, followed.at.as_mut()) {
                        *at += bytes.len() as u64;
                    }
                    let end = matches!(frame, Frame::Ended(_) | Frame::ShellEnded { .. });
                    if write.write_all(&frame.encode()).await.is_err() {
                        let _ = link.w.write_all(&Frame::Detach.encode()).await;
                        return Stretch::Over;
                    }
                    if end {
                        return Stretch::Over;
                    }
                }
                Ok(None) | Err(_) => return Stretch::Lost("ended"),
            },
            () = &mut quiet, if check.is_none() => {
                check = Some(host.link_hung(ANSWER_WITHIN));
            }
            hung = async {
                match check.as_mut() {
                    Some(c) => c.await,
                    None => std::future::pending().await,
                }
            }, if check.is_some() => {
                if hung {
                    return Stretch::Lost("stopped answering");
                }
                check = None;
                quiet.as_mut().reset(tokio::time::Instant::now() + QUIET_CHECK);
            }
        }
    }
}

/// While the link is down: the person told, keys discarded, the host
/// tried with backoff. The new link, attached again; `None` when the
/// attachment is over.
async fn away(
    state: &Arc<State>,
    person: &mut FrameReader<&mut BufReader<QuietReader>>,
    write: &mut QuietWriter,
    followed: &mut Followed,
    how: &str,
) -> Option<Link> {
    let host = followed.route.name.clone();
    let lead = format!("tether: the link to {host} {how}");
    let tail = "the session runs on there; keys typed now are discarded; ~. detaches";
    let tell = |text: String| Frame::Away(text).encode();
    if write
        .write_all(&tell(format!("{lead}; reconnecting; {tail}")))
        .await
        .is_err()
    {
        return None;
    }
    let (progress, mut told) = mpsc::unbounded_channel();
    let mut trying = tokio::spawn(reach_again(
        state.clone(),
        followed.route.clone(),
        followed.owner.clone(),
        followed.name.clone(),
        (followed.rows, followed.cols, followed.at),
        progress,
    ));
    let outcome = loop {
        tokio::select! {
            f = person.next() => match f {
                Ok(Some(Frame::Resize { rows, cols })) => (followed.rows, followed.cols) = (rows, cols),
                Ok(Some(Frame::Detach) | None) | Err(_) => {
                    trying.abort();
                    return None;
                }
                Ok(Some(_)) => {}
            },
            Some(note) = told.recv() => {
                if write.write_all(&tell(format!("{lead}; {note}; {tail}"))).await.is_err() {
                    trying.abort();
                    return None;
                }
            }
            done = &mut trying => break done.ok()?,
        }
    };
    match outcome {
        Ok((mut link, size)) => {
            eprintln!("tether daemon: {host}: the attachment is back");
            if size != (followed.rows, followed.cols) {
                let frame = Frame::Resize {
                    rows: followed.rows,
                    cols: followed.cols,
                };
                let _ = link.w.write_all(&frame.encode()).await;
            }
            Some(link)
        }
        Err(why) => {
            let _ = write.write_all(&Frame::Ended(why).encode()).await;
            None
        }
    }
}

/// Tries the host's daemon until it attaches the session again (the link
/// and the size it was attached with), or says why it never will.
async fn reach_again(
    state: Arc<State>,
    route: HostRoute,
    owner: String,
    name: String,
    (rows, cols, at): (u16, u16, Option<u64>),
    progress: mpsc::UnboundedSender<String>,
) -> Result<(Link, (u16, u16)), String> {
    let size = (rows, cols);
    let cap = route
        .far
        .reconnect_max_s
        .map_or(DEFAULT_CAP, |s| Duration::from_secs(u64::from(s)));
    let mut wait = FIRST_WAIT.min(cap);
    for attempt in 1u32.. {
        tokio::time::sleep(wait).await;
        let tried = tokio::time::timeout(
            TRY_WITHIN,
            attach_again(&state, &route, &owner, &name, size, at),
        )
        .await;
        let (why, reached) = match tried {
            Ok(Ok(link)) => return Ok((link, size)),
            Ok(Err(Again::Never(why))) => return Err(why),
            Ok(Err(Again::Retry(why, reached))) => (why, reached),
            Err(_) => (format!("no answer within {} s", TRY_WITHIN.as_secs()), true),
        };
        wait = if reached {
            (wait * 2).min(cap)
        } else {
            FIRST_WAIT.min(cap)
        };
        eprintln!(
            "tether daemon: {}: try {attempt}: {why}; trying again in {} ms",
            route.name,
            wait.as_millis()
        );
        let _ = progress.send(format!(
            "try {attempt} failed ({why}); next in {:.1} s",
            wait.as_secs_f64()
        ));
    }
    Err("gave up".to_owned())
}

/// Why an attach did not happen.
enum Again {
    /// Not now (the link is still down): try again; false when nothing
    /// reached the host (no route, a name not resolved).
    Retry(String, bool),
    /// Never: the session is gone there, or tether no longer runs there.
    Never(String),
}

/// One try: the host's daemon reached, greeted and the session attached.
async fn attach_again(
    state: &State,
    route: &HostRoute,
    owner: &str,
    name: &str,
    (rows, cols): (u16, u16),
    resume: Option<u64>,
) -> Result<Link, Again> {
    let (host, mut hr, mut hw) = match relay::open(state, route, owner, &[], None).await {
        Ok(Opened::Daemon(host, hr, hw)) => (host, hr, hw),
        Ok(Opened::Agentless(why)) => {
            return Err(Again::Never(format!(
                "tether can no longer be used on {} ({why})",
                route.name
            )));
        }
        Err(f) => {
            let nothing_sent = matches!(
                f.host,
                Some(HostFailure::Unreachable | HostFailure::Unresolvable)
            );
            return Err(Again::Retry(f.message, !nothing_sent));
        }
    };
    let request = Request::Attach {
        session: name.to_owned(),
        rows,
        cols,
        host: None,
        resume,
    };
    if relay::send(&mut hw, &request).await.is_err() {
        return Err(Again::Retry("the link ended".to_owned(), true));
    }
    match relay::receive(&mut hr).await {
        Some(Reply::Ok(Response::Attach(_))) => Ok(Link {
            host,
            frames: FrameReader::new(hr, Vec::new()),
            w: hw,
        }),
        Some(Reply::Error(f)) if f.kind == FailureKind::UnknownSession => Err(Again::Never(
            format!("the session is gone on {}: {}", route.name, f.message),
        )),
        Some(Reply::Error(f)) => Err(Again::Retry(f.message, true)),
        _ => Err(Again::Retry(
            "the link ended before the reply".to_owned(),
            true,
        )),
    }
}
