//! The daemon's side of a followed command (`follow`, and `run` with
//! `follow`): the command's text as pieces while the call runs, then the
//! rest, then the call's reply, on the one connection.
//!
//! A `run` gets its follower from inside the call, under the session's call
//! lock just before its command is typed (`ops::handle_following`), so it
//! follows that command and no other. A `follow` follows the command typed
//! last, from the offset asked, and ends as `read` does (the command's
//! end, or its wait for input), waiting for the call lock while it streams:
//! a command kept running (its client gone) is collected so. A client that
//! goes away drops the call where it waits, as for every request.

use std::sync::Arc;
use std::time::Duration;

use tether_shell::Follower;
use tokio::io::BufReader;
use tokio::sync::oneshot;

use crate::ops;
use crate::protocol::{Failure, Reply, Request, Response};
use crate::quiet::{QuietReader, QuietWriter};
use crate::server::{State, client_gone, write_line};
use crate::wire::shell_result;

/// Serves a `run` with `follow` (or `pieces`: the reply then whole, and
/// kept for `recall` when the call is named; pieces only for the head its
/// result keeps, half its `output_limit`, so a flood crosses the link
/// once, clipped); false when the connection is done.
pub(crate) async fn run(
    state: &Arc<State>,
    ns: &str,
    request: Request,
    read: &mut BufReader<QuietReader>,
    write: &mut QuietWriter,
) -> bool {
    let (tx, rx) = oneshot::channel();
    let (route, whole, say_start, named) = match &request {
        Request::Run {
            host,
            follow,
            pieces,
            session,
            call,
            output_limit,
            ..
        } => (
            host.clone(),
            (*pieces && !*follow).then_some(*output_limit / 2),
            *pieces,
            call.as_ref()
                .and_then(|c| Some((ops::resolve(ns, session).ok()?, c.clone()))),
        ),
        _ => (None, None, false, None),
    };
    let handled = ops::handle_following(
        &state.registry,
        &state.base,
        state.hosts.as_ref(),
        ns,
        request,
        Some(tx),
    );
    // (With the steps of the host's connection made for it, if any.)
    let call = async {
        let mut result = handled.await;
        if let Ok(Response::Shell(r)) = &mut result
            && let Some(route) = &route
        {
            r.link_steps = crate::server::link_steps(state, route);
        }
        if whole.is_some()
            && let (Some((address, call)), Ok(Response::Shell(r))) = (named, &result)
        {
            state.recalls.keep(address, call, r.clone());
        }
        result
    };
    stream(read, write, Source::Coming(rx), call, whole, say_start).await
}

/// Serves a `follow`; false when the connection is done.
pub(crate) async fn follow(
    state: &Arc<State>,
    ns: &str,
    session: String,
    from: Option<u64>,
    wait_s: Option<f64>,
    read: &mut BufReader<QuietReader>,
    write: &mut QuietWriter,
) -> bool {
    let found = ops::seconds_opt("wait_s", wait_s)
        .and_then(|wait| Ok((wait, ops::existing(&state.registry, ns, &session)?)));
    let (wait, found) = match found {
        Ok(f) => f,
        Err(f) => return write_line(write, &Reply::Error(f)).await,
    };
    let follower = found.2.follow(from);
    match wait {
        Some(wait) => {
            let call = ops::read_now(&state.registry, &session, found, wait);
            stream(read, write, Source::Now(follower), call, None, false).await
        }
        None => {
            let call = collect(session, found);
            stream(read, write, Source::Now(follower), call, None, false).await
        }
    }
}

/// Where the pieces come from.
enum Source {
    /// A follower made inside the call (none: the call typed nothing).
    Coming(oneshot::Receiver<Follower>),
    Now(Follower),
    None,
}

impl Source {
    fn follower(&mut self) -> Option<&mut Follower> {
        match self {
            Source::Now(f) => Some(f),
            _ => None,
        }
    }
}

/// What came first while the call runs.
enum Step {
    Coming(Option<Follower>),
    Piece(tether_shell::Piece),
    /// The command started (said only to a relay, once).
    Started,
}

/// The first `room` bytes of a command's text, as pieces (cut where a
/// result's head is cut: at a character's boundary).
struct Head {
    room: usize,
}

impl Head {
    fn pass(&mut self, p: tether_shell::Piece) -> Option<Reply> {
        if self.room == 0 {
            return None;
        }
        let mut reply = Reply::from(p);
        if let Reply::Piece(piece) = &mut reply {
            let mut cut = self.room.min(piece.text.len());
            while !piece.text.is_char_boundary(cut) {
                cut -= 1;
            }
            // A piece cut short closes the head, as a result's clip does.
            let whole = cut == piece.text.len();
            piece.text.truncate(cut);
            self.room = if whole { self.room - cut } else { 0 };
        }
        Some(reply)
    }
}

/// Writes the pieces of `source` while `call` runs, the rest once it has
/// returned (its command's text is whole then), then its reply (`whole`:
/// with all its output, as an unfollowed call's, the pieces only for the
/// first so many bytes; `say_start`: the command's start said by an
/// empty piece, for a relay).
async fn stream(
    read: &mut BufReader<QuietReader>,
    write: &mut QuietWriter,
    mut source: Source,
    call: impl Future<Output = Result<Response, Failure>>,
    whole: Option<usize>,
    say_start: bool,
) -> bool {
    let mut head = whole.map(|room| Head { room });
    // To a relay, the start is said once, by an empty piece, so a link
    // lost before any text still says the command ran.
    let mut start_told = !say_start;
    let mut pass = move |p: tether_shell::Piece| match &mut head {
        Some(h) => h.pass(p),
        None => Some(Reply::from(p)),
    };
    tokio::pin!(call);
    let result = loop {
        let step = async {
            match &mut source {
                Source::Coming(rx) => Step::Coming(rx.await.ok()),
                Source::Now(f) => match f.next_or_start(start_told).await {
                    Some(p) => Step::Piece(p),
                    None => Step::Started,
                },
                Source::None => std::future::pending().await,
            }
        };
        tokio::select! {
            r = &mut call => break r,
            step = step => match step {
                Step::Coming(f) => source = f.map_or(Source::None, Source::Now),
                Step::Started => {
                    start_told = true;
                    let Some(f) = source.follower() else { continue };
                    let empty = Reply::Piece(crate::protocol::Piece {
                        command: f.command(),
                        offset: f.offset(),
                        text: String::new(),
                        at_ms: 0,
                    });
                    if !write_line(write, &empty).await {
                        return false;
                    }
                }
                Step::Piece(p) => {
                    if let Some(reply) = pass(p)
                        && !write_line(write, &reply).await
                    {
                        return false;
                    }
                    if let Some(f) = source.follower() {
                        f.handed_on();
                    }
                }
            },
            () = client_gone(read) => return false,
        }
    };
    if let Source::Coming(rx) = &mut source {
        source = rx.try_recv().map_or(Source::None, Source::Now);
    }
    if let Some(f) = source.follower() {
        while let Some(p) = f.try_next() {
            if let Some(reply) = pass(p)
                && !write_line(write, &reply).await
            {
                return false;
            }
            f.handed_on();
        }
    }
    let reply = match result {
        Ok(Response::Shell(mut r)) => {
            // The pieces carried the text; the unfinished line (a prompt)
            // is the one thing left to show.
            if whole.is_none()
                && let Some(f) = source.follower()
            {
                r.output = f.partial();
                r.truncated = None;
            }
            Reply::Ok(Response::Shell(r))
        }
        Ok(other) => Reply::Ok(other),
        Err(f) => Reply::Error(f),
    };
    write_line(write, &reply).await
}

/// The end of the command typed last, as `read` gives it: waits for the
/// call lock, then reads until the command ends or waits for input.
async fn collect(session: String, (_, s, _): ops::Existing) -> Result<Response, Failure> {
    let mut s = s.lock().await;
    loop {
        let r = s
            .read(Duration::from_secs_f64(ops::MAX_SECONDS))
            .await
            .map_err(ops::engine)?;
        if r.status != tether_shell::Status::Running {
            return Ok(Response::Shell(shell_result(&session, s.host(), r)));
        }
    }
}
