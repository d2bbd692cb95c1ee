//! The steps of making a connection, told as they happen to whoever asked
//! (`-v`: the front-end prints them): where tether connects and how (TCP,
//! a ProxyCommand, a jump host), which known_hosts line vouched for the
//! host key, and which method authenticated. A line never holds a secret.

use std::sync::Arc;

/// Who hears the steps: called with one line of words per step.
#[derive(Clone)]
pub struct Steps(pub Arc<dyn Fn(&str) + Send + Sync>);

impl std::fmt::Debug for Steps {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Steps")
    }
}

/// Tells `line()` to `steps`, when someone listens (the line is only made
/// then).
pub(crate) fn tell(steps: Option<&Steps>, line: impl FnOnce() -> String) {
    if let Some(s) = steps {
        (s.0)(&line());
    }
}
