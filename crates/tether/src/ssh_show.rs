//! `tether ssh -G`: the options resolved for a destination, printed as
//! `ssh -G` prints them (a lower-case key, a space, the value; OpenSSH's
//! order), then exit 0 without connecting. The keys tether applies show
//! what tether will do (the user, host, port, keys, known_hosts files,
//! algorithms it will offer); the keys it accepts without applying show
//! the value given, else OpenSSH's default, so that the output read back
//! with `-F` gives the same. Keys whose every value tether refuses
//! (`CASignatureAlgorithms`) are left out unless the configuration sets
//! them, and so is `GlobalKnownHostsFile`
//! (tether's default is /etc/ssh/ssh_known_hosts, in
//! `userknownhostsfile`).

use std::fmt::Write as _;

use tether_cluster::exec::{self, HostSpec, Overrides};
use tether_ssh::config::HostConfig;
use tether_ssh::{ConnectOptions, HostKeyPolicy, Target};

/// OpenSSH's keys in `ssh -G`'s order, each with its default (`None`:
/// printed only when set).
const KEYS: &[(&str, Option<&str>)] = &[
    ("addressfamily", Some("any")),
    ("batchmode", Some("no")),
    ("canonicalizefallbacklocal", Some("yes")),
    ("canonicalizehostname", Some("false")),
    ("checkhostip", Some("no")),
    ("compression", Some("no")),
    ("controlmaster", Some("false")),
    ("enablesshkeysign", Some("no")),
    ("clearallforwardings", Some("no")),
    ("exitonforwardfailure", Some("no")),
    ("fingerprinthash", Some("SHA256")),
    ("forwardx11", Some("no")),
    ("forwardx11trusted", Some("yes")),
    ("gatewayports", Some("no")),
    ("gssapiauthentication", Some("no")),
    ("hashknownhosts", Some("no")),
    ("hostbasedauthentication", Some("no")),
    ("identitiesonly", None),
    ("kbdinteractiveauthentication", None),
    ("nohostauthenticationforlocalhost", Some("no")),
    ("passwordauthentication", None),
    ("permitlocalcommand", Some("no")),
    ("proxyusefdpass", Some("no")),
    ("pubkeyauthentication", Some("true")),
    ("requesttty", Some("auto")),
    ("sessiontype", Some("default")),
    ("stdinnull", Some("no")),
    ("forkafterauthentication", Some("no")),
    ("streamlocalbindunlink", Some("no")),
    ("stricthostkeychecking", None),
    ("tcpkeepalive", Some("yes")),
    ("tunnel", Some("false")),
    ("verifyhostkeydns", Some("false")),
    ("visualhostkey", Some("no")),
    ("updatehostkeys", Some("true")),
    ("enableescapecommandline", Some("no")),
    ("canonicalizemaxdots", Some("1")),
    ("connectionattempts", Some("1")),
    ("forwardx11timeout", Some("1200")),
    ("numberofpasswordprompts", Some("3")),
    ("serveralivecountmax", None),
    ("serveraliveinterval", None),
    ("requiredrsasize", Some("1024")),
    ("bindaddress", None),
    ("bindinterface", None),
    ("ciphers", None),
    ("controlpath", None),
    ("hostkeyalgorithms", None),
    ("hostkeyalias", None),
    ("hostbasedacceptedalgorithms", None),
    ("identityagent", None),
    ("ignoreunknown", None),
    ("kbdinteractivedevices", None),
    ("kexalgorithms", None),
    ("casignaturealgorithms", None),
    ("localcommand", None),
    ("remotecommand", None),
    ("loglevel", Some("INFO")),
    ("macs", None),
    ("pkcs11provider", None),
    ("securitykeyprovider", Some("internal")),
    ("preferredauthentications", None),
    ("pubkeyacceptedalgorithms", None),
    ("revokedhostkeys", None),
    ("xauthlocation", Some("/usr/bin/xauth")),
    ("knownhostscommand", None),
    ("dynamicforward", None),
    ("localforward", None),
    ("remoteforward", None),
    ("identityfile", None),
    ("canonicaldomains", Some("none")),
    ("certificatefile", None),
    ("globalknownhostsfile", None),
    ("userknownhostsfile", None),
    ("sendenv", None),
    ("setenv", None),
    ("logverbose", Some("none")),
    ("permitremoteopen", Some("any")),
    ("addkeystoagent", Some("false")),
    ("forwardagent", Some("no")),
    ("connecttimeout", None),
    ("tunneldevice", Some("any:any")),
    ("canonicalizepermittedcnames", Some("none")),
    ("controlpersist", Some("no")),
    ("escapechar", Some("~")),
    ("ipqos", Some("lowdelay throughput")),
    ("rekeylimit", Some("0 0")),
    ("streamlocalbindmask", Some("0177")),
    ("syslogfacility", Some("USER")),
    ("proxycommand", None),
    ("proxyjump", None),
];

/// Keys whose values take `%` tokens, `${VAR}` and `~` (as `ssh -G`
/// prints them expanded).
const EXPANDED: &[&str] = &[
    "controlpath",
    "identityagent",
    "forwardagent",
    "localforward",
    "remoteforward",
    "remotecommand",
];

/// The keys the command line decides as well as ssh_config, as `-G`
/// prints them: `proxyjump` (the hops as written, the last one as ssh
/// normalises it: no `ssh://`, the user and port only when given) or
/// `proxycommand`, whichever wins (see [`exec::route`]), and
/// `forwardagent` (`-o`, then `-A`/`-a` as `agent`, then ssh_config).
pub fn command_line_keys(
    ov: &Overrides,
    cfg: &HostConfig,
    agent: Option<bool>,
) -> Vec<(&'static str, String)> {
    let (hops, command) = exec::route(ov, cfg, false);
    let jump = match hops.split_last() {
        None => String::new(),
        Some((last, rest)) => {
            let last = HostSpec::parse(last).map_or_else(|_| last.clone(), |s| s.jump_text());
            rest.iter()
                .cloned()
                .chain(std::iter::once(last))
                .collect::<Vec<_>>()
                .join(",")
        }
    };
    let agent = ov
        .forward_agent
        .clone()
        .or_else(|| agent.map(|a| yes(a).to_owned()))
        .or_else(|| cfg.forward_agent.clone())
        .unwrap_or_else(|| "no".to_owned());
    vec![
        ("proxyjump", jump),
        ("proxycommand", command.unwrap_or_default()),
        ("forwardagent", agent),
    ]
}

/// The `-o` values `-G` prints as typed (tokens expanded) that the
/// front-end takes out of ssh_config's way: `IdentityAgent` (the first)
/// and every `LocalForward` and `RemoteForward`, followed by ssh_config's
/// own (`cfg`), as ssh lists them. Read before the options are taken.
pub fn typed_options(options: &[String], cfg: &HostConfig) -> Vec<(&'static str, String)> {
    let mut out: Vec<(&'static str, String)> = Vec::new();
    for o in options {
        let Some((k, v)) = crate::ssh_opts::split_option(o) else {
            continue;
        };
        let key = match k.to_ascii_lowercase().as_str() {
            "identityagent" if !out.iter().any(|(k, _)| *k == "identityagent") => "identityagent",
            "localforward" => "localforward",
            "remoteforward" => "remoteforward",
            _ => continue,
        };
        out.push((key, v.to_owned()));
    }
    for key in ["localforward", "remoteforward"] {
        if out.iter().any(|(k, _)| *k == key) {
            out.extend(cfg.all_values(key).map(|v| (key, v.to_owned())));
        }
    }
    out
}

fn yes(b: bool) -> &'static str {
    if b { "yes" } else { "no" }
}

/// The `-G` text for `host_arg` (the destination as typed), from what
/// tether resolved.
/// `decided`: keys whose value the front-end decided from flags and `-o`
/// as well as ssh_config (the forwarding keys), printed as given.
pub fn render(
    host_arg: &str,
    cfg: &HostConfig,
    target: &Target,
    opts: &ConnectOptions,
    decided: &[(&str, String)],
) -> String {
    let mut out = String::new();
    let mut line = |k: &str, v: &str| {
        let _ = writeln!(out, "{k} {v}");
    };
    line("host", host_arg);
    line("user", &target.user);
    line("hostname", &target.hostname);
    line("port", &target.port.to_string());
    let expand = |k: &str, v: &str| -> String {
        if !EXPANDED.contains(&k) || matches!(v, "yes" | "no" | "none") {
            return v.to_owned();
        }
        let v = if k == "remotecommand" {
            v.to_owned()
        } else {
            tether_ssh::percent::env_vars(&tether_ssh::percent::tilde(v))
                .unwrap_or_else(|_| v.to_owned())
        };
        v.split(' ')
            .map(|w| cfg.tokens.expand(w, &[]).unwrap_or_else(|_| w.to_owned()))
            .collect::<Vec<_>>()
            .join(" ")
    };
    for (key, default) in KEYS {
        let key = *key;
        let decided: Vec<String> = decided
            .iter()
            .filter(|(k, _)| *k == key)
            .map(|(_, v)| expand(key, v))
            .collect();
        let decided = (!decided.is_empty()).then_some(decided);
        let applied: Option<Vec<String>> = match key {
            _ if decided.is_some() => decided,
            "addressfamily" => Some(vec![opts.address_family.as_str().into()]),
            "batchmode" => Some(vec![yes(opts.secrets.is_none()).into()]),
            "identitiesonly" => Some(vec![yes(opts.identities_only).into()]),
            "kbdinteractiveauthentication" | "passwordauthentication" => {
                Some(vec![yes(opts.passwords).into()])
            }
            "stricthostkeychecking" => Some(vec![
                match opts.policy {
                    HostKeyPolicy::Yes => "true",
                    HostKeyPolicy::AcceptNew => "accept-new",
                    HostKeyPolicy::No => "false",
                }
                .into(),
            ]),
            "serveralivecountmax" => Some(vec![opts.keepalive.map_or(3, |(_, m)| m).to_string()]),
            "serveraliveinterval" => Some(vec![
                opts.keepalive.map_or(0, |(i, _)| i.as_secs()).to_string(),
            ]),
            "ciphers" => Some(vec![
                opts.ciphers
                    .clone()
                    .unwrap_or_else(|| {
                        tether_ssh::algorithms::defaults(tether_ssh::algorithms::Kind::Cipher)
                    })
                    .join(","),
            ]),
            "kexalgorithms" => Some(vec![
                opts.kex
                    .clone()
                    .unwrap_or_else(|| {
                        tether_ssh::algorithms::defaults(tether_ssh::algorithms::Kind::Kex)
                    })
                    .join(","),
            ]),
            "macs" => Some(vec![
                opts.macs
                    .clone()
                    .unwrap_or_else(|| {
                        tether_ssh::algorithms::defaults(tether_ssh::algorithms::Kind::Mac)
                    })
                    .join(","),
            ]),
            "hostkeyalgorithms" => Some(vec![
                opts.host_key_algorithms
                    .clone()
                    .unwrap_or_else(|| {
                        tether_ssh::algorithms::defaults(tether_ssh::algorithms::Kind::HostKey)
                    })
                    .join(","),
            ]),
            "pubkeyacceptedalgorithms" => Some(vec![
                opts.pubkey_algorithms
                    .clone()
                    .unwrap_or_else(tether_ssh::pubkey_algorithms::defaults)
                    .join(","),
            ]),
            "identityfile" => Some(
                opts.identities
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect(),
            ),
            // The user's files: the global ones tether reads after them
            // are `globalknownhostsfile`'s (printed again, they would be
            // read twice).
            "userknownhostsfile" => Some(vec![
                opts.known_hosts
                    .iter()
                    .take(
                        opts.known_hosts.len()
                            - cfg.global_known_hosts.as_ref().map_or(0, |g| {
                                g.len().min(opts.known_hosts.len().saturating_sub(1))
                            }),
                    )
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(" "),
            ]),
            "identityagent" => cfg.value("identityagent").map(|_| {
                vec![
                    opts.agent
                        .as_ref()
                        .map_or_else(|| "none".to_owned(), |p| p.display().to_string()),
                ]
            }),
            "connecttimeout" => Some(vec![opts.connect_timeout.as_secs().to_string()]),
            "setenv" => (!cfg.set_env.is_empty()).then(|| {
                vec![
                    cfg.set_env
                        .iter()
                        .map(|(k, v)| format!("{k}={v}"))
                        .collect::<Vec<_>>()
                        .join(" "),
                ]
            }),
            "sendenv" => Some(cfg.send_env.clone()),
            "globalknownhostsfile" => cfg.global_known_hosts.as_ref().map(|g| {
                vec![
                    g.iter()
                        .map(|p| p.display().to_string())
                        .collect::<Vec<_>>()
                        .join(" "),
                ]
            }),
            "loglevel" => cfg.value("loglevel").map(|v| vec![v.to_ascii_uppercase()]),
            _ => None,
        };
        let values: Vec<String> = match applied {
            Some(v) => v,
            None => {
                let given: Vec<String> = cfg.all_values(key).map(|v| expand(key, v)).collect();
                if given.is_empty() {
                    default.map(|d| vec![d.to_owned()]).unwrap_or_default()
                } else {
                    given
                }
            }
        };
        for v in values.iter().filter(|v| !v.is_empty()) {
            line(key, v);
        }
    }
    out
}
