//! Shared helpers for the `tether-term` fuzz targets.
//!
//! Every target reads its input the same way (see [`Case::parse`]): a few
//! header bytes choose how the stream is cut into chunks (and optionally
//! splice in a run long enough to cross [`MAX_PENDING`]), the rest is the
//! stream. The target then processes the stream whole and chunked and
//! asserts that the results are identical, mirroring
//! `crates/tether-term/tests/chunking.rs`.

use tether_term::MAX_PENDING;

/// A decoded fuzz input.
#[derive(Debug)]
pub struct Case {
    /// Bits 5..=7 of the first header byte, for target-specific switches.
    pub flags: u8,
    /// Target-specific header bytes (zero-padded when the input is short).
    pub extra: Vec<u8>,
    /// Chunk lengths, used cyclically (0 = an empty chunk).
    pub lens: Vec<usize>,
    /// The stream.
    pub data: Vec<u8>,
}

/// Bytes that a spliced-in long run is made of: plain text / string payload,
/// CSI parameter bytes, ESC intermediates, and separators.
const FILL: [u8; 4] = [b'A', b'0', b' ', b';'];

impl Case {
    /// Layout of `input`:
    ///
    /// ```text
    /// byte 0       bits 0-3: n, the number of chunk-length bytes
    ///              bit 4:    splice a long run into the stream
    ///              bits 5-7: target flags
    /// extra        `extra` target-specific bytes
    /// n bytes      chunk lengths, cycled over the stream (n = 0: 1-byte chunks)
    /// 2 bytes      only with bit 4: position, then run spec
    ///              (len = MAX_PENDING-16 + (spec & 31), doubled when
    ///              spec & 0x80; byte = FILL[(spec >> 5) & 3])
    /// rest         the stream
    /// ```
    pub fn parse(input: &[u8], extra: usize) -> Case {
        Self::parse_opts(input, extra, true)
    }

    /// [`Case::parse`], with `splice: false` ignoring bit 4 (for targets
    /// whose bounds do not involve [`MAX_PENDING`], where a 4 KiB run only
    /// slows the fuzzer down).
    pub fn parse_opts(input: &[u8], extra: usize, splice: bool) -> Case {
        let mut rest = input;
        let mut take = |n: usize| -> Vec<u8> {
            let k = n.min(rest.len());
            let mut v = rest[..k].to_vec();
            rest = &rest[k..];
            v.resize(n, 0);
            v
        };
        let b0 = take(1)[0];
        let extra = take(extra);
        let n = usize::from(b0 & 0x0f);
        let mut lens: Vec<usize> = take(n).into_iter().map(usize::from).collect();
        if lens.iter().all(|&l| l == 0) {
            lens = vec![1];
        }
        let splice = if splice && b0 & 0x10 != 0 {
            let s = take(2);
            Some((s[0], s[1]))
        } else {
            None
        };
        let mut data = rest.to_vec();
        if let Some((pos, spec)) = splice {
            let at = usize::from(pos) * data.len() / 255;
            let len = (MAX_PENDING - 16 + usize::from(spec & 31)) * (1 + usize::from(spec >> 7));
            let fill = FILL[usize::from((spec >> 5) & 3)];
            data.splice(at..at, std::iter::repeat_n(fill, len));
        }
        Case {
            flags: b0 >> 5,
            extra,
            lens,
            data,
        }
    }

    /// The stream cut into chunks by [`Case::lens`] (may contain empty
    /// chunks; concatenated they are exactly [`Case::data`]).
    pub fn chunks(&self) -> Vec<&[u8]> {
        split(&self.data, &self.lens)
    }
}

/// Splits `data` into chunks whose lengths cycle through `lens` (at least
/// one of which must be non-zero).
pub fn split<'a>(data: &'a [u8], lens: &[usize]) -> Vec<&'a [u8]> {
    assert!(lens.iter().any(|&l| l > 0));
    let mut out = Vec::new();
    let mut at = 0;
    for &len in lens.iter().cycle() {
        if at >= data.len() {
            break;
        }
        let end = (at + len).min(data.len());
        out.push(&data[at..end]);
        at = end;
    }
    debug_assert_eq!(out.concat(), data);
    out
}

/// True when `small` is a subsequence of `big` (bytes in order, gaps allowed).
pub fn is_subsequence(small: &[u8], big: &[u8]) -> bool {
    let mut it = big.iter();
    small.iter().all(|b| it.any(|c| c == b))
}

/// A little-endian u32 from up to four bytes.
pub fn u32_from(bytes: &[u8]) -> u32 {
    let mut b = [0u8; 4];
    let k = bytes.len().min(4);
    b[..k].copy_from_slice(&bytes[..k]);
    u32::from_le_bytes(b)
}
