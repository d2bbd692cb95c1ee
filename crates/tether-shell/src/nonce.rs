//! Fresh secrets: the session secret the marks carry (never typed), and
//! the session directory's name.

use crate::dialect::SplitNonce;

/// Fresh random hex: 16 digits per half.
pub(crate) fn split() -> SplitNonce {
    let mut buf = [0u8; 16];
    // A failing OS RNG leaves zeros; the nonce is then still unknown to the
    // program, only guessable. getrandom does not fail on Linux.
    let _ = getrandom::fill(&mut buf);
    let hex: String = buf.iter().map(|b| format!("{b:02x}")).collect();
    SplitNonce {
        a: hex[..16].to_owned(),
        b: hex[16..].to_owned(),
    }
}
