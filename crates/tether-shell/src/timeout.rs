//! The rule on a command's timeout, for every front-end: its default, and
//! the range a caller may ask for (more than 0, at most an hour).

use std::time::Duration;

use crate::error::ShellError;

/// The longest timeout (and the longest wait) accepted, in seconds.
pub const MAX_SECONDS: f64 = 3600.0;

/// A command's timeout, known to be more than 0 and at most
/// [`MAX_SECONDS`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timeout(Duration);

impl Timeout {
    /// The timeout of a command whose caller names none: 120 s.
    pub const DEFAULT: Timeout = Timeout(Duration::from_secs(120));

    /// `secs` as a timeout, or why not; `name` is how the caller wrote the
    /// setting (`--timeout`, `timeout_s`), for the message.
    pub fn from_secs(name: &str, secs: f64) -> Result<Timeout, ShellError> {
        if secs.is_finite() && secs > 0.0 && secs <= MAX_SECONDS {
            Ok(Timeout(Duration::from_secs_f64(secs)))
        } else {
            Err(ShellError::BadTimeout {
                name: name.to_owned(),
                secs,
            })
        }
    }

    /// The default, in seconds (for a flag's or a schema's default).
    pub fn default_secs() -> f64 {
        Self::DEFAULT.0.as_secs_f64()
    }

    /// How long.
    pub fn duration(self) -> Duration {
        self.0
    }
}

impl Default for Timeout {
    fn default() -> Self {
        Self::DEFAULT
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn the_range_is_more_than_zero_up_to_an_hour() {
        assert_eq!(
            Timeout::from_secs("t", MAX_SECONDS).unwrap().duration(),
            Duration::from_secs(3600)
        );
        assert_eq!(
            Timeout::from_secs("t", 0.001).unwrap().duration(),
            Duration::from_millis(1)
        );
        for bad in [0.0, -0.0, -1.0, 3600.001, f64::NAN, f64::INFINITY] {
            assert!(Timeout::from_secs("t", bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_message_names_the_setting_and_the_range() {
        let e = Timeout::from_secs("--timeout", 5000.0).unwrap_err();
        assert_eq!(
            e.to_string(),
            "--timeout must be more than 0 and at most 3600 seconds, got 5000"
        );
    }

    #[test]
    fn the_default_is_two_minutes() {
        assert_eq!(Timeout::default().duration(), Duration::from_secs(120));
        assert_eq!(Timeout::default_secs(), 120.0);
    }
}
