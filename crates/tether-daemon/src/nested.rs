//! The wire shapes of the shells a session armed inside its own (`bash`,
//! `sudo -i`, `su -` run in it): where a result's command ran, and how the
//! call changed that.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A shell a command started inside the session's own, which the session
/// armed: later commands run there until it exits.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
pub struct ShellLevel {
    /// Its program (`bash`, `zsh`, `sh`).
    pub program: String,
    /// Its pid.
    pub pid: i32,
    /// The user it runs as, where known.
    pub user: Option<String>,
    /// It replaced the shell it was started from (`exec bash`): its
    /// `exit` ends the session's shell.
    pub replaced: bool,
}

/// How a call changed the chain of shells commands run in.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, JsonSchema, PartialEq, Eq, Hash)]
#[serde(rename_all = "snake_case")]
pub enum NestChange {
    /// The command started a shell, now armed.
    Entered,
    /// The shell commands ran in exited: the one around it runs them again.
    Returned,
    /// The command started an interactive shell the session cannot arm
    /// (the output's first line says why): it waits for input.
    NotArmed,
}

impl ShellLevel {
    /// `bash (pid 12, user root)`, as notes name it.
    pub fn describe(&self) -> String {
        let replaced = if self.replaced {
            ", replaced the session's shell"
        } else {
            ""
        };
        match &self.user {
            Some(u) => format!("{} (pid {}, user {u}{replaced})", self.program, self.pid),
            None => format!("{} (pid {}{replaced})", self.program, self.pid),
        }
    }

    /// The chain `levels` as notes name it (`bash (…) > zsh (…)`), or
    /// "the session's shell" when empty.
    pub fn chain(levels: &[ShellLevel]) -> String {
        if levels.is_empty() {
            return "the session's shell".to_owned();
        }
        levels
            .iter()
            .map(ShellLevel::describe)
            .collect::<Vec<_>>()
            .join(" > ")
    }
}

impl From<tether_shell::ShellLevel> for ShellLevel {
    fn from(l: tether_shell::ShellLevel) -> ShellLevel {
        ShellLevel {
            program: l.program,
            pid: l.pid,
            user: l.user,
            replaced: l.replaced,
        }
    }
}

impl From<tether_shell::NestChange> for NestChange {
    fn from(c: tether_shell::NestChange) -> NestChange {
        match c {
            tether_shell::NestChange::Entered => NestChange::Entered,
            tether_shell::NestChange::Returned => NestChange::Returned,
            tether_shell::NestChange::NotArmed => NestChange::NotArmed,
        }
    }
}
