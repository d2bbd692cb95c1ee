//! What the live view looks like: the title with the tally, one line per
//! state with its hosts folded, the hosts (or groups) list beside the
//! selection's output (or its diff against the largest group), and a
//! footer with the keys or the question asked. Draws a [`Model`] into a
//! ratatui frame; reads nothing else. Every text from a host (names,
//! output, errors) goes through `printable::escaped` (output lines, as
//! bytes, through `printable::escaped_bytes`), so no byte of it
//! acts on the terminal. Without colour (`NO_COLOR`), states and diffs are
//! told by words and signs alone.

use std::borrow::Cow;

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph};
use tether_cluster::exec::Stream;

use super::model::{Ask, Model, Pane, State};

/// The keys, as the footer lists them.
pub const FOOTER: &str =
    "↑↓ select  Tab groups  Enter follow  PgUp/Dn  d diff  c cancel host  C/q cancel";

/// Draws `m`; `colour` false draws no colour (NO_COLOR).
pub fn draw(f: &mut Frame, m: &Model, colour: bool) {
    let [title, states, middle, footer] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(State::ALL.len() as u16),
        Constraint::Min(3),
        Constraint::Length(1),
    ])
    .areas(f.area());
    f.render_widget(Paragraph::new(title_line(m)), title);
    f.render_widget(Paragraph::new(state_lines(m, colour)), states);
    let list_width = (middle.width / 3).clamp(16, 40);
    let [list, output] =
        Layout::horizontal([Constraint::Length(list_width), Constraint::Min(10)]).areas(middle);
    draw_list(f, m, list, colour);
    draw_output(f, m, output, colour);
    f.render_widget(Paragraph::new(footer_line(m)), footer);
}

fn printable(text: &str) -> Cow<'_, str> {
    tether_term::printable::escaped(text, false)
}

fn title_line(m: &Model) -> Line<'static> {
    let failed = m.count(&[State::Failed, State::Cancelled]);
    let running = m.count(&[State::Connecting, State::Running]);
    let over = m.count(&[State::Done, State::Failed, State::Cancelled]);
    Line::from(vec![
        Span::styled(
            format!(
                "[{over}/{} done] {failed} failed, {running} running",
                m.hosts.len()
            ),
            Style::new().add_modifier(Modifier::BOLD),
        ),
        Span::raw(format!("  tether exec: {}", printable(&m.command))),
    ])
}

fn state_style(s: State, colour: bool) -> Style {
    if !colour {
        return Style::new();
    }
    let c = match s {
        State::Waiting => return Style::new(),
        State::Connecting => Color::Cyan,
        State::Running => Color::Yellow,
        State::Done => Color::Green,
        State::Failed => Color::Red,
        State::Cancelled => Color::Magenta,
    };
    Style::new().fg(c)
}

fn state_lines(m: &Model, colour: bool) -> Vec<Line<'static>> {
    m.summary()
        .iter()
        .map(|(s, n, folded)| {
            Line::from(vec![
                Span::styled(format!("{:<10}", s.label()), state_style(*s, colour)),
                Span::raw(format!(" {n:>5}  {}", printable(folded))),
            ])
        })
        .collect()
}

/// The first row shown of a list of `rows` with `selected` in view in
/// `height` rows.
fn first_row(selected: usize, height: usize) -> usize {
    if height == 0 || selected < height {
        0
    } else {
        selected + 1 - height
    }
}

fn draw_list(f: &mut Frame, m: &Model, area: Rect, colour: bool) {
    let height = area.height.saturating_sub(2) as usize;
    let (title, rows): (&str, Vec<Line>) = match m.pane {
        Pane::Hosts => {
            let from = first_row(m.host_row, height);
            let rows = m
                .hosts
                .iter()
                .enumerate()
                .skip(from)
                .take(height)
                .map(|(i, h)| {
                    row(
                        i == m.host_row,
                        vec![
                            Span::raw(format!("{} ", printable(&h.name))),
                            Span::styled(h.state.label(), state_style(h.state, colour)),
                        ],
                    )
                })
                .collect();
            ("hosts (Tab: groups)", rows)
        }
        Pane::Groups => {
            let from = first_row(m.group_row, height);
            let rows = m
                .groups
                .iter()
                .enumerate()
                .skip(from)
                .take(height)
                .map(|(i, g)| {
                    row(
                        i == m.group_row,
                        vec![Span::raw(format!(
                            "{} ({}) {}",
                            printable(&g.hosts.fold()),
                            g.hosts.len(),
                            printable(&g.status)
                        ))],
                    )
                })
                .collect();
            ("groups (Tab: hosts)", rows)
        }
    };
    let block = Block::new().borders(Borders::ALL).title(title);
    f.render_widget(Paragraph::new(rows).block(block), area);
}

/// A list row; the selected one in reverse video (not a colour).
fn row(selected: bool, spans: Vec<Span<'static>>) -> Line<'static> {
    let mut spans = spans;
    spans.insert(0, Span::raw(if selected { "> " } else { "  " }));
    let line = Line::from(spans);
    if selected {
        line.style(Style::new().add_modifier(Modifier::REVERSED))
    } else {
        line
    }
}

fn draw_output(f: &mut Frame, m: &Model, area: Rect, colour: bool) {
    let height = area.height.saturating_sub(2) as usize;
    let (title, lines) = if m.diff {
        diff_lines(m, colour)
    } else {
        output_lines(m, colour)
    };
    // The end of the text, `scroll` lines back.
    let end = lines
        .len()
        .saturating_sub(m.scroll.min(lines.len().saturating_sub(height)));
    let start = end.saturating_sub(height);
    let shown: Vec<Line> = lines[start..end].to_vec();
    let block = Block::new().borders(Borders::ALL).title(title);
    f.render_widget(Paragraph::new(shown).block(block), area);
}

fn output_lines(m: &Model, colour: bool) -> (String, Vec<Line<'static>>) {
    let follow = if m.scroll == 0 {
        "following"
    } else {
        "scrolled back; End: follow"
    };
    let title = format!("{} ({follow})", printable(&m.shown_title()));
    let Some(host) = m.shown().and_then(|i| m.hosts.get(i)) else {
        return (
            "output".into(),
            vec![Line::raw("no group yet: none is over")],
        );
    };
    let err = if colour {
        Style::new().fg(Color::Red)
    } else {
        Style::new().add_modifier(Modifier::DIM)
    };
    let mut lines: Vec<Line> = Vec::new();
    if host.tail.dropped > 0 {
        lines.push(Line::raw(format!(
            "({} earlier lines not kept here; all are printed at the end)",
            host.tail.dropped
        )));
    }
    for l in host.tail.lines() {
        // The one escape every printer of host bytes uses (bytes that are
        // not UTF-8 as `\xNN`), so what is printed after shows alike.
        let text = String::from_utf8_lossy(&tether_term::printable::escaped_bytes(&l.bytes, false))
            .into_owned();
        lines.push(match l.stream {
            Stream::Stdout => Line::raw(text),
            Stream::Stderr => Line::styled(text, err),
        });
    }
    if let Some(status) = &host.status {
        lines.push(Line::styled(
            format!("[{}]", printable(status)),
            Style::new().add_modifier(Modifier::BOLD),
        ));
    }
    (title, lines)
}

/// The selection's stdout against the largest group's, as `--diff`.
fn diff_lines(m: &Model, colour: bool) -> (String, Vec<Line<'static>>) {
    let Some((base, selected)) = m.diff_pair() else {
        return (
            "diff".into(),
            vec![Line::raw("no diff yet: the selection is not over")],
        );
    };
    let title = format!(
        "diff: {} ({}) -> {} ({})",
        printable(&base.hosts.fold()),
        base.hosts.len(),
        printable(&selected.hosts.fold()),
        selected.hosts.len()
    );
    if std::ptr::eq(base, selected) {
        return (
            title,
            vec![Line::raw("the largest group itself: nothing to diff")],
        );
    }
    let text = |i: usize| -> String {
        let mut t = String::new();
        if let Some(h) = m.hosts.get(i) {
            for l in h.tail.lines().iter().filter(|l| l.stream == Stream::Stdout) {
                t.push_str(&String::from_utf8_lossy(&l.bytes));
                t.push('\n');
            }
        }
        t
    };
    let (a, b) = (text(base.first), text(selected.first));
    let diff = similar::TextDiff::from_lines(&a, &b);
    let style = |sign: char| match (colour, sign) {
        (true, '-') => Style::new().fg(Color::Red),
        (true, '+') => Style::new().fg(Color::Green),
        _ => Style::new(),
    };
    let mut lines = Vec::new();
    for change in diff.iter_all_changes() {
        let sign = match change.tag() {
            similar::ChangeTag::Delete => '-',
            similar::ChangeTag::Insert => '+',
            similar::ChangeTag::Equal => ' ',
        };
        let text = change.value().trim_end_matches('\n');
        lines.push(Line::styled(
            format!("{sign}{}", printable(text)),
            style(sign),
        ));
    }
    if lines
        .iter()
        .all(|l| l.spans.first().is_some_and(|s| s.content.starts_with(' ')))
    {
        lines.push(Line::raw(format!(
            "(same stdout; status {})",
            printable(&selected.status)
        )));
    }
    (title, lines)
}

fn footer_line(m: &Model) -> Line<'static> {
    let bold = Style::new().add_modifier(Modifier::BOLD | Modifier::REVERSED);
    if let Some(ask) = &m.ask {
        let q = match ask {
            Ask::CancelHost(h) => format!("cancel {}? y/n", printable(h)),
            Ask::CancelAll => "cancel every host still running or waiting, and quit? y/n".into(),
        };
        return Line::styled(q, bold);
    }
    if let Some(note) = &m.note {
        return Line::styled(printable(note).into_owned(), bold);
    }
    Line::raw(FOOTER)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use ratatui::backend::TestBackend;
    use ratatui::buffer::Buffer;
    use tether_cluster::exec::{HostResult, Kept, Progress};

    use super::*;

    fn drawn(m: &Model, colour: bool) -> Buffer {
        let mut m = m.clone();
        m.prepare();
        let m = &m;
        let mut t = ratatui::Terminal::new(TestBackend::new(80, 24)).unwrap();
        t.draw(|f| draw(f, m, colour)).unwrap();
        t.backend().buffer().clone()
    }

    fn text(b: &Buffer) -> String {
        let area = b.area;
        (0..area.height)
            .map(|y| {
                (0..area.width)
                    .map(|x| b[(x, y)].symbol())
                    .collect::<String>()
                    + "\n"
            })
            .collect()
    }

    fn model() -> Model {
        let hosts: Vec<String> = (1..=3).map(|i| format!("n{i}")).collect();
        let mut m = Model::new("cat x", &hosts);
        m.feed(&Progress::Started("n1".into()));
        m.feed(&Progress::Line(
            "n1".into(),
            Stream::Stdout,
            b"\x1b]52;c;aGk=\x07\x1b[2Jred".to_vec(),
        ));
        m.feed(&Progress::Done(HostResult {
            host: "n1".into(),
            exit_code: Some(0),
            stdout: Kept::from_bytes(b"x\n"),
            ..HostResult::default()
        }));
        m.feed(&Progress::Started("n2".into()));
        m.feed(&Progress::Connected("n2".into()));
        m
    }

    #[test]
    fn a_hosts_bytes_are_shown_escaped_never_sent() {
        let b = drawn(&model(), true);
        let t = text(&b);
        assert!(!t.contains('\x1b') && !t.contains('\x07'), "{t}");
        assert!(t.contains(r"\x1b]52;c;aGk=\x07\x1b[2Jred"), "{t}");
        assert!(
            t.contains("[1/3 done] 0 failed, 1 running  tether exec: cat x"),
            "{t}"
        );
        assert!(t.contains("running        1  n2"), "{t}");
        assert!(t.contains("waiting        1  n3"), "{t}");
    }

    #[test]
    fn the_diff_view_shows_the_selection_against_the_largest_group() {
        let hosts: Vec<String> = (1..=3).map(|i| format!("n{i}")).collect();
        let mut m = Model::new("cat conf", &hosts);
        for (h, out) in [("n1", "a\nx\n"), ("n2", "a\ny\n"), ("n3", "a\ny\n")] {
            for l in out.lines() {
                m.feed(&Progress::Line(
                    h.into(),
                    Stream::Stdout,
                    l.as_bytes().to_vec(),
                ));
            }
            m.feed(&Progress::Done(HostResult {
                host: h.into(),
                exit_code: Some(0),
                stdout: Kept::from_bytes(out.as_bytes()),
                ..HostResult::default()
            }));
        }
        m.diff = true;
        let t = text(&drawn(&m, false));
        assert!(t.contains("diff: n[2-3] (2) -> n1 (1)"), "{t}");
        for want in ["│ a ", "│-y ", "│+x "] {
            assert!(t.contains(want), "{want:?} in:\n{t}");
        }
    }

    #[test]
    fn no_colour_without_colour_and_some_with() {
        let coloured = |b: &Buffer| {
            b.content()
                .iter()
                .any(|c| c.fg != Color::Reset || c.bg != Color::Reset)
        };
        assert!(coloured(&drawn(&model(), true)));
        assert!(!coloured(&drawn(&model(), false)));
    }
}
