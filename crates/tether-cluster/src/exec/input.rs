//! Local stdin for every host (`--stdin`): read once, as it comes, and
//! given to each host from its first byte, so hosts running now get it as
//! it arrives and hosts started later (past the fanout) get all of it. It is
//! kept whole for those late hosts, as `clush` keeps it.

use std::sync::{Arc, Mutex};

use tokio::sync::{mpsc, watch};

/// Most bytes passed to a host's channel at once.
const CHUNK: usize = 64 * 1024;

/// The bytes read so far, and whether the end has been reached.
#[derive(Debug)]
pub struct SharedInput {
    bytes: Mutex<Vec<u8>>,
    /// (length, ended), announced after each change.
    state: watch::Sender<(usize, bool)>,
}

impl SharedInput {
    /// An input still being read: [`SharedInput::push`], then
    /// [`SharedInput::finish`].
    pub fn new() -> Arc<SharedInput> {
        Arc::new(SharedInput {
            bytes: Mutex::new(Vec::new()),
            state: watch::Sender::new((0, false)),
        })
    }

    /// An input that is all of `bytes`.
    pub fn whole(bytes: Vec<u8>) -> Arc<SharedInput> {
        let len = bytes.len();
        Arc::new(SharedInput {
            bytes: Mutex::new(bytes),
            state: watch::Sender::new((len, true)),
        })
    }

    /// Appends bytes read.
    pub fn push(&self, more: &[u8]) {
        let len = {
            let mut b = self.bytes.lock().unwrap_or_else(|p| p.into_inner());
            b.extend_from_slice(more);
            b.len()
        };
        self.state.send_replace((len, false));
    }

    /// Marks the end of the input.
    pub fn finish(&self) {
        self.state.send_modify(|s| s.1 = true);
    }

    /// A stream of the whole input from its first byte, for one host.
    pub(crate) fn reader(self: &Arc<Self>) -> mpsc::Receiver<Vec<u8>> {
        let (tx, rx) = mpsc::channel(4);
        let me = Arc::clone(self);
        tokio::spawn(async move {
            let mut seen = me.state.subscribe();
            let mut at = 0;
            loop {
                let (len, ended) = *seen.borrow_and_update();
                if len > at {
                    let end = len.min(at + CHUNK);
                    let chunk =
                        me.bytes.lock().unwrap_or_else(|p| p.into_inner())[at..end].to_vec();
                    at = end;
                    if tx.send(chunk).await.is_err() {
                        return;
                    }
                    continue;
                }
                if ended || seen.changed().await.is_err() {
                    return;
                }
            }
        });
        rx
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[tokio::test]
    async fn a_late_reader_gets_everything_and_a_live_one_gets_it_as_it_comes() {
        let input = SharedInput::new();
        input.push(b"one ");
        let mut live = input.reader();
        assert_eq!(live.recv().await.unwrap(), b"one ");
        input.push(b"two");
        assert_eq!(live.recv().await.unwrap(), b"two");
        input.finish();
        assert_eq!(live.recv().await, None);
        let mut late = input.reader();
        assert_eq!(late.recv().await.unwrap(), b"one two");
        assert_eq!(late.recv().await, None);
        let mut whole = SharedInput::whole(vec![b'x'; CHUNK + 1]).reader();
        assert_eq!(whole.recv().await.unwrap().len(), CHUNK);
        assert_eq!(whole.recv().await.unwrap().len(), 1);
        assert_eq!(whole.recv().await, None);
    }
}
