//! What `tether shell` looks like and does by default: the config's
//! `[shell]` settings (per cluster over the top ones), the flags over
//! both, and `NO_COLOR`.

use std::io::IsTerminal;
use std::path::PathBuf;

use anyhow::Result;
use tether_cluster::config::{ColorChoice, ShellSettings};
use tether_cluster::multi::{DEFAULT_PREFIX, PromptStyle};

use crate::cli::ShellArgs;

/// The settings in force.
pub struct Look {
    /// The prefix of tether's commands.
    pub prefix: char,
    /// The prompt.
    pub prompt: PromptStyle,
    /// Colours on output lines.
    pub color: bool,
    /// Output lines start with the time since the line was sent.
    pub timestamps: bool,
    /// The history file; `None`: no history kept.
    pub history: Option<PathBuf>,
    /// Gather identical outputs.
    pub gather: bool,
    /// Say how to answer nodes waiting for input.
    pub waiting_hint: bool,
}

/// The prompt's fold threshold when the config sets none.
const FOLD_ABOVE: usize = 6;

impl Look {
    /// The settings for session `name` from `config` and `args`.
    pub fn new(config: &ShellSettings, args: &ShellArgs, name: &str) -> Result<Look> {
        let choice = match args.color.as_deref() {
            Some("always") => ColorChoice::Always,
            Some("never") => ColorChoice::Never,
            Some(_) => ColorChoice::Auto,
            None => config.color.unwrap_or_default(),
        };
        let color = match choice {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => {
                std::env::var_os("NO_COLOR").is_none() && std::io::stdout().is_terminal()
            }
        };
        let history = match config.history.as_deref() {
            Some("") => None,
            Some(path) => Some(PathBuf::from(path)),
            None => Some(default_history(name)?),
        };
        Ok(Look {
            prefix: args.prefix.or(config.prefix).unwrap_or(DEFAULT_PREFIX),
            prompt: PromptStyle {
                fold_above: config.prompt_fold_above.unwrap_or(FOLD_ABOVE),
                color: false,
                ascii: false,
                format: config.prompt.clone(),
                name: name.to_owned(),
            },
            color,
            timestamps: config.timestamps.unwrap_or(false),
            history,
            gather: args.gather || config.gather.unwrap_or(false),
            waiting_hint: config.waiting_hint.unwrap_or(true),
        })
    }
}

/// Session `name`'s history file, in the daemon's private directory.
fn default_history(name: &str) -> Result<PathBuf> {
    use anyhow::Context;
    use std::os::unix::fs::DirBuilderExt;
    let dir = tether_daemon::Paths::from_env().dir.join("history");
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(&dir)
        .with_context(|| format!("cannot create {}", dir.display()))?;
    Ok(dir.join(super::namespace(name)))
}
