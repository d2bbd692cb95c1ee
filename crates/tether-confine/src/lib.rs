//! The fence around a confined session (issue 27; see
//! `docs/CONFINEMENT.md`): for a confinement mode, the view of the system
//! that bubblewrap builds for a program and everything it starts. The
//! root is read-only. Only the mode's roots and the session's temp
//! directory are writable, and `.git` plus the paths the caller names stay
//! read-only inside them. The deny list and the doors out of the fence
//! (tether's daemon directory, the SSH agent's socket) are hidden, and the
//! network is a namespace of its own with no route out.
//!
//! Also: what a caller asks ([`Confine`], with the order that keeps an
//! MCP server's agent from loosening its floor), what results report
//! ([`Confinement`], with what the kernel enforced: [`Enforced`], sent
//! from inside the fence to a [`ReportListener`]), and the network
//! allowlist ([`Allowlist`]) with its [`Proxy`], which runs outside the
//! fence on a tokio runtime and keeps an allowed name from reaching this
//! machine (`local.rs`: loopback, link-local, its own addresses) unless
//! the allowlist names the address.
//!
//! What it does not do: start a shell (the engine, `tether-shell`'s
//! `fence.rs`, wraps its command line), or apply Landlock (tether's binary
//! does, inside the fence, in `tether confine-exec`).

mod allow;
mod doors;
mod enforced;
mod error;
mod local;
mod plan;
mod proxy;
mod spec;

pub use allow::{Allowlist, HostPort};
pub use doors::{CRONTABS, DENIED_IN_HOME, DOORS, Doors, KEPT_IN_ROOTS};
pub use enforced::{Enforced, Landlock, ReportListener, ReportSender, Reported, Skipped};
pub use error::ConfineError;
pub use plan::{Fence, Mode};
pub use proxy::{Denied, PROXY_ADDR, Proxy};
pub use spec::{Confine, Confinement, ModeName};
