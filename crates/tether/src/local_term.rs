//! The person's own terminal while it shows a session: raw mode, the
//! capture of its keyboard and screen state (so it can be put back
//! exactly), every byte written to it tracked, and the restore on the way
//! out, whether by detach, the session ending, a signal or a panic (the
//! restore runs on drop). `~^Z` gives it back for a while (`suspend`, the
//! same restore) and takes it again (`resume`).

use std::io::Write;
use std::os::fd::AsFd;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use rustix::termios::{OptionalActions, Termios, tcgetattr, tcgetwinsize, tcsetattr};
use tether_term::capture::{
    ACTIVE_SCREEN_QUERY, baseline_from, hidden_screen_query, hidden_screen_return,
};
use tether_term::{
    Baseline, CaptureParser, CaptureReplies, ScreenTracker, plan_restore, plan_setup,
};

/// How long a terminal has to answer each capture transaction (one per
/// screen), as the seed specifies: at most 100 ms, then the fallback.
const CAPTURE_DEADLINE: Duration = Duration::from_millis(100);

/// The person's terminal, in raw mode until dropped.
pub struct LocalTerminal {
    original: Termios,
    baseline: Baseline,
    tracker: ScreenTracker,
    restored: bool,
}

/// The terminal's size, rows then columns (24x80 when unknown), at most
/// what a session's terminal may have (`TermSize::MAX_ROWS` x `MAX_COLS`:
/// a larger terminal shows the session in its top left part).
pub fn size() -> (u16, u16) {
    let size = match tcgetwinsize(std::io::stdout()) {
        Ok(w) if w.ws_row > 0 && w.ws_col > 0 => tether_transport::TermSize {
            rows: w.ws_row,
            cols: w.ws_col,
        },
        _ => tether_transport::TermSize::default(),
    };
    let size = size.clamped();
    (size.rows, size.cols)
}

impl LocalTerminal {
    /// Enters raw mode and captures the terminal's state. Returns the
    /// terminal and what the person typed during the capture (to be sent
    /// on).
    pub fn enter() -> Result<(LocalTerminal, Vec<u8>)> {
        let stdin = std::io::stdin();
        if !rustix::termios::isatty(&stdin) || !rustix::termios::isatty(std::io::stdout()) {
            bail!(
                "this needs a terminal on stdin and stdout; from a script use `tether screen` or `tether read`"
            );
        }
        let original = tcgetattr(&stdin).context("cannot read the terminal settings")?;
        let mut raw = original.clone();
        raw.make_raw();
        tcsetattr(&stdin, OptionalActions::Now, &raw)
            .context("cannot put the terminal in raw mode")?;
        let mut term = LocalTerminal {
            original,
            baseline: Baseline::Fallback,
            tracker: ScreenTracker::new(),
            restored: false,
        };
        let (active, mut typed) = transaction(ACTIVE_SCREEN_QUERY)?;
        if let Some(screen) = active.active_screen() {
            let switch = active.switch();
            match hidden_screen_query(screen, switch).map(|q| transaction(&q)) {
                Some(Ok((hidden, more))) => {
                    typed.extend(more);
                    term.baseline = baseline_from(&active, &hidden);
                }
                // Without mode 47, an alternate screen's hidden main
                // screen is not visited.
                None => term.baseline = baseline_from(&active, &CaptureReplies::unvisited()),
                // The switch may have reached the terminal without the
                // switch back: send that alone, and keep the fallback.
                Some(Err(_)) => {
                    let mut out = std::io::stdout().lock();
                    let _ = out.write_all(hidden_screen_return(screen, switch));
                    let _ = out.flush();
                }
            }
        }
        term.set_up()?;
        Ok((term, typed))
    }

    /// The setup plan written, the tracker starting from the baseline.
    fn set_up(&mut self) -> std::io::Result<()> {
        self.tracker = ScreenTracker::starting_on(self.baseline.screen());
        let setup = plan_setup(&self.baseline);
        self.write(&setup)
    }

    /// Gives the terminal back for a while (`~^Z`): restored exactly as on
    /// the way out (the restore plan, then `note`, then cooked mode), for
    /// [`LocalTerminal::resume`] to take it again.
    pub fn suspend(&mut self, note: &str) {
        self.put_back(note);
    }

    /// Takes the terminal again after [`LocalTerminal::suspend`]: its
    /// settings read anew (the person may have changed them meanwhile, as
    /// ssh allows), raw mode, and the setup plan with the tracker starting
    /// again from the baseline (what the far end set before is gone).
    pub fn resume(&mut self) -> Result<()> {
        let stdin = std::io::stdin();
        self.original = tcgetattr(&stdin).context("cannot read the terminal settings")?;
        let mut raw = self.original.clone();
        raw.make_raw();
        tcsetattr(&stdin, OptionalActions::Now, &raw)
            .context("cannot put the terminal in raw mode again")?;
        self.set_up()
            .context("cannot write to the terminal after resuming")
    }

    /// Writes session output to the terminal, tracking the modes it sets:
    /// only bytes the terminal took count (a transition commits once its
    /// last byte is written), so a failed write leaves nothing to undo
    /// that never happened.
    pub fn write(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        // Straight to the descriptor (std's stdout buffers lines, and a
        // buffered byte is not a written one).
        let mut out = std::io::stdout().lock();
        out.flush()?;
        let mut rest = bytes;
        while !rest.is_empty() {
            match rustix::io::write(out.as_fd(), rest) {
                Ok(0) => return Err(std::io::ErrorKind::WriteZero.into()),
                Ok(n) => {
                    self.tracker.written(&rest[..n]);
                    rest = &rest[n..];
                }
                Err(rustix::io::Errno::INTR) => {}
                // A terminal left non-blocking by someone: wait until it
                // takes more.
                Err(rustix::io::Errno::AGAIN) => {
                    let mut fds = [rustix::event::PollFd::new(
                        &out,
                        rustix::event::PollFlags::OUT,
                    )];
                    let _ = rustix::event::poll(&mut fds, None);
                }
                Err(e) => return Err(e.into()),
            }
        }
        Ok(())
    }

    /// Returns the terminal to its captured state, then writes `farewell`.
    pub fn restore(&mut self, farewell: &str) {
        if self.restored {
            return;
        }
        self.restored = true;
        self.put_back(farewell);
    }

    /// The restore plan, then `farewell`, then the captured settings.
    fn put_back(&mut self, farewell: &str) {
        // Attributes and the cursor are in the plan when the session changed
        // them (always, on a fallback baseline).
        let mut bytes = plan_restore(&self.baseline, self.tracker.state());
        bytes.extend_from_slice(farewell.as_bytes());
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(&bytes);
        let _ = out.flush();
        let _ = tcsetattr(std::io::stdin(), OptionalActions::Drain, &self.original);
    }
}

impl Drop for LocalTerminal {
    fn drop(&mut self) {
        self.restore("\r\n");
    }
}

/// Writes one query batch and reads replies until its DA1 answer or the
/// deadline. Returns the replies and every other byte read.
fn transaction(query: &[u8]) -> Result<(CaptureReplies, Vec<u8>)> {
    let mut out = std::io::stdout().lock();
    out.write_all(query)?;
    out.flush()?;
    drop(out);
    let stdin = std::io::stdin();
    let mut parser = CaptureParser::new();
    let deadline = Instant::now() + CAPTURE_DEADLINE;
    let mut buf = [0u8; 1024];
    while !parser.is_complete() {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            break;
        }
        let timeout = rustix::event::Timespec {
            tv_sec: left.as_secs() as i64,
            tv_nsec: i64::from(left.subsec_nanos()),
        };
        let mut fds = [rustix::event::PollFd::new(
            &stdin,
            rustix::event::PollFlags::IN,
        )];
        match rustix::event::poll(&mut fds, Some(&timeout)) {
            Ok(0) => break,
            Ok(_) => {}
            Err(rustix::io::Errno::INTR) => continue,
            Err(e) => return Err(e.into()),
        }
        let n = stdin.as_fd();
        let n = rustix::io::read(n, &mut buf).context("cannot read the terminal")?;
        if n == 0 {
            break;
        }
        parser.feed(&buf[..n]);
    }
    Ok(parser.finish())
}

/// Stops tether as Ctrl-Z stops a program (SIGTSTP, whose default action
/// stops every thread); returns once it is continued (`fg`). Where nothing
/// can continue it (an orphaned process group), the kernel discards the
/// signal and this returns at once.
pub fn stop_until_continued() -> Result<()> {
    nix::sys::signal::raise(nix::sys::signal::Signal::SIGTSTP)
        .context("cannot stop tether with SIGTSTP")
}

/// Stops its stdin reader when dropped (so a front-end that goes on
/// reading the terminal after a bridge, `tether shell` after `!attach`,
/// gets every key typed after it).
pub struct StdinReader {
    wake: Option<std::os::unix::net::UnixStream>,
}

impl Drop for StdinReader {
    fn drop(&mut self) {
        // Closing our end wakes the reader's poll; it then stops.
        self.wake.take();
    }
}

/// Reads stdin on a thread of its own, sending what it reads to `tx`,
/// until the returned guard is dropped or `tx` closes. The thread polls
/// stdin and a wake-up socket, so it stops without reading another key.
pub fn spawn_stdin_reader(tx: tokio::sync::mpsc::Sender<Vec<u8>>) -> StdinReader {
    let Ok((wake, woken)) = std::os::unix::net::UnixStream::pair() else {
        return StdinReader { wake: None };
    };
    let _ = std::thread::Builder::new()
        .name("tether-stdin".into())
        .spawn(move || {
            let stdin = std::io::stdin();
            let mut buf = vec![0u8; 4096];
            loop {
                let mut fds = [
                    rustix::event::PollFd::new(&stdin, rustix::event::PollFlags::IN),
                    rustix::event::PollFd::new(&woken, rustix::event::PollFlags::IN),
                ];
                match rustix::event::poll(&mut fds, None) {
                    Ok(_) => {}
                    Err(rustix::io::Errno::INTR) => continue,
                    Err(_) => break,
                }
                if !fds[1].revents().is_empty() {
                    break;
                }
                if fds[0].revents().is_empty() {
                    continue;
                }
                match rustix::io::read(stdin.as_fd(), &mut buf) {
                    Ok(0) => break,
                    Ok(n) => {
                        if tx.blocking_send(buf[..n].to_vec()).is_err() {
                            break;
                        }
                    }
                    Err(rustix::io::Errno::INTR | rustix::io::Errno::AGAIN) => {}
                    Err(_) => break,
                }
            }
        });
    StdinReader { wake: Some(wake) }
}
