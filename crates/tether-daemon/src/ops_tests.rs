//! Unit tests of the daemon's request handling ([`super::handle`]),
//! without a socket: each request goes straight to a registry. Checks
//! that refuse a request must do so before any shell starts; the rest run
//! a real local bash (no start-up files), as the daemon would.

use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tether_shell::{Registry, SessionOptions};

use super::{HostProvider, handle};
use crate::protocol::{Create, Failure, FailureKind, OnTimeout, Request, Response, Status};

/// Host `n1` as a caller resolved it (nothing listens there: these tests
/// never connect).
fn n1() -> crate::protocol::HostRoute {
    crate::protocol::HostRoute {
        name: "n1".into(),
        route: Box::new(tether_ssh::Route {
            target: tether_ssh::Target {
                host: "n1".into(),
                hostname: "n1".into(),
                port: 22,
                user: "nobody".into(),
            },
            options: tether_ssh::ConnectOptions::default(),
        }),
        far: Default::default(),
    }
}

/// A private runtime directory of this test's own.
fn runtime_dir() -> PathBuf {
    static N: AtomicUsize = AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!(
        "tether-ops-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{e}"));
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700))
        .unwrap_or_else(|e| panic!("{e}"));
    dir
}

/// Removes a test's runtime directory when the test ends.
struct Cleanup(PathBuf);

impl Drop for Cleanup {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Options for local bash sessions in a directory of their own (removed
/// when the guard drops), and a registry with them.
fn setup() -> (SessionOptions, Registry, Cleanup) {
    let dir = runtime_dir();
    let base = SessionOptions {
        run_rc_files: false,
        runtime_dir: Some(dir.clone()),
        ..SessionOptions::default()
    };
    let registry = Registry::new(base.clone());
    (base, registry, Cleanup(dir))
}

fn run(session: &str, command: &str) -> Request {
    Request::Run {
        session: session.to_owned(),
        command: command.to_owned(),
        host: None,
        timeout_s: 30.0,
        on_timeout: OnTimeout::Interrupt,
        output_limit: 10_000,
        workdir: None,
        create: Create::default(),
        stdin: None,
        follow: false,
        pieces: false,
        call: None,
    }
}

/// `request`'s failure, or a panic naming what came instead.
async fn refused(
    registry: &Registry,
    base: &SessionOptions,
    hosts: Option<&HostProvider>,
    ns: &str,
    request: Request,
) -> Failure {
    match handle(registry, base, hosts, ns, request.clone()).await {
        Ok(r) => panic!("{request:?} was carried out: {r:?}"),
        Err(f) => f,
    }
}

async fn shell(registry: &Registry, base: &SessionOptions, ns: &str, request: Request) -> Response {
    handle(registry, base, None, ns, request)
        .await
        .unwrap_or_else(|f| panic!("{f:?}"))
}

fn result(r: Response) -> crate::protocol::ShellResult {
    match r {
        Response::Shell(s) => s,
        other => panic!("not a shell result: {other:?}"),
    }
}

#[tokio::test]
async fn values_out_of_range_are_refused_before_any_shell_starts() {
    let (base, registry, _dir) = setup();
    let with = |f: &dyn Fn(&mut Request)| {
        let mut r = run("s1", "echo never");
        f(&mut r);
        r
    };
    let bad = [
        with(&|r| {
            if let Request::Run { timeout_s, .. } = r {
                *timeout_s = 0.0;
            }
        }),
        with(&|r| {
            if let Request::Run { timeout_s, .. } = r {
                *timeout_s = 3601.0;
            }
        }),
        with(&|r| {
            if let Request::Run { timeout_s, .. } = r {
                *timeout_s = f64::NAN;
            }
        }),
        with(&|r| {
            if let Request::Run { create, .. } = r {
                create.shell = Some("fish-and-chips".into());
            }
        }),
        with(&|r| {
            if let Request::Run { stdin, .. } = r {
                *stdin = Some(vec![b'x'; crate::protocol::MAX_STDIN + 1]);
            }
        }),
        run("", "echo never"),
        run("..", "echo never"),
        run("a\u{1b}[2Jb", "echo never"),
        run(&"n".repeat(129), "echo never"),
    ];
    for request in bad {
        let f = refused(&registry, &base, None, "agent", request).await;
        assert_eq!(f.kind, FailureKind::BadRequest, "{f:?}");
        assert!(f.host.is_none(), "{f:?}");
    }
    // A namespace other than the shared one may not reach another's.
    let f = refused(&registry, &base, None, "agent", run("other/s1", "true")).await;
    assert_eq!(f.kind, FailureKind::BadRequest, "{f:?}");
    assert!(registry.list_all().is_empty(), "a shell was started");
}

#[tokio::test]
async fn a_host_is_refused_without_an_ssh_layer_and_named_when_it_fails() {
    let (base, registry, _dir) = setup();
    let on_host = || {
        let mut r = run("h1", "hostname");
        if let Request::Run { host, .. } = &mut r {
            *host = Some(n1());
        }
        r
    };
    let f = refused(&registry, &base, None, "", on_host()).await;
    assert_eq!(f.kind, FailureKind::BadRequest);
    assert!(
        f.message.contains("n1") && f.message.contains("SSH"),
        "{f:?}"
    );
    let asked = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&asked);
    let hosts: HostProvider = Arc::new(move |host| {
        // The provider is given the caller's route as it was sent.
        assert_eq!(
            (host.name.as_str(), host.route.target.user.as_str()),
            ("n1", "nobody")
        );
        counter.fetch_add(1, Ordering::SeqCst);
        Err("the host name does not resolve".to_owned())
    });
    let f = refused(&registry, &base, Some(&hosts), "", on_host()).await;
    assert_eq!(f.kind, FailureKind::BadRequest);
    assert!(
        f.message.contains("\"n1\"") && f.message.contains("does not resolve"),
        "{f:?}"
    );
    assert_eq!(asked.load(Ordering::SeqCst), 1);
    assert!(registry.list_all().is_empty(), "a session was registered");
}

#[tokio::test]
async fn requests_on_a_session_that_does_not_exist_say_so() {
    let (base, registry, _dir) = setup();
    for request in [
        Request::Read {
            session: "ghost".into(),
            wait_s: 0.0,
        },
        Request::Signal {
            session: "ghost".into(),
            signal: "INT".into(),
        },
        Request::Reset {
            session: "ghost".into(),
        },
        Request::Screen {
            session: "ghost".into(),
        },
    ] {
        let f = refused(&registry, &base, None, "", request).await;
        assert_eq!(f.kind, FailureKind::UnknownSession, "{f:?}");
    }
    // Checked before the session is looked up.
    let f = refused(
        &registry,
        &base,
        None,
        "",
        Request::Signal {
            session: "ghost".into(),
            signal: "SIGBOGUS".into(),
        },
    )
    .await;
    assert_eq!(f.kind, FailureKind::BadRequest);
    assert!(f.message.contains("INT"), "the names are listed: {f:?}");
    for request in [
        Request::Stop,
        Request::Attach {
            session: "ghost".into(),
            rows: 24,
            cols: 80,
            host: None,
            resume: None,
        },
    ] {
        let f = refused(&registry, &base, None, "", request).await;
        assert_eq!(f.kind, FailureKind::BadRequest, "{f:?}");
    }
}

#[tokio::test]
async fn a_local_session_runs_keeps_its_shell_and_host_and_closes() {
    let (base, registry, _dir) = setup();
    let r = result(
        shell(
            &registry,
            &base,
            "ns1",
            run("s1", "X=41; echo hi; (exit 3)"),
        )
        .await,
    );
    assert_eq!((r.status, r.exit_code), (Status::Exited, Some(3)));
    assert_eq!(r.output.trim(), "hi");
    assert_eq!(r.host, None);
    // State survives between calls.
    let r = result(shell(&registry, &base, "ns1", run("s1", "echo $((X + 1))")).await);
    assert_eq!(r.output.trim(), "42");
    // The session is listed in its namespace (and under all), not another.
    let listed = |r: Response| match r {
        Response::List(l) => l
            .sessions
            .into_iter()
            .map(|s| s.address)
            .collect::<Vec<_>>(),
        other => panic!("{other:?}"),
    };
    let mine = listed(shell(&registry, &base, "ns1", Request::List { all: false }).await);
    assert_eq!(mine, ["ns1/s1"]);
    let theirs = listed(shell(&registry, &base, "ns2", Request::List { all: false }).await);
    assert!(theirs.is_empty(), "{theirs:?}");
    let all = listed(shell(&registry, &base, "ns2", Request::List { all: true }).await);
    assert_eq!(all, ["ns1/s1"]);
    // Another namespace does not see it; the shared one reaches it.
    let f = refused(
        &registry,
        &base,
        None,
        "ns2",
        Request::Read {
            session: "s1".into(),
            wait_s: 0.0,
        },
    )
    .await;
    assert_eq!(f.kind, FailureKind::UnknownSession);
    let r = result(shell(&registry, &base, "", run("ns1/s1", "echo $X")).await);
    assert_eq!(r.output.trim(), "41");
    // Another shell, or a host, for an existing session is refused, and
    // the session is left as it was.
    let mut zsh = run("s1", "echo never");
    if let Request::Run { create, .. } = &mut zsh {
        create.shell = Some("zsh".into());
    }
    let f = refused(&registry, &base, None, "ns1", zsh).await;
    assert_eq!(f.kind, FailureKind::BadRequest);
    assert!(f.message.contains("bash"), "{f:?}");
    let mut remote = run("s1", "echo never");
    if let Request::Run { host, .. } = &mut remote {
        *host = Some(n1());
    }
    let f = refused(&registry, &base, None, "ns1", remote).await;
    assert_eq!(f.kind, FailureKind::BadRequest);
    assert!(f.message.contains("this machine"), "{f:?}");
    let r = result(shell(&registry, &base, "ns1", run("s1", "echo $X")).await);
    assert_eq!(r.output.trim(), "41");
    // Closed: gone, and later requests say so.
    let closed = shell(
        &registry,
        &base,
        "ns1",
        Request::Close {
            session: "s1".into(),
        },
    )
    .await;
    assert!(
        matches!(closed, Response::Closed(ref c) if c.closed),
        "{closed:?}"
    );
    let f = refused(
        &registry,
        &base,
        None,
        "ns1",
        Request::Read {
            session: "s1".into(),
            wait_s: 0.0,
        },
    )
    .await;
    assert_eq!(f.kind, FailureKind::UnknownSession);
}

#[tokio::test]
async fn a_kept_command_makes_the_session_busy_until_it_ends() {
    let (base, registry, _dir) = setup();
    let mut keep = run("k1", "echo started; read line; echo got $line");
    if let Request::Run {
        timeout_s,
        on_timeout,
        ..
    } = &mut keep
    {
        *timeout_s = 0.5;
        *on_timeout = OnTimeout::Keep;
    }
    let r = result(shell(&registry, &base, "", keep).await);
    assert!(
        matches!(r.status, Status::TimedOut | Status::WaitingForInput),
        "{r:?}"
    );
    // A new command is refused while the kept one runs: nothing is typed
    // into the program that reads.
    let f = refused(&registry, &base, None, "", run("k1", "echo never")).await;
    assert_eq!(f.kind, FailureKind::Busy, "{f:?}");
    let r = result(
        shell(
            &registry,
            &base,
            "",
            Request::Send {
                session: "k1".into(),
                input: Some("yes\n".into()),
                keys: Vec::new(),
                wait_s: 10.0,
                only_if_waiting: false,
                now: false,
            },
        )
        .await,
    );
    assert_eq!((r.status, r.exit_code), (Status::Exited, Some(0)), "{r:?}");
    assert!(r.output.contains("got yes"), "{r:?}");
    let r = result(shell(&registry, &base, "", run("k1", "echo free")).await);
    assert_eq!(r.output.trim(), "free");
}
