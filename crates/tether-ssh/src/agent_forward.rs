//! Agent forwarding (`-A`, `ForwardAgent`): each agent channel the host
//! opens (`auth-agent@openssh.com`, after tether asked for forwarding on a
//! session channel) is joined to a new connection to the local agent's
//! socket, bytes both ways, until either side ends. Without forwarding
//! asked for, or when the agent cannot be reached, the channel is refused.

use std::path::PathBuf;

use russh::ChannelOpenFailure;
use russh::client::{ChannelOpenHandle, Msg};

/// Serves one agent channel from the agent at `socket`.
pub(crate) async fn serve(
    socket: Option<PathBuf>,
    channel: russh::Channel<Msg>,
    reply: ChannelOpenHandle,
) {
    let Some(socket) = socket else {
        // Never asked for: a host opening one anyway gets nothing.
        reply
            .reject(ChannelOpenFailure::AdministrativelyProhibited)
            .await;
        return;
    };
    let mut agent = match tokio::net::UnixStream::connect(&socket).await {
        Ok(a) => a,
        Err(_) => {
            reply.reject(ChannelOpenFailure::ConnectFailed).await;
            return;
        }
    };
    reply.accept().await;
    tokio::spawn(async move {
        let mut stream = channel.into_stream();
        let _ = tokio::io::copy_bidirectional(&mut stream, &mut agent).await;
    });
}

/// The socket `ForwardAgent VALUE` forwards: `yes` the agent of
/// `SSH_AUTH_SOCK` (an empty path when it is unset: the host's agent
/// channels are then refused, as OpenSSH's are), `no` none, `$VAR` the
/// socket that variable names, else a path (`~/` expanded).
pub fn agent_socket(value: &str) -> Result<Option<PathBuf>, String> {
    match value.trim().to_ascii_lowercase().as_str() {
        "no" | "false" => Ok(None),
        "yes" | "true" => Ok(Some(
            std::env::var_os("SSH_AUTH_SOCK")
                .map(PathBuf::from)
                .unwrap_or_default(),
        )),
        _ => match value.trim().strip_prefix('$') {
            Some(name) => std::env::var_os(name)
                .map(|v| Some(PathBuf::from(v)))
                .ok_or_else(|| format!("ForwardAgent {value}: the variable {name} is not set")),
            None => Ok(Some(crate::config::expand_tilde(value.trim()))),
        },
    }
}
