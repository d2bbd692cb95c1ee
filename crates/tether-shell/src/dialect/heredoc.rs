//! Rough checks for unfinished input that a syntax checker does not
//! report: an unterminated here-document (zsh, dash, busybox sh: a sourced
//! file's heredoc simply runs to the end of the file, which would swallow
//! the engine's own last line), and a last line continued by a backslash.

/// True when some `<<WORD` (or `<<-WORD`) outside quotes has no line equal
/// to `WORD` after it.
pub fn unterminated_heredoc(code: &str) -> bool {
    let mut pending: Vec<(String, bool)> = Vec::new();
    for line in code.lines() {
        if let Some((word, strip_tabs)) = pending.first() {
            let body = if *strip_tabs {
                line.trim_start_matches('\t')
            } else {
                line
            };
            if body == word {
                pending.remove(0);
            }
            continue;
        }
        pending.extend(heredoc_words(line));
    }
    !pending.is_empty()
}

/// The delimiters of the heredocs a line opens, with whether `<<-` strips
/// leading tabs.
fn heredoc_words(line: &str) -> Vec<(String, bool)> {
    let chars: Vec<char> = line.chars().collect();
    let mut words = Vec::new();
    let mut quote: Option<char> = None;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match (quote, c) {
            (Some('\''), '\'') | (Some('"'), '"') => quote = None,
            (Some('"'), '\\') | (None, '\\') => i += 1,
            (Some(_), _) => {}
            (None, '\'' | '"') => quote = Some(c),
            (None, '#') if i == 0 || chars[i - 1].is_whitespace() => break,
            (None, '<') if chars.get(i + 1) == Some(&'<') && chars.get(i + 2) == Some(&'<') => {
                i += 3; // a here-string
                continue;
            }
            (None, '<') if chars.get(i + 1) == Some(&'<') => {
                let (word, strip, next) = delimiter(&chars, i + 2);
                if !word.is_empty() {
                    words.push((word, strip));
                }
                i = next;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    words
}

/// Reads the delimiter after `<<` at `i`: optional `-`, blanks, then a word
/// whose quotes are removed. Returns the word, the `-` flag, and where the
/// scan goes on.
fn delimiter(chars: &[char], mut i: usize) -> (String, bool, usize) {
    let strip = chars.get(i) == Some(&'-');
    if strip {
        i += 1;
    }
    while chars.get(i).is_some_and(|c| *c == ' ' || *c == '\t') {
        i += 1;
    }
    let mut word = String::new();
    let mut quote: Option<char> = None;
    while let Some(&c) = chars.get(i) {
        match (quote, c) {
            (None, '\'' | '"') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            (None, c) if c.is_whitespace() || ";&|<>()".contains(c) => break,
            (_, '\\') => {}
            (_, c) => word.push(c),
        }
        i += 1;
    }
    (word, strip, i)
}

/// True when the last line ends in an unescaped backslash: an interactive
/// shell would wait for the next line.
pub(crate) fn ends_with_continuation(code: &str) -> bool {
    let trailing = code.bytes().rev().take_while(|b| *b == b'\\').count();
    trailing % 2 == 1
}

#[cfg(test)]
mod tests {
    use super::unterminated_heredoc as open;

    #[test]
    fn heredocs() {
        assert!(open("cat <<EOF\nno end"));
        assert!(!open("cat <<EOF\nbody\nEOF"));
        assert!(!open("cat <<'EOF'\n$not expanded\nEOF\necho after"));
        assert!(!open("cat <<-EOF\n\tbody\n\tEOF"));
        assert!(open("cat <<-EOF\n\tbody\n  EOF"));
        assert!(!open("echo '<<EOF' \"<<EOF\""));
        assert!(!open("cat <<<here-string"));
        assert!(!open("echo hi # <<EOF"));
        assert!(open("cat <<A <<B\na\nA\nb"));
        assert!(!open("cat <<A <<B\na\nA\nb\nB"));
    }
}
