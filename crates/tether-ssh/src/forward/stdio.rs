//! `-W host:port` (and `-W /socket`): tether's stdin and stdout are one
//! channel to the target, with no session (what a `ProxyCommand` of
//! another ssh uses).

use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::{ForwardProblem, Place, problem};
use crate::connect::Connection;
use crate::error::SshError;

/// Copies stdin to a channel to `target` and the channel to stdout, until
/// the far end closes (stdin's end is passed on as EOF). Ok: the channel
/// ended; an error: the server refused to open it, or stdout failed.
pub async fn stdio(conn: &Connection, target: &Place) -> Result<(), SshError> {
    let h = &conn.handle;
    let r = match target {
        Place::Tcp { host, port } => {
            h.channel_open_direct_tcpip(
                host.clone().unwrap_or_default(),
                u32::from(*port),
                "127.0.0.1",
                0,
            )
            .await
        }
        Place::Unix(p) => h.channel_open_direct_streamlocal(p.clone()).await,
    };
    let channel = r.map_err(|e| {
        problem(
            format!("-W {target}: the server could not connect to it: {e}"),
            ForwardProblem::Refused,
        )
    })?;
    let (mut from_far, mut to_far) = tokio::io::split(channel.into_stream());
    let up = tokio::spawn(async move {
        let mut stdin = tokio::io::stdin();
        let _ = tokio::io::copy(&mut stdin, &mut to_far).await;
        let _ = to_far.shutdown().await;
        // Keep the write half (and so the channel) until the far end ends.
        std::future::pending::<()>().await;
    });
    let mut stdout = tokio::io::stdout();
    let mut buf = vec![0u8; 64 * 1024];
    let result = loop {
        match from_far.read(&mut buf).await {
            Ok(0) | Err(_) => break Ok(()),
            Ok(n) => {
                if let Err(e) = stdout.write_all(&buf[..n]).await {
                    break Err(problem(
                        format!("-W {target}: cannot write to stdout: {e}"),
                        ForwardProblem::Local,
                    ));
                }
                let _ = stdout.flush().await;
            }
        }
    };
    up.abort();
    result
}
