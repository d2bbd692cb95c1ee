//! ssh_config's `Match` lines, evaluated as OpenSSH does for the criteria
//! tether can know: `all`, `host` (the name after `HostName`),
//! `originalhost` (the name typed), `user` (the remote user),
//! `localuser` and `exec` (a command run by the shell, its `%` tokens
//! expanded, stdin and stdout on /dev/null: it holds when the command
//! exits 0; run only while the line's criteria before it hold), each
//! possibly negated with `!`; the criteria of one line must all hold. A
//! line whose known criteria hold but which also names one tether cannot
//! evaluate (`canonical`, `final`, `localnetwork`, `tagged`, `command`,
//! `version`, `sessiontype`) is an error: its block might apply, and
//! guessing either way would connect differently from `ssh`.

use crate::known_hosts::patterns_match;

/// What a `Match` line is evaluated against.
pub(crate) struct Against<'a> {
    /// The host name after `HostName` so far.
    pub host: &'a str,
    /// The name as typed.
    pub original: &'a str,
    /// The remote user so far.
    pub user: &'a str,
    /// The local user.
    pub local_user: &'a str,
    /// Runs a `Match exec` command (tokens not yet expanded): whether it
    /// exited 0.
    pub exec: &'a dyn Fn(&str) -> Result<bool, String>,
}

/// Splits a `Match` line's value into words, double quotes kept together.
fn words(value: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    let mut any = false;
    for c in value.chars() {
        match c {
            '"' => {
                quoted = !quoted;
                any = true;
            }
            c if c.is_whitespace() && !quoted => {
                if any {
                    out.push(std::mem::take(&mut cur));
                    any = false;
                }
            }
            c => {
                cur.push(c);
                any = true;
            }
        }
    }
    if any {
        out.push(cur);
    }
    out
}

/// Whether the block of the `Match` line `value` applies; `Err` says why
/// it cannot be told (a problem for the caller to place).
pub(crate) fn applies(value: &str, at: &Against<'_>) -> Result<bool, String> {
    let words = words(value);
    if words.is_empty() {
        return Err("Match needs criteria (Match all, Match host NAME, …)".into());
    }
    let mut unknowable: Option<String> = None;
    let mut holds = true;
    let mut it = words.iter();
    while let Some(word) = it.next() {
        let (negated, criterion) = match word.strip_prefix('!') {
            Some(c) => (true, c.to_ascii_lowercase()),
            None => (false, word.to_ascii_lowercase()),
        };
        let hit = match criterion.as_str() {
            "all" => true,
            "canonical" | "final" => {
                unknowable.get_or_insert(criterion.clone());
                continue;
            }
            "host" | "originalhost" | "user" | "localuser" | "exec" | "localnetwork" | "tagged"
            | "command" | "version" | "sessiontype" => {
                let Some(arg) = it.next() else {
                    return Err(format!("Match {criterion} needs an argument"));
                };
                if criterion == "exec" {
                    // Not run once the line cannot hold any more.
                    if holds && (at.exec)(arg)? == negated {
                        holds = false;
                    }
                    continue;
                }
                let name = match criterion.as_str() {
                    "host" => at.host,
                    "originalhost" => at.original,
                    "user" => at.user,
                    "localuser" => at.local_user,
                    _ => {
                        unknowable.get_or_insert(criterion.clone());
                        continue;
                    }
                };
                patterns_match(arg, name)
            }
            other => return Err(format!("Match {other}: not a criterion OpenSSH knows")),
        };
        if hit == negated {
            holds = false;
        }
    }
    match unknowable {
        Some(c) if holds => Err(format!(
            "Match {c} is not evaluated by tether, and the rest of the line holds for this host, so the block may apply; \
             write it as a Host block, or give the settings on the command line (-F another file)"
        )),
        _ => Ok(holds),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn criteria_hold_together() {
        let run = |cmd: &str| Ok(cmd == "true");
        let at = Against {
            host: "10.0.0.1",
            original: "web1",
            user: "alice",
            local_user: "bob",
            exec: &run,
        };
        assert_eq!(applies("host 10.0.0.*", &at), Ok(true));
        assert_eq!(applies("originalhost web1 user alice", &at), Ok(true));
        assert_eq!(applies("originalhost web1 user carol", &at), Ok(false));
        assert_eq!(applies("!host 10.*", &at), Ok(false));
        assert_eq!(applies("all", &at), Ok(true));
        assert_eq!(applies("host other exec \"true x\"", &at), Ok(false));
        assert_eq!(applies("host 10.* exec true", &at), Ok(true));
        assert_eq!(applies("host 10.* !exec true", &at), Ok(false));
        assert_eq!(applies("host 10.* exec false", &at), Ok(false));
        assert!(applies("host 10.* localnetwork 10.0.0.0/8", &at).is_err());
        assert!(applies("bogus x", &at).is_err());
    }
}
