//! Text for people from raw bytes and long strings: the projection of a
//! start-up failure's or a look's output, and clipping by characters.

use tether_term::TextProjector;

/// At most `limit` characters of `s`, with `…` when cut.
pub(crate) fn clip_chars(s: &str, limit: usize) -> String {
    match s.char_indices().nth(limit) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_owned(),
    }
}

/// Projects raw bytes to at most `limit` characters of text (for start-up
/// failures).
pub(crate) fn project_all(raw: &[u8], limit: usize) -> String {
    let mut p = TextProjector::new();
    let mut out = String::new();
    p.feed(raw, &mut out);
    p.finish(&mut out);
    if out.chars().count() > limit {
        let skip = out.chars().count() - limit;
        out = out.chars().skip(skip).collect();
    }
    out
}
