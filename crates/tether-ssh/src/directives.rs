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
//! asks for what tether does anyway (`ProxyCommand none`,
//! `CheckHostIP no`) is accepted.
//!
//! The directives accepted without being applied concern what tether does
//! not do at all (forwardings, the local terminal, logging, connection
//! sharing, compression): leaving them out changes neither the host
//! reached, nor the user, nor the trust. The README lists them.

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
/// `GSSAPI*` without `GSSAPIAuthentication`, `ProxyUseFdpass` without
/// `ProxyCommand`); and the deprecated ones OpenSSH itself ignores.
const HARMLESS: &[&str] = &[
    // Forwardings and tunnels tether does not open (`tether ssh` applies
    // LocalForward, RemoteForward, DynamicForward and their options).
    "forwardagent",
    "forwardx11",
    "forwardx11trusted",
    "forwardx11timeout",
    "xauthlocation",
    "tunnel",
    "tunneldevice",
    // The session and the local side: tether decides these itself.
    "requesttty",
    "stdinnull",
    "escapechar",
    "enableescapecommandline",
    "permitlocalcommand",
    "localcommand",
    "loglevel",
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
    "controlmaster",
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
    "hashknownhosts",
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
    "proxyusefdpass",
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
];

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
        "proxycommand" => unless(
            &["none"],
            "tether does not run a ProxyCommand yet and would connect to HostName:Port directly; use ProxyJump, or ProxyCommand none",
        ),
        "addressfamily" => unless(&["any"], "tether does not choose the address family"),
        "bindaddress" | "bindinterface" => {
            Treatment::Refused("tether does not choose the local address")
        }
        "canonicalizehostname" => unless(
            &["no", "false"],
            "tether does not canonicalize host names and would reach another name",
        ),
        "refuseconnection" => unless(&["no", "false"], "it forbids this connection"),
        "remotecommand" => unless(
            &["none"],
            "tether runs the command it is given, not ssh_config's RemoteCommand",
        ),
        // What it trusts.
        "hostkeyalias" => Treatment::Refused(
            "tether does not look host keys up under an alias yet and would check the HostName's key instead",
        ),
        "knownhostscommand" => unless(
            &["none"],
            "tether does not run a KnownHostsCommand and would check host keys without it",
        ),
        "globalknownhostsfile" => Treatment::Refused(
            "tether reads UserKnownHostsFile (default ~/.ssh/known_hosts) and /etc/ssh/ssh_known_hosts only",
        ),
        "revokedhostkeys" => unless(
            &["none"],
            "tether does not read a RevokedHostKeys file and would accept a key it revokes",
        ),
        "checkhostip" => unless(
            &["no", "false"],
            "tether does not check the host's IP address's key",
        ),
        "verifyhostkeydns" => unless(&["no", "false"], "tether does not look host keys up in DNS"),
        "nohostauthenticationforlocalhost" => unless(
            &["no", "false"],
            "tether checks every host's key, localhost's too",
        ),
        "casignaturealgorithms" => {
            Treatment::Refused("tether does not choose the algorithms of certificate authorities")
        }
        // How and as whom.
        "hostkeyalgorithms" => {
            Treatment::Refused("tether does not restrict the host key algorithms it accepts")
        }
        "macs" => Treatment::Refused("tether does not choose the MACs it offers"),
        "pubkeyacceptedalgorithms" | "pubkeyacceptedkeytypes" => {
            Treatment::Refused("tether does not restrict the public key algorithms it signs with")
        }
        "pubkeyauthentication" => unless(&["yes", "true"], "tether always tries keys"),
        "hostbasedauthentication" => unless(
            &["no", "false"],
            "tether does not do host-based authentication",
        ),
        "gssapiauthentication" => unless(
            &["no", "false"],
            "tether does not do GSSAPI (Kerberos) authentication",
        ),
        "certificatefile" => Treatment::Refused("tether does not authenticate with certificates"),
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
        assert_eq!(treatment("ProxyCommand", "none"), Some(Treatment::Harmless));
        assert!(matches!(
            treatment("ProxyCommand", "nc %h %p"),
            Some(Treatment::Refused(_))
        ));
        assert!(matches!(
            treatment("hostkeyalias", "x"),
            Some(Treatment::Refused(_))
        ));
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
    }
}
