//! The tokens the [`Scanner`](crate::Scanner) classifies, and helpers to read
//! their parameters. Every token borrows the exact bytes it came from, so a
//! consumer can always pass a sequence through unchanged.

/// One classified piece of a terminal byte stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Event<'a> {
    /// The exact bytes of this piece, as they appeared in the stream.
    pub raw: &'a [u8],
    /// What those bytes are.
    pub token: Token<'a>,
}

/// The classification of an [`Event`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Token<'a> {
    /// Ground-state bytes: printable ASCII, UTF-8, raw 8-bit bytes (C1 bytes
    /// are data: they collide with UTF-8 continuation bytes) and, when the
    /// scanner does not split controls, C0 controls other than ESC.
    Text(&'a [u8]),
    /// A C0 control byte (0x00–0x1F except ESC) or DEL, in ground state.
    Control(u8),
    /// `ESC I* F`: an escape sequence that is not a CSI, string or single shift.
    Esc {
        /// Intermediate bytes (0x20–0x2F).
        intermediates: &'a [u8],
        /// The final byte (0x30–0x7E).
        final_byte: u8,
    },
    /// `ESC N x` (SS2) or `ESC O x` (SS3).
    SingleShift {
        /// 2 for SS2, 3 for SS3.
        set: u8,
        /// The graphic character shifted, when one followed.
        byte: Option<u8>,
    },
    /// A control sequence `ESC [ P* I* F`.
    Csi(Csi<'a>),
    /// A control string: OSC, DCS, APC, PM or SOS.
    Str {
        /// Which string type.
        kind: StringKind,
        /// The bytes between the introducer and the terminator.
        payload: &'a [u8],
        /// How the string ended.
        terminator: Terminator,
    },
    /// A sequence cut short by CAN, SUB, ESC, a non-ASCII byte, or an
    /// explicit flush. The raw bytes are kept so they can be passed through.
    Cancelled,
    /// Part of a sequence that grew past [`MAX_PENDING`](crate::MAX_PENDING):
    /// released unparsed, as it appeared.
    Overflow,
}

/// The five control-string types.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StringKind {
    /// Operating System Command, `ESC ]`.
    Osc,
    /// Device Control String, `ESC P`.
    Dcs,
    /// Application Program Command, `ESC _`.
    Apc,
    /// Privacy Message, `ESC ^`.
    Pm,
    /// Start Of String, `ESC X`.
    Sos,
}

/// How a control string ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Terminator {
    /// BEL (0x07); accepted for OSC only.
    Bel,
    /// String Terminator `ESC \`.
    St,
    /// Another escape sequence began before a terminator: the string ends
    /// where that sequence's ESC begins.
    Aborted,
}

/// A control sequence `ESC [ P* I* F`, split into its parts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Csi<'a> {
    /// Parameter bytes (0x30–0x3F), including a private prefix such as `?`.
    pub params: &'a [u8],
    /// Intermediate bytes (0x20–0x2F).
    pub intermediates: &'a [u8],
    /// The final byte (0x40–0x7E).
    pub final_byte: u8,
    /// True when parameter bytes follow intermediates: the sequence is
    /// passed through but never interpreted. (C0 controls mixed into a CSI
    /// are executed by terminals and do not make it malformed; they are
    /// left out of these fields but kept in the event's raw bytes.)
    pub malformed: bool,
}

impl<'a> Csi<'a> {
    /// Parses the parts of a complete CSI, `raw` starting with `ESC [`.
    pub(crate) fn parse(raw: &'a [u8]) -> Self {
        let body = raw.get(2..raw.len().saturating_sub(1)).unwrap_or(&[]);
        let (params, intermediates, rest) = split_header(body);
        Csi {
            params,
            intermediates,
            final_byte: raw.last().copied().unwrap_or(0),
            malformed: !rest.is_empty(),
        }
    }

    /// The private prefix byte (`<`, `=`, `>` or `?`) when present.
    pub fn prefix(&self) -> Option<u8> {
        match self.params.first() {
            Some(&b @ (b'<' | b'=' | b'>' | b'?')) => Some(b),
            _ => None,
        }
    }

    /// The parameter bytes after the private prefix.
    pub fn param_bytes(&self) -> &'a [u8] {
        match self.prefix() {
            Some(_) => &self.params[1..],
            None => self.params,
        }
    }

    /// The parameters as numbers, when they are strictly `digits (; digits)*`
    /// (an empty parameter is `None`). Sub-parameters (`:`), a second prefix,
    /// or a value over `u32::MAX` make the whole list invalid, so a caller
    /// that changes state on it never acts on a look-alike.
    pub fn strict_params(&self) -> Option<Params<'a>> {
        if self.malformed {
            return None;
        }
        let bytes = self.param_bytes();
        let valid = bytes.iter().all(|b| b.is_ascii_digit() || *b == b';')
            && bytes
                .split(|b| *b == b';')
                .all(|p| p.is_empty() || parse_u32(p).is_some());
        valid.then_some(Params { bytes })
    }
}

/// Strictly validated CSI parameters; see [`Csi::strict_params`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Params<'a> {
    bytes: &'a [u8],
}

impl<'a> Params<'a> {
    /// Each parameter, `None` where it was empty. No parameter bytes at all
    /// yields an empty iterator.
    pub fn iter(&self) -> impl Iterator<Item = Option<u32>> + 'a {
        let bytes = self.bytes;
        (!bytes.is_empty())
            .then(|| bytes.split(|b| *b == b';'))
            .into_iter()
            .flatten()
            .map(parse_u32)
    }

    /// How many parameters there are (0 when there were no parameter bytes).
    pub fn len(&self) -> usize {
        self.iter().count()
    }

    /// True when there were no parameter bytes.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// Parameter `i`, or `default` when it is absent or empty.
    pub fn get(&self, i: usize, default: u32) -> u32 {
        self.iter().nth(i).flatten().unwrap_or(default)
    }
}

/// Parses ASCII decimal digits into a `u32`; `None` on overflow or non-digit.
pub(crate) fn parse_u32(digits: &[u8]) -> Option<u32> {
    if digits.is_empty() {
        return None;
    }
    digits.iter().try_fold(0u32, |acc, &b| {
        if !b.is_ascii_digit() {
            return None;
        }
        acc.checked_mul(10)?.checked_add(u32::from(b - b'0'))
    })
}

/// The header of a DCS payload: `P* I* F` then the data up to the terminator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DcsHeader<'a> {
    /// Parameter bytes (0x30–0x3F).
    pub params: &'a [u8],
    /// Intermediate bytes (0x20–0x2F).
    pub intermediates: &'a [u8],
    /// The final byte (0x40–0x7E).
    pub final_byte: u8,
    /// Everything after the final byte.
    pub data: &'a [u8],
}

impl<'a> DcsHeader<'a> {
    /// Splits a DCS payload into its header and data; `None` when the header
    /// is not well formed.
    pub fn parse(payload: &'a [u8]) -> Option<Self> {
        let (params, intermediates, rest) = split_header(payload);
        let (&final_byte, data) = rest.split_first()?;
        (0x40..=0x7e).contains(&final_byte).then_some(DcsHeader {
            params,
            intermediates,
            final_byte,
            data,
        })
    }
}

/// Splits `P* I* rest` (parameter bytes 0x30–0x3F, then intermediate bytes
/// 0x20–0x2F) off the front of a CSI or DCS body.
fn split_header(body: &[u8]) -> (&[u8], &[u8], &[u8]) {
    let p = body
        .iter()
        .position(|b| !(0x30..=0x3f).contains(b))
        .unwrap_or(body.len());
    let (params, rest) = body.split_at(p);
    let i = rest
        .iter()
        .position(|b| !(0x20..=0x2f).contains(b))
        .unwrap_or(rest.len());
    let (intermediates, rest) = rest.split_at(i);
    (params, intermediates, rest)
}
