//! Which OpenSSH client directives tether applies, which it may leave
//! unapplied without changing anything it does, and which it refuses: one
//! list for ssh_config files and for `-o` on the command line.
//!
//! The rule: a directive that changes *where* tether connects (the
//! address, the route, the source), *how* (the algorithms offered, the
//! authentication methods), *as whom* (certificates, tokens) or *what it
//! trusts* (host key checks) is never ignored in silence. Until tether
//! applies it, it is refused with the file, the line and the directive
//! (`-o`: the option), before anything connects. A directive whose value
//! asks for what tether does anyway (`VerifyHostKeyDNS no`) is accepted.
//!
//! The directives accepted without being applied concern what tether does
//! not do at all (forwardings, X11 details, logging, compression):
//! leaving them out changes neither the host reached, nor the user, nor
//! the trust; `tether ssh -v` prints a note for each ([`note`]). A
//! directive that asks for a service tether does not give (`ControlMaster
//! yes`, `Tunnel yes`, `ForwardX11 yes`) is refused with what to do
//! instead. The README lists them. `-o` goes through the same list: its
//! options are read as ssh_config lines before the files
//! (`config::resolve_with`).

/// What tether does with one directive.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Treatment {
    /// Read and applied (see `config::resolve`).
    Applied,
    /// Not applied, and harmless to leave out for what tether does.
    Harmless,
    /// Not applied, and it would change where, how or as whom tether
    /// connects or what it trusts: refused, with why.
    Refused(&'static str),
}

/// The directives `config::resolve` applies (lower case).
const APPLIED: &[&str] = &[
    "host",
    "match",
    "include",
    "hostname",
    "user",
    "port",
    "identityfile",
    "identitiesonly",
    "identityagent",
    "proxyjump",
    "userknownhostsfile",
    "stricthostkeychecking",
    "connecttimeout",
    "addressfamily",
    "serveraliveinterval",
    "serveralivecountmax",
    "ciphers",
    "kexalgorithms",
    "setenv",
    "sendenv",
    "passwordauthentication",
    "kbdinteractiveauthentication",
    "challengeresponseauthentication",
    "batchmode",
    "ignoreunknown",
    "preferredauthentications",
    "proxycommand",
    "hostkeyalias",
    "knownhostscommand",
    "hashknownhosts",
    "certificatefile",
    "forwardagent",
    "macs",
    "hostkeyalgorithms",
    "pubkeyacceptedalgorithms",
    "pubkeyacceptedkeytypes",
    // Read by `tether ssh` (the other front-ends decide these themselves).
    "permitlocalcommand",
    "localcommand",
    // Refused by exec, cp and shell (`exec::resolve`).
    "remotecommand",
    "loglevel",
    "requesttty",
    "stdinnull",
    "escapechar",
    "identityfile2",
    "globalknownhostsfile",
    "localforward",
    "remoteforward",
    "dynamicforward",
    "clearallforwardings",
    "exitonforwardfailure",
    "gatewayports",
    "forkafterauthentication",
    "permitremoteopen",
    "streamlocalbindmask",
    "streamlocalbindunlink",
];

/// Directives tether does not apply and may leave out: they concern what
/// tether does not do (forwardings, X11, the agent forwarded, local
/// commands, the escape character, logging, connection sharing,
/// compression, known_hosts upkeep) or only matter together with a
/// directive tether refuses (`Canonical*` without `CanonicalizeHostname`,
/// `GSSAPI*` without `GSSAPIAuthentication`); and the deprecated ones OpenSSH itself ignores.
const HARMLESS: &[&str] = &[
    // Forwardings and tunnels tether does not open (`tether ssh` applies
    // LocalForward, RemoteForward, DynamicForward and their options).
    "forwardx11trusted",
    "forwardx11timeout",
    "xauthlocation",
    "tunneldevice",
    // The session and the local side: tether decides these itself.
    "enableescapecommandline",
    "logverbose",
    "syslogfacility",
    "visualhostkey",
    "fingerprinthash",
    "obscurekeystroketiming",
    "channeltimeout",
    "numberofpasswordprompts",
    "kbdinteractivedevices",
    "connectionattempts",
    // Connection sharing: each tether connection is its own.
    "controlpath",
    "controlpersist",
    // Transport details that do not change whom tether reaches or trusts.
    "compression",
    "compressionlevel",
    "tcpkeepalive",
    "ipqos",
    "rekeylimit",
    "requiredrsasize",
    // known_hosts upkeep and the agent: tether writes only what
    // StrictHostKeyChecking=accept-new learns.
    // OpenSSH's own default (9.2): no; tether does as with no.
    "checkhostip",
    // Accepted and not done: tether never rewrites known_hosts from
    // what a server announces.
    // TODO(options): a note under -v ("UpdateHostKeys is ignored").
    "updatehostkeys",
    "addkeystoagent",
    "usekeychain",
    // Only read together with a directive refused below.
    "canonicaldomains",
    "canonicalizefallbacklocal",
    "canonicalizemaxdots",
    "canonicalizepermittedcnames",
    "gssapiclientidentity",
    "gssapidelegatecredentials",
    "gssapikeyexchange",
    "gssapirenewalforceskeyx",
    "gssapiserveridentity",
    "gssapitrustdns",
    "gssapikexalgorithms",
    "hostbasedacceptedalgorithms",
    "hostbasedkeytypes",
    "securitykeyprovider",
    "tag",
    // Deprecated; OpenSSH ignores them too.
    "protocol",
    "cipher",
    "useroaming",
    "rsaauthentication",
    "rhostsrsaauthentication",
    "useprivilegedport",
    "fallbacktorsh",
    "usersh",
    "afstokenpassing",
    "dsaauthentication",
    "enablesshkeysign",
    "globalknownhostsfile2",
    "userknownhostsfile2",
    "keepalive",
    "kerberosauthentication",
    "kerberostgtpassing",
    "rhostsauthentication",
    "skeyauthentication",
    "smartcarddevice",
    "tisauthentication",
    // Newer than the machine's OpenSSH: messages only.
    "warnweakcrypto",
];

/// Why a directive accepted without being applied changes nothing tether
/// does (the note `-v` prints).
pub fn note(key: &str) -> &'static str {
    match key {
        "forwardx11trusted" | "forwardx11timeout" | "xauthlocation" | "tunneldevice" => {
            "it only matters with ForwardX11 or Tunnel, which tether refuses"
        }
        "controlpath" | "controlpersist" => {
            "it only matters with ControlMaster, which tether refuses; each `tether ssh` makes its own connection"
        }
        "compression"
        | "compressionlevel"
        | "tcpkeepalive"
        | "keepalive"
        | "ipqos"
        | "rekeylimit"
        | "requiredrsasize"
        | "connectionattempts"
        | "channeltimeout"
        | "obscurekeystroketiming" => {
            "a transport detail; tether keeps russh's behaviour, the host and the trust are the same"
        }
        "logverbose" | "syslogfacility" | "visualhostkey" | "fingerprinthash"
        | "warnweakcrypto" => "it shapes ssh's own messages; tether prints its own",
        "hashknownhosts" | "updatehostkeys" | "addkeystoagent" | "usekeychain" => {
            "known_hosts upkeep or the agent's keys; tether writes only what StrictHostKeyChecking=accept-new learns"
        }
        "protocol"
        | "cipher"
        | "useroaming"
        | "rsaauthentication"
        | "rhostsrsaauthentication"
        | "useprivilegedport"
        | "fallbacktorsh"
        | "usersh"
        | "afstokenpassing"
        | "dsaauthentication"
        | "globalknownhostsfile2"
        | "userknownhostsfile2"
        | "kerberosauthentication"
        | "kerberostgtpassing"
        | "rhostsauthentication"
        | "skeyauthentication"
        | "smartcarddevice"
        | "tisauthentication" => "deprecated; OpenSSH ignores it too",
        "sessiontype"
        | "forkafterauthentication"
        | "enableescapecommandline"
        | "numberofpasswordprompts"
        | "kbdinteractivedevices" => "tether decides this for the session itself",
        _ => "it only matters together with a directive tether refuses or does not turn on",
    }
}

/// `LogLevel`'s levels, quietest first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum LogLevel {
    /// `QUIET`: nothing but what was asked for.
    Quiet,
    /// `FATAL`.
    Fatal,
    /// `ERROR`.
    Error,
    /// `INFO` (the default).
    Info,
    /// `VERBOSE`.
    Verbose,
    /// `DEBUG`, `DEBUG1` .. `DEBUG3`.
    Debug,
}

/// `LogLevel VALUE`.
pub fn log_level(value: &str) -> Result<LogLevel, String> {
    Ok(match value.to_ascii_uppercase().as_str() {
        "QUIET" => LogLevel::Quiet,
        "FATAL" => LogLevel::Fatal,
        "ERROR" => LogLevel::Error,
        "INFO" => LogLevel::Info,
        "VERBOSE" => LogLevel::Verbose,
        "DEBUG" | "DEBUG1" | "DEBUG2" | "DEBUG3" => LogLevel::Debug,
        _ => {
            return Err(format!(
                "LogLevel {value}: use QUIET, FATAL, ERROR, INFO, VERBOSE or DEBUG"
            ));
        }
    })
}

/// `RequestTTY`'s values (`-t`, `-tt`, `-T`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RequestTty {
    /// `no` (`-T`).
    No,
    /// `yes` (`-t`): when stdin is a terminal.
    Yes,
    /// `force` (`-tt`).
    Force,
    /// `auto`: for a login session.
    Auto,
}

/// `RequestTTY VALUE`.
pub fn request_tty(value: &str) -> Result<RequestTty, String> {
    Ok(match value.to_ascii_lowercase().as_str() {
        "no" | "false" => RequestTty::No,
        "yes" | "true" => RequestTty::Yes,
        "force" => RequestTty::Force,
        "auto" => RequestTty::Auto,
        _ => return Err(format!("RequestTTY {value}: use yes, no, force or auto")),
    })
}

impl Treatment {
    /// A value accepted by `unless` is applied, not left out.
    fn applied(self) -> Treatment {
        match self {
            Treatment::Harmless => Treatment::Applied,
            other => other,
        }
    }
}

/// `PreferredAuthentications` as tether can follow it: whether it allows
/// passwords (`password` or `keyboard-interactive` listed); an error when
/// its order is not tether's (public keys, then a password, then
/// keyboard-interactive). `gssapi-with-mic` and `hostbased` are passed
/// over: tether does not do them (their own directives are refused when
/// turned on).
pub fn preferred_authentications(value: &str) -> Result<bool, String> {
    const ORDER: &[&str] = &["publickey", "password", "keyboard-interactive"];
    let mut at = 0;
    let mut passwords = false;
    for m in value.split(',').map(str::trim).filter(|m| !m.is_empty()) {
        let m = m.to_ascii_lowercase();
        if m == "gssapi-with-mic" || m == "hostbased" {
            continue;
        }
        let Some(i) = ORDER.iter().position(|o| *o == m) else {
            return Err(format!(
                "PreferredAuthentications: {m} is not a method tether knows"
            ));
        };
        if i < at {
            return Err(format!(
                "PreferredAuthentications {value}: tether tries public keys, then a password, then keyboard-interactive, in that order; list them so (or leave some out)"
            ));
        }
        at = i;
        passwords |= i > 0;
    }
    Ok(passwords)
}

/// What tether does with the directive `key` (any case) set to `value`;
/// `None`: not a directive tether knows.
pub fn treatment(key: &str, value: &str) -> Option<Treatment> {
    let key = key.to_ascii_lowercase();
    let v = value.trim().to_ascii_lowercase();
    if APPLIED.contains(&key.as_str()) {
        return Some(Treatment::Applied);
    }
    if HARMLESS.contains(&key.as_str()) {
        return Some(Treatment::Harmless);
    }
    let unless = |fine: &[&str], why: &'static str| {
        if fine.contains(&v.as_str()) {
            Treatment::Harmless
        } else {
            Treatment::Refused(why)
        }
    };
    let refused = match key.as_str() {
        // The session and the forwards (`tether ssh`).
        "sessiontype" => unless(
            &["none", "default"],
            "tether does not start subsystems (SessionType subsystem)",
        )
        .applied(),
        // Where.
        "proxyusefdpass" => unless(
            &["no", "false"],
            "tether talks through the ProxyCommand's stdin and stdout and does not take a connection it passes back",
        ),
        "bindaddress" | "bindinterface" => {
            Treatment::Refused("tether does not choose the local address")
        }
        "canonicalizehostname" => unless(
            &["no", "false"],
            "tether does not canonicalize host names and would reach another name",
        ),
        "refuseconnection" => unless(&["no", "false"], "it forbids this connection"),
        // What it trusts.
        "revokedhostkeys" => unless(
            &["none"],
            "tether does not read a RevokedHostKeys file and would accept a key it revokes",
        ),
        "verifyhostkeydns" => unless(&["no", "false"], "tether does not look host keys up in DNS"),
        "nohostauthenticationforlocalhost" => unless(
            &["no", "false"],
            "tether checks every host's key, localhost's too",
        ),
        "casignaturealgorithms" => {
            Treatment::Refused("tether does not choose the algorithms of certificate authorities")
        }
        // Connection sharing, tunnels, X11: tether does not serve them.
        "controlmaster" => unless(
            &["no", "false"],
            "tether does not share connections through a control socket (ControlMaster); tether's daemon already keeps one connection per host for `tether run --host` and `tether shell`: use those, or ControlMaster no",
        ),
        "tunnel" => unless(
            &["no", "false"],
            "tether does not open tun/tap tunnels (Tunnel); use a VPN, or Tunnel no",
        ),
        "forwardx11" => unless(
            &["no", "false"],
            "tether does not forward X11 (ForwardX11); use ForwardX11 no, or OpenSSH's ssh -X",
        ),
        // How and as whom.
        "pubkeyauthentication" => unless(&["yes", "true"], "tether always tries keys"),
        "hostbasedauthentication" => unless(
            &["no", "false"],
            "tether does not do host-based authentication",
        ),
        "gssapiauthentication" => unless(
            &["no", "false"],
            "tether does not do GSSAPI (Kerberos) authentication",
        ),
        "pkcs11provider" => unless(&["none"], "tether does not use PKCS#11 tokens"),
        _ => return None,
    };
    Some(refused)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_directive_has_one_treatment() {
        assert_eq!(treatment("ProxyCommand", "none"), Some(Treatment::Applied));
        assert_eq!(
            treatment("ProxyCommand", "nc %h %p"),
            Some(Treatment::Applied)
        );
        assert_eq!(treatment("hostkeyalias", "x"), Some(Treatment::Applied));
        assert_eq!(treatment("CheckHostIP", "yes"), Some(Treatment::Harmless));
        assert_eq!(treatment("LocalForward", "1 a:2"), Some(Treatment::Applied));
        assert_eq!(treatment("Port", "22"), Some(Treatment::Applied));
        assert_eq!(treatment("SessionType", "none"), Some(Treatment::Applied));
        assert!(matches!(
            treatment("SessionType", "subsystem"),
            Some(Treatment::Refused(_))
        ));
        assert_eq!(
            treatment("PermitRemoteOpen", "localhost:80"),
            Some(Treatment::Applied)
        );
        assert_eq!(treatment("Prot", "22"), None);
        assert_eq!(
            preferred_authentications("gssapi-with-mic,publickey"),
            Ok(false)
        );
        assert_eq!(
            preferred_authentications("publickey,keyboard-interactive"),
            Ok(true)
        );
        assert!(preferred_authentications("password,publickey").is_err());
        for k in APPLIED {
            assert!(!HARMLESS.contains(k), "{k}");
        }
        for k in [
            "localcommand",
            "loglevel",
            "stdinnull",
            "macs",
            "hostkeyalgorithms",
        ] {
            assert_eq!(treatment(k, "x"), Some(Treatment::Applied), "{k}");
        }
        assert!(matches!(
            treatment("ControlMaster", "auto"),
            Some(Treatment::Refused(_))
        ));
        assert_eq!(treatment("ControlMaster", "no"), Some(Treatment::Harmless));
    }
}
