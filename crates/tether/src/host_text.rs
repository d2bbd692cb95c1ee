//! A host's output on tether's own stdout and stderr. On a terminal its
//! control characters are shown escaped, as the live view shows them
//! (`tether_term::printable::Escaper`: ESC, C0 but TAB and LF, DEL, C1,
//! bidi and zero-width characters, bytes that are not UTF-8), so a host
//! cannot retitle the person's terminal, write its clipboard (OSC 52) or
//! move what they read; on a pipe or a file the bytes go out exact, as
//! pdsh and clush give them to the tools after them. `--raw` passes them
//! exact on a terminal too.

use std::borrow::Cow;
use std::io::{IsTerminal, Write};

use tether_cluster::exec::Kept;
use tether_term::printable::{Escaper, escaped_bytes};

/// How one of tether's streams gets a host's bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HostBytes {
    /// As they came (a pipe, a file, or `--raw`).
    Exact,
    /// Controls shown escaped (a terminal).
    Escaped,
}

impl HostBytes {
    /// For a stream that `is_terminal`; `raw`: exact whatever it is.
    pub fn for_stream(is_terminal: bool, raw: bool) -> HostBytes {
        if is_terminal && !raw {
            HostBytes::Escaped
        } else {
            HostBytes::Exact
        }
    }

    /// `bytes` as this stream gets them (whole lines, their newlines
    /// included, so a CRLF end passes).
    pub fn shown(self, bytes: &[u8]) -> Cow<'_, [u8]> {
        match self {
            HostBytes::Exact => Cow::Borrowed(bytes),
            HostBytes::Escaped => escaped_bytes(bytes, true),
        }
    }

    /// `kept`'s bytes onto `out`, piece by piece, as this stream gets
    /// them.
    pub fn write_kept(self, kept: &Kept, out: &mut impl Write) -> std::io::Result<()> {
        match self {
            HostBytes::Exact => kept.each(|b| out.write_all(b)),
            HostBytes::Escaped => {
                let mut e = Escaper::new(true);
                let mut buf = Vec::new();
                kept.each(|b| {
                    buf.clear();
                    e.push(b, &mut buf);
                    out.write_all(&buf)
                })?;
                buf.clear();
                e.finish(&mut buf);
                out.write_all(&buf)
            }
        }
    }
}

/// How tether's stdout and stderr get hosts' bytes, decided once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shown {
    /// stdout's.
    pub stdout: HostBytes,
    /// stderr's.
    pub stderr: HostBytes,
}

impl Shown {
    /// For this process's stdout and stderr; `raw`: exact on both.
    pub fn here(raw: bool) -> Shown {
        Shown {
            stdout: HostBytes::for_stream(std::io::stdout().is_terminal(), raw),
            stderr: HostBytes::for_stream(std::io::stderr().is_terminal(), raw),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_terminal_gets_controls_escaped_a_pipe_gets_them_exact() {
        let host = b"\x1b]0;pwned\x07\x1b]52;c;aGk=\x07x\r\n";
        let tty = HostBytes::for_stream(true, false);
        assert_eq!(
            &*tty.shown(host),
            b"\\x1b]0;pwned\\x07\\x1b]52;c;aGk=\\x07x\r\n"
        );
        assert_eq!(&*HostBytes::for_stream(false, false).shown(host), host);
        assert_eq!(&*HostBytes::for_stream(true, true).shown(host), host);
        let kept = Kept::from_bytes(host);
        let mut out = Vec::new();
        tty.write_kept(&kept, &mut out).unwrap();
        assert_eq!(out, tty.shown(host).into_owned());
    }
}
