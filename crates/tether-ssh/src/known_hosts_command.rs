//! `KnownHostsCommand`, run as `ssh` runs it: split into words (quotes and
//! backslashes as OpenSSH's `argv_split`), each argument after the first
//! with its tokens expanded, run without a shell, its stdout read as more
//! known_hosts lines after the files. A command that fails (cannot start,
//! exits non-zero) fails the connection, as in OpenSSH.

use std::path::PathBuf;

use russh::keys::{HashAlg, PublicKey};

use crate::error::SshError;

/// What the tokens of one invocation stand for.
pub(crate) struct Invocation<'a> {
    /// `%I`: `HOSTNAME` (checking a presented key) or `ORDER` (choosing the
    /// key types to ask for).
    pub why: &'a str,
    /// `%h`: the address (`HostName`).
    pub hostname: &'a str,
    /// `%p`.
    pub port: u16,
    /// `%r`.
    pub user: &'a str,
    /// `%n`: the host as named.
    pub original: &'a str,
    /// `%H`: the name looked up in known_hosts (`[host]:port` or the
    /// `HostKeyAlias`).
    pub lookup: &'a str,
    /// `%k`: the `HostKeyAlias`, else `%n`.
    pub alias: &'a str,
    /// `%t %f %K`: the presented key, when there is one.
    pub key: Option<&'a PublicKey>,
}

/// The command's words, as OpenSSH splits them.
fn split(command: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut quote: Option<char> = None;
    let mut chars = command.chars();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (None, ' ' | '\t') => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            (None, '"' | '\'') => {
                quote = Some(c);
                in_word = true;
            }
            (Some(q), c) if c == q => quote = None,
            (_, '\\') => {
                word.push(chars.next().ok_or("ends in a lone backslash")?);
                in_word = true;
            }
            (_, c) => {
                word.push(c);
                in_word = true;
            }
        }
    }
    if quote.is_some() {
        return Err("has an unclosed quote".into());
    }
    if in_word {
        words.push(word);
    }
    Ok(words)
}

/// One argument with `%x` tokens and `${VAR}` expanded in one pass, as
/// OpenSSH's `percent_dollar_expand`: the tokens every client command takes
/// (`%C %L %i %k %l %n %p %d %h %r %u`, from [`crate::percent`]) and this
/// directive's own (`%H %I %t %f %K`).
fn expand(arg: &str, t: &Invocation<'_>) -> Result<String, String> {
    let tokens = crate::percent::Tokens {
        host: t.hostname.to_owned(),
        original: t.original.to_owned(),
        port: t.port,
        user: t.user.to_owned(),
        alias: Some(t.alias.to_owned()),
        jump: String::new(),
    };
    let none = || "NONE".to_owned();
    let fingerprint = t
        .key
        .map_or_else(none, |k| k.fingerprint(HashAlg::Sha256).to_string());
    let kind = t.key.map_or_else(none, |k| k.algorithm().to_string());
    let base64 = t.key.map_or_else(none, |k| {
        k.to_openssh()
            .ok()
            .and_then(|s| s.split_whitespace().nth(1).map(str::to_owned))
            .unwrap_or_else(none)
    });
    let own = [
        ('H', t.lookup),
        ('I', t.why),
        ('t', kind.as_str()),
        ('f', fingerprint.as_str()),
        ('K', base64.as_str()),
    ];
    let mut out = String::new();
    let mut chars = arg.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '$' && chars.peek() == Some(&'{') {
            chars.next();
            let name: String = chars.by_ref().take_while(|c| *c != '}').collect();
            let value = std::env::var(&name)
                .map_err(|_| format!("${{{name}}} is not set in the environment"))?;
            out.push_str(&value);
            continue;
        }
        if c != '%' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('j') => return Err("%j is not a token KnownHostsCommand takes".into()),
            Some(token) => out.push_str(&tokens.expand(&format!("%{token}"), &own)?),
            None => return Err("ends in a lone %".into()),
        }
    }
    Ok(out)
}

/// Runs `command` for `t`; its output, named for known_hosts [`Place`]s
/// (`crate::known_hosts::Place`).
pub(crate) async fn run(command: &str, t: &Invocation<'_>) -> Result<(PathBuf, String), SshError> {
    let bad = |problem: String| SshError::Config {
        place: format!("KnownHostsCommand {command:?}"),
        problem,
    };
    let words = split(command).map_err(&bad)?;
    let Some((program, args)) = words.split_first() else {
        return Err(bad("names no program".into()));
    };
    let args = args
        .iter()
        .map(|a| expand(a, t))
        .collect::<Result<Vec<_>, _>>()
        .map_err(&bad)?;
    let out = tokio::process::Command::new(program)
        .args(&args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::inherit())
        .kill_on_drop(true)
        .output()
        .await
        .map_err(|e| bad(format!("cannot run {program}: {e}")))?;
    if !out.status.success() {
        return Err(bad(format!(
            "it failed ({}); fix it, or set KnownHostsCommand none",
            out.status
        )));
    }
    Ok((
        PathBuf::from(format!("KnownHostsCommand({program})")),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_split_and_tokens_expand_as_openssh() {
        assert_eq!(
            split(r#"/bin/kh "a b" 'c d' e\ f"#).unwrap_or_default(),
            ["/bin/kh", "a b", "c d", "e f"]
        );
        assert!(split("x 'open").is_err());
        let t = Invocation {
            why: "HOSTNAME",
            hostname: "10.0.0.1",
            port: 2222,
            user: "alice",
            original: "web01",
            lookup: "[10.0.0.1]:2222",
            alias: "web01",
            key: None,
        };
        assert_eq!(
            expand("%I:%H:%h:%p:%r:%n:%k:%t:%%", &t).as_deref(),
            Ok("HOSTNAME:[10.0.0.1]:2222:10.0.0.1:2222:alice:web01:web01:NONE:%")
        );
        assert!(expand("%Z", &t).is_err());
    }
}
