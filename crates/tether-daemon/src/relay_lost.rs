//! What a relay keeps of a call while its reply comes (issue 36): the
//! text the host's pieces carried and whether any came, so that a link
//! lost (or hung) before the reply says what already ran and carries the
//! output already received; and what that result gave ([`Given`]), taken
//! off the front of the call's result when it is asked for again, so each
//! byte is given once.
//!
//! A `run` its client does not follow goes to the host with `pieces`
//! (an empty piece when the command starts, then the pieces for the head
//! a result keeps, half its `output_limit`, the reply whole): the relay
//! keeps their text and passes none on; a lost result whose head filled
//! says the rest is on the host. A followed one's
//! pieces went on to its client as they came: its lost result carries no
//! text again, only that the command was seen to start.

use std::hash::{Hash, Hasher};
use std::time::Instant;

use serde::{Deserialize, Serialize};
use tether_term::clip::{HeadTailClip, omitted_marker};

use crate::protocol::{LinkFailure, LinkLoss, Reply, ShellResult, Status, Truncated};

/// What came from the host for the call in flight.
pub(crate) struct Came {
    /// The client follows: the pieces went on to it.
    forward: bool,
    /// Their text, when they did not.
    clip: HeadTailClip,
    /// A piece (or an omission) came: the command's code ran (a command's
    /// text is only taken after its start mark).
    seen: bool,
    /// Some text was left out on the host's side (an omission).
    gap: bool,
    /// The most text the host sends as pieces (half the output limit).
    head: u64,
}

impl Came {
    /// For a call whose client follows (`forward`) or not, its output
    /// clipped to `output_limit` characters.
    pub(crate) fn new(forward: bool, output_limit: usize) -> Came {
        Came {
            forward,
            clip: HeadTailClip::halves(output_limit),
            seen: false,
            gap: false,
            head: (output_limit / 2) as u64,
        }
    }

    /// Notes a piece (or an omission); true when it goes on to the client.
    pub(crate) fn piece(&mut self, reply: &Reply) -> bool {
        match reply {
            Reply::Piece(p) => {
                self.seen = true;
                if !self.forward {
                    self.clip.push(&p.text);
                }
            }
            Reply::Omitted(_) => {
                self.seen = true;
                self.gap = true;
            }
            _ => {}
        }
        self.forward
    }

    /// The result of the call whose link failed (`how`) before its reply:
    /// `connection_lost`, kept on the host, with the output received and
    /// whether the command was seen to start; no exit code or signal (the
    /// host sent none). Also what it gave, to take off the front of the
    /// call's result when it is asked for again.
    pub(crate) fn lost(
        self,
        session: &str,
        host: &str,
        how: LinkFailure,
        started: Instant,
    ) -> (ShellResult, Option<Given>) {
        let clipped = self.clip.clipped();
        let output = clipped.render(omitted_marker);
        // The host sends no more than the head (less by up to 3 bytes where
        // a character straddles its end): more may have come.
        let filled = !self.forward && clipped.total >= self.head.saturating_sub(3);
        let truncated = (!clipped.is_complete() || filled).then(|| Truncated {
            omitted_chars: clipped.omitted,
            total_chars: clipped.total,
            full_output_path: None,
            note: Some(
                "the link was lost before the result, with the first of the output: the rest is on the host; `tether read` gets the call's result"
                    .to_owned(),
            ),
        });
        let given =
            (clipped.is_complete() && !self.gap && !output.is_empty()).then(|| Given::of(&output));
        let result = ShellResult {
            session: session.to_owned(),
            host: Some(host.to_owned()),
            status: Status::ConnectionLost,
            exit_code: None,
            pipe_status: None,
            signal: None,
            output,
            truncated,
            cwd: None,
            foreground: None,
            duration_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
            shell_restarted: false,
            link: Some(LinkLoss {
                failure: how,
                command_started: self.seen,
                kept: true,
            }),
            terminal_holders: Vec::new(),
            nested: Vec::new(),
            nest_change: None,
            secret: false,
            agentless: None,
            confinement: None,
            link_steps: Vec::new(),
        };
        (result, given)
    }
}

/// The text a lost result gave, by its length and digest (kept in the
/// hosted book, never the text itself).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Given {
    /// Its length in bytes.
    pub len: u64,
    /// Its digest.
    pub digest: u64,
}

impl Given {
    fn of(text: &str) -> Given {
        Given {
            len: text.len() as u64,
            digest: digest(text),
        }
    }

    /// Takes what was given off the front of `output`, when it begins
    /// with it; true when it did.
    pub(crate) fn strip(&self, output: &mut String) -> bool {
        let Ok(len) = usize::try_from(self.len) else {
            return false;
        };
        let matches = output
            .get(..len)
            .is_some_and(|front| digest(front) == self.digest);
        if matches {
            output.drain(..len);
        }
        matches
    }
}

fn digest(text: &str) -> u64 {
    let mut h = std::hash::DefaultHasher::new();
    text.hash(&mut h);
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::Piece;

    fn piece(text: &str) -> Reply {
        Reply::Piece(Piece {
            command: 1,
            offset: 0,
            text: text.to_owned(),
            at_ms: 0,
        })
    }

    #[test]
    fn a_lost_result_carries_the_text_that_came_and_gives_it_once() {
        let mut came = Came::new(false, 1000);
        assert!(!came.piece(&piece("L1\nL2\n")));
        assert!(!came.piece(&piece("L3\n")));
        let (r, given) = came.lost("s", "h1", LinkFailure::Unanswered, Instant::now());
        assert_eq!(r.output, "L1\nL2\nL3\n");
        assert!(r.link.as_ref().is_some_and(|l| l.command_started && l.kept));
        let mut later = "L1\nL2\nL3\nL4\n".to_owned();
        assert!(given.unwrap().strip(&mut later));
        assert_eq!(later, "L4\n");
        let mut other = "M1\nM2\nM3\nM4\n".to_owned();
        assert!(!given.unwrap().strip(&mut other));
        assert_eq!(other, "M1\nM2\nM3\nM4\n");
    }

    #[test]
    fn a_followed_calls_lost_result_says_it_started_without_the_text() {
        let mut came = Came::new(true, 1000);
        assert!(came.piece(&piece("L1\n")));
        let (r, given) = came.lost("s", "h1", LinkFailure::Lost, Instant::now());
        assert_eq!(r.output, "");
        assert!(given.is_none());
        assert!(r.link.is_some_and(|l| l.command_started));
    }

    #[test]
    fn nothing_came_is_not_started() {
        let came = Came::new(false, 1000);
        let (r, given) = came.lost("s", "h1", LinkFailure::Lost, Instant::now());
        assert!(given.is_none() && r.output.is_empty());
        assert!(r.link.is_some_and(|l| !l.command_started));
    }

    #[test]
    fn a_clipped_lost_result_says_so_and_gives_nothing_to_strip() {
        let mut came = Came::new(false, 10);
        came.piece(&piece("0123456789abcdef\n"));
        let (r, given) = came.lost("s", "h1", LinkFailure::Lost, Instant::now());
        assert!(r.truncated.is_some(), "{r:?}");
        assert!(given.is_none());
    }

    #[test]
    fn a_lost_result_whose_head_filled_says_the_rest_is_on_the_host() {
        let mut came = Came::new(false, 20);
        came.piece(&piece("0123456789"));
        let (r, given) = came.lost("s", "h1", LinkFailure::Lost, Instant::now());
        assert_eq!(r.output, "0123456789");
        assert!(r.truncated.is_some_and(|t| t.note.is_some()));
        // Still the front of the call's result: left out of it.
        let mut later = "0123456789abcdefghij".to_owned();
        assert!(given.unwrap().strip(&mut later));
        assert_eq!(later, "abcdefghij");
    }
}
