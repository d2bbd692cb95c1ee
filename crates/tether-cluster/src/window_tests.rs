//! The window with made-up hosts: what runs, in which order, and what a
//! failure or a stop leaves unstarted.

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use super::*;

/// A made-up host's result.
#[derive(Debug, PartialEq, Eq)]
struct Fake {
    host: String,
    ok: bool,
    not_started: Option<StopReason>,
}

impl Outcome for Fake {
    fn host(&self) -> &str {
        &self.host
    }

    fn succeeded(&self) -> bool {
        self.ok
    }

    fn code(&self) -> u32 {
        u32::from(!self.ok)
    }

    fn error(&self) -> Option<&crate::exec::HostError> {
        None
    }
}

impl HostOutcome for Fake {
    fn not_started(host: String, why: StopReason) -> Self {
        Fake {
            host,
            ok: false,
            not_started: Some(why),
        }
    }
}

#[derive(Debug)]
enum FakeEvent {
    Started(String),
    Done(Fake),
}

impl HostEvent for FakeEvent {
    type Outcome = Fake;

    fn started(host: String) -> Self {
        FakeEvent::Started(host)
    }

    fn done(outcome: Fake) -> Self {
        FakeEvent::Done(outcome)
    }

    fn into_outcome(self) -> Option<Fake> {
        match self {
            FakeEvent::Done(f) => Some(f),
            FakeEvent::Started(_) => None,
        }
    }
}

fn hosts(names: &[&str]) -> Vec<HostSpec> {
    names.iter().map(|n| HostSpec::parse(n).unwrap()).collect()
}

fn ran(host: &str, ok: bool) -> Fake {
    Fake {
        host: host.to_owned(),
        ok,
        not_started: None,
    }
}

fn not_started(host: &str, why: StopReason) -> Fake {
    Fake::not_started(host.to_owned(), why)
}

const DEADLINE: Duration = Duration::from_secs(20);

/// One at a time, failing fast: after the first host fails no other host
/// starts, even while the caller is still busy with the first host's
/// events. The caller here blocks on the first event until the window has
/// handed out every host (its work function is dropped then), as a
/// printer that cannot keep up would.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fail_fast_one_at_a_time_starts_nothing_after_a_failure() {
    let started = Arc::new(Mutex::new(Vec::new()));
    let (handed_out, all_handed_out) = std::sync::mpsc::channel::<()>();
    let seen = Arc::clone(&started);
    let work = move |spec: HostSpec, _events: mpsc::Sender<FakeEvent>, _cancel: Cancel| {
        let _alive = &handed_out;
        seen.lock().unwrap().push(spec.name.clone());
        async move { ran(&spec.name, false) }
    };
    let opts = WindowOptions {
        fanout: 1,
        fail_fast: true,
        stop: None,
    };
    let mut first = true;
    let results = run(hosts(&["a", "b", "c"]), opts, work, |_: &FakeEvent| {
        if std::mem::take(&mut first) {
            let ended = all_handed_out.recv_timeout(DEADLINE);
            assert!(ended.is_err_and(|e| e == std::sync::mpsc::RecvTimeoutError::Disconnected));
        }
    })
    .await;
    assert_eq!(*started.lock().unwrap(), ["a"]);
    assert_eq!(
        results,
        [
            ran("a", false),
            not_started("b", StopReason::FailFast),
            not_started("c", StopReason::FailFast)
        ]
    );
}

/// Never more than `fanout` at once; every host runs, its events in order
/// (started, then done); results come back in the hosts' order.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn at_most_fanout_at_once_and_results_in_the_hosts_order() {
    let names = ["n1", "n2", "n3", "n4", "n5", "n6", "n7"];
    let running = Arc::new(AtomicUsize::new(0));
    let most = Arc::new(AtomicUsize::new(0));
    let (now, peak) = (Arc::clone(&running), Arc::clone(&most));
    let work = move |spec: HostSpec, _events: mpsc::Sender<FakeEvent>, _cancel: Cancel| {
        let (now, peak) = (Arc::clone(&now), Arc::clone(&peak));
        async move {
            let here = now.fetch_add(1, Ordering::SeqCst) + 1;
            peak.fetch_max(here, Ordering::SeqCst);
            for _ in 0..5 {
                tokio::task::yield_now().await;
            }
            now.fetch_sub(1, Ordering::SeqCst);
            // The odd ones fail: without fail-fast the rest still run.
            let ok = spec.name.ends_with(['2', '4', '6']);
            ran(&spec.name, ok)
        }
    };
    let opts = WindowOptions {
        fanout: 3,
        fail_fast: false,
        stop: None,
    };
    let mut order = Vec::new();
    let results = run(hosts(&names), opts, work, |e: &FakeEvent| match e {
        FakeEvent::Started(h) => order.push(format!("+{h}")),
        FakeEvent::Done(f) => order.push(format!("-{}", f.host)),
    })
    .await;
    assert!(most.load(Ordering::SeqCst) <= 3);
    let expected: Vec<Fake> = names
        .iter()
        .map(|n| ran(n, n.ends_with(['2', '4', '6'])))
        .collect();
    assert_eq!(results, expected);
    for n in names {
        let at = |mark: String| order.iter().position(|o| *o == mark);
        assert!(at(format!("+{n}")) < at(format!("-{n}")), "{order:?}");
    }
}

/// The caller's stop: the host running is told (its cancel is set), and
/// the hosts after it do not start.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stop_cancels_the_running_host_and_starts_no_more() {
    let (stop, stopped) = watch::channel(false);
    let stop = Arc::new(stop);
    let work = move |spec: HostSpec, _events: mpsc::Sender<FakeEvent>, mut cancel: Cancel| {
        let stop = Arc::clone(&stop);
        async move {
            stop.send_replace(true);
            let told = tokio::time::timeout(DEADLINE, cancel.wait_for(Option::is_some)).await;
            let why = told.ok().and_then(|r| r.ok().and_then(|w| *w));
            assert_eq!(why, Some(StopReason::Interrupted));
            ran(&spec.name, false)
        }
    };
    let opts = WindowOptions {
        fanout: 1,
        fail_fast: false,
        stop: Some(stopped),
    };
    let results = run(hosts(&["a", "b"]), opts, work, |_: &FakeEvent| {}).await;
    assert_eq!(
        results,
        [ran("a", false), not_started("b", StopReason::Interrupted)]
    );
}
