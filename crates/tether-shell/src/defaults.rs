//! The non-interactive defaults every session starts with, so programs do
//! not stop for a pager, an editor or a prompt. Each can be overridden, and
//! front-ends list them to tell the model what is in force.

/// `(name, value)` pairs set in every session's environment unless the
/// caller overrides them.
pub const NON_INTERACTIVE_DEFAULTS: &[(&str, &str)] = &[
    ("PAGER", "cat"),
    ("GIT_PAGER", "cat"),
    ("MANPAGER", "cat"),
    ("GIT_EDITOR", "true"),
    ("GIT_TERMINAL_PROMPT", "0"),
    ("DEBIAN_FRONTEND", "noninteractive"),
    ("PIP_NO_INPUT", "1"),
    ("NO_COLOR", "1"),
    ("TERM", "dumb"),
];

/// The environment for a new session: `base` (usually the caller's own
/// environment), then the defaults, then `overrides` (which win).
pub fn session_env(
    base: impl IntoIterator<Item = (String, String)>,
    overrides: &[(String, String)],
) -> Vec<(String, String)> {
    let mut env: Vec<(String, String)> = base.into_iter().collect();
    let mut set = |k: &str, v: &str| match env.iter_mut().find(|(n, _)| n == k) {
        Some(slot) => slot.1 = v.to_owned(),
        None => env.push((k.to_owned(), v.to_owned())),
    };
    for (k, v) in NON_INTERACTIVE_DEFAULTS {
        set(k, v);
    }
    for (k, v) in overrides {
        set(k, v);
    }
    env
}
