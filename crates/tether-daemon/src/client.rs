//! A blocking client of the daemon, for the CLI (no async runtime: a
//! call is a connect, two lines out and two lines back). It starts the
//! daemon when none answers, through a launcher the program supplies.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::error::DaemonError;
use crate::paths::Paths;
use crate::protocol::{AttachReply, Hello, PROTOCOL_VERSION, Reply, Request, Welcome};

/// How long a started daemon has to answer.
const START_DEADLINE: Duration = Duration::from_secs(10);

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
        Client::handshake(stream, hello)
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

    fn handshake(stream: UnixStream, hello: &Hello) -> Result<Client, DaemonError> {
        let reader = BufReader::new(
            stream
                .try_clone()
                .map_err(|e| DaemonError::Connection(e.to_string()))?,
        );
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
        let value = client.reply()?;
        client.welcome =
            serde_json::from_value(value).map_err(|e| DaemonError::Connection(e.to_string()))?;
        Ok(client)
    }

    fn send_line(&mut self, value: &impl serde::Serialize) -> Result<(), DaemonError> {
        let mut line =
            serde_json::to_vec(value).map_err(|e| DaemonError::Connection(e.to_string()))?;
        line.push(b'\n');
        self.writer
            .write_all(&line)
            .map_err(|e| DaemonError::Connection(e.to_string()))
    }

    fn reply(&mut self) -> Result<Value, DaemonError> {
        let mut line = String::new();
        match self.reader.read_line(&mut line) {
            Ok(0) => Err(DaemonError::Connection(
                "the daemon closed the connection (see its log)".into(),
            )),
            Ok(_) => match serde_json::from_str::<Reply>(&line) {
                Ok(Reply::Ok(v)) => Ok(v),
                Ok(Reply::Error(f)) => Err(DaemonError::Refused(f)),
                Err(e) => Err(DaemonError::Connection(format!("unreadable reply: {e}"))),
            },
            Err(e) => Err(DaemonError::Connection(e.to_string())),
        }
    }

    /// Sends one request and returns its result as it came. A connection
    /// that fails while the request is written is a
    /// [`DaemonError::Connection`] (the daemon never read it: safe to send
    /// again on a new connection); one that fails after is a
    /// [`DaemonError::Lost`] (it may have run: never send it again).
    pub fn call(&mut self, request: &Request) -> Result<Value, DaemonError> {
        self.send_line(request)?;
        self.reply().map_err(|e| match e {
            DaemonError::Connection(why) => DaemonError::Lost(why),
            other => other,
        })
    }

    /// Sends one request and reads its result as `T`, the reply that
    /// request gets (a [`crate::protocol::ShellResult`] for `run`, `send`,
    /// `read` and `signal`; a [`crate::protocol::ListReply`] for `list` …).
    pub fn request<T: DeserializeOwned>(&mut self, request: &Request) -> Result<T, DaemonError> {
        let value = self.call(request)?;
        serde_json::from_value(value).map_err(|e| DaemonError::BadReply(e.to_string()))
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
