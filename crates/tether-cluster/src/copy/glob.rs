//! Shell patterns in a pull's remote paths (`/var/log/*.log`,
//! `app-?/[a-c]*`): `*`, `?` and `[…]` (ranges, `!` or `^` to negate) in
//! any component, matched against each host's own listings, in name
//! order; a name starting with `.` only by a pattern that starts with one,
//! as in the shell. A `\` makes the next character plain.

/// True when `path` holds a pattern character.
pub fn has_magic(path: &str) -> bool {
    path.contains(['*', '?', '['])
}

/// One `[…]` at the start of `p`: whether `c` is in it, and its length;
/// `None` when it does not close (then `[` is a plain character).
fn class(p: &[char], c: char) -> Option<(bool, usize)> {
    let mut i = 1;
    let negate = matches!(p.get(i), Some('!' | '^'));
    if negate {
        i += 1;
    }
    let mut found = false;
    let mut first = true;
    loop {
        let lo = *p.get(i)?;
        if lo == ']' && !first {
            return Some((found != negate, i + 1));
        }
        first = false;
        if p.get(i + 1) == Some(&'-') && p.get(i + 2).is_some_and(|hi| *hi != ']') {
            let hi = p[i + 2];
            found |= lo <= c && c <= hi;
            i += 3;
        } else {
            found |= lo == c;
            i += 1;
        }
    }
}

fn match_from(p: &[char], n: &[char]) -> bool {
    let (mut pi, mut ni) = (0, 0);
    // Where the last `*` was, and the name position it has taken up to.
    let mut star: Option<(usize, usize)> = None;
    while ni < n.len() {
        let step = match p.get(pi) {
            Some('*') => {
                star = Some((pi, ni));
                pi += 1;
                continue;
            }
            Some('?') => Some(1),
            Some('[') => match class(&p[pi..], n[ni]) {
                Some((true, len)) => Some(len),
                Some((false, _)) => None,
                None => (n[ni] == '[').then_some(1),
            },
            Some('\\') if pi + 1 < p.len() => (p[pi + 1] == n[ni]).then_some(2),
            Some(c) => (*c == n[ni]).then_some(1),
            None => None,
        };
        match (step, star) {
            (Some(len), _) => {
                pi += len;
                ni += 1;
            }
            (None, Some((sp, sn))) => {
                pi = sp + 1;
                ni = sn + 1;
                star = Some((sp, sn + 1));
            }
            (None, None) => return false,
        }
    }
    p[pi..].iter().all(|c| *c == '*')
}

/// True when the name `name` matches the one-component pattern `pattern`.
pub fn matches(pattern: &str, name: &str) -> bool {
    if name.starts_with('.') && !pattern.starts_with('.') {
        return false;
    }
    let p: Vec<char> = pattern.chars().collect();
    let n: Vec<char> = name.chars().collect();
    match_from(&p, &n)
}

/// A pattern component as a plain name (its `\` escapes removed).
pub fn unescape(component: &str) -> String {
    let mut out = String::with_capacity(component.len());
    let mut chars = component.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => out.extend(chars.next()),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_match_as_in_the_shell() {
        for (p, n) in [
            ("*", "a"),
            ("*.log", "app.log"),
            ("a*b*c", "aXXbYc"),
            ("?", "x"),
            ("[a-c]x", "bx"),
            ("[!a-c]x", "dx"),
            ("[^a]", "b"),
            ("[]]", "]"),
            ("[a-]", "-"),
            ("\\*", "*"),
            ("[", "["),
            (".*", ".hidden"),
            ("f*", "f"),
        ] {
            assert!(matches(p, n), "{p} {n}");
        }
        for (p, n) in [
            ("*.log", "app.txt"),
            ("?", "xy"),
            ("[a-c]", "d"),
            ("[!a]", "a"),
            ("*", ".hidden"),
            ("\\*", "a"),
            ("a*b", "ac"),
        ] {
            assert!(!matches(p, n), "{p} {n}");
        }
        assert!(has_magic("/var/log/*.log") && !has_magic("/var/log/syslog"));
        assert_eq!(unescape("a\\*b"), "a*b");
    }
}
