//! The two subcommands a tether on another machine runs on this host over
//! SSH (`tether-cluster`'s `far` module): `tether daemon ensure` reaches
//! this user's daemon, starting it as every client does, and prints its
//! socket; `tether daemon relay SOCKET` carries its stdin to that socket
//! and the socket to its stdout, for a server that forbids stream-local
//! forwarding (the exec channel is then the connection).

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use tether_daemon::{Client, Paths};

use crate::daemon_cmd::{launch_at, me};

/// Connects to this user's daemon (started now when none answers) and
/// says where its socket is.
pub fn ensure() -> Result<PathBuf> {
    let paths = Paths::for_host();
    let hello = tether_daemon::client::hello(&me(), None, false);
    // Started to serve that directory, whatever this login's environment
    // would choose.
    let start = || launch_at(&paths.dir);
    // The hello and welcome prove it answers; this connection is done.
    drop(Client::connect_or_start(&paths, &hello, &start)?);
    Ok(paths.socket())
}

/// `tether daemon ensure`: the socket's path on stdout, one line.
pub fn print_ensured() -> Result<i32> {
    let socket = ensure()?;
    let mut out = std::io::stdout().lock();
    out.write_all(socket.as_os_str().as_encoded_bytes())?;
    out.write_all(b"\n")?;
    out.flush()?;
    Ok(0)
}

/// `tether daemon relay SOCKET`: stdin to the socket, the socket to
/// stdout, until the daemon's side ends (stdin's end is passed on as the
/// end of what the daemon reads). A daemon gone meanwhile (it exits when
/// idle) is started again first.
pub fn relay(socket: &Path) -> Result<i32> {
    let stream = match UnixStream::connect(socket) {
        Ok(s) => s,
        Err(_) => {
            let socket = ensure()?;
            UnixStream::connect(&socket)
                .with_context(|| format!("cannot connect to {}", socket.display()))?
        }
    };
    let mut up = stream
        .try_clone()
        .context("cannot use the daemon's socket")?;
    std::thread::spawn(move || {
        let _ = std::io::copy(&mut std::io::stdin().lock(), &mut up);
        let _ = up.shutdown(std::net::Shutdown::Write);
    });
    let mut down = stream;
    let mut out = std::io::stdout().lock();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = match down.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        // Stdout is line-buffered; attach frames are not lines.
        if out.write_all(&buf[..n]).and_then(|()| out.flush()).is_err() {
            break;
        }
    }
    Ok(0)
}
