//! The OpenSSH spellings `SshArgs` accepts, and what they become.

use std::path::PathBuf;
use std::time::Duration;

use clap::Parser;
use tether_cluster::config::Settings;
use tether_cluster::exec::Overrides;
use tether_ssh::HostKeyPolicy;

use super::*;

#[derive(Debug, Parser)]
struct Cmd {
    #[command(flatten)]
    ssh: SshArgs,
}

fn args(argv: &[&str]) -> SshArgs {
    Cmd::try_parse_from(std::iter::once("t").chain(argv.iter().copied()))
        .unwrap()
        .ssh
}

fn ov(argv: &[&str]) -> Result<Overrides> {
    overrides(&args(argv), Overrides::default(), &Settings::default())
}

#[test]
fn option_spellings() {
    for o in [
        "Port=2222",
        "Port 2222",
        "Port = 2222",
        "port\t2222",
        " PORT=2222 ",
        "Port \"2222\"",
    ] {
        assert_eq!(split_option(o).map(|(_, v)| v), Some("2222"), "{o:?}");
        assert_eq!(ov(&["-o", o]).unwrap().port, Some(2222), "{o:?}");
    }
    // The first `=` or blank ends the key; the value keeps the rest.
    assert_eq!(
        split_option("UserKnownHostsFile=/a /b"),
        Some(("UserKnownHostsFile", "/a /b"))
    );
    assert_eq!(split_option("Port"), None);
    let got = ov(&[
        "-o",
        "StrictHostKeyChecking accept-new",
        "-o",
        "UserKnownHostsFile=/a /b",
        "-o",
        "ConnectTimeout = 2.5",
        "-o",
        "ServerAliveCountMax=7",
        "-o",
        "IdentityAgent none",
        "-o",
        "Ciphers=aes128-ctr,aes256-ctr",
    ])
    .unwrap();
    assert_eq!(got.policy, Some(HostKeyPolicy::AcceptNew));
    assert_eq!(
        got.known_hosts,
        Some(vec![PathBuf::from("/a"), PathBuf::from("/b")])
    );
    assert_eq!(got.connect_timeout, Some(Duration::from_millis(2500)));
    assert_eq!(got.alive_max, Some(7));
    assert_eq!(got.agent, Some(None));
    assert_eq!(
        got.ciphers,
        Some(vec!["aes128-ctr".to_owned(), "aes256-ctr".to_owned()])
    );
}

#[test]
fn option_errors_are_clear() {
    let e = format!("{:#}", ov(&["-o", "ForwardAgnet=yes"]).unwrap_err());
    assert!(
        e.starts_with("-o ForwardAgnet: not an OpenSSH option tether knows"),
        "{e}"
    );
    // ssh_config's whole list: harmless ones are accepted and kept for
    // the resolution (notes under -v), service tether does not give is
    // refused with what to do instead.
    let got = ov(&[
        "-o",
        "Compression=yes",
        "-o",
        "SendEnv=LANG",
        "-o",
        "HostName=h2",
    ])
    .unwrap();
    assert_eq!(got.options.len(), 3);
    let e = format!("{:#}", ov(&["-o", "ControlMaster=auto"]).unwrap_err());
    assert!(e.contains("one connection per host"), "{e}");
    assert!(ov(&["-o", "ControlMaster=no"]).is_ok());
    let e = format!("{:#}", ov(&["-o", "Ciphers=3des-cbc"]).unwrap_err());
    assert!(e.contains("3des-cbc") && e.contains("aes256-ctr"), "{e}");
    assert!(
        ov(&["-o", "Ciphers=-aes128*"])
            .unwrap()
            .ciphers
            .is_some_and(|c| !c.is_empty() && c.iter().all(|c| !c.starts_with("aes128")))
    );
    // The same list as ssh_config: what concerns nothing tether does is
    // accepted, what would change where or what it trusts is refused.
    assert!(ov(&["-o", "ForwardAgent=yes", "-o", "ProxyCommand=none"]).is_ok());
    assert!(ov(&["-o", "ProxyCommand=nc %h %p"]).is_ok());
    let e = format!("{:#}", ov(&["-o", "BindAddress=127.0.0.9"]).unwrap_err());
    assert!(e.contains("does not choose the local address"), "{e}");
    let e = format!("{:#}", ov(&["-o", "Port=0"]).unwrap_err());
    assert!(e.contains("from 1 to 65535"), "{e}");
    assert!(Cmd::try_parse_from(["t", "-p", "0"]).is_err());
    let e = format!("{:#}", ov(&["-o", "BatchMode"]).unwrap_err());
    assert!(e.contains("write KEY=VALUE or \"KEY VALUE\""), "{e}");
    let e = format!(
        "{:#}",
        ov(&["-o", "StrictHostKeyChecking=maybe"]).unwrap_err()
    );
    assert!(e.contains("use yes, accept-new or no"), "{e}");
    let e = format!("{:#}", ov(&["-o", "Port=0x16"]).unwrap_err());
    assert!(e.contains("is not a port"), "{e}");
    let e = format!("{:#}", ov(&["-o", "ConnectTimeout=soon"]).unwrap_err());
    assert!(
        e.contains("ConnectTimeout must be a number of seconds"),
        "{e}"
    );
}

#[test]
fn identities_repeat_in_order() {
    let got = ov(&[
        "-i",
        "/k/one",
        "--identity",
        "/k/two",
        "-i=/k/three",
        "-o",
        "IdentityFile=/k/four",
    ])
    .unwrap();
    assert_eq!(
        got.identities,
        ["/k/one", "/k/two", "/k/three", "/k/four"].map(PathBuf::from)
    );
    let home = tether_ssh::config::expand_tilde("~/");
    assert_eq!(ov(&["-i", "~/k"]).unwrap().identities, [home.join("k")]);
}

#[test]
fn jump_lists() {
    let hops = |v: Option<Vec<String>>| v.map(|h| h.join("|"));
    assert_eq!(hops(ov(&["-J", "a"]).unwrap().jumps).as_deref(), Some("a"));
    assert_eq!(
        hops(ov(&["-J", "u@a:2200, b"]).unwrap().jumps).as_deref(),
        Some("u@a:2200|b")
    );
    assert_eq!(
        hops(ov(&["-o", "ProxyJump=a,b"]).unwrap().jumps).as_deref(),
        Some("a|b")
    );
    // `none` is no hop at all (ssh_config's jumps are not used either).
    assert_eq!(ov(&["-J", "none"]).unwrap().jumps, Some(Vec::new()));
    assert_eq!(
        ov(&["-o", "ProxyJump none"]).unwrap().jumps,
        Some(Vec::new())
    );
    assert_eq!(ov(&[]).unwrap().jumps, None);
}

#[test]
fn ssh_config_flag() {
    assert_eq!(ov(&["-F", "none"]).unwrap().config, None);
    assert_eq!(
        ov(&["-F", "/etc/other"]).unwrap().config,
        Some(PathBuf::from("/etc/other"))
    );
    assert_eq!(ssh_config_file(Some(std::path::Path::new("none"))), None);
    // Without -F: ~/.ssh/config, only when there is one.
    let default = tether_ssh::config::expand_tilde("~/.ssh/config");
    assert_eq!(ssh_config_file(None), default.is_file().then_some(default));
}

#[test]
fn flags_then_options_then_tether_config() {
    let settings = Settings {
        user: Some("cfg".into()),
        port: Some(2200),
        identity: Some("/k/cfg".into()),
        jump: Some("j1,j2".into()),
        connect_timeout: Some(4),
        strict_host_key_checking: Some("no".into()),
        ..Settings::default()
    };
    // -o wins over the flag it repeats; tether's config fills the rest.
    let got = overrides(
        &args(&["-l", "flag", "-o", "User=opt", "-i", "/k/flag"]),
        Overrides::default(),
        &settings,
    )
    .unwrap();
    assert_eq!(got.user.as_deref(), Some("opt"));
    assert_eq!(got.port, Some(2200));
    assert_eq!(got.identities, ["/k/flag", "/k/cfg"].map(PathBuf::from));
    assert_eq!(got.jumps, Some(vec!["j1".to_owned(), "j2".to_owned()]));
    assert_eq!(got.connect_timeout, Some(Duration::from_secs(4)));
    assert_eq!(got.policy, Some(HostKeyPolicy::No));
    // What the front-end set itself stays unless a flag or -o says more.
    let base = Overrides {
        connect_timeout: Some(Duration::from_secs(1)),
        ..Overrides::default()
    };
    let got = overrides(&args(&["-p", "22"]), base.clone(), &settings).unwrap();
    assert_eq!(
        (got.port, got.connect_timeout),
        (Some(22), Some(Duration::from_secs(1)))
    );
    let got = overrides(&args(&["-o", "ConnectTimeout=3"]), base, &settings).unwrap();
    assert_eq!(got.connect_timeout, Some(Duration::from_secs(3)));
}

#[test]
fn tether_config_is_above_ssh_config_and_flags_above_both() {
    let dir = std::env::temp_dir().join(format!("tether-ssh-opts-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("ssh_config");
    std::fs::write(&file, "Host *\n  User from-ssh-config\n  Port 2022\n").unwrap();
    let settings = Settings {
        user: Some("from-tether".into()),
        ..Settings::default()
    };
    let f = file.to_str().unwrap();
    let spec = tether_cluster::exec::HostSpec::parse("web1").unwrap();
    let target = |argv: &[&str]| {
        let ov = overrides(&args(argv), Overrides::default(), &settings).unwrap();
        tether_cluster::exec::resolve(&spec, &ov, false).unwrap().0
    };
    let t = target(&["-F", f]);
    assert_eq!((t.user.as_str(), t.port), ("from-tether", 2022));
    let t = target(&["-F", f, "-l", "flag", "-p", "23"]);
    assert_eq!((t.user.as_str(), t.port), ("flag", 23));
    let t = target(&["-F", "none"]);
    assert_eq!((t.user.as_str(), t.port), ("from-tether", 22));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The same flags in `tether exec` (`-p PORT`, as ssh) and `tether cp`
/// (`-P PORT`, as scp, where `-p` keeps modes and times).
#[test]
fn exec_takes_the_port_as_ssh_does_and_cp_as_scp_does() {
    use crate::cli::{Cli, Command};
    let parse = |argv: &[&str]| {
        Cli::try_parse_from(std::iter::once("tether").chain(argv.iter().copied())).unwrap()
    };
    let Command::Exec(exec) =
        parse(&["exec", "-p", "2222", "-l", "u", "-H", "h", "--", "true"]).command
    else {
        panic!("not exec")
    };
    assert_eq!(
        (exec.ssh.port, exec.ssh.user.as_deref()),
        (Some(2222), Some("u"))
    );
    let Command::Cp(cp) = parse(&["cp", "-p", "-P", "2222", "-l", "u", "a", "h:b"]).command else {
        panic!("not cp")
    };
    assert!(cp.preserve);
    assert_eq!(
        (cp.ssh.port, cp.ssh.user.as_deref()),
        (Some(2222), Some("u"))
    );
    assert!(
        Cli::try_parse_from(["tether", "cp", "-p", "2222", "a", "h:b"]).is_ok_and(|c| {
            matches!(c.command, Command::Cp(cp) if cp.preserve && cp.ssh.port.is_none())
        })
    );
}
