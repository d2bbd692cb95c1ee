//! A channel of the connection as a plain byte stream (`AsyncRead` +
//! `AsyncWrite`): an OpenSSH `direct-streamlocal` channel to a Unix socket
//! on the host, or a command's stdin and stdout. A program on this side
//! then speaks to a socket on the host as if it were local, with nothing
//! listening on a TCP port anywhere.

use std::pin::Pin;
use std::task::{Context, Poll};

use russh::client::Msg;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use crate::connect::Connection;
use crate::error::{ChannelRefusal, SshError};

/// One channel's data as a byte stream. Reading gives the channel's data
/// (a command's stdout; its stderr is dropped) until the far end sends
/// EOF or closes; shutting the write side down sends EOF. Dropping it
/// closes the channel.
pub struct ChannelStream {
    inner: russh::ChannelStream<Msg>,
}

impl std::fmt::Debug for ChannelStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChannelStream").finish_non_exhaustive()
    }
}

impl AsyncRead for ChannelStream {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl AsyncWrite for ChannelStream {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

impl Connection {
    /// A `direct-streamlocal@openssh.com` channel to the Unix socket
    /// `path` on the host: the server connects to it as the login user.
    /// A refusal is [`SshError::ChannelRefused`]: `Prohibited` when the
    /// server forbids stream-local forwarding (`AllowStreamLocalForwarding
    /// no`, `DisableForwarding yes`), `ConnectFailed` when nothing listens
    /// at `path`.
    pub async fn open_unix_socket(&self, path: &str) -> Result<ChannelStream, SshError> {
        let channel = match self.handle.channel_open_direct_streamlocal(path).await {
            Ok(c) => c,
            Err(e) => {
                return Err(self
                    .refused(format!("cannot reach the socket {path}"), e)
                    .await);
            }
        };
        Ok(ChannelStream {
            inner: channel.into_stream(),
        })
    }

    /// `command` on an exec channel, its stdin and stdout as the stream
    /// (its stderr is dropped, its exit status not reported: the stream
    /// just ends). The configured variables are set as for every command.
    pub async fn exec_stream(&self, command: &str) -> Result<ChannelStream, SshError> {
        let channel = self.session_channel(&[]).await?;
        if let Err(e) = channel.exec(false, command).await {
            return Err(self.channel_failed("cannot start the command", e).await);
        }
        Ok(ChannelStream {
            inner: channel.into_stream(),
        })
    }

    /// A channel the server would not open, as a typed refusal when it
    /// said why.
    async fn refused(&self, what: String, e: russh::Error) -> SshError {
        use russh::ChannelOpenFailure as F;
        let refusal = match &e {
            russh::Error::ChannelOpenFailure(f) => match f {
                F::AdministrativelyProhibited => ChannelRefusal::Prohibited,
                F::ConnectFailed => ChannelRefusal::ConnectFailed,
                F::UnknownChannelType => ChannelRefusal::UnknownType,
                F::ResourceShortage | F::Other { .. } => ChannelRefusal::Other,
            },
            _ => return self.channel_failed(&what, e).await,
        };
        SshError::ChannelRefused {
            host: self.host.clone(),
            what,
            refusal,
        }
    }
}
