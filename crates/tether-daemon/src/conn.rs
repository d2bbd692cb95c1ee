//! The one rule every door sends by: a request goes on the connection at
//! hand or a fresh one; again, on a fresh one, only while the daemon never
//! read it ([`DaemonError::unsent`], at most [`SEND_ATTEMPTS`] tries);
//! never once it may have (it may have run); and a connection is kept for
//! the next request only after an answer ([`reusable`]). A follow is a
//! request like any other here: once written it is not sent again by this
//! rule; its caller follows again from the offset after its last piece.

use crate::client::{Client, Streamed};
use crate::error::{DaemonError, SEND_ATTEMPTS, reusable};
use crate::protocol::{ReplyKind, Request, ShellResult};

/// Makes a fresh connection (and starts a daemon when none answers).
pub type Connect = Box<dyn FnMut() -> Result<Client, DaemonError> + Send>;

/// A connection kept from request to request, made again when needed.
pub struct Conn {
    client: Option<Client>,
    connect: Connect,
}

impl std::fmt::Debug for Conn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Conn")
            .field("connected", &self.client.is_some())
            .finish()
    }
}

impl Conn {
    /// No connection yet; `connect` makes one when a request needs it.
    pub fn new(connect: Connect) -> Conn {
        Conn {
            client: None,
            connect,
        }
    }

    /// Carries out `call` on a connection by the rule; `call` sends one
    /// request and reads its answer.
    pub fn with<T>(
        &mut self,
        mut call: impl FnMut(&mut Client) -> Result<T, DaemonError>,
    ) -> Result<T, DaemonError> {
        let mut attempts = 0;
        loop {
            attempts += 1;
            let client = match &mut self.client {
                Some(c) => c,
                None => self.client.insert((self.connect)()?),
            };
            let r = call(client);
            if !reusable(&r) {
                self.client = None;
            }
            match r {
                Err(e) if e.unsent() && attempts < SEND_ATTEMPTS => {}
                other => return other,
            }
        }
    }

    /// Sends `request` and reads its reply as `T`.
    pub fn request<T: ReplyKind>(&mut self, request: &Request) -> Result<T, DaemonError> {
        self.with(|c| c.request(request))
    }

    /// Sends a followed `request`, each piece to `on` (see
    /// [`Client::follow`]).
    pub fn follow(
        &mut self,
        request: &Request,
        on: &mut dyn FnMut(Streamed),
    ) -> Result<ShellResult, DaemonError> {
        self.with(|c| c.follow(request, on))
    }
}
