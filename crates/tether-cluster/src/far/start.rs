//! The host's own daemon, reached: `tether daemon ensure` run there (it
//! connects to the daemon, or starts it as every client does, detached
//! from the SSH connection) says where its socket is; then an OpenSSH
//! `direct-streamlocal` channel to that socket is the connection. A
//! server that forbids stream-local forwarding gets an exec channel
//! running `tether daemon relay SOCKET` instead, whose stdin and stdout
//! are the connection. No TCP port is opened anywhere.

use std::time::Duration;

use tether_ssh::{ChannelRefusal, ChannelStream, SshError};
use tether_transport::{HostFailure, TransportError};

use super::deploy::clip;
use super::{Far, sh_quote};

/// Longest opening a channel to the daemon may take (a hung link).
const OPEN_TIMEOUT: Duration = Duration::from_secs(30);

/// How the host's daemon is reached, once known.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Reach {
    /// The binary on the host.
    pub bin: String,
    /// Its daemon's socket.
    pub socket: String,
    /// Through `daemon relay` (the server forbids stream-local forwarding).
    pub relay: bool,
}

impl Far<'_> {
    /// Runs `BIN daemon ensure` on the host: its daemon's socket.
    pub(crate) async fn ensure(&self, bin: &str) -> Result<String, TransportError> {
        let out = self.sh(&format!("{} daemon ensure", sh_quote(bin))).await?;
        let stdout = String::from_utf8_lossy(&out.stdout);
        let socket = stdout.trim_end_matches('\n');
        if out.status != Some(0) || socket.is_empty() || socket.contains('\n') {
            return Err(self.fail(
                HostFailure::Setup,
                format!(
                    "`{bin} daemon ensure` did not start tether's daemon there: {}",
                    clip(&out.stderr_text())
                ),
            ));
        }
        Ok(socket.to_owned())
    }

    /// A new connection to the daemon `reach` names; `fresh`: its daemon
    /// answered just now. OpenSSH says "connect failed" both when nothing
    /// listens at the socket (the daemon exits when idle) and when it
    /// forbids stream-local forwarding: the daemon is started again (when
    /// not fresh) and asked once more, and a refusal then is the server's,
    /// which turns `reach` to the relay for good.
    pub(crate) async fn open(
        &self,
        reach: &mut Reach,
        fresh: bool,
    ) -> Result<ChannelStream, TransportError> {
        if reach.relay {
            return self.relay(reach).await;
        }
        let mut fresh = fresh;
        loop {
            match self
                .timely(self.conn.open_unix_socket(&reach.socket))
                .await?
            {
                Ok(s) => return Ok(s),
                Err(SshError::ChannelRefused {
                    refusal: ChannelRefusal::ConnectFailed,
                    ..
                }) if !fresh => {
                    reach.socket = self.ensure(&reach.bin).await?;
                    fresh = true;
                }
                Err(SshError::ChannelRefused {
                    refusal:
                        ChannelRefusal::ConnectFailed
                        | ChannelRefusal::Prohibited
                        | ChannelRefusal::UnknownType,
                    ..
                }) => {
                    reach.relay = true;
                    return self.relay(reach).await;
                }
                Err(e) => return Err(self.ssh(e)),
            }
        }
    }

    /// `BIN daemon relay SOCKET` on an exec channel (it starts the daemon
    /// again itself when it is gone).
    async fn relay(&self, reach: &Reach) -> Result<ChannelStream, TransportError> {
        let command = format!(
            "{} daemon relay {}",
            sh_quote(&reach.bin),
            sh_quote(&reach.socket)
        );
        self.timely(self.conn.exec_stream(&command))
            .await?
            .map_err(|e| self.ssh(e))
    }

    /// `opening`, given up after [`OPEN_TIMEOUT`].
    async fn timely<T>(
        &self,
        opening: impl Future<Output = Result<T, SshError>>,
    ) -> Result<Result<T, SshError>, TransportError> {
        tokio::time::timeout(OPEN_TIMEOUT, opening)
            .await
            .map_err(|_| {
                self.fail(
                    HostFailure::TimedOut,
                    format!(
                        "no channel to tether's daemon there within {} s; is the host up?",
                        OPEN_TIMEOUT.as_secs()
                    ),
                )
            })
    }
}
