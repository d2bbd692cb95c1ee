//! `tether ping` (issue 28, as bssh's `ping`): each host connected to and
//! authenticated, as a command's run would be, then left; nothing is run
//! there. In the same window as `exec`, with the same resolver.

use std::sync::Arc;
use std::time::Instant;

use tokio::sync::{mpsc, watch};

use super::{Cancel, HostError, HostSpec, Resolver, connect, ms_since};
use crate::window::{self, HostEvent, WindowOptions};

/// One host's answer.
#[derive(Clone, Debug, Default)]
pub struct PingResult {
    /// The host, as the node set named it.
    pub host: String,
    /// Why it could not be reached (connection, host key, auth, cancel).
    pub error: Option<HostError>,
    /// Time to connect and authenticate, in milliseconds.
    pub connect_ms: u64,
}

impl PingResult {
    /// True when the host was reached and let us in.
    pub fn succeeded(&self) -> bool {
        self.error.is_none()
    }

    /// 0 reached, 255 not.
    pub fn code(&self) -> u32 {
        if self.succeeded() { 0 } else { 255 }
    }
}

window::host_outcome!(PingResult);

/// What a ping reports as it goes.
#[derive(Debug)]
pub enum PingProgress {
    /// A host started connecting.
    Started(String),
    /// A host is done.
    Done(PingResult),
}

impl HostEvent for PingProgress {
    type Outcome = PingResult;

    fn started(host: String) -> Self {
        PingProgress::Started(host)
    }

    fn done(outcome: PingResult) -> Self {
        PingProgress::Done(outcome)
    }

    fn into_outcome(self) -> Option<PingResult> {
        match self {
            PingProgress::Done(r) => Some(r),
            PingProgress::Started(_) => None,
        }
    }
}

/// Connects to every host, at most `fanout` at a time, calling `progress`
/// for every event; the results in the hosts' order.
pub async fn ping(
    hosts: Vec<HostSpec>,
    resolve: Resolver,
    fanout: usize,
    stop: Option<watch::Receiver<bool>>,
    progress: impl FnMut(&PingProgress),
) -> Vec<PingResult> {
    let window = WindowOptions {
        fanout,
        fail_fast: false,
        stop,
    };
    let work = move |spec: HostSpec, _events: mpsc::Sender<PingProgress>, mut cancel: Cancel| {
        let resolve = Arc::clone(&resolve);
        async move {
            let t0 = Instant::now();
            let mut result = PingResult {
                host: spec.name.clone(),
                ..PingResult::default()
            };
            match connect(&spec, &resolve, &mut cancel).await {
                Ok(conn) => {
                    result.connect_ms = ms_since(t0);
                    conn.disconnect().await;
                }
                Err(e) => {
                    result.connect_ms = ms_since(t0);
                    result.error = Some(e);
                }
            }
            result
        }
    };
    window::run(hosts, window, work, progress).await
}
