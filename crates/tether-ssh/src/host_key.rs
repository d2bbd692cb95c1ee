//! The host key check of a handshake: the known_hosts files and a
//! `KnownHostsCommand`'s lines, looked up under the `HostKeyAlias` or
//! `[HostName]:port`, and the verdict under the `StrictHostKeyChecking`
//! policy (a revoked key refused under any; an unknown one learned under
//! `accept-new` and `no`, hashed under `HashKnownHosts`; a changed one
//! accepted under `no` with the warning `handshake` prints, not learned).

use std::path::PathBuf;

use russh::keys::{HashAlg, PublicKey};

use crate::connect::{Checker, ConnectOptions, HostKeyPolicy, Target};
use crate::error::SshError;
use crate::known_hosts::{self, Verdict};

pub(crate) fn fingerprint(key: &PublicKey) -> String {
    key.fingerprint(HashAlg::Sha256).to_string()
}

/// The name known_hosts knows `target` by: the `HostKeyAlias`, else
/// `HostName` (`[HostName]:port` off port 22).
pub(crate) fn lookup_name(target: &Target, opts: &ConnectOptions) -> String {
    match &opts.host_key_alias {
        Some(alias) => alias.to_ascii_lowercase(),
        None => known_hosts::host_key_name(&target.hostname, target.port),
    }
}

/// `UserKnownHostsFile none` / `GlobalKnownHostsFile none`: no file.
fn is_none(file: &std::path::Path) -> bool {
    file.as_os_str() == "none"
}

impl Checker {
    /// Where a learned key goes: the first user file, unless it is `none`
    /// (then nowhere, as in OpenSSH).
    fn learn_file(&self) -> Option<&PathBuf> {
        self.known_hosts.first().filter(|f| !is_none(f))
    }

    /// The known_hosts lines: the files, then the command's output for
    /// `why` (`HOSTNAME`, `ORDER`).
    pub(crate) async fn sources(
        &self,
        why: &str,
        key: Option<&PublicKey>,
    ) -> Result<Vec<(PathBuf, String)>, SshError> {
        let files: Vec<PathBuf> = self
            .known_hosts
            .iter()
            .filter(|f| !is_none(f))
            .cloned()
            .collect();
        let mut sources = known_hosts::read_files(&files);
        if let Some(command) = &self.command {
            let t = &self.target;
            let invocation = crate::known_hosts_command::Invocation {
                why,
                hostname: &t.hostname,
                port: t.port,
                user: &t.user,
                original: &t.host,
                lookup: &self.lookup,
                alias: &self.alias,
                key,
            };
            sources.push(crate::known_hosts_command::run(command, &invocation).await?);
        }
        Ok(sources)
    }

    pub(crate) async fn verdict(&self, key: &PublicKey) -> Result<(), SshError> {
        let t = &self.target;
        let host = t.host.clone();
        let fingerprint = fingerprint(key);
        let sources = self.sources("HOSTNAME", Some(key)).await?;
        let tell = |what: String| {
            crate::steps::tell(self.steps.as_ref(), || {
                format!("{host}: the host key {fingerprint} {what}")
            })
        };
        match known_hosts::check_in(&sources, &self.lookup, key) {
            Verdict::Known(place) => {
                tell(format!("is known as {}: {place}", self.lookup));
                Ok(())
            }
            // A revoked key is refused whatever the policy, as in OpenSSH.
            Verdict::Revoked(place) => Err(SshError::RevokedHostKey {
                host,
                fingerprint,
                place,
            }),
            Verdict::Changed(place) if self.policy == HostKeyPolicy::No => {
                // Accepted, as OpenSSH does, with its warning and without
                // passwords (`handshake`).
                if let Ok(mut c) = self.accepted_changed.lock() {
                    *c = Some(SshError::ChangedHostKey {
                        host,
                        fingerprint,
                        place,
                    });
                }
                Ok(())
            }
            Verdict::Unknown if self.policy == HostKeyPolicy::No => {
                // Accepted and learned, as OpenSSH does; a file that cannot
                // be written does not stop the connection (OpenSSH warns).
                match self.learn_file() {
                    Some(file) => match known_hosts::learn(file, &self.lookup, key, self.hash) {
                        Ok(()) => tell(format!(
                            "was not known; accepted and learned as {} into {} (StrictHostKeyChecking=no)",
                            self.lookup,
                            file.display()
                        )),
                        Err(e) => tell(format!(
                            "is not known; accepted (StrictHostKeyChecking=no) but not learned: {e}"
                        )),
                    },
                    None => tell("is not known; accepted (StrictHostKeyChecking=no)".into()),
                }
                Ok(())
            }
            Verdict::Changed(place) => Err(SshError::ChangedHostKey {
                host,
                fingerprint,
                place,
            }),
            Verdict::Unknown if self.policy == HostKeyPolicy::AcceptNew => {
                match self.learn_file() {
                    Some(file) => {
                        known_hosts::learn(file, &self.lookup, key, self.hash)?;
                        tell(format!(
                            "was not known; learned as {} into {} (accept-new)",
                            self.lookup,
                            file.display()
                        ));
                        Ok(())
                    }
                    None => Ok(()),
                }
            }
            Verdict::Unknown => Err(SshError::UnknownHostKey {
                host,
                fingerprint,
                file: self.known_hosts.first().cloned().unwrap_or_default(),
            }),
        }
    }
}
