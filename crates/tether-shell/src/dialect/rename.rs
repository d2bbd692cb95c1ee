//! Renames the engine's command file in a command's output: the shell names
//! the file it sources in its messages (`bash: /…/cmd-7.bash: line 2: …`),
//! and the user wrote no such file. A streaming replacement of one needle,
//! exact across any chunking; it holds back at most the needle's length
//! minus one byte, and only while those bytes can still begin the needle.

/// A streaming replacement of `needle` by `with`.
#[derive(Clone, Debug)]
pub struct Rename {
    needle: Vec<u8>,
    with: Vec<u8>,
    finder: memchr::memmem::Finder<'static>,
    /// A tail of the output that is a proper prefix of the needle.
    held: Vec<u8>,
}

impl Rename {
    /// Replaces every `needle` (not empty) by `with`.
    pub fn new(needle: &[u8], with: &[u8]) -> Option<Self> {
        (!needle.is_empty()).then(|| Rename {
            needle: needle.to_vec(),
            with: with.to_vec(),
            finder: memchr::memmem::Finder::new(needle).into_owned(),
            held: Vec::new(),
        })
    }

    /// Passes `input` on to `out`, renamed, holding back a possible start
    /// of the needle.
    pub fn feed(&mut self, input: &[u8], out: &mut impl FnMut(&[u8])) {
        if self.held.is_empty() {
            self.scan(input, out);
            return;
        }
        let have = self.held.len();
        let need = self.needle.len() - have;
        let n = need.min(input.len());
        if input[..n] == self.needle[have..have + n] {
            if n < need {
                self.held.extend_from_slice(input);
            } else {
                self.held.clear();
                out(&self.with);
                self.scan(&input[n..], out);
            }
            return;
        }
        // Not the needle after all: scan the held bytes again with the
        // input (a later part of them may still begin it).
        let mut joined = std::mem::take(&mut self.held);
        joined.extend_from_slice(input);
        self.scan(&joined, out);
    }

    /// Releases what is held (at the end of the output, or at a result
    /// boundary: a needle cut there is left as it is).
    pub fn flush(&mut self, out: &mut impl FnMut(&[u8])) {
        if !self.held.is_empty() {
            out(&self.held);
            self.held.clear();
        }
    }

    fn scan(&mut self, mut x: &[u8], out: &mut impl FnMut(&[u8])) {
        while let Some(at) = self.finder.find(x) {
            if at > 0 {
                out(&x[..at]);
            }
            out(&self.with);
            x = &x[at + self.needle.len()..];
        }
        let keep = self.open_prefix(x);
        if x.len() > keep {
            out(&x[..x.len() - keep]);
        }
        self.held.extend_from_slice(&x[x.len() - keep..]);
    }

    /// The length of the longest suffix of `x` that is a proper prefix of
    /// the needle.
    fn open_prefix(&self, x: &[u8]) -> usize {
        let most = (self.needle.len() - 1).min(x.len());
        (1..=most)
            .rev()
            .find(|&k| x[x.len() - k..] == self.needle[..k])
            .unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::Rename;

    fn renamed(chunks: &[&[u8]]) -> Vec<u8> {
        let mut r = Rename::new(b"/d/cmd-1.bash: ", b"").unwrap();
        let mut out = Vec::new();
        for c in chunks {
            r.feed(c, &mut |b| out.extend_from_slice(b));
        }
        r.flush(&mut |b| out.extend_from_slice(b));
        out
    }

    #[test]
    fn every_split_renames_alike() {
        let text: &[u8] =
            b"bash: /d/cmd-1.bash: line 2: x\n/d/cmd-1.bash/d/cmd-1.bash: ok /d/cmd-1.bas";
        let want: &[u8] = b"bash: line 2: x\n/d/cmd-1.bashok /d/cmd-1.bas";
        assert_eq!(renamed(&[text]), want);
        for a in 0..=text.len() {
            for b in a..=text.len() {
                assert_eq!(
                    renamed(&[&text[..a], &text[a..b], &text[b..]]),
                    want,
                    "{a} {b}"
                );
            }
        }
        assert_eq!(renamed(&[b"//d/cmd-1.bash: x"]), b"/x");
    }
}
