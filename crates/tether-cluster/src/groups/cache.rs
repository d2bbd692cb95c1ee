//! The results of upcalls, kept per source, upcall and argument for the
//! source's `cache_time` (ClusterShell's default is an hour, longer than
//! any one run): a run asks each at most once. Failures are not kept.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::upcall::Upcall;

/// (source, upcall, `$GROUP` or `$NODE`).
type Key = (String, Upcall, String);

/// Kept results.
#[derive(Default)]
pub struct Cache {
    kept: Mutex<HashMap<Key, (Instant, String)>>,
}

impl Cache {
    /// The kept result of `key`, or the one `run` gives (kept for
    /// `keep`). The lock is not held while `run` runs.
    pub fn get_or_run<E>(
        &self,
        key: Key,
        keep: Duration,
        run: impl FnOnce() -> Result<String, E>,
    ) -> Result<String, E> {
        let now = Instant::now();
        if let Ok(kept) = self.kept.lock()
            && let Some((until, text)) = kept.get(&key)
            && *until > now
        {
            return Ok(text.clone());
        }
        let text = run()?;
        if let Ok(mut kept) = self.kept.lock()
            && let Some(until) = now.checked_add(keep)
        {
            kept.insert(key, (until, text.clone()));
        }
        Ok(text)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn one_run_per_key_while_kept_and_failures_forgotten() {
        let c = Cache::default();
        let runs = std::cell::Cell::new(0);
        let key = |g: &str| ("s".to_owned(), Upcall::Map, g.to_owned());
        let hour = Duration::from_secs(3600);
        for _ in 0..3 {
            let got: Result<String, ()> = c.get_or_run(key("a"), hour, || {
                runs.set(runs.get() + 1);
                Ok("n1".into())
            });
            assert_eq!(got.unwrap(), "n1");
        }
        assert_eq!(runs.get(), 1);
        let failed: Result<String, &str> = c.get_or_run(key("b"), hour, || Err("no"));
        assert!(failed.is_err());
        let again: Result<String, ()> = c.get_or_run(key("b"), hour, || Ok("n2".into()));
        assert_eq!(again.unwrap(), "n2");
        // Kept for no time: asked again.
        let _: Result<String, ()> = c.get_or_run(key("c"), Duration::ZERO, || Ok("x".into()));
        let got: Result<String, ()> = c.get_or_run(key("c"), Duration::ZERO, || Ok("y".into()));
        assert_eq!(got.unwrap(), "y");
    }
}
