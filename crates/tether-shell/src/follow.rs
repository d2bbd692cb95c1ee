//! A command's output as it comes, for followers: the projected, redacted
//! text of the command in flight as an append-only stream of pieces, each
//! with its offset (in bytes of that text, from the command's start) and
//! the moment the engine took it, so a follower that reconnects asks "from
//! offset N" and gets nothing twice and nothing lost.
//!
//! The session keeps one [`FollowBook`] across shell restarts; each
//! command's [`crate::capture::Capture`] writes to it the text it accepts
//! (past the projector, the redactor and the UTF-8 decoder: a secret split
//! across two reads never reaches it, as it never reaches a result), and
//! the unfinished line (a prompt) at each result boundary. The book keeps
//! at most [`FOLLOW_KEEP`] bytes of a command's text: a follower that falls
//! further behind is told what it missed ([`Piece::Omitted`]), never held
//! up for (the engine does not grow for a slow reader).
//!
//! Nothing is kept of a command nobody follows (a `tether run`, an MCP
//! call): a command's text is kept once a follower asks for it (before it
//! is typed, [`FollowBook::follow_next`], to have all of it); one that
//! comes later is told what was not kept.
//!
//! Text is never taken back: secrets the command itself sets, learned at
//! its end mark, are redacted from its result but not from pieces already
//! given out (as with a person attached).

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use tokio::sync::Notify;

/// Most bytes of a command's text kept for followers.
pub const FOLLOW_KEEP: usize = 1 << 20;

/// Most pieces kept (text that comes within one millisecond is one
/// piece, up to [`PIECE_BYTES`]; a program writing a byte at a time
/// slowly still costs no more than this many).
const FOLLOW_PIECES: usize = 16 << 10;

/// Most bytes text of one millisecond is joined into.
const PIECE_BYTES: usize = 64 << 10;

/// One step of a followed command's output.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Piece {
    /// Text, starting at `offset` of the command's text.
    Text {
        /// The command (its number in the session's book).
        command: u64,
        /// Where the text starts.
        offset: u64,
        /// Projected, redacted text (whole characters).
        text: String,
        /// When the engine took it, in milliseconds since the command
        /// was typed.
        at_ms: u64,
    },
    /// Text from `from` to `to` is no longer kept (the follower fell
    /// behind by more than [`FOLLOW_KEEP`]); the next piece starts at `to`.
    Omitted {
        /// The command.
        command: u64,
        /// The first byte missed.
        from: u64,
        /// The first byte kept.
        to: u64,
    },
}

/// The session's book of the command in flight (one per session, shared
/// with its [`crate::Control`]).
#[derive(Debug, Default)]
pub struct FollowBook {
    page: Mutex<Page>,
    grew: Notify,
}

#[derive(Debug)]
struct Page {
    /// The command written now (0: none yet).
    command: u64,
    started: Instant,
    /// Kept text: offset, time, text.
    chunks: VecDeque<(u64, u64, String)>,
    kept: usize,
    /// Offset of the first kept byte.
    first: u64,
    /// Offset after the last byte.
    end: u64,
    /// The unfinished line at the last result boundary.
    partial: String,
    /// The offset after the text a follower last handed on (for one that
    /// comes back without knowing where it stopped).
    given: u64,
    /// Somebody follows this command: its text is kept.
    wanted: bool,
    /// Somebody will follow the next command.
    next_wanted: bool,
    /// Its start mark came: its code runs (it may write nothing).
    code_started: bool,
}

impl Default for Page {
    fn default() -> Self {
        Page {
            command: 0,
            started: Instant::now(),
            chunks: VecDeque::new(),
            kept: 0,
            first: 0,
            end: 0,
            partial: String::new(),
            given: 0,
            wanted: false,
            next_wanted: false,
            code_started: false,
        }
    }
}

impl FollowBook {
    /// An empty book.
    pub fn new() -> Arc<FollowBook> {
        Arc::new(FollowBook::default())
    }

    fn page(&self) -> MutexGuard<'_, Page> {
        self.page.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A new command is typed: its text starts at offset 0. Returns the
    /// capture's tap.
    pub(crate) fn begin(self: &Arc<Self>) -> Tap {
        {
            let mut p = self.page();
            let command = p.command + 1;
            let wanted = p.next_wanted;
            *p = Page {
                command,
                wanted,
                ..Page::default()
            };
        }
        self.grew.notify_waiters();
        Tap(Arc::clone(self))
    }

    /// Follows the command written now (or, when none was ever typed, the
    /// first one), from `from` (past its end: from its end); `None`: after
    /// the text a follower last handed on ([`Follower::handed_on`]).
    pub fn follow(self: &Arc<Self>, from: Option<u64>) -> Follower {
        let mut p = self.page();
        if p.command == 0 {
            p.next_wanted = true;
        } else {
            p.wanted = true;
        }
        Follower {
            book: Arc::clone(self),
            command: p.command.max(1),
            next: from.unwrap_or(p.given),
        }
    }

    /// Follows the next command typed, from its start.
    pub fn follow_next(self: &Arc<Self>) -> Follower {
        let mut p = self.page();
        p.next_wanted = true;
        let command = p.command + 1;
        drop(p);
        Follower {
            book: Arc::clone(self),
            command,
            next: 0,
        }
    }

    /// The number of the command written now (0: none yet).
    pub fn command(&self) -> u64 {
        self.page().command
    }
}

/// What a command's capture writes to the book.
#[derive(Debug)]
pub(crate) struct Tap(Arc<FollowBook>);

impl Tap {
    /// Text the capture accepted (redacted, whole characters).
    pub(crate) fn push(&self, text: &str) {
        if text.is_empty() {
            return;
        }
        {
            let mut p = self.0.page();
            let offset = p.end;
            p.end += text.len() as u64;
            if !p.wanted {
                p.first = p.end;
                return;
            }
            let at_ms = p.started.elapsed().as_millis() as u64;
            p.kept += text.len();
            match p.chunks.back_mut() {
                Some((_, at, last)) if *at == at_ms && last.len() + text.len() <= PIECE_BYTES => {
                    last.push_str(text);
                }
                _ => p.chunks.push_back((offset, at_ms, text.to_owned())),
            }
            while (p.kept > FOLLOW_KEEP || p.chunks.len() > FOLLOW_PIECES)
                && let Some((_, _, old)) = p.chunks.pop_front()
            {
                p.kept -= old.len();
                p.first += old.len() as u64;
            }
        }
        self.0.grew.notify_waiters();
    }

    /// The command's start mark came.
    pub(crate) fn started(&self) {
        self.0.page().code_started = true;
        self.0.grew.notify_waiters();
    }

    /// The unfinished line as a result returned it (redacted).
    pub(crate) fn partial(&self, line: &str) {
        self.0.page().partial = line.to_owned();
    }
}

/// One follower of one command (cheap; any number per command).
#[derive(Debug)]
pub struct Follower {
    book: Arc<FollowBook>,
    command: u64,
    next: u64,
}

impl Follower {
    /// The command followed.
    pub fn command(&self) -> u64 {
        self.command
    }

    /// The offset of the next byte to give.
    pub fn offset(&self) -> u64 {
        self.next
    }

    /// The next piece when there is one now; `None` when the follower has
    /// everything written so far (or its command was replaced by another).
    pub fn try_next(&mut self) -> Option<Piece> {
        let p = self.book.page();
        if p.command != self.command {
            return None;
        }
        self.next = self.next.min(p.end);
        if self.next < p.first {
            let from = self.next;
            self.next = p.first;
            return Some(Piece::Omitted {
                command: self.command,
                from,
                to: p.first,
            });
        }
        // The chunk holding `next` (a follower may resume inside one).
        let at = p
            .chunks
            .partition_point(|(o, _, t)| o + t.len() as u64 <= self.next);
        let (offset, at_ms, text) = p.chunks.get(at)?;
        let skip = usize::try_from(self.next - offset).unwrap_or(0);
        // A resume point inside a character starts at the next one.
        let start = (skip..=text.len())
            .find(|&i| text.is_char_boundary(i))
            .unwrap_or(text.len());
        let piece = text[start..].to_owned();
        let offset = offset + start as u64;
        self.next = offset + piece.len() as u64;
        Some(Piece::Text {
            command: self.command,
            offset,
            text: piece,
            at_ms: *at_ms,
        })
    }

    /// The next piece, waiting for it (forever when the command is
    /// replaced by another: callers wait for the command's end beside it).
    pub async fn next(&mut self) -> Piece {
        loop {
            // Known to have text coming: it returns only with a piece.
            if let Some(p) = self.next_or_start(true).await {
                return p;
            }
        }
    }

    /// True once the command's start mark came (its code runs), whether
    /// or not it wrote anything.
    pub fn started(&self) -> bool {
        let p = self.book.page();
        p.command == self.command && p.code_started
    }

    /// The next piece, waiting for it; or, when `known` is false, `None`
    /// as soon as the command has started ([`Follower::started`]) with no
    /// text to give.
    pub async fn next_or_start(&mut self, known: bool) -> Option<Piece> {
        let book = Arc::clone(&self.book);
        loop {
            let grew = book.grew.notified();
            tokio::pin!(grew);
            grew.as_mut().enable();
            if let Some(p) = self.try_next() {
                return Some(p);
            }
            if !known && self.started() {
                return None;
            }
            grew.await;
        }
    }

    /// The text given so far was handed on (written to a client): a
    /// follower that does not know where it stopped starts after it.
    pub fn handed_on(&self) {
        let mut p = self.book.page();
        if p.command == self.command {
            p.given = p.given.max(self.next);
        }
    }

    /// The unfinished line (a prompt) as the command's last result
    /// returned it: shown, not part of the offsets (it may still change).
    pub fn partial(&self) -> String {
        let p = self.book.page();
        if p.command == self.command {
            p.partial.clone()
        } else {
            String::new()
        }
    }
}

#[cfg(test)]
#[path = "follow_tests.rs"]
mod tests;
