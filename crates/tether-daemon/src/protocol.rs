//! The protocol between clients (the CLI, `tether mcp`, `tether attach`)
//! and the daemon: JSON lines on a Unix socket.
//!
//! The client opens with a [`Hello`]; the daemon answers with a
//! [`Welcome`] or an error (another protocol version, another user), then
//! each request line gets one reply line, `{"ok": …}` (a [`Response`],
//! tagged with its `kind`) or `{"error": …}` (a [`Failure`]), in order.
//! A followed command (`follow`, `run` with `follow`) has `piece` lines
//! ([`Piece`], [`Omitted`]) before its reply: its text as it comes, with
//! offsets, so a follower cut off asks again from where it stopped. An
//! `attach` request turns the connection into the binary frames of
//! [`crate::frame`] after its reply.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use crate::nested::{NestChange, ShellLevel};

/// Bumped on any change a peer of another version would misread (2: the
/// result's `pipe_status`; 3: `truncated.full_output_path` may be null,
/// with `truncated.note` saying why; 4: status `connection_lost`, with the
/// result's `link`; 5: `follow`, and `run` with `follow`: pieces of output
/// before the reply; each `ok` reply tagged with its `kind`; `run`'s `host`
/// a name with the route the caller resolved; 8: `create.confine`, which a
/// peer that ignored it would run unconfined, and the results'
/// `confinement`; 9: `run`'s `pieces`, which a peer that ignored it would
/// answer with a result of the unfinished line only; 10: the status
/// `entered_shell`, which an older peer cannot read).
pub const PROTOCOL_VERSION: u32 = 10;

/// The session a client means when it names none.
pub const DEFAULT_SESSION: &str = "main";

/// Seconds a `send` waits for the session to be ready again when the
/// client names no wait.
pub const DEFAULT_SEND_WAIT_S: f64 = 10.0;

/// The session a run goes to: the one named, else the host's name (a
/// host's commands share its session), else [`DEFAULT_SESSION`].
pub fn run_session(session: Option<String>, host: Option<&str>) -> String {
    session
        .or_else(|| host.map(str::to_owned))
        .unwrap_or_else(|| DEFAULT_SESSION.to_owned())
}

/// A remote host as the caller named it and resolved it, in the caller's
/// process (its ssh_config, its flags, tether's config as it reads it):
/// the daemon connects with [`HostRoute::route`] as given and reads no
/// file to find how to reach a host.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct HostRoute {
    /// The host as written (`[user@]host[:port]`): the session's default
    /// name, and how results and messages name it.
    pub name: String,
    /// Where and how to reach it (boxed: a request stays small).
    pub route: Box<tether_ssh::Route>,
    /// Whether tether runs there (its own daemon keeps the sessions, so
    /// they outlive the link), and where its binary is.
    #[serde(default)]
    pub far: tether_transport::FarSettings,
}

/// The client's first line.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Hello {
    /// The protocol version the client speaks.
    pub protocol: u32,
    /// The client's program and version, for messages.
    pub client: String,
    /// The namespace whose sessions the connection addresses; `None` is
    /// the shared one of the CLI.
    #[serde(default)]
    pub namespace: Option<String>,
    /// When true, the namespace lives as long as this connection: its
    /// sessions end when the connection closes (an MCP server's sessions).
    #[serde(default)]
    pub lease: bool,
}

/// The daemon's answer to a [`Hello`].
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct Welcome {
    /// The protocol version the daemon speaks.
    pub protocol: u32,
    /// The daemon's program and version.
    pub server: String,
    /// The daemon's process id.
    pub pid: u32,
}

/// How a session is started, when a request creates it.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Create {
    /// The dialect: bash, zsh, sh, dash, busybox, pwsh or fish (default bash).
    /// Given for a session that exists already, it must be that
    /// session's shell.
    #[serde(default)]
    pub shell: Option<String>,
    /// Skip the user's start-up files.
    #[serde(default)]
    pub norc: bool,
    /// Leave a shell a command starts inside the session (`bash`,
    /// `sudo -i`) unarmed: a program waiting for input like any other.
    #[serde(default)]
    pub no_nested: bool,
    /// The starting directory (default: the daemon's).
    #[serde(default)]
    pub cwd: Option<String>,
    /// Its confinement (default: none). Given for a session that exists
    /// already, it must be that session's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confine: Option<tether_confine::Confine>,
    /// The environment (default: the daemon's).
    #[serde(default)]
    pub env: Option<Vec<(String, String)>>,
}

/// What to do when `timeout_s` passes.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum OnTimeout {
    /// Interrupt the command (SIGINT, then TERM, then KILL) and keep the shell.
    #[default]
    Interrupt,
    /// Leave it running; a later read returns the rest and the final status.
    Keep,
}

/// The most bytes a command's stdin may carry (64 MiB).
pub const MAX_STDIN: usize = 64 << 20;

/// Bytes as a base64 string.
mod base64_bytes {
    use data_encoding::BASE64;
    use serde::{Deserialize, Deserializer, Serializer};

    pub(super) fn serialize<S: Serializer>(v: &Option<Vec<u8>>, s: S) -> Result<S::Ok, S::Error> {
        match v {
            Some(bytes) => s.serialize_str(&BASE64.encode(bytes)),
            None => s.serialize_none(),
        }
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Option<Vec<u8>>, D::Error> {
        let Some(text) = Option::<String>::deserialize(d)? else {
            return Ok(None);
        };
        BASE64
            .decode(text.as_bytes())
            .map(Some)
            .map_err(serde::de::Error::custom)
    }
}

/// One request.
// A request is made once per call and read once: `run`'s size costs nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Request {
    /// Run a command in a session (created on first use).
    Run {
        /// The session.
        session: String,
        /// The command text.
        command: String,
        /// A remote host to start the session's shell on, through the
        /// daemon's hosts; a session keeps the host (and the route) it
        /// started with: naming the same host with another route later
        /// changes nothing for it (close it to start over).
        #[serde(default)]
        host: Option<HostRoute>,
        /// Seconds before the deadline.
        timeout_s: f64,
        /// What happens at the deadline.
        #[serde(default)]
        on_timeout: OnTimeout,
        /// Most characters of output in the result.
        output_limit: usize,
        /// Directory to run in.
        #[serde(default)]
        workdir: Option<String>,
        /// How to start the session if it does not exist.
        #[serde(default)]
        create: Create,
        /// The command's stdin (base64 on the wire; at most
        /// [`MAX_STDIN`] bytes); `None`: it reads the session's terminal.
        #[serde(
            default,
            with = "base64_bytes",
            skip_serializing_if = "Option::is_none"
        )]
        stdin: Option<Vec<u8>>,
        /// Stream the command's output as it comes: [`Reply::Piece`] lines
        /// (and [`Reply::Omitted`]) before the reply, whose `output` then
        /// holds only the unfinished line (see [`Request::Follow`]).
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        follow: bool,
        /// For a relay (which keeps what comes, for a link lost before
        /// the reply): the command's start said by an empty piece; with
        /// `follow` false, the pieces too, for the head a result keeps
        /// (half `output_limit`), and the reply the whole result, as
        /// without them.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        pieces: bool,
        /// The caller's name for this call, to ask for its result again
        /// ([`Request::Recall`]) when the reply may have been lost on the
        /// way (a relay whose link to the host dropped): the daemon keeps
        /// the last result of a named call per session.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        call: Option<String>,
    },
    /// The result of the named `run` (its `call`) once more, when its
    /// reply may have been lost: kept if the call ended; else (its client
    /// went away and left the command running) as `read` with `wait_s`.
    Recall {
        /// The session.
        session: String,
        /// The call's name.
        call: String,
        /// Seconds to wait, as `read`.
        wait_s: f64,
    },
    /// Follow the command typed last in a session, from offset `from` of
    /// its text: [`Reply::Piece`] lines as its output comes, then the
    /// reply (a [`ShellResult`], as `read` returns it once the command
    /// ends or waits for input; its `output` holds only the unfinished
    /// line, a prompt, which no piece carries). A command kept running is
    /// collected so, as by `read`. A follower cut off (its connection
    /// lost) asks again from the offset after the last piece it got, and
    /// gets every byte once.
    Follow {
        /// The session.
        session: String,
        /// The offset (in bytes of the command's text) to start from;
        /// null: after the last piece a follower was sent (for a client
        /// that does not know where it stopped).
        #[serde(default)]
        from: Option<u64>,
        /// End as `read` with this wait instead (a command still running
        /// then ends the follow with `running`): a look. Null: follow to
        /// the command's end or its wait for input.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        wait_s: Option<f64>,
    },
    /// Type input and keys, then wait.
    Send {
        /// The session.
        session: String,
        /// Text typed as is.
        #[serde(default)]
        input: Option<String>,
        /// Key names pressed after it.
        #[serde(default)]
        keys: Vec<String>,
        /// Seconds to wait for the session to be ready again.
        wait_s: f64,
        /// Type only if the command in flight reads the terminal now
        /// (checked under the session's lock); else nothing is typed and
        /// the reply is a `not_waiting` failure.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        only_if_waiting: bool,
        /// Type now, whatever call holds the session (an answer to a
        /// prompt the caller saw in the output of the command it follows);
        /// the reply is a look at once (`wait_s` is not waited, and
        /// `only_if_waiting` not checked: a daemon that does not know
        /// `now` checks it instead, once the call is over).
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        now: bool,
    },
    /// Output since the last result.
    Read {
        /// The session.
        session: String,
        /// Seconds to wait.
        wait_s: f64,
    },
    /// Signal the foreground process group.
    Signal {
        /// The session.
        session: String,
        /// A name of `tether_transport::Signal::ALL` (`INT`, `SIGINT`, `int`).
        signal: String,
    },
    /// The rendered screen.
    Screen {
        /// The session.
        session: String,
    },
    /// Kill and restart the shell.
    Reset {
        /// The session.
        session: String,
    },
    /// End the session.
    Close {
        /// The session.
        session: String,
    },
    /// The sessions of this connection's namespace, or of all.
    List {
        /// Every namespace, not only this connection's.
        #[serde(default)]
        all: bool,
    },
    /// The sessions that live in a host's own tether, as its daemon lists
    /// them (of this connection's namespace, or of all).
    ListOn {
        /// The host.
        host: HostRoute,
        /// Every namespace, not only this connection's.
        #[serde(default)]
        all: bool,
    },
    /// Join the live terminal (the connection switches to frames).
    Attach {
        /// The session; a bare name that is not in this namespace may name
        /// the only session of that name in another one.
        session: String,
        /// The attaching terminal's rows.
        rows: u16,
        /// Its columns.
        cols: u16,
        /// The host the session lives on, when this daemon does not know
        /// it yet (another machine made it there): it is looked for in
        /// tether on that host.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        host: Option<HostRoute>,
        /// Coming back after a lost link: the number of the first display
        /// byte not received (the last [`crate::frame::Frame::Mark`] plus
        /// the output since); what was shown from there on comes first,
        /// while it is still kept.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        resume: Option<u64>,
    },
    /// End every session and exit.
    Stop,
}

/// The session field of a request (shared or mutable, by the binding
/// mode of `$r`): the one list of the requests that name a session.
macro_rules! named_session {
    ($r:expr) => {
        match $r {
            Request::Run { session, .. }
            | Request::Follow { session, .. }
            | Request::Recall { session, .. }
            | Request::Send { session, .. }
            | Request::Read { session, .. }
            | Request::Signal { session, .. }
            | Request::Screen { session }
            | Request::Reset { session }
            | Request::Close { session }
            | Request::Attach { session, .. } => Some(session),
            Request::List { .. } | Request::ListOn { .. } | Request::Stop => None,
        }
    };
}

impl Request {
    /// Its name on the wire (`op`); a `run` that follows its command is
    /// `run+follow`.
    pub fn op(&self) -> &'static str {
        match self {
            Request::Run { follow: true, .. } => "run+follow",
            Request::Run { .. } => "run",
            Request::Follow { .. } => "follow",
            Request::Recall { .. } => "recall",
            Request::Send { .. } => "send",
            Request::Read { .. } => "read",
            Request::Signal { .. } => "signal",
            Request::Screen { .. } => "screen",
            Request::Reset { .. } => "reset",
            Request::Close { .. } => "close",
            Request::List { .. } => "list",
            Request::ListOn { .. } => "list_on",
            Request::Attach { .. } => "attach",
            Request::Stop => "stop",
        }
    }

    /// The session it names, if any, to change (a relay names it as the
    /// host's daemon knows it).
    pub fn session_mut(&mut self) -> Option<&mut String> {
        named_session!(self)
    }

    /// The session it names, if any.
    pub fn session(&self) -> Option<&str> {
        named_session!(self).map(String::as_str)
    }
}

/// The stable kinds of a failed request.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, JsonSchema, PartialEq, Eq, Hash)]
#[serde(rename_all = "snake_case")]
pub enum FailureKind {
    /// No session of that name in the namespace.
    UnknownSession,
    /// The session is still running a kept command (or waits for input).
    Busy,
    /// The request is malformed or its values are out of range.
    BadRequest,
    /// The connection is not allowed (another user).
    Refused,
    /// The peer speaks another protocol version.
    Version,
    /// A bare name matches sessions in several namespaces.
    Ambiguous,
    /// The engine failed to do what was asked.
    Engine,
    /// `send` with `only_if_waiting`: no program waits for input (the
    /// command ended, or nothing reads the terminal); nothing was typed.
    NotWaiting,
}

/// A failed request.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct Failure {
    /// What kind of failure.
    pub kind: FailureKind,
    /// What happened and what to do.
    pub message: String,
    /// With [`FailureKind::Engine`], when a remote host failed: how. Absent
    /// otherwise (and from daemons before it was added).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<tether_transport::HostFailure>,
}

/// One reply line.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[allow(clippy::large_enum_variant)] // one per line, serialised at once
pub enum Reply {
    /// The result of the request, tagged with its kind.
    Ok(Response),
    /// Why it failed.
    Error(Failure),
    /// Output of a followed command (`follow`, `run` with `follow`); more
    /// lines follow, up to an `ok` or `error` line.
    Piece(Piece),
    /// Output of a followed command that was no longer kept (the follower
    /// fell more than 1 MiB behind); more lines follow.
    Omitted(Omitted),
}

/// Output of a followed command, as it came.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
pub struct Piece {
    /// The command followed (its number in the session: it changes when
    /// another command is typed).
    pub command: u64,
    /// Where `text` starts in the command's text (bytes of UTF-8).
    pub offset: u64,
    /// Projected, redacted text.
    pub text: String,
    /// When the daemon took it from the shell, in milliseconds since the
    /// command was typed.
    pub at_ms: u64,
}

/// Text of a followed command that was no longer kept.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
pub struct Omitted {
    /// The command followed.
    pub command: u64,
    /// The first byte missed.
    pub from: u64,
    /// The first byte of the next piece.
    pub to: u64,
}

impl From<tether_shell::Piece> for Reply {
    fn from(p: tether_shell::Piece) -> Reply {
        match p {
            tether_shell::Piece::Text {
                command,
                offset,
                text,
                at_ms,
            } => Reply::Piece(Piece {
                command,
                offset,
                text,
                at_ms,
            }),
            tether_shell::Piece::Omitted { command, from, to } => {
                Reply::Omitted(Omitted { command, from, to })
            }
        }
    }
}

/// What a request returns, by kind: on the wire its object with a `kind`
/// field (`{"ok": {"kind": "shell", …}}`), so a client reads the kind its
/// request gets ([`ReplyKind`]) and a reply of another kind is an error,
/// never a guess.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[allow(clippy::large_enum_variant)] // one per request, serialised at once: boxing the shell result buys nothing
pub enum Response {
    /// The hello's answer.
    Welcome(Welcome),
    /// `run`, `send`, `read`, `signal` and `follow`.
    Shell(ShellResult),
    /// `screen`.
    Screen(ScreenReply),
    /// `reset`.
    Reset(ResetReply),
    /// `close`.
    Closed(CloseReply),
    /// `list`.
    List(ListReply),
    /// `attach`, before the frames begin.
    Attach(AttachReply),
    /// `stop`.
    Stopping(StopReply),
}

impl Response {
    /// Its kind as on the wire.
    pub fn kind(&self) -> &'static str {
        match self {
            Response::Welcome(_) => "welcome",
            Response::Shell(_) => "shell",
            Response::Screen(_) => "screen",
            Response::Reset(_) => "reset",
            Response::Closed(_) => "closed",
            Response::List(_) => "list",
            Response::Attach(_) => "attach",
            Response::Stopping(_) => "stopping",
        }
    }
}

/// A reply's value by its kind: what [`crate::Client::request`] reads.
pub trait ReplyKind: Sized {
    /// The kind, as on the wire.
    const KIND: &'static str;
    /// The value when `r` is of this kind, else the kind `r` is.
    fn from_response(r: Response) -> Result<Self, &'static str>;
}

macro_rules! reply_kind {
    ($($ty:ty => $variant:ident, $kind:literal;)*) => {$(
        impl ReplyKind for $ty {
            const KIND: &'static str = $kind;
            fn from_response(r: Response) -> Result<Self, &'static str> {
                match r {
                    Response::$variant(v) => Ok(v),
                    other => Err(other.kind()),
                }
            }
        }
    )*};
}

reply_kind! {
    Welcome => Welcome, "welcome";
    ShellResult => Shell, "shell";
    ScreenReply => Screen, "screen";
    ResetReply => Reset, "reset";
    CloseReply => Closed, "closed";
    ListReply => List, "list";
    AttachReply => Attach, "attach";
    StopReply => Stopping, "stopping";
}

/// The reply to `stop`.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
pub struct StopReply {
    /// Always true: the daemon ends every session and exits.
    pub stopping: bool,
}

/// The reply to `screen`.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
pub struct ScreenReply {
    /// The session, as the client named it.
    pub session: String,
    /// The rendered screen, one line per row.
    pub screen: String,
}

/// The reply to `reset`.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
pub struct ResetReply {
    /// The session, as the client named it.
    pub session: String,
    /// Always true: the shell was restarted.
    pub reset: bool,
    /// The working directory the new shell starts in.
    pub cwd: Option<String>,
}

/// The reply to `close`.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
pub struct CloseReply {
    /// The session, as the client named it.
    pub session: String,
    /// Always true: the session is gone.
    pub closed: bool,
}

/// The reply to `list`.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
pub struct ListReply {
    /// The sessions, by namespace and name.
    pub sessions: Vec<SessionEntry>,
}

/// The reply to `attach`, before the frames begin.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
pub struct AttachReply {
    /// The session's full address (`name` or `namespace/name`).
    pub session: String,
}

/// How a call ended.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, JsonSchema, PartialEq, Eq, Hash)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// The command completed; `exit_code` is exact.
    Exited,
    /// A foreground program is blocked reading the terminal.
    WaitingForInput,
    /// A command kept past its deadline is still running.
    Running,
    /// The deadline passed and the command was interrupted (shell kept).
    TimedOut,
    /// The command ended the shell; the next call starts a fresh one.
    ShellExited,
    /// The command was unfinished (open quote, heredoc, block): not run.
    IncompleteInput,
    /// The session was reset while the command was in flight (its process
    /// tree ended; a fresh shell with cwd and exports restored).
    Reset,
    /// The session was closed, or the daemon stopped, while the command
    /// was in flight (its process tree ended).
    Closed,
    /// The link to the session's host was lost or stopped answering while
    /// the call waited: the command's fate is unknown (`link` says what is
    /// known); no exit code or signal (the host sent none).
    ConnectionLost,
    /// The command started an interactive shell (`bash`, `sudo -i`,
    /// `su - USER`), which the session armed: later commands run there
    /// until it exits (`nested` names it).
    EnteredShell,
}

impl From<tether_shell::Status> for Status {
    fn from(s: tether_shell::Status) -> Status {
        match s {
            tether_shell::Status::Exited => Status::Exited,
            tether_shell::Status::WaitingForInput => Status::WaitingForInput,
            tether_shell::Status::Running => Status::Running,
            tether_shell::Status::TimedOut => Status::TimedOut,
            tether_shell::Status::ShellExited => Status::ShellExited,
            tether_shell::Status::IncompleteInput => Status::IncompleteInput,
            tether_shell::Status::Reset => Status::Reset,
            tether_shell::Status::Closed => Status::Closed,
            tether_shell::Status::ConnectionLost => Status::ConnectionLost,
            tether_shell::Status::EnteredShell => Status::EnteredShell,
        }
    }
}

/// Whether a session is in a call.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, JsonSchema, PartialEq, Eq, Hash)]
#[serde(rename_all = "snake_case")]
pub enum SessionState {
    /// No call holds it.
    Idle,
    /// A call holds it (or a command was kept past its deadline).
    Busy,
    /// Its shell was lost with a daemon that was killed; the next `run` on
    /// it continues it (cwd and exports restored).
    Lost,
    /// It lives in its host's own tether (its state is the host's to
    /// tell; it outlives this daemon and the link).
    OnHost,
}

/// Where output was clipped.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
pub struct Truncated {
    /// Characters left out between head and tail.
    pub omitted_chars: u64,
    /// Characters of output in all.
    pub total_chars: u64,
    /// File holding the complete output; null when it could not be kept
    /// whole (the session's cap on saved output, a full disk): `note`
    /// says why.
    pub full_output_path: Option<String>,
    /// Null, or why the output was not saved whole and what to do.
    #[serde(default)]
    pub note: Option<String>,
}

/// How the link to a session's host failed.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, JsonSchema, PartialEq, Eq, Hash)]
#[serde(rename_all = "snake_case")]
pub enum LinkFailure {
    /// The connection (or the terminal's channel) ended without the
    /// shell's exit status.
    Lost,
    /// The host stopped answering within the grace after the deadline.
    Unanswered,
}

/// What is known of a command whose host link failed under the call.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
pub struct LinkLoss {
    /// How the link failed.
    pub failure: LinkFailure,
    /// True: the host's shell was seen starting the command (it ran, at
    /// least partly). False: not seen to start; it may never have reached
    /// the host, or may still run there once the link recovers.
    pub command_started: bool,
    /// True: the session lives in the host's own tether, so the command
    /// runs on there whatever the link does; `read` gets the rest (every
    /// byte once) once the link is back.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub kept: bool,
}

impl LinkLoss {
    /// What is known of the command's fate after its host link failed, in
    /// the words every front-end prints (CLI and MCP alike). No detail
    /// (`None`) reads as not seen to start: tether claims no more than it
    /// saw.
    pub fn fate(loss: Option<&Self>) -> &'static str {
        if loss.is_some_and(|l| l.kept) {
            "the session lives in the host's tether: the command runs on there; read the session to get the rest once the link is back"
        } else if loss.is_some_and(|l| l.command_started) {
            "the command had started: it may have run partly, or may still run there"
        } else {
            "the command was not seen to start: it may not have run, or may still run once the link recovers"
        }
    }
}

/// The program still in the foreground.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
pub struct Foreground {
    /// Its process id.
    pub pid: i32,
    /// Its command name.
    pub command: String,
}

/// A process left by an earlier command that still holds the session's
/// terminal: it may read what is typed there (tether's lines reach the
/// shell anyway, and hold no mark's nonce).
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
pub struct TerminalHolder {
    /// Its process id.
    pub pid: i32,
    /// Its command name.
    pub program: String,
    /// It can type into the session by TIOCSTI (the kernel allows it, and
    /// the terminal is its controlling terminal or it is privileged).
    pub can_type: bool,
}

/// The result of run, send, read and signal.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
pub struct ShellResult {
    /// The session.
    pub session: String,
    /// The host, or null for local.
    pub host: Option<String>,
    /// How the call ended.
    pub status: Status,
    /// The exit code, when the command (or the shell) finished.
    pub exit_code: Option<i32>,
    /// Each pipeline stage's exit code, in order (null: the dialect does
    /// not report them, or the command did not finish).
    pub pipe_status: Option<Vec<i32>>,
    /// The terminating signal (e.g. SIGKILL), when there was one.
    pub signal: Option<String>,
    /// The output (terminal sequences removed, secrets redacted, clipped).
    pub output: String,
    /// Null, or where the output was clipped.
    pub truncated: Option<Truncated>,
    /// The working directory after the command.
    pub cwd: Option<String>,
    /// Null, or the program still in the foreground.
    pub foreground: Option<Foreground>,
    /// Wall time of the call.
    pub duration_ms: u64,
    /// True when the shell was (re)started for this call.
    pub shell_restarted: bool,
    /// Null, or (with `connection_lost`) how the host link failed and
    /// whether the command was seen to start.
    #[serde(default)]
    pub link: Option<LinkLoss>,
    /// Processes left by earlier commands that hold the session's terminal
    /// (on a host, as its shell last saw them; empty when none), until they exit or a reset ends
    /// them.
    #[serde(default)]
    pub terminal_holders: Vec<TerminalHolder>,
    /// The shells the session armed inside its own, outermost first, where
    /// the next command runs (empty: the session's own shell).
    #[serde(default)]
    pub nested: Vec<ShellLevel>,
    /// Null, or how this call changed that chain (`entered`, `returned`,
    /// `not_armed`).
    #[serde(default)]
    pub nest_change: Option<NestChange>,
    /// With `waiting_for_input`: the program asks for a secret (a password
    /// or passphrase prompt); tether types nothing into it unless asked.
    #[serde(default)]
    pub secret: bool,
    /// Null, or why the session's host runs without tether (deployment
    /// turned off, another architecture, a home that cannot run
    /// programs): its shell is driven over the link and ends with it.
    #[serde(default)]
    pub agentless: Option<String>,
    /// Null, or the session's confinement: its mode, roots, network, and
    /// what the fence refused since the last result.
    #[serde(default)]
    pub confinement: Option<tether_confine::Confinement>,
    /// The steps of the connections made to the session's host since its
    /// last result that said them (connecting, the host key,
    /// authentication), each once; left out when none (`tether shell -v`
    /// shows them). Not in the MCP tools' output schema: the MCP server
    /// drops them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(skip)]
    pub link_steps: Vec<LinkStep>,
}

/// One step of connecting to a host.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
pub struct LinkStep {
    /// When, in milliseconds since the Unix epoch (the daemon's clock).
    pub at_ms: u64,
    /// What happened (`web01: connected to 10.0.0.5:22`).
    pub text: String,
}

impl LinkStep {
    /// The steps `host` kept since they were last taken.
    pub fn taken(host: &dyn tether_transport::RemoteHost) -> Vec<LinkStep> {
        host.take_link_steps()
            .into_iter()
            .map(|s| LinkStep {
                at_ms: s
                    .at
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX)),
                text: s.text,
            })
            .collect()
    }
}

/// One session in a listing.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
pub struct SessionEntry {
    /// Its name within its namespace.
    pub name: String,
    /// Its namespace (null: the CLI's shared one).
    pub namespace: Option<String>,
    /// The address other clients use: `name`, or `namespace/name`.
    pub address: String,
    /// The host, or null for local.
    pub host: Option<String>,
    /// The dialect.
    pub dialect: String,
    /// The working directory after its last command.
    pub cwd: Option<String>,
    /// Whether a call holds it.
    pub state: SessionState,
    /// Null, or the program in the foreground.
    pub foreground: Option<Foreground>,
    /// People attached now.
    pub attached: u32,
    /// Unix time of creation.
    pub created: u64,
    /// Unix time of the last call.
    pub last_used: u64,
    /// Null, or the session's confinement.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confinement: Option<tether_confine::Confinement>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_goes_to_the_named_session_else_the_hosts_else_main() {
        assert_eq!(run_session(Some("s".into()), Some("web1")), "s");
        assert_eq!(run_session(None, Some("web1")), "web1");
        assert_eq!(run_session(None, None), "main");
    }
}
