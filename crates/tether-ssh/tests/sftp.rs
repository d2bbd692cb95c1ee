//! SFTP against OpenSSH's sftp-server behind a real sshd: pieces written
//! and read with many requests out, links, renames over an existing name,
//! listings, and the errors a copy must tell apart. Skips with a message
//! when sshd is not installed.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use tether_ssh::{ConnectOptions, HostKeyPolicy, Kind, SftpProblem, SshError, Target, connect};
use tether_testkit::{Scratch, Sshd, keygen, sftp_subsystem, user};
use tokio::sync::Semaphore;

struct World {
    scratch: Scratch,
    key: std::path::PathBuf,
    sshd: Sshd,
    root: std::path::PathBuf,
}

fn world(ip: &str, flags: &str) -> Option<World> {
    if let Some(why) = tether_testkit::unavailable() {
        eprintln!("SKIPPED: {why}");
        return None;
    }
    if tether_testkit::sftp_server().is_none() {
        eprintln!("SKIPPED: sftp-server is not installed");
        return None;
    }
    let scratch = Scratch::new("sftp-client");
    let key = keygen(&scratch.0.join("id_ed25519"), "").unwrap();
    let root = scratch.0.join("root");
    let extra = sftp_subsystem(&root, flags, "").unwrap();
    let port = tether_testkit::free_port(ip).unwrap();
    let sshd = Sshd::start_with(ip, port, &[&key.with_extension("pub")], false, &extra).unwrap();
    std::fs::write(scratch.0.join("known_hosts"), sshd.known_hosts_line()).unwrap();
    Some(World {
        scratch,
        key,
        sshd,
        root,
    })
}

impl World {
    async fn sftp(&self) -> (tether_ssh::Connection, tether_ssh::Sftp) {
        let target = Target {
            host: self.sshd.ip.clone(),
            hostname: self.sshd.ip.clone(),
            port: self.sshd.port,
            user: user(),
        };
        let opts = ConnectOptions {
            known_hosts: vec![self.scratch.0.join("known_hosts")],
            policy: HostKeyPolicy::Yes,
            identities: vec![self.key.clone()],
            identities_only: true,
            agent: None,
            passwords: false,
            ..ConnectOptions::default()
        };
        let conn = connect(&target, &opts).await.unwrap();
        let sftp = conn.sftp().await.unwrap();
        (conn, sftp)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn files_go_and_come_back_whole_with_many_requests_out() {
    let Some(w) = world("127.0.0.40", "") else {
        return;
    };
    let (_conn, s) = w.sftp().await;
    let data: Vec<u8> = (0..3_000_000u32).map(|i| (i * 7 % 251) as u8).collect();
    let window = Arc::new(Semaphore::new(8));
    let h = s.create("big.tmp", 0o640).await.unwrap();
    let mut wr = s.writer(&h, Arc::clone(&window));
    for piece in data.chunks(s.chunk()) {
        wr.write(piece.to_vec()).await.unwrap();
    }
    assert_eq!(wr.finish().await.unwrap(), data.len() as u64);
    s.fset(&h, Some(0o751), Some(1_000_000_000)).await.unwrap();
    s.close(h).await.unwrap();
    s.rename_over("big.tmp", "big").await.unwrap();
    assert_eq!(std::fs::read(w.root.join("big")).unwrap(), data);
    let a = s.stat("big").await.unwrap().unwrap();
    assert_eq!(
        (a.kind, a.size, a.mode, a.mtime),
        (Kind::File, 3_000_000, 0o751, Some(1_000_000_000))
    );
    assert_eq!(window.available_permits(), 8);

    let h = s.open("big").await.unwrap();
    let mut rd = s.reader(&h, a.size, Arc::clone(&window));
    let mut back = Vec::new();
    while let Some(piece) = rd.next().await.unwrap() {
        back.extend(piece);
    }
    drop(rd);
    s.close(h).await.unwrap();
    assert!(back == data, "read back {} bytes", back.len());
    assert_eq!(window.available_permits(), 8);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn links_renames_listings_and_errors() {
    let Some(w) = world("127.0.0.41", "") else {
        return;
    };
    let (_conn, s) = w.sftp().await;
    s.mkdir("d", 0o755).await.unwrap();
    s.symlink("d/link", "../target file").await.unwrap();
    assert_eq!(
        std::fs::read_link(w.root.join("d/link")).unwrap().to_str(),
        Some("../target file")
    );
    assert_eq!(s.readlink("d/link").await.unwrap(), "../target file");
    assert_eq!(
        s.lstat("d/link").await.unwrap().unwrap().kind,
        Kind::Symlink
    );
    assert_eq!(s.stat("d/link").await.unwrap(), None);

    // A rename replaces what is there.
    std::fs::write(w.root.join("d/old"), "old").unwrap();
    let h = s.create("d/new", 0o644).await.unwrap();
    let mut wr = s.writer(&h, Arc::new(Semaphore::new(4)));
    wr.write(b"new".to_vec()).await.unwrap();
    wr.finish().await.unwrap();
    s.close(h).await.unwrap();
    s.rename_over("d/new", "d/old").await.unwrap();
    assert_eq!(
        std::fs::read_to_string(w.root.join("d/old")).unwrap(),
        "new"
    );

    let mut names: Vec<(String, Kind)> = s
        .read_dir("d")
        .await
        .unwrap()
        .into_iter()
        .map(|e| (e.name, e.attrs.kind))
        .collect();
    names.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        names,
        [("link".into(), Kind::Symlink), ("old".into(), Kind::File)]
    );

    // A name that exists is not created again; a missing one is not found.
    let problem = |e: SshError| match e {
        SshError::Sftp { problem, .. } => problem,
        other => panic!("not an SFTP error: {other}"),
    };
    assert_eq!(
        problem(s.create("d/old", 0o600).await.unwrap_err()),
        SftpProblem::Failure
    );
    let e = s.open("nowhere/x").await.unwrap_err();
    assert!(
        e.to_string()
            .contains("cannot open nowhere/x: no such file"),
        "{e}"
    );
    assert_eq!(problem(e), SftpProblem::NotFound);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_only_server_refuses_writes() {
    let Some(w) = world("127.0.0.42", "-R") else {
        return;
    };
    let (_conn, s) = w.sftp().await;
    let e = s.create("x", 0o600).await.unwrap_err();
    assert!(
        e.to_string().contains("cannot create x: permission denied"),
        "{e}"
    );
}
