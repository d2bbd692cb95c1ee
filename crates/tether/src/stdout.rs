//! Printing to stdout as coreutils do: a reader that went away
//! (`tether hosts … | head -1`) ends tether quietly with 141, the status of
//! a program SIGPIPE ended; any other failed write (a full disk) ends it
//! with one line saying so. `outln!`/`out!` (defined in `main.rs`) print
//! through here; errors that travel up to `main` are told apart the same
//! way ([`closed_pipe`]).

use std::io::Write;

/// The exit status after a closed pipe: 128 + SIGPIPE.
pub const CLOSED_PIPE: i32 = 141;

/// Writes `args` to stdout, or ends tether as the module says.
pub fn print(args: std::fmt::Arguments<'_>) {
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_fmt(args) {
        failed(&e);
    }
}

/// Writes `bytes` to stdout and flushes it, or ends tether.
pub fn write_all(bytes: &[u8]) {
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_all(bytes).and_then(|()| out.flush()) {
        failed(&e);
    }
}

/// Ends tether after a failed write to stdout.
fn failed(e: &std::io::Error) -> ! {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        std::process::exit(CLOSED_PIPE);
    }
    eprintln!("tether: cannot write the output: {e}");
    std::process::exit(crate::result_out::TETHER_FAILED);
}

/// True when `e` (or what caused it) is a write to a pipe whose reader
/// went away.
pub fn closed_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
