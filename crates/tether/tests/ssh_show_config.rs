//! `tether ssh -G`: the resolved options in `ssh -G`'s format, without
//! connecting, compared with what OpenSSH's `ssh -G` prints for the same
//! configuration where they should agree: the user, host name and port,
//! `%` tokens and `${VAR}`/`~` in the keys that take them (OpenSSH's
//! percent test), `Include` inside `Host` and `Match` blocks, with their
//! own blocks not leaking into the including file (cfginclude), and the
//! output read back with `-F` gives the same (sshcfgparse).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::Command;

use tether_testkit::Scratch;

const TETHER: &str = env!("CARGO_BIN_EXE_tether");

/// `-G` output of `program` (`tether ssh` or `ssh`) for `args`.
fn g(program: &str, home: &Path, args: &[&str]) -> (Option<i32>, String) {
    let mut c = if program == "tether" {
        let mut c = Command::new(TETHER);
        c.arg("ssh");
        c
    } else {
        Command::new("ssh")
    };
    let out = c
        .arg("-G")
        .args(args)
        .env("HOME", home)
        .env("FOO", "bar")
        .env_remove("SSH_AUTH_SOCK")
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

/// The values of `key` in a `-G` text, one per line.
fn get(text: &str, key: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| l.strip_prefix(&format!("{key} ")))
        .map(str::to_owned)
        .collect()
}

fn have_ssh() -> bool {
    Command::new("ssh").arg("-V").output().is_ok()
}

#[test]
fn agrees_with_ssh_on_what_tether_reads() {
    if !have_ssh() {
        eprintln!("SKIPPED: no OpenSSH client to compare with");
        return;
    }
    let s = Scratch::new("show-agree");
    let cfg = s.0.join("config");
    std::fs::write(
        &cfg,
        "Host foo\n  HostName 127.0.0.1\n  User bob\n  Port 2222\n  \
         ControlPath /x/%%/%i/%h/%d/%L/%l/%n/%p/%r/%u/%C\n  IdentityAgent ~/agent.%h.${FOO}\n  \
         UserKnownHostsFile ~/.kh.%h.%p\n  LogLevel ERROR\n  SendEnv LANG LC_*\n  \
         StrictHostKeyChecking accept-new\n  ServerAliveInterval 5\n  ConnectTimeout 7\n  \
         TCPKeepAlive no\n  RequestTTY force\n  PermitLocalCommand yes\n  LocalCommand echo %h\n  \
         Compression yes\nHost *\n  User nobody-else\n  IPQoS cs1\n",
    )
    .unwrap();
    let c = cfg.to_str().unwrap();
    // ssh takes %d and ~ from the password database, tether from HOME:
    // the same here.
    let home = std::path::PathBuf::from(std::env::var("HOME").unwrap_or_default());
    for args in [
        vec!["-F", c, "foo"],
        vec!["-F", c, "-p", "2200", "-l", "carol", "foo"],
        vec!["-F", c, "dave@other"],
        vec!["-F", c, "FOO"],
        vec!["-F", c, "Mixed.Case.Example"],
        vec!["-F", c, "0:0:0::1"],
        vec!["-F", c, "-o", "TunnelDevice=3:4", "-o", "IPQoS=af21", "foo"],
    ] {
        let (tc, t) = g("tether", &home, &args);
        let (sc, o) = g("ssh", &home, &args);
        assert_eq!((tc, sc), (Some(0), Some(0)), "{args:?}\n{t}\n{o}");
        for key in [
            "host",
            "user",
            "hostname",
            "port",
            "controlpath",
            "identityagent",
            "userknownhostsfile",
            "loglevel",
            "sendenv",
            "stricthostkeychecking",
            "serveraliveinterval",
            "serveralivecountmax",
            "tcpkeepalive",
            "requesttty",
            "permitlocalcommand",
            "localcommand",
            "compression",
            "ipqos",
            "tunneldevice",
            "batchmode",
            "forwardagent",
        ] {
            if ["userknownhostsfile", "stricthostkeychecking"].contains(&key)
                && !args.contains(&"foo")
            {
                // Unset, the defaults differ: tether reads
                // /etc/ssh/ssh_known_hosts with ~/.ssh/known_hosts (ssh:
                // ~/.ssh/known_hosts2), and never asks (ssh: ask).
                continue;
            }
            let (tv, sv) = (get(&t, key), get(&o, key));
            let first = |v: &[String]| {
                v.first()
                    .map(|x| x.split(' ').next().unwrap_or_default().to_owned())
            };
            if key == "ipqos" {
                // ssh prints both classes; the first is the one given.
                assert_eq!(first(&tv), first(&sv), "{args:?} {key}");
            } else {
                assert_eq!(tv, sv, "{args:?} {key}\ntether:\n{t}\nssh:\n{o}");
            }
        }
    }
}

#[test]
fn includes_and_their_blocks_as_ssh() {
    let s = Scratch::new("show-include");
    let d = s.0.display().to_string();
    let main = s.0.join("ssh_config.i");
    std::fs::write(
        &main,
        format!(
            "Match host a\n\tHostname aa\n\nMatch host b # comment\n\tHostname bb\n\tInclude {d}/ssh_config.i.*\n\n\
             Match host c\n\tInclude {d}/ssh_config.i.*\n\tHostname cc\n\nMatch host m\n\tInclude {d}/ssh_config.i.* # comment\n\n\
             Host d\n\tHostname dd # comment\n\nHost e\n\tHostname ee\n\tInclude {d}/ssh_config.i.*\n\n\
             Host f\n\tInclude {d}/ssh_config.i.*\n\tHostname ff\n\nHost n\n\tInclude {d}/ssh_config.i.*\n"
        ),
    )
    .unwrap();
    std::fs::write(s.0.join("ssh_config.i.0"), "Match host xxxxxx\n").unwrap();
    std::fs::write(
        s.0.join("ssh_config.i.1"),
        "Match host a\n\tHostname aaa\n\nMatch host b\n\tHostname bbb\n\nMatch host c # comment\n\tHostname ccc\n\n\
         Host d # comment\n\tHostname ddd\n\nHost e\n\tHostname eee\n\nHost f\n\tHostname fff # comment\n",
    )
    .unwrap();
    std::fs::write(
        s.0.join("ssh_config.i.2"),
        "Match host a\n\tHostname aaaa\n\nMatch host b\n\tHostname bbbb\n\nMatch host c\n\tHostname cccc\n\n\
         Host d\n\tHostname dddd\n\nHost e\n\tHostname eeee\n\nHost f\n\tHostname ffff\n\nMatch all\n\tHostname xxxx\n",
    )
    .unwrap();
    let m = main.to_str().unwrap();
    let trial = |host: &str, want: &str| {
        let (code, out) = g("tether", &s.0, &["-F", m, host]);
        assert_eq!(code, Some(0), "{host}: {out}");
        assert_eq!(get(&out, "hostname"), [want], "{host}");
        if have_ssh() {
            let (_, o) = g("ssh", &s.0, &["-F", m, host]);
            assert_eq!(get(&o, "hostname"), [want], "ssh, {host}");
        }
    };
    for (h, want) in [
        ("a", "aa"),
        ("b", "bb"),
        ("c", "ccc"),
        ("d", "dd"),
        ("e", "ee"),
        ("f", "fff"),
        ("m", "xxxx"),
        ("n", "xxxx"),
        ("x", "x"),
    ] {
        trial(h, want);
    }
    // A mistake in an included file is one even where it never applies.
    std::fs::write(s.0.join("ssh_config.i.3"), "Hostname xxxx\n\tJunk\n").unwrap();
    for h in ["a", "x"] {
        let (code, _) = g("tether", &s.0, &["-F", m, h]);
        assert_eq!(code, Some(255), "{h}");
    }
    for i in 0..4 {
        std::fs::remove_file(s.0.join(format!("ssh_config.i.{i}"))).unwrap();
    }
    // A pattern that matches nothing is no error; an included file's
    // Host or Match does not change the including block.
    std::fs::write(&main, format!("Include {d}/ssh_config.i.*\nHostname aa\n")).unwrap();
    trial("a", "aa");
    std::fs::write(s.0.join("ssh_config.i.x"), "Match host x\n").unwrap();
    trial("a", "aa");
    std::fs::write(s.0.join("ssh_config.i.x"), "Host x\n").unwrap();
    trial("a", "aa");
    // An Include of itself ends, with an error.
    std::fs::write(&main, format!("Include {m}\n")).unwrap();
    assert_eq!(g("tether", &s.0, &["-F", m, "a"]).0, Some(255));
}

#[test]
fn its_output_reads_back_the_same_and_nothing_connects() {
    let s = Scratch::new("show-reparse");
    let cfg = s.0.join("config");
    std::fs::write(
        &cfg,
        "Host somehost\n  HostName nowhere.invalid\n  Port 2\n  SetEnv A=1 B=2\n  Ciphers -aes128*\n  MACs ^hmac-sha2-256\n",
    )
    .unwrap();
    let (code, first) = g("tether", &s.0, &["-F", cfg.to_str().unwrap(), "somehost"]);
    assert_eq!(code, Some(0), "{first}");
    assert_eq!(get(&first, "hostname"), ["nowhere.invalid"]);
    assert_eq!(get(&first, "setenv"), ["A=1 B=2"]);
    assert!(
        get(&first, "ciphers")[0]
            .split(',')
            .all(|c| !c.starts_with("aes128"))
    );
    assert!(get(&first, "macs")[0].starts_with("hmac-sha2-256,"));
    let again = s.0.join("config.1");
    std::fs::write(&again, &first).unwrap();
    let (code, second) = g("tether", &s.0, &["-F", again.to_str().unwrap(), "somehost"]);
    assert_eq!(code, Some(0), "{second}");
    assert_eq!(first, second);
    // Ports as ssh parses them.
    for bad in ["0", "65536", "131073", "2000blah", "blah2000"] {
        let (code, _) = g("tether", &s.0, &["-F", "none", "-p", bad, "h"]);
        assert_eq!(code, Some(2), "-p {bad}");
    }
    for good in ["1", "22", "65535"] {
        let (code, out) = g("tether", &s.0, &["-F", "none", "-p", good, "h"]);
        assert_eq!((code, get(&out, "port")), (Some(0), vec![good.to_owned()]));
    }
}

/// `Match exec`: run by the shell with its tokens expanded (OpenSSH's
/// percent test, matchexec), its block applying when it exits 0.
#[test]
fn match_exec_runs_with_its_tokens() {
    let s = Scratch::new("show-exec");
    let cfg = s.0.join("config");
    let out = s.0.join("actual");
    std::fs::write(
        &cfg,
        format!(
            "Host somehost\n  HostName 127.0.0.1\n  Port 2345\n\
             Match exec \"echo '%%/%h/%n/%p/%r' >{out}\"\n  User matched\n\
             Match exec false\n  Port 1\n",
            out = out.display()
        ),
    )
    .unwrap();
    let (code, text) = g(
        "tether",
        &s.0,
        &["-F", cfg.to_str().unwrap(), "remuser@somehost"],
    );
    assert_eq!(code, Some(0), "{text}");
    assert_eq!(
        std::fs::read_to_string(&out).unwrap(),
        "%/127.0.0.1/somehost/2345/remuser\n"
    );
    assert_eq!(get(&text, "user"), ["remuser"]);
    assert_eq!(get(&text, "port"), ["2345"]);
    let (_, text) = g("tether", &s.0, &["-F", cfg.to_str().unwrap(), "somehost"]);
    assert_eq!(get(&text, "user"), ["matched"]);
}

/// The user as ssh decides it (sshcfgparse, "user first match"): the first
/// of `-o User` and `-l` typed, else `user@`, else ssh_config's.
#[test]
fn the_first_user_given_wins_as_in_ssh() {
    let s = Scratch::new("show-user");
    let cfg = s.0.join("config");
    std::fs::write(&cfg, "Host *\n  User fromconfig\n").unwrap();
    let c = cfg.to_str().unwrap();
    for (args, want) in [
        (vec!["-F", c, "host"], "fromconfig"),
        (
            vec!["-F", c, "-o", "user=foo", "-l", "bar", "baz@host"],
            "foo",
        ),
        (
            vec!["-F", c, "-lbar", "baz@host", "user=foo", "baz@host"],
            "bar",
        ),
        (vec!["-F", c, "baz@host"], "baz"),
    ] {
        let (code, out) = g("tether", &s.0, &args);
        assert_eq!(
            (code, get(&out, "user")),
            (Some(0), vec![want.to_owned()]),
            "{args:?}"
        );
        if have_ssh() {
            let (_, o) = g("ssh", &s.0, &args);
            assert_eq!(get(&o, "user"), [want], "ssh {args:?}");
        }
    }
}

/// `proxyjump` as `ssh -G` prints it (OpenSSH's proxyjump test): the hops
/// as written, the last without `ssh://` and with its user and port only
/// when given; the first of ProxyJump and ProxyCommand wins; a hop with
/// shell characters is refused on the command line (255), not in a file.
#[test]
fn proxy_jump_as_ssh_prints_it_and_shell_characters_refused() {
    if !have_ssh() {
        eprintln!("SKIPPED: no OpenSSH client to compare with");
        return;
    }
    let s = Scratch::new("show-jump");
    let home = s.0.as_path();
    for spec in [
        "jump1",
        "user@jump1:2222",
        "jump1,jump2",
        "user1@jump1:2221,user2@jump2:2222",
        "ssh://user@host:2223",
        "10.0.0.1:22",
    ] {
        for args in [
            vec!["-F", "none", "-J", spec, "somehost"],
            vec!["-F", "none", "-o", &format!("ProxyJump={spec}"), "somehost"],
        ] {
            let (_, ours) = g("tether", home, &args);
            let (_, theirs) = g("ssh", home, &args);
            assert_eq!(
                get(&ours, "proxyjump"),
                get(&theirs, "proxyjump"),
                "{args:?}"
            );
        }
    }
    let both = [
        "-F",
        "none",
        "-o",
        "ProxyJump=jump",
        "-o",
        "ProxyCommand=foo",
        "h",
    ];
    let (_, out) = g("tether", home, &both);
    assert_eq!(
        (get(&out, "proxyjump"), get(&out, "proxycommand")),
        (vec!["jump".to_owned()], vec![])
    );
    let both = [
        "-F",
        "none",
        "-o",
        "ProxyCommand=foo",
        "-o",
        "ProxyJump=jump",
        "h",
    ];
    let (_, out) = g("tether", home, &both);
    assert_eq!(
        (get(&out, "proxyjump"), get(&out, "proxycommand")),
        (vec![], vec!["foo".to_owned()])
    );
    let none_first = [
        "-F",
        "none",
        "-o",
        "ProxyJump=none",
        "-o",
        "ProxyJump=j1",
        "h",
    ];
    assert!(get(&g("tether", home, &none_first).1, "proxyjump").is_empty());
    for bad in ["host;x", "host`x`", "host$x", "user(x)@host"] {
        let (code, _) = g("tether", home, &["-F", "none", "-J", bad, "h"]);
        assert_eq!(code, Some(255), "-J {bad}");
        let o = format!("ProxyJump={bad}");
        let (code, _) = g("tether", home, &["-F", "none", "-o", &o, "h"]);
        assert_eq!(code, Some(255), "-o {o}");
    }
    let cfg = s.0.join("config");
    std::fs::write(&cfg, "ProxyJump user;x@host;y\n").unwrap();
    let (code, out) = g("tether", home, &["-F", cfg.to_str().unwrap(), "h"]);
    assert_eq!(
        (code, get(&out, "proxyjump")),
        (Some(0), vec!["user;x@host;y".to_owned()])
    );
}
