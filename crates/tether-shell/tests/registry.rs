//! The session registry: owners are isolated, calls on one session run in
//! order, sessions run concurrently, closing ends everything.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::Duration;

use tether_shell::{Registry, RunOptions, SessionOptions, ShellError, Status};

fn registry() -> Arc<Registry> {
    Arc::new(Registry::new(SessionOptions {
        run_rc_files: false,
        ..SessionOptions::default()
    }))
}

async fn run(reg: &Registry, owner: &str, name: &str, code: &str) -> tether_shell::RunResult {
    let code = code.to_owned();
    reg.with(owner, name, async move |s| {
        s.run(&code, &RunOptions::default()).await
    })
    .await
    .unwrap()
}

#[tokio::test]
async fn owners_are_isolated_even_with_the_same_session_name() {
    let reg = registry();
    run(&reg, "alice", "main", "cd /tmp; export WHO=alice").await;
    run(&reg, "bob", "main", "cd /usr; export WHO=bob").await;
    assert_eq!(
        run(&reg, "alice", "main", "pwd; echo $WHO").await.output,
        "/tmp\nalice\n"
    );
    assert_eq!(
        run(&reg, "bob", "main", "pwd; echo $WHO").await.output,
        "/usr\nbob\n"
    );
    let names: Vec<String> = reg.list("alice").into_iter().map(|i| i.name).collect();
    assert_eq!(names, ["main"]);
    assert!(reg.list("carol").is_empty());
    assert!(matches!(
        reg.existing("carol", "main"),
        Err(ShellError::UnknownSession(_))
    ));
    let info = &reg.list("bob")[0];
    assert_eq!(
        (info.dialect, info.cwd.as_deref()),
        ("bash", Some(std::path::Path::new("/usr")))
    );
}

#[tokio::test]
async fn calls_on_one_session_run_in_order() {
    let reg = registry();
    let log = format!("/tmp/tether-order-{}", std::process::id());
    run(&reg, "o", "s", &format!(": > {log}")).await;
    let mut calls = Vec::new();
    for i in 0..5 {
        let (reg, log) = (Arc::clone(&reg), log.clone());
        calls.push(tokio::spawn(async move {
            run(&reg, "o", "s", &format!("echo {i} >> {log}")).await
        }));
        // Each call is queued before the next is spawned.
        tokio::task::yield_now().await;
    }
    for c in calls {
        assert_eq!(c.await.unwrap().status, Status::Exited);
    }
    let order = run(
        &reg,
        "o",
        "s",
        &format!("tr '\\n' ' ' < {log}; rm -f {log}"),
    )
    .await;
    assert_eq!(order.output, "0 1 2 3 4 ");
}

#[tokio::test]
async fn different_sessions_run_concurrently() {
    let reg = registry();
    run(&reg, "o", "slow", "true").await;
    let slow = {
        let reg = Arc::clone(&reg);
        tokio::spawn(async move {
            reg.with("o", "slow", async |s| {
                let opts = RunOptions {
                    timeout: Duration::from_secs(30),
                    ..RunOptions::default()
                };
                s.run("read line; echo got-$line", &opts).await
            })
            .await
            .unwrap()
        })
    };
    // While "slow" is held by a call waiting for input, another session works.
    assert_eq!(run(&reg, "o", "fast", "echo fast").await.output, "fast\n");
    let r = slow.await.unwrap();
    assert_eq!(r.status, Status::WaitingForInput);
    let r = reg
        .with("o", "slow", async |s| {
            s.send(Some("x\n"), &[], Duration::from_secs(5)).await
        })
        .await
        .unwrap();
    assert_eq!(r.output, "got-x\n");
}

#[tokio::test]
async fn closing_ends_the_tree_and_removes_the_files() {
    let reg = registry();
    let r = run(&reg, "o", "s", "sleep 300 & echo $!").await;
    let pid: i32 = r.output.trim().parse().unwrap();
    let dir = reg
        .existing("o", "s")
        .unwrap()
        .lock()
        .await
        .dir()
        .to_path_buf();
    assert!(dir.exists());
    reg.close("o", "s").await.unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while tether_pty::procfs::stat(pid).is_some_and(|s| s.state != 'Z') {
        assert!(
            std::time::Instant::now() < deadline,
            "the background job survived"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(!dir.exists());
    assert!(reg.list("o").is_empty());
    assert!(matches!(
        reg.close("o", "s").await,
        Err(ShellError::UnknownSession(_))
    ));
}
