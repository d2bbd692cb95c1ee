//! ssh_config's lines as OpenSSH reads them: `key value` or `key=value`,
//! keywords in any case, a `#` word ending the line, values in double
//! quotes kept whole; `Include` reads more files in place (globs, relative
//! to `~/.ssh`, a pattern that matches nothing is no error), at most 16
//! deep. An included file is bracketed by [`Kind::Enter`] and
//! [`Kind::Leave`] so that its `Host` and `Match` lines do not change the
//! including file's block, and its lines apply only where the `Include`
//! line's block does (`config::resolve_with`). `-o` options are lines too,
//! read before any file.

use std::path::{Path, PathBuf};

use crate::error::SshError;
use crate::known_hosts::patterns_match;

/// What a line is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// `key value`.
    Directive,
    /// The start of an included file.
    Enter,
    /// Its end.
    Leave,
}

/// One line with where it is.
#[derive(Clone, Debug)]
pub(crate) struct Line {
    pub kind: Kind,
    /// The keyword in lower case.
    pub key: String,
    /// The keyword as written (for messages).
    pub name: String,
    pub value: String,
    /// The file; `None`: `-o` on the command line.
    pub file: Option<PathBuf>,
    pub number: usize,
}

impl Line {
    /// `FILE:LINE`, or `-o`.
    pub fn place(&self) -> String {
        match &self.file {
            Some(f) => format!("{}:{}", f.display(), self.number),
            None => "-o".to_owned(),
        }
    }
}

pub(crate) fn home() -> PathBuf {
    std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_default()
}

/// `~/` expanded.
pub fn expand_tilde(p: &str) -> PathBuf {
    match p.strip_prefix("~/") {
        Some(rest) => home().join(rest),
        None if p == "~" => home(),
        None => PathBuf::from(p),
    }
}

/// The line without a trailing comment: a `#` that starts a word outside
/// double quotes ends it.
fn uncommented(line: &str) -> &str {
    let mut quoted = false;
    let mut prev_space = true;
    for (i, c) in line.char_indices() {
        match c {
            '"' => quoted = !quoted,
            '#' if !quoted && prev_space => return &line[..i],
            _ => {}
        }
        prev_space = c.is_whitespace();
    }
    line
}

/// `(key in lower case, key as written, value)` of one line.
pub(crate) fn split_line(raw: &str) -> Option<(String, String, String)> {
    let line = uncommented(raw).trim();
    if line.is_empty() {
        return None;
    }
    let at = line
        .find(|c: char| c.is_whitespace() || c == '=')
        .unwrap_or(line.len());
    let name = line[..at].to_owned();
    let rest = line[at..].trim_start();
    let rest = rest.strip_prefix('=').unwrap_or(rest);
    let rest = rest.trim();
    let value = match rest.strip_prefix('"').and_then(|v| v.strip_suffix('"')) {
        Some(v) if !v.contains('"') => v.to_owned(),
        _ => rest.to_owned(),
    };
    Some((name.to_ascii_lowercase(), name, value))
}

/// `-o` options as lines (read before any file).
pub(crate) fn option_lines(options: &[String]) -> Result<Vec<Line>, SshError> {
    let mut out = Vec::new();
    for (i, o) in options.iter().enumerate() {
        let Some((key, name, value)) = split_line(o) else {
            continue;
        };
        if matches!(key.as_str(), "host" | "match" | "include") {
            return Err(SshError::Config {
                place: "-o".into(),
                problem: format!(
                    "{name} is not supported as a command-line option (as in ssh); put it in an ssh_config file (-F)"
                ),
            });
        }
        if value.is_empty() {
            return Err(SshError::Config {
                place: "-o".into(),
                problem: format!(
                    "{o:?}: write KEY=VALUE or \"KEY VALUE\", as in -o StrictHostKeyChecking=accept-new"
                ),
            });
        }
        out.push(Line {
            kind: Kind::Directive,
            key,
            name,
            value,
            file: None,
            number: i + 1,
        });
    }
    Ok(out)
}

/// Reads `file` (and its Includes) into lines, `Host` lines included.
pub(crate) fn read_lines(file: &Path, out: &mut Vec<Line>, depth: usize) -> Result<(), SshError> {
    if depth > 16 {
        return Err(SshError::Config {
            place: file.display().to_string(),
            problem: "Include nests more than 16 deep (a loop?)".into(),
        });
    }
    let text = match std::fs::read_to_string(file) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && depth > 0 => return Ok(()),
        Err(e) => {
            return Err(SshError::Config {
                place: file.display().to_string(),
                problem: format!("cannot be read: {e}"),
            });
        }
    };
    for (i, raw) in text.lines().enumerate() {
        let Some((key, name, value)) = split_line(raw) else {
            continue;
        };
        if key == "include" {
            for pattern in value.split_whitespace() {
                let path = expand_tilde(pattern);
                let path = if path.is_relative() {
                    home().join(".ssh").join(path)
                } else {
                    path
                };
                for f in glob(&path) {
                    let mark = |kind| Line {
                        kind,
                        key: String::new(),
                        name: "Include".into(),
                        value: f.display().to_string(),
                        file: Some(file.to_path_buf()),
                        number: i + 1,
                    };
                    out.push(mark(Kind::Enter));
                    read_lines(&f, out, depth + 1)?;
                    out.push(mark(Kind::Leave));
                }
            }
            continue;
        }
        out.push(Line {
            kind: Kind::Directive,
            key,
            name,
            value,
            file: Some(file.to_path_buf()),
            number: i + 1,
        });
    }
    Ok(())
}

/// The files matching `path`, whose last component may hold `*` or `?`.
fn glob(path: &Path) -> Vec<PathBuf> {
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    if !name.contains(['*', '?']) {
        return vec![path.to_path_buf()];
    }
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_str()
                .is_some_and(|n| patterns_match(name, n))
        })
        .map(|e| e.path())
        .collect();
    found.sort();
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_quotes_and_equals() {
        let l = |s: &str| split_line(s).map(|(k, _, v)| (k, v));
        assert_eq!(
            l("Hostname dd # comment"),
            Some(("hostname".into(), "dd".into()))
        );
        assert_eq!(l("  # all comment"), None);
        assert_eq!(l("User=alice"), Some(("user".into(), "alice".into())));
        assert_eq!(l("User = \"a b\""), Some(("user".into(), "a b".into())));
        assert_eq!(
            l("LocalCommand printf \"%s#x\" a"),
            Some(("localcommand".into(), "printf \"%s#x\" a".into()))
        );
        assert_eq!(l("Junk"), Some(("junk".into(), String::new())));
    }
}
