//! A blocking client of the daemon, for the CLI (no async runtime: a
//! call is a connect, two lines out and two lines back). It starts the
//! daemon when none answers, through a launcher the program supplies.
//! [`AsyncClient`] speaks the same protocol on a connection made so, from
//! a runtime (`tether mcp`): a call then costs no thread of its own.

use std::io::{BufRead, BufReader, ErrorKind, Write};
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

use crate::error::DaemonError;
use crate::paths::Paths;
use crate::protocol::{
    AttachReply, Hello, Omitted, PROTOCOL_VERSION, Piece, Reply, ReplyKind, Request, Response,
    ShellResult, Welcome,
};
use crate::quiet::{self, QuietReader, QuietWriter};

/// How long a started daemon has to answer.
const START_DEADLINE: Duration = Duration::from_secs(10);

/// How long a daemon has to answer a hello.
const HELLO_DEADLINE: Duration = Duration::from_secs(10);

/// A connection to the daemon, past the hello.
#[derive(Debug)]
pub struct Client {
    reader: BufReader<UnixStream>,
    writer: UnixStream,
    /// What the daemon said about itself.
    pub welcome: Welcome,
}

/// The hello of a client of `namespace` (`None`: the CLI's shared one).
pub fn hello(client: &str, namespace: Option<String>, lease: bool) -> Hello {
    Hello {
        protocol: PROTOCOL_VERSION,
        client: client.to_owned(),
        namespace,
        lease,
    }
}

impl Client {
    /// Connects to a running daemon.
    pub fn connect(paths: &Paths, hello: &Hello) -> Result<Client, DaemonError> {
        let socket = paths.socket();
        // No directory yet is no daemon yet (a racing client may be
        // creating it right now), not a directory problem.
        if let Err(e) = std::fs::symlink_metadata(&paths.dir)
            && e.kind() == std::io::ErrorKind::NotFound
        {
            return Err(DaemonError::Unreachable {
                socket,
                reason: "no daemon has run here yet".to_owned(),
            });
        }
        paths.check_private()?;
        let stream = UnixStream::connect(&socket).map_err(|e| DaemonError::Unreachable {
            socket: socket.clone(),
            reason: format!("{e}; is the daemon running?"),
        })?;
        Client::handshake(stream, hello, &socket)
    }

    /// The process that listens on the daemon's socket, as the kernel says
    /// (`SO_PEERCRED`): its pid, if it runs as this user. For a daemon this
    /// client cannot speak to (another protocol version): nothing is sent.
    pub fn listener_pid(paths: &Paths) -> Option<i32> {
        paths.check_private().ok()?;
        let stream = UnixStream::connect(paths.socket()).ok()?;
        let cred =
            nix::sys::socket::getsockopt(&stream, nix::sys::socket::sockopt::PeerCredentials)
                .ok()?;
        (cred.uid() == nix::unistd::geteuid().as_raw() && cred.pid() > 0).then_some(cred.pid())
    }

    /// Connects, starting the daemon with `start` first when none answers.
    pub fn connect_or_start(
        paths: &Paths,
        hello: &Hello,
        start: &dyn Fn() -> std::io::Result<()>,
    ) -> Result<Client, DaemonError> {
        let unreachable = |reason: String| DaemonError::Unreachable {
            socket: paths.socket(),
            reason,
        };
        match Client::connect(paths, hello) {
            Ok(c) => return Ok(c),
            // No daemon; or one that went away during the hello (a killed
            // daemon resets the connections it had not accepted yet):
            // nothing was sent, so start one and try again.
            Err(DaemonError::Unreachable { .. } | DaemonError::Connection(_)) => {}
            Err(e) => return Err(e),
        }
        paths.ensure_private()?;
        start().map_err(|e| unreachable(format!("the daemon could not be started: {e}")))?;
        let deadline = Instant::now() + START_DEADLINE;
        loop {
            match Client::connect(paths, hello) {
                Err(DaemonError::Unreachable { .. } | DaemonError::Connection(_))
                    if Instant::now() < deadline =>
                {
                    std::thread::sleep(Duration::from_millis(2));
                }
                Err(DaemonError::Unreachable { .. } | DaemonError::Connection(_)) => {
                    return Err(unreachable(format!(
                        "a daemon was started but did not answer within {} s; see {}",
                        START_DEADLINE.as_secs(),
                        paths.log().display()
                    )));
                }
                other => return other,
            }
        }
    }

    /// Sends the hello and reads the welcome. A daemon that is stopped or
    /// hung still takes connections (the kernel's backlog): the welcome
    /// has a deadline, the calls after it none (a command may run for
    /// hours).
    fn handshake(
        stream: UnixStream,
        hello: &Hello,
        socket: &std::path::Path,
    ) -> Result<Client, DaemonError> {
        let conn_err = |e: std::io::Error| DaemonError::Connection(e.to_string());
        stream
            .set_read_timeout(Some(HELLO_DEADLINE))
            .map_err(conn_err)?;
        let reader = BufReader::new(stream.try_clone().map_err(conn_err)?);
        let mut client = Client {
            reader,
            writer: stream,
            welcome: Welcome {
                protocol: 0,
                server: String::new(),
                pid: 0,
            },
        };
        client.send_line(hello)?;
        let mut line = String::new();
        match client.reader.read_line(&mut line) {
            Ok(_) => {}
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                return Err(DaemonError::NotAnswering {
                    socket: socket.to_owned(),
                    secs: HELLO_DEADLINE.as_secs(),
                });
            }
            Err(e) => return Err(conn_err(e)),
        }
        // The timeout is the socket's (both handles share it): off again.
        client.writer.set_read_timeout(None).map_err(conn_err)?;
        client.welcome = expect(client.parse_reply(line)?)
            .map_err(|e| DaemonError::Connection(e.to_string()))?;
        Ok(client)
    }

    /// The connection for [`AsyncClient`]; `None` when the daemon sent
    /// more than the welcome (it never does).
    fn into_stream(self) -> Option<UnixStream> {
        self.reader.buffer().is_empty().then_some(self.writer)
    }

    fn send_line(&mut self, value: &impl serde::Serialize) -> Result<(), DaemonError> {
        let mut line =
            serde_json::to_vec(value).map_err(|e| DaemonError::Connection(e.to_string()))?;
        line.push(b'\n');
        self.writer
            .write_all(&line)
            .map_err(|e| DaemonError::Connection(e.to_string()))
    }

    fn reply(&mut self) -> Result<Response, DaemonError> {
        let mut line = String::new();
        match self.reader.read_line(&mut line) {
            Ok(_) => self.parse_reply(line),
            Err(e) => Err(DaemonError::Connection(e.to_string())),
        }
    }

    /// A reply line as read (empty: the daemon closed the connection).
    fn parse_reply(&self, line: String) -> Result<Response, DaemonError> {
        match parse_line(&line)? {
            Reply::Ok(v) => Ok(v),
            Reply::Error(f) => Err(DaemonError::Refused(f)),
            Reply::Piece(_) | Reply::Omitted(_) => Err(not_followed()),
        }
    }

    /// Sends `request` (`follow`, or `run` with `follow`), hands each piece
    /// of its command's output to `on` as it comes, and returns the reply.
    /// The errors are [`Client::request`]'s: a follow cut off after it was
    /// written is [`DaemonError::Lost`]; `follow` again from the offset
    /// after the last piece (never a `run` again: it may have run).
    pub fn follow(
        &mut self,
        request: &Request,
        on: &mut dyn FnMut(Streamed),
    ) -> Result<ShellResult, DaemonError> {
        self.send_line(request)?;
        let lost = |e: DaemonError| match e {
            DaemonError::Connection(why) => DaemonError::Lost(why),
            other => other,
        };
        let mut line = String::new();
        loop {
            line.clear();
            if let Err(e) = self.reader.read_line(&mut line) {
                return Err(DaemonError::Lost(e.to_string()));
            }
            match parse_line(&line).map_err(lost)? {
                Reply::Piece(p) => on(Streamed::Piece(p)),
                Reply::Omitted(o) => on(Streamed::Omitted(o)),
                Reply::Ok(r) => return expect(r),
                Reply::Error(f) => return Err(DaemonError::Refused(f)),
            }
        }
    }

    /// A second handle on the connection, for another thread to cut it
    /// (`shutdown`) while this one waits in [`Client::follow`].
    pub fn cutter(&self) -> Result<UnixStream, DaemonError> {
        self.writer
            .try_clone()
            .map_err(|e| DaemonError::Connection(e.to_string()))
    }

    /// Sends one request and returns its result, of whatever kind. A
    /// connection that fails while the request is written is a
    /// [`DaemonError::Connection`] (the daemon never read it: safe to send
    /// again on a new connection); one that fails after is a
    /// [`DaemonError::Lost`] (it may have run: never send it again).
    pub fn call(&mut self, request: &Request) -> Result<Response, DaemonError> {
        self.send_line(request)?;
        self.reply().map_err(|e| match e {
            DaemonError::Connection(why) => DaemonError::Lost(why),
            other => other,
        })
    }

    /// Sends one request and reads its result as `T`, the kind of reply
    /// that request gets (a [`ShellResult`] for `run`, `send`, `read` and
    /// `signal`; a [`crate::protocol::ListReply`] for `list` …); a reply
    /// of another kind is [`DaemonError::BadReply`].
    pub fn request<T: ReplyKind>(&mut self, request: &Request) -> Result<T, DaemonError> {
        self.send(request)?;
        self.receive()
    }

    /// The first half of [`Client::request`]: writes `request`
    /// ([`DaemonError::Connection`] when that fails: it was not read).
    pub fn send(&mut self, request: &Request) -> Result<(), DaemonError> {
        self.send_line(request)
    }

    /// The second half of [`Client::request`]: reads the reply to the
    /// request sent, as `T` ([`DaemonError::Lost`] when the connection
    /// fails: it may have run).
    pub fn receive<T: ReplyKind>(&mut self) -> Result<T, DaemonError> {
        let response = self.reply().map_err(|e| match e {
            DaemonError::Connection(why) => DaemonError::Lost(why),
            other => other,
        })?;
        expect(response)
    }

    /// The connection's socket, to wait for the reply beside other events;
    /// wait only when nothing is [`Client::buffered`].
    pub fn socket(&self) -> std::os::fd::BorrowedFd<'_> {
        use std::os::fd::AsFd;
        self.reader.get_ref().as_fd()
    }

    /// True when bytes of a reply were read already (the socket may then
    /// have nothing more to say).
    pub fn buffered(&self) -> bool {
        !self.reader.buffer().is_empty()
    }

    /// Sends `attach` and, once accepted, hands over the stream for frames,
    /// the session's full address, and the bytes of frames already read
    /// past the reply (they come first).
    pub fn attach(
        mut self,
        request: &Request,
    ) -> Result<(UnixStream, String, Vec<u8>), DaemonError> {
        let reply: AttachReply = self.request(request)?;
        let early = self.reader.buffer().to_vec();
        Ok((self.writer, reply.session, early))
    }
}

/// A piece of a followed command's output.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Streamed {
    /// Text, at its offset.
    Piece(Piece),
    /// Text no longer kept (the follower fell behind).
    Omitted(Omitted),
}

/// One reply line (empty: the daemon closed the connection).
fn parse_line(line: &str) -> Result<Reply, DaemonError> {
    if line.is_empty() {
        return Err(DaemonError::Connection(
            "the daemon closed the connection (see its log)".into(),
        ));
    }
    serde_json::from_str::<Reply>(line)
        .map_err(|e| DaemonError::Connection(format!("unreadable reply: {e}")))
}

/// The value of a reply of kind `T`; another kind is a bad reply.
fn expect<T: ReplyKind>(r: Response) -> Result<T, DaemonError> {
    T::from_response(r).map_err(|other| {
        DaemonError::BadReply(format!("a {other} reply where a {} reply was due", T::KIND))
    })
}

fn not_followed() -> DaemonError {
    DaemonError::BadReply("output of a followed command where a reply was due".into())
}

/// A connection past the hello, driven from an async runtime (one request
/// at a time, as [`Client`]; the same errors: [`DaemonError::Connection`]
/// while the request is written, [`DaemonError::Lost`] after).
#[derive(Debug)]
pub struct AsyncClient {
    reader: tokio::io::BufReader<QuietReader>,
    writer: QuietWriter,
}

impl AsyncClient {
    /// Takes over `client`'s connection. Call it within a runtime (the
    /// socket is registered with its reactor).
    pub fn new(client: Client) -> Result<AsyncClient, DaemonError> {
        let broken = |e: String| DaemonError::Connection(e);
        let stream = client
            .into_stream()
            .ok_or_else(|| broken("the daemon sent more than its welcome".into()))?;
        let (read, writer) = quiet::split(stream).map_err(|e| broken(e.to_string()))?;
        Ok(AsyncClient {
            reader: tokio::io::BufReader::new(read),
            writer,
        })
    }

    /// Sends one request and reads its result as `T` (see
    /// [`Client::request`]).
    pub async fn request<T: ReplyKind>(&mut self, request: &Request) -> Result<T, DaemonError> {
        use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
        let mut line =
            serde_json::to_vec(request).map_err(|e| DaemonError::Connection(e.to_string()))?;
        line.push(b'\n');
        self.writer
            .write_all(&line)
            .await
            .map_err(|e| DaemonError::Connection(e.to_string()))?;
        let mut reply = String::new();
        let response = match self.reader.read_line(&mut reply).await {
            Ok(0) => Err(DaemonError::Lost(
                "the daemon closed the connection (see its log)".into(),
            )),
            Ok(_) => match serde_json::from_str::<Reply>(&reply) {
                Ok(Reply::Ok(v)) => Ok(v),
                Ok(Reply::Error(f)) => Err(DaemonError::Refused(f)),
                Ok(Reply::Piece(_) | Reply::Omitted(_)) => Err(not_followed()),
                Err(e) => Err(DaemonError::Lost(format!("unreadable reply: {e}"))),
            },
            Err(e) => Err(DaemonError::Lost(e.to_string())),
        }?;
        expect(response)
    }
}
