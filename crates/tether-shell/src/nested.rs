//! Telling a shell a command started in the session's terminal (`bash`,
//! `exec zsh -l`, `sudo -i`, `su - USER`) from any other program waiting for
//! input, by kernel evidence: the foreground process's argv
//! (`/proc/PID/cmdline`), its user (`/proc/PID/status`) and its working
//! directory. An interactive shell is a known shell program with no script
//! and no `-c`: one that reads its commands from the terminal.
//!
//! It does not arm the shell (`session/nested.rs` does) nor look at a
//! remote host's processes (`place/look.rs` does; [`shell_of`] judges
//! what it found).

use std::path::PathBuf;
use std::sync::Arc;

use crate::dialect::{Bash, Dialect, Fish, Posix, Zsh};

/// Shell programs known as such, armed or not.
const SHELLS: &[&str] = &[
    "bash", "zsh", "sh", "dash", "ash", "fish", "ksh", "mksh", "ksh93", "tcsh", "csh", "yash",
];

/// Programs that run a shell on a terminal of their own and relay the
/// session's terminal to it (`sudo` with `use_pty`, `su --pty`, `script`):
/// what is typed reaches the shell through them.
const RELAYS: &[&str] = &["sudo", "su", "doas", "script", "run0"];

/// How deep below a relay its shell is looked for (sudo: its monitor
/// process, then the shell).
const RELAY_DEPTH: usize = 3;

/// Options of bash and zsh that take the next word as their value.
const WITH_VALUE: &[&str] = &["--rcfile", "--init-file", "-O", "+O", "-o", "+o"];

/// An interactive shell found in the foreground.
#[derive(Clone, Debug)]
pub(crate) struct Found {
    /// Its pid.
    pub(crate) pid: i32,
    /// Its program's name (`bash`; a login shell's leading `-` dropped).
    pub(crate) program: String,
    /// Its real user id, and that user's primary group.
    pub(crate) uid: u32,
    pub(crate) gid: u32,
    /// Its user's name, where the user database has it.
    pub(crate) user: Option<String>,
    /// Its working directory, where it can be read.
    pub(crate) cwd: Option<PathBuf>,
    /// Its whole argv (to tell the session's own shell apart).
    pub(crate) argv: Vec<String>,
}

impl Found {
    /// The dialect that arms it, `None` for a shell tether has none for.
    pub(crate) fn dialect(&self) -> Option<Arc<dyn Dialect>> {
        Some(match self.program.as_str() {
            "bash" => Arc::new(Bash),
            "zsh" => Arc::new(Zsh),
            "fish" => Arc::new(Fish),
            "dash" | "sh" | "ash" => Arc::new(Posix::dash()),
            _ => return None,
        })
    }
}

/// The program name of a shell's `argv[0]`, when it is a known shell.
pub(crate) fn shell_program(argv0: &str) -> Option<String> {
    let base = argv0.rsplit('/').next().unwrap_or(argv0);
    let base = base.strip_prefix('-').unwrap_or(base);
    SHELLS.contains(&base).then(|| base.to_owned())
}

/// Whether a shell started with `args` (argv without `argv[0]`) reads its
/// commands from the terminal: no `-c`, no script file (a word that is no
/// option's value), or `-i`/`-s` said outright.
pub(crate) fn reads_commands_from_terminal(args: &[String]) -> bool {
    let mut i = 0;
    let mut told = false;
    while let Some(a) = args.get(i) {
        i += 1;
        if a == "--" {
            return told || i >= args.len();
        }
        if WITH_VALUE.contains(&a.as_str()) {
            i += 1;
            continue;
        }
        if let Some(flags) = a.strip_prefix('-').filter(|f| !f.starts_with('-')) {
            if flags.contains('c') {
                return false;
            }
            told |= flags.contains('i') || flags.contains('s');
            continue;
        }
        if a.starts_with("--") || a.starts_with('+') {
            continue;
        }
        // A script (or, after -s, its arguments).
        return told;
    }
    true
}

/// The interactive shell that is the foreground process `pid` (named
/// `command`), or that a relay there runs in the foreground of its own
/// terminal; with the relay's processes between them (which hold the
/// session's terminal as part of the chain, not left behind).
pub(crate) fn look_through(pid: i32, command: &str) -> Option<(Found, Vec<i32>)> {
    if let Some(found) = look(pid) {
        return Some((found, Vec::new()));
    }
    if !RELAYS.contains(&command) {
        return None;
    }
    let mut paths = vec![vec![pid]];
    for _ in 0..RELAY_DEPTH {
        let mut next = Vec::new();
        for path in paths {
            let Some(&last) = path.last() else { continue };
            for child in children(last) {
                if let Some(found) = look(child).filter(|_| in_foreground(child)) {
                    return Some((found, path));
                }
                let mut longer = path.clone();
                longer.push(child);
                next.push(longer);
            }
        }
        paths = next;
    }
    None
}

/// Programs that log in to another host, whose shell runs there.
const REMOTE_LOGINS: &[&str] = &["ssh", "mosh-client", "telnet", "rlogin"];

/// Whether `command` runs a shell on another host (`ssh HOST`).
pub(crate) fn is_remote_login(command: &str) -> bool {
    REMOTE_LOGINS.contains(&command)
}

/// Whether `command` relays the terminal to a shell it may start.
pub(crate) fn is_relay(command: &str) -> bool {
    RELAYS.contains(&command)
}

/// The processes between `pid` and its ancestor `outer` (both left out),
/// nearest first: what starts a shell in the same terminal (`su`
/// without `--pty`) and waits for it. Empty when `outer` is not found
/// within a few generations.
pub(crate) fn between(pid: i32, outer: i32) -> Vec<i32> {
    let mut chain = Vec::new();
    let mut at = pid;
    for _ in 0..=RELAY_DEPTH {
        let Some(parent) = tether_pty::procfs::stat(at).map(|st| st.ppid) else {
            return Vec::new();
        };
        if parent == outer {
            return chain;
        }
        if parent <= 1 {
            return Vec::new();
        }
        chain.push(parent);
        at = parent;
    }
    Vec::new()
}

/// Whether `pid` has started any process yet (a relay that has not is
/// still asking for a password, or about to start its shell).
pub(crate) fn has_children(pid: i32) -> bool {
    !children(pid).is_empty()
}

/// The children of `pid`, from each of its threads' `children` file.
fn children(pid: i32) -> Vec<i32> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    tasks
        .flatten()
        .filter_map(|t| std::fs::read_to_string(t.path().join("children")).ok())
        .flat_map(|c| {
            c.split_whitespace()
                .filter_map(|p| p.parse().ok())
                .collect::<Vec<i32>>()
        })
        .collect()
}

/// The foreground group of `pid`'s controlling terminal (`tpgid`), when
/// it is not `pid`'s own group (a program the shell runs).
pub(crate) fn foreground_group_of(pid: i32) -> Option<i32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, rest) = stat.rsplit_once(')')?;
    let f: Vec<&str> = rest.split_whitespace().collect();
    let pgrp: i32 = f.get(2)?.parse().ok()?;
    let tpgid: i32 = f.get(5)?.parse().ok()?;
    (tpgid > 0 && tpgid != pgrp).then_some(tpgid)
}

/// Whether `pid` leads the foreground group of its controlling terminal
/// (`/proc/PID/stat`: its pgrp is the terminal's `tpgid`).
fn in_foreground(pid: i32) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return false;
    };
    // The fields after the command name (which may hold spaces).
    let Some((_, rest)) = stat.rsplit_once(')') else {
        return false;
    };
    let f: Vec<&str> = rest.split_whitespace().collect();
    // state ppid pgrp session tty_nr tpgid
    matches!((f.get(2), f.get(5)), (Some(pgrp), Some(tpgid)) if pgrp == tpgid)
}

/// The interactive shell that is process `pid`, if it is one.
pub(crate) fn look(pid: i32) -> Option<Found> {
    let raw = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
    let argv: Vec<String> = raw
        .split(|b| *b == 0)
        .filter(|a| !a.is_empty())
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect();
    // Nothing more is read of a process that is no shell.
    shell_program(argv.first()?)?;
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let id = |key: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(key))
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|v| v.parse::<u32>().ok())
    };
    let uid = id("Uid:")?;
    let gid = id("Gid:")?;
    let user = nix::unistd::User::from_uid(nix::unistd::Uid::from_raw(uid))
        .ok()
        .flatten()
        .map(|u| u.name);
    let cwd = std::fs::read_link(format!("/proc/{pid}/cwd")).ok();
    shell_of(pid, argv, (uid, gid), user, cwd)
}

/// Process `pid` with `argv` as a [`Found`], when it is an interactive
/// shell (a known shell program reading its commands from the terminal);
/// `ids` is its user id and group, `user` its user's name, `cwd` its
/// working directory (as this machine's `/proc` or a host's says).
pub(crate) fn shell_of(
    pid: i32,
    argv: Vec<String>,
    ids: (u32, u32),
    user: Option<String>,
    cwd: Option<PathBuf>,
) -> Option<Found> {
    let program = shell_program(argv.first()?)?;
    if !reads_commands_from_terminal(&argv[1..]) {
        return None;
    }
    Some(Found {
        pid,
        program,
        uid: ids.0,
        gid: ids.1,
        user,
        cwd,
        argv,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_owned).collect()
    }

    #[test]
    fn shells_that_read_the_terminal_are_told_from_scripts() {
        for a in [
            "",
            "-l",
            "--login",
            "--norc",
            "-i",
            "--rcfile /x/setup -i",
            "+Z -f -i",
            "-o vi",
            "-s",
            "-s arg1",
        ] {
            assert!(reads_commands_from_terminal(&args(a)), "{a:?}");
        }
        for a in [
            "-c true",
            "-lc true",
            "script.sh",
            "-e script.sh",
            "-- script",
        ] {
            assert!(!reads_commands_from_terminal(&args(a)), "{a:?}");
        }
        assert_eq!(shell_program("-bash").as_deref(), Some("bash"));
        assert_eq!(shell_program("/usr/bin/zsh").as_deref(), Some("zsh"));
        assert_eq!(shell_program("-sh").as_deref(), Some("sh"));
        assert_eq!(shell_program("python3"), None);
    }
}
