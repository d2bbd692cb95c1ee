//! Copying tether to a host that does not have it: the cache's
//! directories made private (`umask 077`), the binary written over SFTP
//! (or `cat` on an exec channel, for a server without SFTP) under a
//! temporary name in the same directory (mode 0700), then one
//! command there checks its SHA-256 and that it starts (`--version`
//! answers) and links it into place. A link, not a rename: it never
//! replaces what another first contact (another test, another machine)
//! put there meanwhile, and both are atomic. A copy that cannot run (a
//! `noexec` home, another C library) is removed, and the host stays
//! agentless.

use std::os::unix::fs::FileExt;
use std::sync::Arc;

use tether_transport::{HostFailure, TransportError};
use tokio::sync::Semaphore;

use super::identity::Identity;
use super::probe::{SEAL, SHA256, dir_of};
use super::{Far, posix, sh_quote};

/// SFTP writes outstanding at once while copying.
const WINDOW: usize = 64;

/// Bytes per piece given to `cat` (a server without SFTP).
const CAT_PIECE: usize = 256 * 1024;

/// How a copy ended.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Copied {
    /// Ours is in place now, with its seal there once placed (its hash
    /// was checked just before).
    InPlace(Option<String>),
    /// Something else was put there meanwhile: look at it again.
    Taken,
    /// The copy does not run there (why): the host stays agentless.
    CannotRun(String),
}

impl Far<'_> {
    /// Copies `id` to `path` (which did not exist).
    pub(crate) async fn deploy(&self, id: &Identity, path: &str) -> Result<Copied, TransportError> {
        let dir = dir_of(path);
        let made = self
            .sh(&posix(&format!(
                "umask 077 && mkdir -p -- {}",
                sh_quote(dir)
            )))
            .await?;
        if made.status != Some(0) {
            return Err(self.fail(
                HostFailure::Setup,
                format!(
                    "cannot create {dir} to copy tether there: {}",
                    made.stderr_text()
                ),
            ));
        }
        let tmp = format!("{dir}/.tether-{}.tmp", random_hex());
        if let Err(e) = self.write(id, &tmp).await {
            let _ = self.sh(&format!("rm -f -- {}", sh_quote(&tmp))).await;
            return Err(e);
        }
        self.install(id, &tmp, path).await
    }

    /// Writes the binary to `tmp` over SFTP, mode 0700; through `cat` on
    /// an exec channel when the server has no SFTP.
    async fn write(&self, id: &Identity, tmp: &str) -> Result<(), TransportError> {
        let file = std::fs::File::open(&id.path).map_err(|e| self.unreadable(id, e))?;
        let sftp = match self.conn.sftp().await {
            Ok(s) => s,
            Err(e) => {
                return self
                    .write_by_cat(id, &file, tmp)
                    .await
                    .map_err(|cat| self.fail(cat.0, format!("{}; SFTP: {e}", cat.1)));
            }
        };
        let h = sftp.create(tmp, 0o700).await.map_err(|e| self.ssh(e))?;
        let mut w = sftp.writer(&h, Arc::new(Semaphore::new(WINDOW)));
        let chunk = sftp.chunk();
        let mut offset = 0u64;
        loop {
            // Read in place: a piece from the page cache takes
            // microseconds, less than a hop to a blocking pool.
            let mut buf = vec![0u8; chunk];
            let n = file
                .read_at(&mut buf, offset)
                .map_err(|e| self.unreadable(id, e))?;
            if n == 0 {
                break;
            }
            buf.truncate(n);
            offset += n as u64;
            w.write(buf).await.map_err(|e| self.ssh(e))?;
        }
        w.finish().await.map_err(|e| self.ssh(e))?;
        // The server's umask may have taken bits off the mode asked for.
        sftp.fset(&h, Some(0o700), None)
            .await
            .map_err(|e| self.ssh(e))?;
        sftp.close(h).await.map_err(|e| self.ssh(e))
    }

    /// Writes the binary to `tmp` through `umask 077; cat` (never over
    /// an existing file: `set -C`); the failure's kind and words.
    async fn write_by_cat(
        &self,
        id: &Identity,
        file: &std::fs::File,
        tmp: &str,
    ) -> Result<(), (HostFailure, String)> {
        let command = posix(&format!(
            "umask 077; set -C; cat > {t} && chmod 700 {t}",
            t = sh_quote(tmp)
        ));
        let (tx, rx) = tokio::sync::mpsc::channel::<Vec<u8>>(8);
        let feed = async move {
            let mut offset = 0u64;
            loop {
                let mut buf = vec![0u8; CAT_PIECE];
                let n = file.read_at(&mut buf, offset)?;
                if n == 0 {
                    return Ok(());
                }
                buf.truncate(n);
                offset += n as u64;
                if tx.send(buf).await.is_err() {
                    // The command ended early: its status says why.
                    return Ok(());
                }
            }
        };
        let mut stderr = Vec::new();
        let run = self.conn.exec_async(
            &command,
            tether_ssh::Input::Stream(rx),
            None,
            std::future::pending(),
            |e| {
                if let tether_ssh::Event::Stderr(b) = e {
                    stderr.extend_from_slice(&b);
                }
                std::future::ready(())
            },
        );
        let (fed, ended): (std::io::Result<()>, _) = tokio::join!(feed, run);
        fed.map_err(|e| {
            (
                HostFailure::Setup,
                format!("cannot read {}: {e}", id.path.display()),
            )
        })?;
        let ended = ended.map_err(|e| (e.kind(), e.to_string()))?;
        if ended.exit_code != Some(0) {
            return Err((
                HostFailure::Setup,
                format!(
                    "cannot write {tmp}: {}",
                    clip(&String::from_utf8_lossy(&stderr))
                ),
            ));
        }
        Ok(())
    }

    /// This tether's binary could not be read here.
    fn unreadable(&self, id: &Identity, e: std::io::Error) -> TransportError {
        self.fail(
            HostFailure::Setup,
            format!("cannot read {}: {e}", id.path.display()),
        )
    }

    /// Checks the copy at `tmp` on the host (its hash, that it starts) and
    /// links it to `path`; `tmp` is removed in every case.
    async fn install(
        &self,
        id: &Identity,
        tmp: &str,
        path: &str,
    ) -> Result<Copied, TransportError> {
        let script = format!(
            "t={t}; f={f}; s=$({SHA256} < \"$t\" | cut -c1-64); \
             if [ \"$s\" != {sha} ]; then rm -f -- \"$t\"; printf 'badsha %s\\n' \"$s\"; exit 0; fi; \
             if v=$(\"$t\" --version 2>&1); then :; else rm -f -- \"$t\"; printf 'nostart %s\\n' \"$v\"; exit 0; fi; \
             case \"$v\" in tether*) ;; *) rm -f -- \"$t\"; printf 'nostart %s\\n' \"$v\"; exit 0;; esac; \
             if ln -- \"$t\" \"$f\" 2>/dev/null; then r=placed; else r=taken; fi; rm -f -- \"$t\"; \
             if [ $r = placed ]; then printf 'placed %s\\n' \"$({SEAL} \"$f\")\"; else echo taken; fi",
            t = sh_quote(tmp),
            f = sh_quote(path),
            sha = sh_quote(&id.sha256),
        );
        let out = self.sh(&posix(&script)).await?;
        let text = String::from_utf8_lossy(&out.stdout);
        let text = text.trim_end();
        if let Some(why) = text.strip_prefix("nostart ") {
            return Ok(Copied::CannotRun(format!(
                "tether copied to {} does not start there: {}",
                dir_of(path),
                clip(why)
            )));
        }
        if let Some(h) = text.strip_prefix("badsha ") {
            return Err(self.fail(
                HostFailure::Setup,
                format!(
                    "tether copied to {tmp} arrived with the SHA-256 {h}, not {} (removed; the next use copies it again)",
                    id.sha256
                ),
            ));
        }
        if let Some(seal) = text.strip_prefix("placed ") {
            return Ok(Copied::InPlace(Some(seal.to_owned())));
        }
        match text {
            "placed" => Ok(Copied::InPlace(None)),
            "taken" => Ok(Copied::Taken),
            _ => Err(self.fail(
                HostFailure::Setup,
                format!(
                    "putting tether in place at {path} failed: {}",
                    clip(&format!("{text} {}", out.stderr_text()))
                ),
            )),
        }
    }
}

/// 16 random hex digits, for a temporary name nobody else picks.
fn random_hex() -> String {
    let mut b = [0u8; 8];
    if getrandom::fill(&mut b).is_err() {
        // The name only has to differ from a concurrent contact's.
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default();
        b = (t as u64 ^ u64::from(std::process::id())).to_le_bytes();
    }
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// A host's words, bounded for a message.
pub(crate) fn clip(text: &str) -> String {
    const MAX: usize = 500;
    let t = text.trim();
    match t.char_indices().nth(MAX) {
        Some((i, _)) => format!("{}…", &t[..i]),
        None => t.to_owned(),
    }
}
