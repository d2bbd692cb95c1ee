//! `--sudo` and `--sudo-password-file`: where a run's sudo password comes
//! from (asked once on `/dev/tty`, or read from a file named by path), never
//! argv or the environment. What is done with it is
//! `tether_cluster::exec::Sudo`'s.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result, bail};
use clap::Args;
use tether_cluster::exec::Sudo;
use zeroize::Zeroizing;

/// The most bytes of a password file.
const MAX_PASSWORD_FILE: u64 = 4096;

/// How a run answers sudo's password prompt on every host.
#[derive(Debug, Args, Default)]
pub struct SudoArgs {
    /// Answer sudo's password prompt on every host with one password, asked
    /// once on the terminal (/dev/tty). exec runs the command on a terminal
    /// (stdout and stderr come together as stdout, as with ssh -t; not
    /// with --stdin); the password is typed only into the prompt sudo
    /// prints (tether sets it through SUDO_PROMPT) and only once per host
    /// (per line in tether shell): asked again, the command is interrupted
    /// and the host says so.
    #[arg(long)]
    pub sudo: bool,
    /// As --sudo, the password read from this file (its first line; it
    /// must not be readable by others) instead of the terminal.
    #[arg(long, value_name = "FILE")]
    pub sudo_password_file: Option<PathBuf>,
}

impl SudoArgs {
    /// True when either flag was given.
    pub fn asked(&self) -> bool {
        self.sudo || self.sudo_password_file.is_some()
    }

    /// The run's sudo, when asked for: the password read now.
    pub fn sudo(&self) -> Result<Option<Arc<Sudo>>> {
        let password = match (&self.sudo_password_file, self.sudo) {
            (Some(path), _) => from_file(path)?,
            (None, true) => from_tty()?,
            (None, false) => return Ok(None),
        };
        match Sudo::new(password) {
            Some(s) => Ok(Some(Arc::new(s))),
            None => bail!("--sudo: no random numbers for sudo's prompt marker; nothing ran"),
        }
    }
}

fn from_tty() -> Result<Zeroizing<Vec<u8>>> {
    let prompt = "[tether] sudo password for the hosts: ";
    match tether_ssh::Prompter::secret(&crate::tty_prompt::TtyPrompter, prompt) {
        Some(p) => Ok(Zeroizing::new(p.into_bytes())),
        None => bail!(
            "--sudo asks for the password on the terminal, and there is none (or it was closed); \
             give it with --sudo-password-file FILE. Nothing ran"
        ),
    }
}

fn from_file(path: &Path) -> Result<Zeroizing<Vec<u8>>> {
    let named = || format!("--sudo-password-file {}", path.display());
    let file = std::fs::File::open(path).with_context(named)?;
    let meta = file.metadata().with_context(named)?;
    if meta.is_file() {
        use std::os::unix::fs::PermissionsExt;
        if meta.permissions().mode() & 0o077 != 0 {
            bail!(
                "{}: the file can be read or written by others; `chmod 600` it (nothing ran)",
                named()
            );
        }
    }
    let mut bytes = Zeroizing::new(Vec::new());
    file.take(MAX_PASSWORD_FILE + 1)
        .read_to_end(&mut bytes)
        .with_context(named)?;
    if bytes.len() as u64 > MAX_PASSWORD_FILE {
        bail!(
            "{}: longer than {MAX_PASSWORD_FILE} bytes; is it the right file?",
            named()
        );
    }
    let line = bytes.split(|&b| b == b'\n').next().unwrap_or_default();
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    if line.is_empty() {
        bail!("{}: its first line is empty; nothing ran", named());
    }
    Ok(Zeroizing::new(line.to_vec()))
}
