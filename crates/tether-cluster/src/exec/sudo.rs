//! `--sudo`: one password, typed on every host into the prompt sudo itself
//! prints, and only there.
//!
//! The command runs on a quiet terminal ([`CommandTerminal::Quiet`]: sudo
//! reads a password only from a terminal) with `SUDO_PROMPT` set to a
//! marker made for this run (sudo's own way to set its prompt, as `-p`
//! does, honoured by every sudo the command starts). The output is watched
//! for that marker: the first time it comes the password is typed, once
//! per host. If it comes again, sudo refused the password (or a later sudo
//! asked anew: the stream cannot tell which, and the message says both);
//! it is not typed again, and the host is interrupted (a Ctrl-C on its
//! terminal) and reported. The marker is taken out of the output, as is the newline sudo
//! prints after reading the password, so the output reads as a run without
//! a prompt. No text is guessed: a prompt other than the marker (another
//! program's, or sudo's run with `-p`) is never answered.
//!
//! The password lives in a [`Zeroizing`] buffer wiped when the run drops
//! it. It is written only to the channel's stdin; it is in no argv, no
//! environment, no output, no log and no spill file.
//!
//! This module does not read the password (the front-end does, from
//! `/dev/tty` or a file), and knows nothing of how output is printed.

use std::sync::Mutex;
use std::time::Duration;

use tokio::sync::{Notify, mpsc};
use zeroize::Zeroizing;

pub use tether_ssh::CommandTerminal;

/// The byte a terminal turns into SIGINT for its foreground programs.
const CTRL_C: u8 = 0x03;

/// How often the Ctrl-C is typed again until the command ends: sudo may
/// take one in the moment between printing its prompt and reading (its
/// handler notes the signal, then the read waits on), so one is not enough.
const INTERRUPT_AGAIN: Duration = Duration::from_millis(250);

/// A run's sudo password, and the marker its prompts carry.
pub struct Sudo {
    password: Zeroizing<Vec<u8>>,
    marker: Vec<u8>,
}

impl std::fmt::Debug for Sudo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Sudo { password: <hidden> }")
    }
}

impl Sudo {
    /// A run's sudo with `password` (without its newline); `None` when no
    /// random marker could be made.
    pub fn new(password: Zeroizing<Vec<u8>>) -> Option<Sudo> {
        let mut nonce = [0u8; 8];
        getrandom::fill(&mut nonce).ok()?;
        let hex: String = nonce.iter().map(|b| format!("{b:02x}")).collect();
        // No `%` (sudo expands %u, %h, %p), no quote: it goes in '…'.
        Some(Self::with_marker(password, format!("[tether-sudo-{hex}]")))
    }

    fn with_marker(password: Zeroizing<Vec<u8>>, marker: String) -> Sudo {
        Sudo {
            password,
            marker: marker.into_bytes(),
        }
    }

    /// `command` as the host's shell runs it, with sudo's prompt set.
    pub fn command(&self, command: &str) -> String {
        format!(
            "export SUDO_PROMPT='{}'; {command}",
            String::from_utf8_lossy(&self.marker)
        )
    }

    /// `command` as a persistent shell runs it: sudo's prompt set, ending
    /// in a newline (a session streams whole lines: a prompt left
    /// unfinished would not be seen until the command's end).
    pub fn line_command(&self, command: &str) -> String {
        format!(
            "SUDO_PROMPT=$(printf '%s\\n.' '{}'); export SUDO_PROMPT=\"${{SUDO_PROMPT%.}}\"; {command}",
            String::from_utf8_lossy(&self.marker)
        )
    }

    /// `text` with sudo's prompts (and the newline after each) taken out,
    /// and how many there were.
    pub fn take_prompts(&self, text: &str) -> (String, usize) {
        let Ok(marker) = std::str::from_utf8(&self.marker) else {
            return (text.to_owned(), 0);
        };
        let asked = text.matches(marker).count();
        if asked == 0 {
            return (text.to_owned(), 0);
        }
        let mut shown = String::with_capacity(text.len());
        let mut rest = text;
        while let Some(at) = rest.find(marker) {
            shown.push_str(&rest[..at]);
            rest = &rest[at + marker.len()..];
            rest = rest
                .strip_prefix("\r\n")
                .or(rest.strip_prefix('\n'))
                .unwrap_or(rest);
        }
        shown.push_str(rest);
        (shown, asked)
    }

    /// The password and a newline as text, for a session whose input is
    /// text; `None` when the password is not UTF-8.
    pub fn typed_line(&self) -> Option<Zeroizing<String>> {
        let text = std::str::from_utf8(&self.password).ok()?;
        let mut line = Zeroizing::new(String::with_capacity(text.len() + 1));
        line.push_str(text);
        line.push('\n');
        Some(line)
    }

    /// A watcher for one host's output.
    pub fn watch(&self) -> Watch<'_> {
        Watch {
            sudo: self,
            held: Vec::new(),
            prompts: 0,
            after_prompt: false,
        }
    }
}

/// What to write to a host's terminal after a piece of its output.
#[derive(Debug, PartialEq, Eq)]
pub enum Answer {
    /// sudo asked: the password and a newline.
    Password(Zeroizing<Vec<u8>>),
    /// sudo asked again (the password was refused): a Ctrl-C.
    Interrupt(u8),
}

impl Answer {
    /// The bytes to write, moved out (the buffer left behind is wiped).
    pub fn into_bytes(self) -> Vec<u8> {
        match self {
            Answer::Password(mut typed) => std::mem::take(&mut *typed),
            Answer::Interrupt(b) => vec![b],
        }
    }
}

/// One host's output, watched for sudo's prompt.
pub struct Watch<'a> {
    sudo: &'a Sudo,
    /// Output held back: it may be the start of a marker.
    held: Vec<u8>,
    prompts: u32,
    /// The byte after a prompt: sudo's newline after the password.
    after_prompt: bool,
}

impl Watch<'_> {
    /// True once sudo asked a second time: the password was refused.
    pub fn refused(&self) -> bool {
        self.prompts > 1
    }

    /// Takes a piece of output; returns the output to pass on (markers
    /// taken out) and what to write to the host, in order.
    pub fn feed(&mut self, bytes: &[u8]) -> (Vec<u8>, Vec<Answer>) {
        let marker = &self.sudo.marker;
        self.held.extend_from_slice(bytes);
        let mut out = Vec::with_capacity(self.held.len());
        let mut answers = Vec::new();
        let mut rest = &self.held[..];
        loop {
            if self.after_prompt && !rest.is_empty() {
                self.after_prompt = false;
                if let Some(after) = rest
                    .strip_prefix(b"\r\n".as_slice())
                    .or(rest.strip_prefix(b"\n".as_slice()))
                {
                    rest = after;
                }
            }
            match memchr::memmem::find(rest, marker) {
                Some(at) => {
                    out.extend_from_slice(&rest[..at]);
                    rest = &rest[at + marker.len()..];
                    self.prompts += 1;
                    self.after_prompt = self.prompts == 1;
                    answers.push(if self.prompts == 1 {
                        let mut typed =
                            Zeroizing::new(Vec::with_capacity(self.sudo.password.len() + 1));
                        typed.extend_from_slice(&self.sudo.password);
                        typed.push(b'\n');
                        Answer::Password(typed)
                    } else {
                        Answer::Interrupt(CTRL_C)
                    });
                }
                None => break,
            }
        }
        // Keep back the longest tail that could begin a marker.
        let keep = (1..marker.len().min(rest.len() + 1))
            .rev()
            .find(|&n| rest.ends_with(&marker[..n]))
            .unwrap_or(0);
        out.extend_from_slice(&rest[..rest.len() - keep]);
        self.held = rest[rest.len() - keep..].to_vec();
        (out, answers)
    }

    /// The output held back, at the end.
    pub fn finish(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.held)
    }
}

/// One host's side of `--sudo`: its watch, the answers it writes on the
/// terminal, and the Ctrl-C typed again until the command ends.
pub(crate) struct HostSudo<'a> {
    watch: Mutex<Watch<'a>>,
    answers: mpsc::Sender<Vec<u8>>,
    asked_again: Notify,
}

impl<'a> HostSudo<'a> {
    /// The host's sudo, and what its terminal reads.
    pub(crate) fn new(sudo: &'a Sudo) -> (HostSudo<'a>, mpsc::Receiver<Vec<u8>>) {
        let (answers, typed) = mpsc::channel(4);
        let host = HostSudo {
            watch: Mutex::new(sudo.watch()),
            answers,
            asked_again: Notify::new(),
        };
        (host, typed)
    }

    /// Takes a piece of stdout: the output to pass on, and the answers to
    /// write ([`HostSudo::answer`]), in order.
    pub(crate) fn feed(&self, bytes: &[u8]) -> (Vec<u8>, Vec<Answer>) {
        let Ok(mut watch) = self.watch.lock() else {
            return (bytes.to_vec(), Vec::new());
        };
        let (out, answers) = watch.feed(bytes);
        if answers.iter().any(|a| matches!(a, Answer::Interrupt(_))) {
            self.asked_again.notify_one();
        }
        (out, answers)
    }

    /// Writes `answers` on the host's terminal.
    pub(crate) async fn answer(&self, answers: Vec<Answer>) {
        for a in answers {
            let _ = self.answers.send(a.into_bytes()).await;
        }
    }

    /// Once sudo asked again, types Ctrl-C again and again; never returns
    /// (the command's end ends it).
    pub(crate) async fn keep_interrupting(&self) -> std::convert::Infallible {
        self.asked_again.notified().await;
        loop {
            tokio::time::sleep(INTERRUPT_AGAIN).await;
            if self.answers.send(vec![CTRL_C]).await.is_err() {
                break;
            }
        }
        std::future::pending().await
    }

    /// At the command's end: whether sudo asked again, and the output held
    /// back.
    pub(crate) fn finish(self) -> (bool, Vec<u8>) {
        match self.watch.into_inner() {
            Ok(mut w) => (w.refused(), w.finish()),
            Err(_) => (false, Vec::new()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sudo() -> Sudo {
        Sudo::with_marker(Zeroizing::new(b"pw".to_vec()), "[M]".into())
    }

    fn run(s: &Sudo, chunks: &[&[u8]]) -> (Vec<u8>, Vec<Answer>, bool) {
        let mut w = s.watch();
        let mut out = Vec::new();
        let mut answers = Vec::new();
        for c in chunks {
            let (o, a) = w.feed(c);
            out.extend(o);
            answers.extend(a);
        }
        out.extend(w.finish());
        (out, answers, w.refused())
    }

    #[test]
    fn the_prompt_is_answered_once_and_taken_out_even_split() {
        let s = sudo();
        let (out, answers, refused) = run(&s, &[b"a\n[", b"M", b"]", b"\nuid=0\n"]);
        assert_eq!(out, b"a\nuid=0\n");
        assert_eq!(
            answers,
            [Answer::Password(Zeroizing::new(b"pw\n".to_vec()))]
        );
        assert!(!refused);
    }

    #[test]
    fn a_second_prompt_is_refused_with_an_interrupt_not_the_password() {
        let s = sudo();
        let (out, answers, refused) = run(
            &s,
            &[b"[M]\nSorry, try again.\n[M]", b"\nsudo: 1 incorrect\n"],
        );
        assert_eq!(out, b"Sorry, try again.\n\nsudo: 1 incorrect\n");
        assert_eq!(answers.len(), 2);
        assert_eq!(answers[1], Answer::Interrupt(CTRL_C));
        assert!(refused);
    }

    #[test]
    fn text_like_a_prompt_is_not_answered_and_passes_whole() {
        let s = sudo();
        let (out, answers, _) = run(&s, &[b"[sudo] password for x: [", b"M x]"]);
        assert_eq!(out, b"[sudo] password for x: [M x]");
        assert!(answers.is_empty());
    }

    #[test]
    fn a_sessions_prompt_is_a_whole_line_taken_out_with_its_newline() {
        let s = sudo();
        assert_eq!(
            s.line_command("sudo id"),
            "SUDO_PROMPT=$(printf '%s\\n.' '[M]'); export SUDO_PROMPT=\"${SUDO_PROMPT%.}\"; sudo id"
        );
        assert_eq!(s.take_prompts("a\n[M]\nb\n[M]\r\n"), ("a\nb\n".into(), 2));
        assert_eq!(s.take_prompts("[x]\n"), ("[x]\n".into(), 0));
    }

    #[test]
    fn the_command_sets_the_prompt_and_the_marker_is_fresh() {
        let a = Sudo::new(Zeroizing::new(b"pw".to_vec())).unwrap();
        let b = Sudo::new(Zeroizing::new(b"pw".to_vec())).unwrap();
        assert_ne!(a.marker, b.marker);
        let c = a.command("sudo id");
        assert!(c.starts_with("export SUDO_PROMPT='[tether-sudo-"), "{c}");
        assert!(c.ends_with("]'; sudo id") && !c.contains("pw"), "{c}");
        assert!(!format!("{a:?}").contains("pw"));
    }
}
