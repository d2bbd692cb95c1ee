//! `tether ssh`'s OpenSSH command-line and ssh_config surface against a
//! real sshd: `-n`, `ssh://` destinations, `-c`/`-m`/`-o MACs` and
//! `HostKeyAlgorithms` (with `+`, `-`, `^`; a name russh lacks is named),
//! `-Q` (every cipher, MAC and key exchange it lists connects, as
//! OpenSSH's try-ciphers and kextype tests do), `SendEnv`/`SetEnv` from
//! `-o` and ssh_config (OpenSSH's envpass), `LocalCommand` only with
//! `PermitLocalCommand yes` and its tokens (localcommand, host-expand),
//! `-t` without a terminal (ssh's warning, then no PTY; `-tt` forces one),
//! `-v` notes for options accepted without effect, and what is refused
//! (`ControlMaster`, `-M`/`-S`/`-O`, `Tunnel`, `ForwardX11`) with what to
//! do instead, before anything connects.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

use tether_testkit::{Scratch, Sshd, free_port, keygen};

const TETHER: &str = env!("CARGO_BIN_EXE_tether");
const IP: &str = "127.0.0.81";

struct World {
    scratch: Scratch,
    config: PathBuf,
    port: u16,
    _sshd: Sshd,
}

fn start(name: &str, sshd_extra: &str) -> Option<World> {
    if let Some(why) = tether_testkit::unavailable() {
        eprintln!("SKIPPED: {why}");
        return None;
    }
    let scratch = Scratch::new(&format!("ssh-options-{name}"));
    let key = keygen(&scratch.0.join("id_ed25519"), "").unwrap();
    let port = free_port(IP).unwrap();
    let sshd =
        Sshd::start_with(IP, port, &[&key.with_extension("pub")], false, sshd_extra).unwrap();
    let known = scratch.0.join("known_hosts");
    std::fs::write(&known, sshd.known_hosts_line()).unwrap();
    let config = scratch.0.join("ssh_config");
    std::fs::write(
        &config,
        format!(
            "Host web\n  HostName {IP}\n  Port {port}\nHost *\n  User {user}\n  IdentityFile {key}\n  IdentityAgent none\n  UserKnownHostsFile {known}\n  BatchMode yes\n",
            user = tether_testkit::user(),
            key = key.display(),
            known = known.display(),
        ),
    )
    .unwrap();
    Some(World {
        scratch,
        config,
        port,
        _sshd: sshd,
    })
}

impl World {
    fn cmd(&self, args: &[&str]) -> Command {
        let mut c = Command::new(TETHER);
        c.arg("ssh")
            .arg("-F")
            .arg(&self.config)
            .args(args)
            .env("HOME", &self.scratch.0)
            .env_remove("XDG_CONFIG_HOME")
            .env_remove("SSH_AUTH_SOCK");
        c
    }

    /// `tether ssh -F CONFIG ARGS`, `stdin` piped in.
    fn run(&self, args: &[&str], stdin: &[u8]) -> Output {
        self.run_env(args, stdin, &[])
    }

    fn run_env(&self, args: &[&str], stdin: &[u8], env: &[(&str, &str)]) -> Output {
        let mut c = self.cmd(args);
        for (k, v) in env {
            c.env(k, v);
        }
        let mut child = c
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // A child that does not read its stdin (-n) may close it first.
        let _ = child.stdin.take().unwrap().write_all(stdin);
        child.wait_with_output().unwrap()
    }
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// `(exit code, stdout)`.
fn result(out: &Output) -> (Option<i32>, String) {
    (out.status.code(), text(&out.stdout))
}

#[test]
fn dash_n_and_ssh_urls() {
    let Some(w) = start("n-url", "") else {
        return;
    };
    // Without -n the command reads what is piped; with -n it reads nothing.
    let out = w.run(&["web", "cat; echo end"], b"piped\n");
    assert_eq!(result(&out), (Some(0), "piped\nend\n".into()), "{out:?}");
    let out = w.run(&["-n", "web", "cat; echo end"], b"piped\n");
    assert_eq!(result(&out), (Some(0), "end\n".into()), "{out:?}");
    // StdinNull in ssh_config does the same.
    let out = w.run(&["-o", "StdinNull=yes", "web", "cat; echo end"], b"piped\n");
    assert_eq!(result(&out), (Some(0), "end\n".into()), "{out:?}");
    // ssh://user@host:port, with and without the trailing slash.
    let user = tether_testkit::user();
    for url in [
        format!("ssh://{user}@{IP}:{}", w.port),
        format!("ssh://{user}@{IP}:{}/", w.port),
    ] {
        let out = w.run(&[&url, "echo", "via-url"], b"");
        assert_eq!(
            result(&out),
            (Some(0), "via-url\n".into()),
            "{url}: {out:?}"
        );
    }
    // A path is refused (as ssh refuses it).
    let out = w.run(&[&format!("ssh://{user}@{IP}:{}/etc", w.port), "true"], b"");
    assert_eq!(out.status.code(), Some(255), "{out:?}");
    assert!(text(&out.stderr).contains("no path"), "{out:?}");
}

#[test]
fn algorithms_from_flags_and_options() {
    // The server takes only these: what tether offers decides.
    let Some(w) = start(
        "algos",
        "Ciphers aes128-ctr,aes256-gcm@openssh.com\nMACs hmac-sha2-256\nKexAlgorithms curve25519-sha256,diffie-hellman-group14-sha256\n",
    ) else {
        return;
    };
    let ok = |args: &[&str]| {
        let mut all = args.to_vec();
        all.extend(["web", "echo", "in"]);
        let out = w.run(&all, b"");
        assert_eq!(result(&out), (Some(0), "in\n".into()), "{args:?}: {out:?}");
    };
    let fails = |args: &[&str]| {
        let mut all = args.to_vec();
        all.extend(["web", "true"]);
        let out = w.run(&all, b"");
        assert_eq!(out.status.code(), Some(255), "{args:?}: {out:?}");
        text(&out.stderr)
    };
    ok(&["-c", "aes128-ctr", "-m", "hmac-sha2-256"]);
    ok(&["-c", "aes256-gcm@openssh.com"]);
    ok(&["-o", "Ciphers=^aes128-ctr", "-o", "MACs=+hmac-sha1"]);
    ok(&["-o", "KexAlgorithms=diffie-hellman-group14-sha256"]);
    ok(&["-o", "HostKeyAlgorithms=ssh-ed25519"]);
    // Offering only what the server lacks fails the handshake.
    fails(&["-c", "aes256-ctr"]);
    // A MAC counts only with a cipher without its own (not GCM).
    fails(&["-c", "aes128-ctr", "-m", "hmac-sha2-512"]);
    fails(&["-o", "Ciphers=-aes128-ctr,aes256-gcm@openssh.com"]);
    fails(&["-o", "HostKeyAlgorithms=ecdsa-sha2-nistp256"]);
    // A name russh lacks is named, with what tether has, before dialling.
    let err = fails(&["-c", "3des-cbc"]);
    assert!(
        err.contains("3des-cbc") && err.contains("aes128-ctr"),
        "{err}"
    );
    let err = fails(&["-o", "MACs=umac-64@openssh.com"]);
    assert!(err.contains("umac-64@openssh.com"), "{err}");
    let err = fails(&["-o", "HostKeyAlgorithms=ssh-dss"]);
    assert!(err.contains("ssh-dss"), "{err}");
}

/// `PubkeyAcceptedAlgorithms`: a key whose algorithm the list leaves out
/// is not offered (the ed25519 key logs in only while the list keeps
/// `ssh-ed25519`); a name russh cannot sign with is named; `-G` prints the
/// list (OpenSSH's sshcfgparse).
#[test]
fn pubkey_accepted_algorithms_decides_which_keys_are_offered() {
    let Some(w) = start("pubkey-algos", "") else {
        return;
    };
    let run = |opt: &str| w.run(&["-o", opt, "web", "echo", "in"], b"");
    let out = run("PubkeyAcceptedAlgorithms=ssh-ed25519");
    assert_eq!(result(&out), (Some(0), "in\n".into()), "{out:?}");
    let out = run("PubkeyAcceptedAlgorithms=-ssh-ed25519-cert*");
    assert_eq!(result(&out), (Some(0), "in\n".into()), "{out:?}");
    for left_out in [
        "PubkeyAcceptedAlgorithms=-ssh-ed25519",
        "PubkeyAcceptedAlgorithms=ecdsa-sha2-nistp256,rsa-sha2-512",
    ] {
        let out = run(left_out);
        assert_eq!(out.status.code(), Some(255), "{left_out}: {out:?}");
        assert!(
            text(&out.stderr).contains("nothing"),
            "{left_out}: no key offered: {out:?}"
        );
    }
    let out = run("PubkeyAcceptedAlgorithms=ssh-dss");
    assert_eq!(out.status.code(), Some(255), "{out:?}");
    assert!(text(&out.stderr).contains("ssh-dss"), "{out:?}");
    let shown = |args: &[&str]| {
        let mut all = vec!["-G"];
        all.extend(args);
        all.push("web");
        let out = w.run(&all, b"");
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        text(&out.stdout)
            .lines()
            .find_map(|l| {
                l.strip_prefix("pubkeyacceptedalgorithms ")
                    .map(str::to_owned)
            })
            .unwrap_or_default()
    };
    let default = shown(&[]);
    assert!(
        default.split(',').any(|a| a == "ssh-ed25519")
            && default
                .split(',')
                .any(|a| a == "ssh-ed25519-cert-v01@openssh.com"),
        "{default}"
    );
    assert_eq!(
        shown(&["-o", "PubkeyAcceptedAlgorithms=ssh-ed25519"]),
        "ssh-ed25519"
    );
}

/// `-Q cipher`, `-Q mac`, `-Q kex`: each one listed connects to a server
/// that offers only it (OpenSSH's try-ciphers and kextype).
#[test]
fn every_queried_algorithm_connects() {
    let q = |what: &str| {
        let out = Command::new(TETHER)
            .args(["ssh", "-Q", what])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        text(&out.stdout)
            .lines()
            .map(str::to_owned)
            .collect::<Vec<_>>()
    };
    let ciphers = q("cipher");
    let macs = q("mac");
    let kex = q("kex");
    assert!(ciphers.contains(&"chacha20-poly1305@openssh.com".to_owned()));
    assert!(macs.contains(&"hmac-sha2-256".to_owned()));
    assert!(kex.contains(&"curve25519-sha256".to_owned()));
    assert!(q("key").contains(&"ssh-ed25519".to_owned()));
    let bad = Command::new(TETHER)
        .args(["ssh", "-Q", "nonsense"])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(255), "{bad:?}");
    // sshd's own list, to skip what this sshd does not build.
    let server = |what: &str| {
        Command::new("ssh")
            .args(["-Q", what])
            .output()
            .map(|o| text(&o.stdout))
            .unwrap_or_default()
    };
    let (sc, sm, sk) = (server("cipher"), server("mac"), server("kex"));
    let all = |list: &[String], have: &str| {
        list.iter()
            .filter(|n| have.lines().any(|h| h == n.as_str()))
            .cloned()
            .collect::<Vec<_>>()
            .join(",")
    };
    let Some(w) = start(
        "query",
        &format!(
            "Ciphers {}\nMACs {}\nKexAlgorithms {}\n",
            all(&ciphers, &sc),
            all(&macs, &sm),
            all(&kex, &sk)
        ),
    ) else {
        return;
    };
    for c in ciphers
        .iter()
        .filter(|c| sc.lines().any(|h| h == c.as_str()))
    {
        let out = w.run(&["-c", c, "web", "echo", "ok"], b"");
        assert_eq!(result(&out), (Some(0), "ok\n".into()), "-c {c}: {out:?}");
    }
    for m in macs.iter().filter(|m| sm.lines().any(|h| h == m.as_str())) {
        // A MAC is used only with a cipher that has none of its own.
        let out = w.run(&["-c", "aes128-ctr", "-m", m, "web", "echo", "ok"], b"");
        assert_eq!(result(&out), (Some(0), "ok\n".into()), "-m {m}: {out:?}");
    }
    let mut failed = Vec::new();
    for k in kex.iter().filter(|k| sk.lines().any(|h| h == k.as_str())) {
        // 8192-bit groups are slow in a debug build: a bound, not a timing.
        let kex = format!("KexAlgorithms={k}");
        let out = w.run(
            &["-o", &kex, "-o", "ConnectTimeout=300", "web", "echo", "ok"],
            b"",
        );
        if result(&out) != (Some(0), "ok\n".into()) {
            failed.push(format!("{k}: {out:?}"));
        }
    }
    assert!(failed.is_empty(), "{failed:#?}");
}

#[test]
fn send_env_and_set_env_from_options_and_config() {
    let Some(w) = start("env", "AcceptEnv _XXX_TEST*\n") else {
        return;
    };
    let show = "echo A=$_XXX_TEST_A B=$_XXX_TEST_B T=$_TEST_ENV";
    let env = [
        ("_XXX_TEST_A", "1"),
        ("_XXX_TEST_B", "2"),
        ("_TEST_ENV", "blah"),
    ];
    // Nothing sent unless asked.
    let out = w.run_env(&["web", show], b"", &env);
    assert_eq!(result(&out), (Some(0), "A= B= T=\n".into()), "{out:?}");
    // SendEnv: the server takes what it accepts.
    let out = w.run_env(&["-o", "SendEnv=*", "web", show], b"", &env);
    assert_eq!(result(&out), (Some(0), "A=1 B=2 T=\n".into()), "{out:?}");
    let out = w.run_env(&["-o", "SendEnv _XXX_TEST_A", "web", show], b"", &env);
    assert_eq!(result(&out), (Some(0), "A=1 B= T=\n".into()), "{out:?}");
    // SetEnv: the first value of a name wins.
    let out = w.run(
        &[
            "-o",
            "SetEnv=_XXX_TEST_A=1 _XXX_TEST_A=11 _XXX_TEST_B=2",
            "web",
            show,
        ],
        b"",
    );
    assert_eq!(result(&out), (Some(0), "A=1 B=2 T=\n".into()), "{out:?}");
    // The same from ssh_config.
    let cfg = std::fs::read_to_string(&w.config).unwrap();
    std::fs::write(
        &w.config,
        format!("Host web\n  SendEnv _XXX_TEST_B\n  SetEnv _XXX_TEST_A=x\n{cfg}"),
    )
    .unwrap();
    let out = w.run_env(&["web", show], b"", &env);
    assert_eq!(result(&out), (Some(0), "A=x B=2 T=\n".into()), "{out:?}");
}

#[test]
fn local_command_runs_only_when_permitted() {
    let Some(w) = start("localcmd", "") else {
        return;
    };
    let lc = "LocalCommand=printf '%%s\\n' %n %h %p";
    // Not permitted: not run (a note under -v says so).
    let out = w.run(&["-o", lc, "web", "echo", "remote"], b"");
    assert_eq!(result(&out), (Some(0), "remote\n".into()), "{out:?}");
    let out = w.run(&["-v", "-o", lc, "web", "true"], b"");
    assert!(text(&out.stderr).contains("PermitLocalCommand"), "{out:?}");
    // Permitted: run after connecting, its tokens expanded.
    let out = w.run(
        &[
            "-o",
            "PermitLocalCommand=yes",
            "-o",
            lc,
            "web",
            "echo",
            "remote",
        ],
        b"",
    );
    assert_eq!(
        result(&out),
        (Some(0), format!("web\n{IP}\n{}\nremote\n", w.port)),
        "{out:?}"
    );
}

#[test]
fn a_terminal_asked_without_one_warns_and_goes_on() {
    let Some(w) = start("tty", "") else {
        return;
    };
    const WARN: &str = "Pseudo-terminal will not be allocated because stdin is not a terminal.\n";
    let out = w.run(&["-t", "web", "test -t 0 && echo pty || echo none"], b"");
    assert_eq!(result(&out), (Some(0), "none\n".into()), "{out:?}");
    assert_eq!(text(&out.stderr), WARN, "{out:?}");
    // -q hides the warning; so does LogLevel QUIET.
    let out = w.run(&["-q", "-t", "web", "true"], b"");
    assert_eq!(
        (out.status.code(), text(&out.stderr)),
        (Some(0), String::new())
    );
    let out = w.run(&["-o", "LogLevel=QUIET", "-t", "web", "true"], b"");
    assert_eq!(
        (out.status.code(), text(&out.stderr)),
        (Some(0), String::new())
    );
    // RequestTTY force, from -o or ssh_config, is -tt; RequestTTY no, -T.
    let out = w.run(
        &[
            "-o",
            "RequestTTY=force",
            "web",
            "test -t 0 && echo pty || echo none",
        ],
        b"",
    );
    assert!(text(&out.stdout).contains("pty"), "{out:?}");
    let out = w.run(
        &["-o", "RequestTTY=no", "web"],
        b"test -t 0 && echo pty || echo none\n",
    );
    assert_eq!(
        (result(&out), text(&out.stderr)),
        ((Some(0), "none\n".into()), String::new())
    );
    // -tt: a terminal all the same.
    let out = w.run(&["-tt", "web", "test -t 0 && echo pty || echo none"], b"");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(text(&out.stdout).contains("pty"), "{out:?}");
    assert_eq!(text(&out.stderr), "", "{out:?}");
}

#[test]
fn options_accepted_with_a_note_or_refused_with_why() {
    let Some(w) = start("accept", "") else {
        return;
    };
    let harmless = [
        "Compression=yes",
        "TCPKeepAlive=no",
        "VisualHostKey=yes",
        "AddKeysToAgent=yes",
        "ForwardX11=no",
        "ControlMaster=no",
        "ControlPath=/tmp/%C",
        "ServerAliveInterval=30",
        "HostName=127.0.0.81",
    ];
    let mut args: Vec<&str> = Vec::new();
    for o in &harmless {
        args.extend(["-o", o]);
    }
    args.extend(["web", "echo", "in"]);
    let out = w.run(&args, b"");
    assert_eq!(result(&out), (Some(0), "in\n".into()), "{out:?}");
    assert_eq!(text(&out.stderr), "", "no notes without -v: {out:?}");
    let mut verbose = vec!["-v"];
    verbose.extend(&args);
    let out = w.run(&verbose, b"");
    let err = text(&out.stderr);
    for k in [
        "Compression",
        "TCPKeepAlive",
        "VisualHostKey",
        "AddKeysToAgent",
        "ControlPath",
    ] {
        assert!(
            err.contains(&format!("{k} ")) && err.contains("accepted, not applied"),
            "{k}: {err}"
        );
    }
    assert!(err.contains("connecting to"), "{err}");
    // Refused, with why and what to do instead; nothing connects.
    for (args, why) in [
        (vec!["-o", "ControlMaster=auto"], "one connection per host"),
        (vec!["-o", "ControlMaster yes"], "tether run --host"),
        (vec!["-M"], "one connection per host"),
        (vec!["-S", "/tmp/ctl"], "one connection per host"),
        (vec!["-O", "check"], "one connection per host"),
        (vec!["-o", "Tunnel=yes"], "Tunnel"),
        (vec!["-o", "ForwardX11=yes"], "X11"),
        (
            vec!["-o", "Host=x"],
            "not supported as a command-line option",
        ),
        (vec!["-o", "Bogus=1"], "not an OpenSSH option"),
    ] {
        let mut all = args.clone();
        all.extend(["web", "true"]);
        let out = w.run(&all, b"");
        assert_eq!(out.status.code(), Some(255), "{args:?}: {out:?}");
        assert!(text(&out.stderr).contains(why), "{args:?}: {out:?}");
    }
    // The same refusal from ssh_config names the file and line.
    let cfg = std::fs::read_to_string(&w.config).unwrap();
    std::fs::write(&w.config, format!("Host web\n  ControlMaster auto\n{cfg}")).unwrap();
    let out = w.run(&["web", "true"], b"");
    assert_eq!(out.status.code(), Some(255), "{out:?}");
    assert!(
        text(&out.stderr).contains(&format!("{}:2", w.config.display())),
        "{out:?}"
    );
}

/// `GlobalKnownHostsFile`: the host's key found there (and not in the
/// user's file) is trusted; without it the key is unknown.
#[test]
fn global_known_hosts_file_is_read() {
    let Some(w) = start("global-known", "") else {
        return;
    };
    let user_file = w.scratch.0.join("empty_known_hosts");
    std::fs::write(&user_file, "").unwrap();
    let global = w.scratch.0.join("known_hosts");
    let u = format!("UserKnownHostsFile={}", user_file.display());
    let out = w.run(&["-o", &u, "web", "echo", "in"], b"");
    assert_eq!(out.status.code(), Some(255), "{out:?}");
    let g = format!("GlobalKnownHostsFile={}", global.display());
    let out = w.run(&["-o", &u, "-o", &g, "web", "echo", "in"], b"");
    assert_eq!(result(&out), (Some(0), "in\n".into()), "{out:?}");
}
