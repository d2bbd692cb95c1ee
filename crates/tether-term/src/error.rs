//! The crate's one error type.

/// Errors from building a `tether-term` component with bad settings. The
/// streaming components themselves never fail: any byte sequence is valid
/// input.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum TermError {
    /// A marker nonce was too short or had characters other than ASCII
    /// letters and digits.
    #[error(
        "marker nonce of {len} characters is not valid: use at least {min} ASCII letters or digits, fresh for each command"
    )]
    InvalidNonce {
        /// Length of the rejected nonce.
        len: usize,
        /// The minimum length.
        min: usize,
    },
    /// A secret given to the redactor was empty.
    #[error("a secret to redact is empty: pass only non-empty values")]
    EmptySecret,
    /// The redactor's matcher could not be built.
    #[error("could not build the redaction matcher for {count} secrets: {reason}")]
    Matcher {
        /// How many secrets were given.
        count: usize,
        /// What the matcher library reported.
        reason: String,
    },
    /// A bounded buffer was given a zero size.
    #[error("{what} must be at least 1 byte")]
    ZeroCapacity {
        /// Which size was zero.
        what: &'static str,
    },
}
