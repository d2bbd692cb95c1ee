//! One screen's Kitty keyboard stack, as the tracker follows it.

/// Most Kitty keyboard entries tracked per screen; a push past this drops
/// the oldest tracked entry, as Kitty drops the oldest entry of a full stack.
pub const KITTY_STACK_MAX: usize = 64;

/// One screen's Kitty keyboard stack, relative to what was there when
/// tracking began (the *base* entry, which belongs to whoever ran us).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KittyStack {
    /// Entries the program pushed, oldest first.
    pub pushed: Vec<u32>,
    /// Flags of the base entry (changed by `CSI = f ; m u` when nothing
    /// was pushed above it).
    pub base: u32,
    /// True when the program popped (or reset) below its own entries, so
    /// the entries beneath are gone.
    pub base_lost: bool,
}

impl KittyStack {
    /// The flags currently in force.
    pub fn flags(&self) -> u32 {
        self.pushed.last().copied().unwrap_or(self.base)
    }

    pub(crate) fn push(&mut self, flags: u32) {
        if self.pushed.len() == KITTY_STACK_MAX {
            self.pushed.remove(0);
        }
        self.pushed.push(flags);
    }

    pub(crate) fn pop(&mut self, n: u32) {
        for _ in 0..n.max(1) {
            if self.pushed.pop().is_none() {
                self.base = 0;
                self.base_lost = true;
                break;
            }
        }
    }

    pub(crate) fn set(&mut self, flags: u32, mode: u32) {
        let top = self.pushed.last_mut().unwrap_or(&mut self.base);
        match mode {
            2 => *top |= flags,
            3 => *top &= !flags,
            _ => *top = flags,
        }
    }

    pub(crate) fn reset(&mut self) {
        *self = KittyStack {
            base_lost: true,
            ..KittyStack::default()
        };
    }
}
