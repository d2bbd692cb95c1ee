//! A person's terminal bridged to something far: a session through the
//! daemon (`tether attach`), a remote PTY (`tether ssh`). The bridge owns
//! the loop both share (output to the terminal with the modes it sets
//! tracked, keys through the escape scanner, resizes, signals, the exact
//! restore on every way out); what differs is a setting or the far end's
//! [`FarEnd`], not a copy.

mod bridge;
mod far;
pub(crate) mod keys;

pub use bridge::{Bridge, Settings};
pub use far::{FarEnd, FarEvent, Gone, LOST, ToFar};
