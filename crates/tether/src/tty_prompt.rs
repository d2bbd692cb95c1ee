//! Asking the person at the terminal for a secret: on `/dev/tty` (so it
//! works with stdin and stdout redirected), echo off while they type, and
//! the terminal's settings put back after.

use std::io::{BufRead, BufReader, Write};

use rustix::termios::{LocalModes, OptionalActions, tcgetattr, tcsetattr};

/// Reads secrets from `/dev/tty`.
pub struct TtyPrompter;

impl tether_ssh::Prompter for TtyPrompter {
    fn secret(&self, prompt: &str) -> Option<String> {
        let tty = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open("/dev/tty")
            .ok()?;
        let saved = tcgetattr(&tty).ok()?;
        let mut quiet = saved.clone();
        quiet.local_modes.remove(LocalModes::ECHO);
        quiet.local_modes.insert(LocalModes::ECHONL);
        let mut out = &tty;
        let _ = out.write_all(prompt.as_bytes());
        let _ = out.flush();
        let _ = tcsetattr(&tty, OptionalActions::Flush, &quiet);
        let mut line = String::new();
        let read = BufReader::new(&tty).read_line(&mut line);
        let _ = tcsetattr(&tty, OptionalActions::Now, &saved);
        let secret = match read {
            Ok(n) if n > 0 => Some(line.trim_end_matches(['\r', '\n']).to_owned()),
            _ => None,
        };
        // The line read is wiped, not just freed.
        zeroize::Zeroize::zeroize(&mut line);
        secret
    }
}
