//! The terminal while the live view is on it: ratatui (crossterm's
//! backend) over the captured [`LocalTerminal`], every byte through its
//! tracked write, so the restore plan knows what the view changed (the
//! alternate screen, the hidden cursor) and puts back exactly that. It
//! draws what it is given; it decides nothing.

use std::cell::RefCell;
use std::io::Write;
use std::rc::Rc;

use anyhow::{Context, Result};
use ratatui::backend::CrosstermBackend;

use super::model::Model;
use super::render;
use crate::local_term::LocalTerminal;

/// The terminal while the view is on it: ratatui over the captured
/// terminal, every byte through [`LocalTerminal::write`] (so the restore
/// plan knows the alternate screen and the hidden cursor).
pub struct Screen {
    ui: Option<ratatui::Terminal<CrosstermBackend<Out>>>,
    term: Rc<RefCell<LocalTerminal>>,
}

impl Screen {
    /// The alternate screen entered, cleared, the cursor hidden.
    pub fn open(term: LocalTerminal) -> Result<Screen> {
        let term = Rc::new(RefCell::new(term));
        let mut out = Out {
            term: Rc::clone(&term),
            buf: Vec::new(),
        };
        enter(&mut out)?;
        // A viewport of the size this process reads from stdout, resized on
        // SIGWINCH: ratatui's full screen asks crossterm for the size at
        // every frame, which opens /dev/tty (the controlling terminal,
        // which need not be the one on stdout) each time.
        let options = ratatui::TerminalOptions {
            viewport: ratatui::Viewport::Fixed(area()),
        };
        let mut ui = ratatui::Terminal::with_options(CrosstermBackend::new(out), options)
            .context("cannot draw on the terminal")?;
        ui.hide_cursor()?;
        Ok(Screen { ui: Some(ui), term })
    }

    /// Gives the terminal back for a while (a question asked on it): put
    /// back exactly as on the way out.
    pub fn suspend(&mut self) {
        self.term.borrow_mut().suspend("");
    }

    /// Takes the terminal again after [`Screen::suspend`], the whole view
    /// drawn anew at the next tick.
    pub fn resume(&mut self) -> Result<()> {
        self.term.borrow_mut().resume()?;
        if let Some(ui) = self.ui.as_mut() {
            enter(ui.backend_mut())?;
            ui.hide_cursor()?;
            // A resize (to the same size, too) forgets what was drawn.
            ui.resize(area())?;
        }
        Ok(())
    }

    /// The terminal's new size: the whole view drawn anew at the next tick.
    pub fn resized(&mut self) -> Result<()> {
        if let Some(ui) = self.ui.as_mut() {
            ui.resize(area())?;
        }
        Ok(())
    }

    pub fn draw(&mut self, m: &Model, colour: bool) -> Result<()> {
        if let Some(ui) = self.ui.as_mut() {
            ui.draw(|f| render::draw(f, m, colour))?;
        }
        Ok(())
    }

    /// Puts the terminal back exactly (nothing after: the output that
    /// follows starts where the person's cursor was).
    pub fn leave(&mut self) {
        // ratatui shows the cursor again as it goes.
        self.ui.take();
        self.term.borrow_mut().restore("");
    }
}

impl Drop for Screen {
    fn drop(&mut self) {
        self.leave();
    }
}

/// The whole terminal, as large as stdout's says it is.
fn area() -> ratatui::layout::Rect {
    let (rows, cols) = crate::local_term::size();
    ratatui::layout::Rect::new(0, 0, cols, rows)
}

/// The alternate screen entered and cleared. Cleared here, not by
/// ratatui's `clear`, which asks the terminal where its cursor is (and
/// reads the answer from stdin, the keys').
fn enter(out: &mut impl Write) -> std::io::Result<()> {
    use ratatui::crossterm::terminal::{Clear, ClearType, EnterAlternateScreen};
    ratatui::crossterm::queue!(out, EnterAlternateScreen, Clear(ClearType::All))?;
    out.flush()
}

/// ratatui's writer: bytes gathered until a flush, then written through
/// the tracked terminal in one piece.
struct Out {
    term: Rc<RefCell<LocalTerminal>>,
    buf: Vec<u8>,
}

impl Write for Out {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.buf.extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        let r = self.term.borrow_mut().write(&self.buf);
        self.buf.clear();
        r
    }
}
