//! ssh_config's `%` tokens (`%h %p %r %n %u %l %L %d %i %k %C %%`, and
//! `%T` in `LocalCommand`) and `${VAR}` environment references, expanded
//! as OpenSSH expands them in the directives that take them
//! (`ssh_config(5)`, TOKENS and ENVIRONMENT VARIABLES). An unknown token or
//! an unset variable is an error, as in ssh.

use sha1::{Digest, Sha1};

/// What the tokens stand for, for one connection.
#[derive(Clone, Debug, Default)]
pub struct Tokens {
    /// `%h`: the remote host name (after `HostName`).
    pub host: String,
    /// `%n`: the host as typed.
    pub original: String,
    /// `%p`: the port.
    pub port: u16,
    /// `%r`: the remote user.
    pub user: String,
    /// `%k`: `HostKeyAlias`, else the host as typed.
    pub alias: Option<String>,
    /// `%j`: the ProxyJump hop(s), empty when none.
    pub jump: String,
}

/// The local host's name (`%l`), read from the kernel.
fn local_host() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_owned())
        .ok()
        .filter(|h| !h.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "localhost".to_owned())
}

fn home() -> String {
    std::env::var("HOME").unwrap_or_default()
}

/// The local user's name (`%u`).
pub fn local_user() -> String {
    ["USER", "LOGNAME"]
        .iter()
        .find_map(|v| std::env::var(v).ok().filter(|u| !u.is_empty()))
        .unwrap_or_else(|| {
            nix::unistd::User::from_uid(nix::unistd::getuid())
                .ok()
                .flatten()
                .map(|u| u.name)
                .unwrap_or_else(|| "root".to_owned())
        })
}

impl Tokens {
    /// `%C`: the SHA-1 of `%l%h%p%r`, in hex (OpenSSH's connection hash).
    pub fn connection_hash(&self) -> String {
        let mut h = Sha1::new();
        h.update(local_host().as_bytes());
        h.update(self.host.as_bytes());
        h.update(self.port.to_string().as_bytes());
        h.update(self.user.as_bytes());
        h.finalize().iter().map(|b| format!("{b:02x}")).collect()
    }

    /// `value` with its `%` tokens replaced; `extra` adds tokens of one
    /// directive (`('T', "NONE")` for `LocalCommand`).
    pub fn expand(&self, value: &str, extra: &[(char, &str)]) -> Result<String, String> {
        self.expand_quoting(value, extra, false)
    }

    /// [`Tokens::expand`] for a command a shell will read (`LocalCommand`,
    /// `Match exec`, `RemoteCommand`): each token's value is one `sh` word
    /// ([`crate::destination::sh_word`]: as it is when plain, else in
    /// single quotes), so no value a caller controls is read as shell.
    pub fn expand_for_shell(&self, value: &str, extra: &[(char, &str)]) -> Result<String, String> {
        self.expand_quoting(value, extra, true)
    }

    fn expand_quoting(
        &self,
        value: &str,
        extra: &[(char, &str)],
        quote: bool,
    ) -> Result<String, String> {
        let mut out = String::new();
        let mut chars = value.chars();
        while let Some(c) = chars.next() {
            if c != '%' {
                out.push(c);
                continue;
            }
            let Some(t) = chars.next() else {
                return Err(format!(
                    "{value:?}: a lone % at the end (write %% for one %)"
                ));
            };
            let v: String = match t {
                '%' => {
                    out.push('%');
                    continue;
                }
                'h' => self.host.clone(),
                'n' => self.original.clone(),
                'p' => self.port.to_string(),
                'r' => self.user.clone(),
                'u' => local_user(),
                'l' => local_host(),
                'L' => local_host()
                    .split('.')
                    .next()
                    .unwrap_or_default()
                    .to_owned(),
                'd' => home(),
                'i' => nix::unistd::getuid().to_string(),
                'k' => self.alias.clone().unwrap_or_else(|| self.original.clone()),
                'j' => self.jump.clone(),
                'C' => self.connection_hash(),
                other => match extra.iter().find(|(k, _)| *k == other) {
                    Some((_, v)) => (*v).to_owned(),
                    None => return Err(format!("{value:?}: %{other} is not a token ssh knows")),
                },
            };
            if quote {
                out.push_str(&crate::destination::sh_word(&v));
            } else {
                out.push_str(&v);
            }
        }
        Ok(out)
    }
}

/// `${NAME}` replaced by the environment's `NAME` (an unset one is an
/// error, as in ssh).
pub fn env_vars(value: &str) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = value;
    while let Some(at) = rest.find("${") {
        out.push_str(&rest[..at]);
        let after = &rest[at + 2..];
        let Some(end) = after.find('}') else {
            return Err(format!("{value:?}: ${{ without its closing }}"));
        };
        let name = &after[..end];
        let v = std::env::var(name)
            .map_err(|_| format!("{value:?}: the environment variable {name} is not set"))?;
        out.push_str(&v);
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// `~` and `~/...` at the start of `value`, as the home directory.
pub fn tilde(value: &str) -> String {
    match value.strip_prefix('~') {
        Some("") => format!("{}/", home()),
        Some(rest) if rest.starts_with('/') => format!("{}{rest}", home()),
        _ => value.to_owned(),
    }
}

/// The shell ssh runs local commands with: `$SHELL`, else `/bin/sh`.
pub fn shell() -> String {
    std::env::var("SHELL")
        .ok()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "/bin/sh".to_owned())
}

/// `Match exec`: `cmd` run by the shell, stdin and stdout on /dev/null,
/// stderr ours; whether it exited 0.
pub fn run_in_shell(cmd: &str) -> Result<bool, String> {
    std::process::Command::new(shell())
        .arg("-c")
        .arg(cmd)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .status()
        .map(|s| s.success())
        .map_err(|e| format!("Match exec {cmd:?}: cannot run {}: {e}", shell()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_and_variables() {
        let t = Tokens {
            host: "10.0.0.1".into(),
            original: "web".into(),
            port: 2222,
            user: "alice".into(),
            alias: None,
            jump: String::new(),
        };
        assert_eq!(
            t.expand("%%/%h/%n/%p/%r/%k", &[]).unwrap_or_default(),
            "%/10.0.0.1/web/2222/alice/web"
        );
        assert_eq!(t.expand("%T", &[('T', "NONE")]).unwrap_or_default(), "NONE");
        assert!(t.expand("%T", &[]).is_err());
        assert_eq!(t.connection_hash().len(), 40);
        assert!(env_vars("${TETHER_SURELY_UNSET_VAR}").is_err());
        assert_eq!(
            env_vars("a${HOME}b").unwrap_or_default(),
            format!("a{}b", home())
        );
    }
}
