//! Sessions that live in a host's own daemon, through this machine's
//! daemon: the relay, with a second real daemon as "the host" and a link
//! to it the test can cut in the two ways links fail — both ends see it
//! (the process carrying the link was killed), or only this side does
//! (packets stop: the host's end stays open and its writes go nowhere).
//! The real SSH cases (a deployed tether, a killed sshd, a veth set down)
//! are in the binary's `far_side` tests.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tether_daemon::client::hello;
use tether_daemon::protocol::{
    Create, HostRoute, ListReply, OnTimeout, Request, SessionState, ShellResult, Status,
};
use tether_daemon::{Client, Paths, ServerOptions};
use tether_transport::{
    BoxFuture, FarSide, HostOutput, RemoteHost, Terminal, TerminalRequest, TransportError,
};

/// How the test's link fails.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Cut {
    /// Both ends closed.
    Both,
    /// Only this side's end closed; the host's stays open, unread.
    Silent,
}

/// "The host": its daemon's socket, and the links made to it (each can be
/// cut).
#[derive(Debug)]
struct FakeHost {
    socket: PathBuf,
    links: Mutex<Vec<tokio::sync::oneshot::Sender<Cut>>>,
    limbo: Arc<Mutex<Vec<tokio::net::UnixStream>>>,
    /// The next link is cut (so) right after it carried its first piece.
    at_piece: Mutex<Option<Cut>>,
}

impl FakeHost {
    /// Cuts the next link made (`how`) right after the first piece line
    /// it carries from the host.
    fn cut_at_piece(&self, how: Cut) {
        *self.at_piece.lock().unwrap() = Some(how);
    }

    fn cut(&self, how: Cut) {
        for tx in self.links.lock().unwrap().drain(..) {
            let _ = tx.send(how);
        }
    }
}

impl RemoteHost for FakeHost {
    fn name(&self) -> &str {
        "h1"
    }
    fn run(&self, _: String, _: Vec<u8>) -> BoxFuture<'_, Result<HostOutput, TransportError>> {
        Box::pin(async { Err(TransportError::Closed) })
    }
    fn open_terminal(
        &self,
        _: TerminalRequest,
    ) -> BoxFuture<'_, Result<Arc<dyn Terminal>, TransportError>> {
        Box::pin(async { Err(TransportError::Closed) })
    }
    fn link_hung(&self, _: Duration) -> BoxFuture<'_, bool> {
        Box::pin(async { false })
    }
    fn far_side(&self) -> BoxFuture<'_, Result<FarSide, TransportError>> {
        Box::pin(async {
            let far = tokio::net::UnixStream::connect(&self.socket)
                .await
                .map_err(|_| TransportError::Closed)?;
            let (near, ours) = tokio::io::duplex(64 << 10);
            let (tx, rx) = tokio::sync::oneshot::channel();
            self.links.lock().unwrap().push(tx);
            let limbo = Arc::clone(&self.limbo);
            let armed = self.at_piece.lock().unwrap().take();
            tokio::spawn(async move {
                let mut far = far;
                let mut ours = ours;
                if let Some(how) = armed {
                    cut_after_a_piece(&mut far, ours).await;
                    if how == Cut::Silent {
                        limbo.lock().unwrap().push(far);
                    }
                    return;
                }
                tokio::select! {
                    _ = tokio::io::copy_bidirectional(&mut far, &mut ours) => {}
                    how = rx => {
                        if how == Ok(Cut::Silent) {
                            limbo.lock().unwrap().push(far);
                        }
                    }
                }
            });
            Ok(FarSide::Daemon(Box::new(near)))
        })
    }
}

/// Carries the link both ways until the host has sent a piece line, then
/// ends this side (`ours` dropped: what was carried is still read).
async fn cut_after_a_piece(far: &mut tokio::net::UnixStream, mut ours: tokio::io::DuplexStream) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let (mut fr, mut fw) = far.split();
    let (mut or, mut ow) = tokio::io::split(&mut ours);
    let up = tokio::io::copy(&mut or, &mut fw);
    let down = async {
        let mut buf = vec![0u8; 8192];
        let mut seen = Vec::new();
        loop {
            let n = fr.read(&mut buf).await.unwrap_or(0);
            if n == 0 || ow.write_all(&buf[..n]).await.is_err() {
                return;
            }
            let _ = ow.flush().await;
            seen.extend_from_slice(&buf[..n]);
            if seen.windows(9).any(|w| w == b"{\"piece\":") {
                return;
            }
        }
    };
    tokio::select! {
        _ = up => {}
        () = down => {}
    }
}

struct Daemon {
    paths: Paths,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Daemon {
    fn start(dir: PathBuf, host: Option<Arc<FakeHost>>) -> Daemon {
        let paths = Paths { dir };
        let hosts = host.map(|h| {
            let provider: tether_daemon::ops::HostProvider =
                Arc::new(move |_: &HostRoute| Ok(Arc::clone(&h) as Arc<dyn RemoteHost>));
            provider
        });
        let opts = ServerOptions {
            paths: paths.clone(),
            idle_exit: Duration::from_secs(120),
            sessions: tether_shell::SessionOptions {
                run_rc_files: false,
                ..tether_shell::SessionOptions::default()
            },
            server: "relay-test".into(),
            hosts,
        };
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(tether_daemon::serve(opts)).unwrap();
        });
        Daemon {
            paths,
            thread: Some(thread),
        }
    }

    fn client(&self) -> Client {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            match Client::connect(&self.paths, &hello("test", None, false)) {
                Ok(c) => return c,
                Err(e) if Instant::now() < deadline => {
                    let _ = e;
                    std::thread::sleep(Duration::from_millis(10));
                }
                Err(e) => panic!("no daemon: {e}"),
            }
        }
    }

    fn stop(mut self) {
        self.end();
    }

    fn end(&mut self) {
        if let Ok(mut c) = Client::connect(&self.paths, &hello("test", None, false)) {
            let _ = c.call(&Request::Stop);
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        self.end();
    }
}

/// A host daemon, a local daemon reaching it as "h1", and a scratch dir.
struct Lab {
    local: Option<Daemon>,
    far: Daemon,
    host: Arc<FakeHost>,
    dir: PathBuf,
}

impl Lab {
    fn new(name: &str) -> Lab {
        let dir = std::env::temp_dir().join(format!("tether-relay-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let far = Daemon::start(dir.join("far"), None);
        drop(far.client());
        let host = Arc::new(FakeHost {
            socket: far.paths.socket(),
            links: Mutex::new(Vec::new()),
            limbo: Arc::new(Mutex::new(Vec::new())),
            at_piece: Mutex::new(None),
        });
        let local = Daemon::start(dir.join("near"), Some(Arc::clone(&host)));
        Lab {
            local: Some(local),
            far,
            host,
            dir,
        }
    }

    fn local(&self) -> &Daemon {
        self.local.as_ref().unwrap()
    }

    fn file(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        drop(self.local.take());
        // Before its directory goes: its socket is how it is stopped.
        self.far.end();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn route() -> HostRoute {
    HostRoute {
        name: "h1".into(),
        route: Box::new(tether_ssh::Route {
            target: tether_ssh::Target {
                host: "h1".into(),
                hostname: "h1".into(),
                port: 22,
                user: "nobody".into(),
            },
            options: tether_ssh::ConnectOptions::default(),
        }),
        far: Default::default(),
    }
}

fn run(session: &str, command: &str, host: bool) -> Request {
    Request::Run {
        session: session.into(),
        command: command.into(),
        host: host.then(route),
        timeout_s: 60.0,
        on_timeout: OnTimeout::Interrupt,
        output_limit: 100_000,
        workdir: None,
        create: Create::default(),
        stdin: None,
        follow: false,
        pieces: false,
        call: None,
    }
}

fn wait_for(path: &Path) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !path.exists() {
        assert!(
            Instant::now() < deadline,
            "{} never appeared",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// `read` until the command ends, every piece of output joined.
fn read_to_end(c: &mut Client, session: &str) -> ShellResult {
    let mut output = String::new();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let r: ShellResult = c
            .request(&Request::Read {
                session: session.into(),
                wait_s: 5.0,
            })
            .unwrap();
        output.push_str(&r.output);
        if r.status != Status::Running {
            return ShellResult { output, ..r };
        }
        assert!(Instant::now() < deadline, "never ended: {output:?}");
    }
}

/// The command every drop test runs: it starts, waits for the test's
/// go-ahead (given once the link is down), then prints 50 lines.
fn gated(lab: &Lab) -> String {
    format!(
        "X=kept; touch '{}'; while [ ! -e '{}' ]; do sleep 0.01; done; for i in $(seq 1 50); do echo $i; done",
        lab.file("started").display(),
        lab.file("go").display()
    )
}

fn fifty() -> String {
    (1..=50).map(|i| format!("{i}\n")).collect()
}

#[test]
fn a_run_with_a_host_lives_in_the_hosts_daemon() {
    let lab = Lab::new("lives");
    let mut c = lab.local().client();
    // The caller's environment (a secret in it) stays on this machine.
    let mut first = run(
        "s1",
        "echo hi; echo $$; echo ${RELAY_API_TOKEN-unset}",
        true,
    );
    if let Request::Run { create, .. } = &mut first {
        create.env = Some(vec![("RELAY_API_TOKEN".into(), "s3cr3t".into())]);
    }
    let r: ShellResult = c.request(&first).unwrap();
    assert_eq!(r.output.lines().nth(2), Some("unset"), "{r:?}");
    assert_eq!(r.status, Status::Exited);
    assert_eq!(r.host.as_deref(), Some("h1"));
    let pid = r.output.lines().nth(1).unwrap().to_owned();
    assert_eq!(r.output.lines().next(), Some("hi"));
    // The next call, naming no host, goes to the same shell there.
    let r: ShellResult = c.request(&run("s1", "echo $$", false)).unwrap();
    assert_eq!(r.output.trim(), pid);
    // Listed here as on its host; on the host as its own session.
    let here: ListReply = c.request(&Request::List { all: false }).unwrap();
    let s = here.sessions.iter().find(|s| s.name == "s1").unwrap();
    assert_eq!(
        (s.state, s.host.as_deref()),
        (SessionState::OnHost, Some("h1"))
    );
    let there: ListReply = lab
        .far
        .client()
        .request(&Request::List { all: false })
        .unwrap();
    assert!(
        there
            .sessions
            .iter()
            .any(|s| s.name == "s1" && s.host.is_none())
    );
    // The host's own listing, through this daemon.
    let on: ListReply = c
        .request(&Request::ListOn {
            host: route(),
            all: false,
        })
        .unwrap();
    let s = on.sessions.iter().find(|s| s.name == "s1").unwrap();
    assert_eq!(
        (s.state, s.host.as_deref()),
        (SessionState::Idle, Some("h1"))
    );
    // Closed through the relay: gone there and here.
    let _: tether_daemon::protocol::CloseReply = c
        .request(&Request::Close {
            session: "s1".into(),
        })
        .unwrap();
    let there: ListReply = lab
        .far
        .client()
        .request(&Request::List { all: false })
        .unwrap();
    assert!(there.sessions.is_empty());
    let here: ListReply = c.request(&Request::List { all: false }).unwrap();
    assert!(here.sessions.is_empty());
}

/// A drop under a call: `connection_lost`, kept; the command finishes on
/// the host; `read` gets every line once and the exit code.
fn drop_under_a_call(how: Cut) {
    let lab = Lab::new(&format!("{how:?}").to_lowercase());
    let mut c = lab.local().client();
    let first: ShellResult = c
        .request(&run("d", "echo $$; f() { echo fn; }; Y=7", true))
        .unwrap();
    let pid = first.output.trim().to_owned();
    let host = Arc::clone(&lab.host);
    let started = lab.file("started");
    let cutter = std::thread::spawn(move || {
        wait_for(&started);
        host.cut(how);
    });
    let r: ShellResult = c.request(&run("d", &gated(&lab), false)).unwrap();
    cutter.join().unwrap();
    assert_eq!(r.status, Status::ConnectionLost, "{r:?}");
    let link = r.link.unwrap();
    assert!(link.kept, "{link:?}");
    std::fs::write(lab.file("go"), "").unwrap();
    let end = read_to_end(&mut c, "d");
    assert_eq!(end.output, fifty(), "every line once");
    assert_eq!((end.status, end.exit_code), (Status::Exited, Some(0)));
    // The same shell: its pid, a function and a variable not exported.
    let r: ShellResult = c
        .request(&run("d", "echo $$; f; echo $Y $X", false))
        .unwrap();
    assert_eq!(r.output, format!("{pid}\nfn\n7 kept\n"));
}

#[test]
fn a_link_dropped_at_both_ends_under_a_call_loses_nothing() {
    drop_under_a_call(Cut::Both);
}

#[test]
fn a_link_dropped_unseen_by_the_host_loses_nothing() {
    drop_under_a_call(Cut::Silent);
}

/// A command that started but printed nothing, its link cut (both ways,
/// and unseen by the host) right after the host's first piece: the lost
/// result says the command started (issue 36: no piece came for a silent
/// command, so it said not started), with no output; `read` gets the
/// rest, every line once.
#[test]
fn a_silent_command_cut_after_its_start_is_said_started() {
    for how in [Cut::Both, Cut::Silent] {
        let lab = Lab::new(&format!("silent-{how:?}").to_lowercase());
        let mut c = lab.local().client();
        let _: ShellResult = c.request(&run("q", "true", true)).unwrap();
        lab.host.cut_at_piece(how);
        let r: ShellResult = c.request(&run("q", &gated(&lab), false)).unwrap();
        assert_eq!(r.status, Status::ConnectionLost, "{how:?}: {r:?}");
        if how == Cut::Both {
            // Followed by its client, the same (the start's empty piece
            // is not passed on).
            let followed = lab.file("followed");
            let mut f = run("f", "true", true);
            let _: ShellResult = c.request(&f).unwrap();
            if let Request::Run {
                command, follow, ..
            } = &mut f
            {
                *command = format!(
                    "while [ ! -e '{}' ]; do sleep 0.01; done; echo after",
                    followed.display()
                );
                *follow = true;
            }
            lab.host.cut_at_piece(Cut::Both);
            let mut pieces = 0;
            let r = c.follow(&f, &mut |_| pieces += 1).unwrap();
            assert_eq!(pieces, 0, "{r:?}");
            assert!(r.link.is_some_and(|l| l.command_started), "followed");
            std::fs::write(&followed, "").unwrap();
        }
        let link = r.link.clone().unwrap();
        assert!(link.command_started && link.kept, "{how:?}: {r:?}");
        assert_eq!(r.output, "", "{how:?}");
        std::fs::write(lab.file("go"), "").unwrap();
        let end = read_to_end(&mut c, "q");
        assert_eq!(end.output, fifty(), "{how:?}: every line once");
        assert_eq!((end.status, end.exit_code), (Status::Exited, Some(0)));
    }
}

#[test]
fn a_new_local_daemon_finds_the_host_sessions_again() {
    let mut lab = Lab::new("restart");
    let mut c = lab.local().client();
    let _: ShellResult = c.request(&run("r", "cd /tmp", true)).unwrap();
    // A call cut by its client (as when the local daemon dies under it),
    // then the local daemon gone.
    let started = lab.file("started");
    let mut cut = lab.local().client();
    let cutter = cut.cutter().unwrap();
    let waiter = std::thread::spawn(move || {
        wait_for(&started);
        cutter.shutdown(std::net::Shutdown::Both).unwrap();
    });
    assert!(
        cut.request::<ShellResult>(&run("r", &gated(&lab), false))
            .is_err()
    );
    waiter.join().unwrap();
    drop(c);
    lab.local.take().unwrap().stop();
    std::fs::write(lab.file("go"), "").unwrap();
    let local = Daemon::start(lab.dir.join("near"), Some(Arc::clone(&lab.host)));
    let mut c = local.client();
    let end = read_to_end(&mut c, "r");
    assert_eq!(end.output, fifty());
    assert_eq!((end.status, end.exit_code), (Status::Exited, Some(0)));
    assert_eq!(end.cwd.as_deref(), Some("/tmp"));
    lab.local = Some(local);
}
