//! The syntax check run on this machine (when it has the shell's
//! program: it parses alike, and costs no round trip to a host).

use std::path::{Path, PathBuf};

use crate::dialect::Dialect;
use crate::error::ShellError;

/// A syntax check of `code` by the dialect's checker.
pub(crate) struct SyntaxCheck<'a> {
    pub(crate) code: &'a str,
    pub(crate) dialect: &'a dyn Dialect,
    /// A fresh path in the local session directory for the code.
    pub(crate) local_file: PathBuf,
    /// A fresh path in the shell's directory for the code.
    pub(crate) shell_file: PathBuf,
}

/// The check run on this machine, with the code in the local file
/// (removed after).
pub(super) async fn check_here(check: SyntaxCheck<'_>) -> Result<String, ShellError> {
    let file = check.local_file;
    let Some((program, args)) = check.dialect.syntax_check(&file) else {
        return Ok(String::new());
    };
    crate::private::write_file(&file, check.code.as_bytes())?;
    let stderr = tokio::task::spawn_blocking(move || {
        let out = std::process::Command::new(program)
            .args(args)
            .stdin(std::process::Stdio::null())
            .output();
        let _ = std::fs::remove_file(&file);
        out.map(|o| String::from_utf8_lossy(&o.stderr).into_owned())
            .unwrap_or_default()
    })
    .await
    .unwrap_or_default();
    Ok(stderr)
}

/// True when `program` can be run here (a path to a file, or a name found
/// on `PATH`).
pub(super) fn on_local_path(program: &str) -> bool {
    if program.contains('/') {
        return Path::new(program).is_file();
    }
    std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(program).is_file()))
}
