//! An SFTP subsystem that ends at once is reported at once, with its
//! reason: a `Subsystem sftp` program that is missing (the shell's 127),
//! and a login user whose shell is `nologin` (what it printed
//! instead of SFTP). Before, both waited out the 60 s request timeout and
//! blamed the link. Real sshd; the nologin user is created when the tests
//! run as root, else that test skips.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Command;
use std::time::Duration;

use tether_ssh::{ConnectOptions, HostKeyPolicy, SftpProblem, SshError, Target, connect};
use tether_testkit::{Scratch, Sshd, keygen};

/// A bound that fails a hang, far under the 60 s request timeout.
const BOUND: Duration = Duration::from_secs(30);

async fn start_sftp(
    sshd: &Sshd,
    scratch: &Scratch,
    key: &std::path::Path,
    user: &str,
) -> Result<tether_ssh::Sftp, SshError> {
    std::fs::write(scratch.0.join("known_hosts"), sshd.known_hosts_line()).unwrap();
    let target = Target {
        host: sshd.ip.clone(),
        hostname: sshd.ip.clone(),
        port: sshd.port,
        user: user.to_owned(),
    };
    let opts = ConnectOptions {
        known_hosts: vec![scratch.0.join("known_hosts")],
        policy: HostKeyPolicy::Yes,
        identities: vec![key.to_path_buf()],
        identities_only: true,
        agent: None,
        passwords: false,
        ..ConnectOptions::default()
    };
    let conn = connect(&target, &opts).await.unwrap();
    tokio::time::timeout(BOUND, conn.sftp())
        .await
        .unwrap_or_else(|_| panic!("the subsystem's end was not reported within {BOUND:?}"))
}

/// Starts sshd on `ip` with `extra` first in its config, starts SFTP there
/// as `user`, and returns the error's text (a lost session, asserted).
async fn refused(
    ip: &str,
    scratch: &Scratch,
    key: &std::path::Path,
    extra: &str,
    user: &str,
) -> String {
    let port = tether_testkit::free_port(ip).unwrap();
    let sshd = Sshd::start_with(ip, port, &[&key.with_extension("pub")], false, extra).unwrap();
    let e = start_sftp(&sshd, scratch, key, user).await.unwrap_err();
    let m = e.to_string();
    assert!(lost(&e), "{e:?}");
    m
}

fn lost(e: &SshError) -> bool {
    matches!(
        e,
        SshError::Sftp {
            problem: SftpProblem::Lost,
            ..
        }
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_sftp_server_is_reported_at_once_with_its_reason() {
    if let Some(why) = tether_testkit::unavailable() {
        eprintln!("SKIPPED: {why}");
        return;
    }
    let scratch = Scratch::new("sftp-missing");
    let key = keygen(&scratch.0.join("id_ed25519"), "").unwrap();
    let extra = "Subsystem sftp /nonexistent/tether/sftp-server\n";
    let m = refused("127.0.0.43", &scratch, &key, extra, &tether_testkit::user()).await;
    // (OpenSSH's sshd sends no stderr for a subsystem: the shell's "not
    // found" stays on the host; the status says it.)
    assert!(
        m.contains("the SFTP subsystem ended")
            && m.contains("status 127")
            && m.contains("Subsystem sftp"),
        "{m}"
    );
    assert!(!m.contains("no answer within"), "{m}");
}

/// A login user whose shell is `nologin`, created for the test (root
/// only); `None` with the reason when it cannot be.
fn nologin_user() -> Result<&'static str, String> {
    const NAME: &str = "tether-nologin";
    let nologin = ["/usr/sbin/nologin", "/sbin/nologin"]
        .into_iter()
        .find(|p| std::path::Path::new(p).exists())
        .ok_or("no nologin program")?;
    let exists = Command::new("id")
        .arg(NAME)
        .output()
        .is_ok_and(|o| o.status.success());
    if !exists {
        let out = Command::new("useradd")
            .args(["--system", "--no-create-home", "--shell", nologin, NAME])
            .output()
            .map_err(|e| format!("useradd: {e}"))?;
        if !out.status.success() && !String::from_utf8_lossy(&out.stderr).contains("exists") {
            return Err(format!(
                "useradd failed (not root?): {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
    }
    // Its shell is nologin whatever an earlier run left; unlocked for keys
    // (sshd with UsePAM no refuses a locked account).
    for args in [["-s", nologin, NAME], ["-p", "*", NAME]] {
        let ok = Command::new("usermod")
            .args(args)
            .output()
            .is_ok_and(|o| o.status.success());
        if !ok {
            return Err("usermod failed (not root?)".into());
        }
    }
    Ok(NAME)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_nologin_shell_is_reported_at_once_with_what_it_said() {
    if let Some(why) = tether_testkit::unavailable() {
        eprintln!("SKIPPED: {why}");
        return;
    }
    if tether_testkit::sftp_server().is_none() {
        eprintln!("SKIPPED: sftp-server is not installed");
        return;
    }
    let user = match nologin_user() {
        Ok(u) => u,
        Err(why) => {
            eprintln!("SKIPPED: cannot make a nologin user: {why}");
            return;
        }
    };
    let scratch = Scratch::new("sftp-nologin");
    let key = keygen(&scratch.0.join("id_ed25519"), "").unwrap();
    let root = scratch.0.join("root");
    let extra = tether_testkit::sftp_subsystem(&root, "", "").unwrap();
    let m = refused("127.0.0.44", &scratch, &key, &extra, user).await;
    assert!(
        m.contains("the SFTP subsystem ended")
            && m.contains("status 1")
            && m.contains("This account is currently not available"),
        "{m}"
    );
}

/// A subsystem that prints before speaking SFTP (a start-up file's noise)
/// and then waits: the client cannot read it, and says so at once with
/// what it printed, rather than waiting out the request timeout.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn output_that_is_not_sftp_is_reported_at_once_with_what_it_said() {
    if let Some(why) = tether_testkit::unavailable() {
        eprintln!("SKIPPED: {why}");
        return;
    }
    if tether_testkit::sftp_server().is_none() {
        eprintln!("SKIPPED: sftp-server is not installed");
        return;
    }
    let scratch = Scratch::new("sftp-noise");
    let key = keygen(&scratch.0.join("id_ed25519"), "").unwrap();
    let root = scratch.0.join("root");
    let extra =
        tether_testkit::sftp_subsystem(&root, "", "echo Welcome to the noisy host;").unwrap();
    let m = refused(
        "127.0.0.51",
        &scratch,
        &key,
        &extra,
        &tether_testkit::user(),
    )
    .await;
    // Said as "does not speak SFTP" while it runs, or, once the client's
    // end of input has ended it, in its end's reason.
    assert!(
        m.contains("SFTP: it printed") || m.contains("it printed, instead of speaking SFTP"),
        "{m}"
    );
    assert!(m.contains("Welcome to the noisy host"), "{m}");
    assert!(
        !m.contains("posix-rename"),
        "the SFTP bytes are not text: {m}"
    );
}
