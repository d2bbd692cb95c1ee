//! `tether mcp`: the MCP server over stdio. The `rmcp` SDK (pinned) is used
//! only here. stdout carries only the protocol; nothing else writes to it.
//!
//! The sessions live in the per-user daemon (started on demand), in a
//! namespace of this server's own (`mcp-PID`) that ends with it: a person
//! can `tether attach` to them while the agent works.

mod exec_hosts;
mod schema;
mod shape;
mod stdio;

pub use stdio::serve;

use std::sync::Arc;

use rmcp::handler::server::common::schema_for_output;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ContentBlock};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, tool, tool_handler, tool_router};
use serde::Serialize;
use tether_daemon::protocol::ReplyKind;
use tether_daemon::protocol::{
    CloseReply, Create, ListReply, Request, ResetReply, ScreenReply, ShellResult,
};
use tether_daemon::{AsyncClient, Client, DaemonError, Paths};

use shape::{ReadParams, RunParams, SendParams, SessionParams, SignalParams};

/// How this server reaches the daemon.
struct Link {
    paths: Paths,
    namespace: String,
    /// Held open for the server's life: when it closes, the daemon ends
    /// this namespace's sessions.
    lease: std::sync::Mutex<Option<Client>>,
    /// Idle connections, reused by later calls (calls run concurrently,
    /// each on a connection of its own). A call is written and read on
    /// the server's runtime: no thread of its own.
    pool: std::sync::Mutex<Vec<AsyncClient>>,
    /// Skip the user's start-up files in new sessions.
    norc: bool,
    /// Whether tether may run on the hosts the tools name (`--agentless`).
    far: crate::host_route::FarArgs,
    /// This server's directory and environment, for the sessions it
    /// starts: read once (nothing here changes them), not per call.
    cwd: Option<String>,
    env: Vec<(String, String)>,
    /// The confinement of the sessions the agent starts, and the least a
    /// call may ask: set by the person who started the server (its flags,
    /// tether's config), never by the agent.
    floor: tether_confine::Confine,
}

impl Link {
    fn connect(&self, lease: bool) -> Result<Client, DaemonError> {
        let hello = tether_daemon::client::hello(
            &crate::daemon_cmd::me(),
            Some(self.namespace.clone()),
            lease,
        );
        Client::connect_or_start(&self.paths, &hello, &crate::daemon_cmd::launch)
    }

    /// A new connection (after making sure the lease is held); blocking:
    /// it may start the daemon and wait for it.
    fn connect_new(&self) -> Result<Client, DaemonError> {
        let mut lease = self.lease.lock().unwrap_or_else(|p| p.into_inner());
        if lease.is_none() {
            *lease = Some(self.connect(true)?);
        }
        drop(lease);
        self.connect(false)
    }

    /// A connection for one call: an idle one, or a new one (made on a
    /// blocking thread).
    async fn take(self: &Arc<Self>) -> Result<AsyncClient, DaemonError> {
        if let Some(c) = self.pool.lock().unwrap_or_else(|p| p.into_inner()).pop() {
            return Ok(c);
        }
        let link = Arc::clone(self);
        let made = tokio::task::spawn_blocking(move || link.connect_new())
            .await
            .map_err(|e| DaemonError::Connection(e.to_string()))??;
        AsyncClient::new(made)
    }

    /// Sends `request`. When a pooled connection turns out broken before
    /// the request was written (the daemon was restarted while it was
    /// idle), takes a new lease and connection and sends it there; once
    /// written, it is never sent again (it may have run): a connection
    /// lost then is the caller's error.
    async fn call<T: ReplyKind>(self: &Arc<Self>, request: &Request) -> Result<T, DaemonError> {
        let mut attempts = 0;
        let (client, result) = loop {
            attempts += 1;
            let outcome = match self.take().await {
                Ok(mut c) => {
                    let r = c.request(request).await;
                    Ok((c, r))
                }
                Err(e) => Err(e),
            };
            match outcome {
                // Not written (a connection or daemon that went away before
                // it was read): safe to send on a fresh connection.
                Err(e) | Ok((_, Err(e)))
                    if e.unsent() && attempts < tether_daemon::SEND_ATTEMPTS =>
                {
                    self.forget_connections();
                }
                Err(e) => return Err(e),
                Ok(done) => break done,
            }
        };
        if matches!(result, Err(DaemonError::Lost(_))) {
            self.forget_connections();
        }
        if tether_daemon::reusable(&result) {
            self.pool
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(client);
        }
        result
    }
}

impl Link {
    /// Drops the lease and the idle connections (their daemon is gone).
    fn forget_connections(&self) {
        self.pool.lock().unwrap_or_else(|p| p.into_inner()).clear();
        *self.lease.lock().unwrap_or_else(|p| p.into_inner()) = None;
    }
}

/// The server.
#[derive(Clone)]
pub struct TetherMcp {
    link: Arc<Link>,
    tool_router: ToolRouter<Self>,
}

fn tool_error(message: impl Into<String>) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(message.into())])
}

fn structured(value: &impl Serialize, text: String) -> CallToolResult {
    match serde_json::to_value(value) {
        Ok(v) => {
            let mut out = CallToolResult::structured(v);
            out.content = vec![ContentBlock::text(text)];
            out
        }
        Err(e) => tool_error(format!("the result could not be written: {e}")),
    }
}

impl TetherMcp {
    /// Sends `request` to the daemon and reads its reply as `T`; its
    /// failures become tool errors.
    async fn call<T: ReplyKind + Send + 'static>(
        &self,
        request: Request,
    ) -> Result<T, CallToolResult> {
        self.link
            .call::<T>(&request)
            .await
            .map_err(|e| tool_error(e.to_string()))
    }

    async fn shell(&self, request: Request) -> CallToolResult {
        match self.call::<ShellResult>(request).await {
            Ok(mut r) => {
                // Connection steps are `tether shell -v`'s; not a tool's.
                r.link_steps.clear();
                structured(&r, shape::render(&r))
            }
            Err(e) => e,
        }
    }

    /// [`TetherMcp::shell`] for a call that runs something in `session`:
    /// when the client cancels it (`notifications/cancelled`), the
    /// session's foreground gets SIGINT at once (as Ctrl-C), and the call
    /// still ends with the command's true status.
    async fn cancellable(
        &self,
        session: String,
        request: Request,
        ctx: RequestContext<RoleServer>,
    ) -> CallToolResult {
        let call = self.shell(request);
        tokio::pin!(call);
        tokio::select! {
            r = &mut call => return r,
            () = ctx.ct.cancelled() => {}
        }
        let interrupt = Request::Signal {
            session,
            signal: "INT".into(),
        };
        let _ = self.call::<ShellResult>(interrupt).await;
        call.await
    }
}

#[tool_router(router = tool_router)]
impl TetherMcp {
    /// A server whose sessions live in the daemon at `paths`.
    pub fn new(
        paths: Paths,
        norc: bool,
        far: crate::host_route::FarArgs,
        floor: tether_confine::Confine,
    ) -> Self {
        let link = Link {
            paths,
            namespace: format!("mcp-{}", std::process::id()),
            lease: std::sync::Mutex::new(None),
            pool: std::sync::Mutex::new(Vec::new()),
            norc,
            far,
            cwd: std::env::current_dir()
                .ok()
                .map(|d| d.display().to_string()),
            env: std::env::vars().collect(),
            floor,
        };
        let mut tool_router = Self::tool_router();
        schema::standardize(&mut tool_router);
        TetherMcp {
            link: Arc::new(link),
            tool_router,
        }
    }

    #[tool(
        name = "shell_run",
        description = shape::run_description(),
        output_schema = schema_for_output::<ShellResult>()
    )]
    async fn shell_run(
        &self,
        Parameters(p): Parameters<RunParams>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let confine = match crate::confine_args::for_agent(p.confine.as_deref(), &self.link.floor) {
            Ok(c) => c,
            Err(e) => return Ok(tool_error(format!("{e:#}"))),
        };
        let session = tether_daemon::protocol::run_session(p.session, p.host.as_deref());
        // Resolved in this server's process (the agent's environment), as
        // `tether exec -H HOST` would resolve it here.
        let host = match p.host.as_deref().map(|name| {
            crate::host_route::single(name, &crate::ssh_opts::SshArgs::default(), self.link.far)
        }) {
            Some(Err(e)) => return Ok(tool_error(format!("{e:#}"))),
            Some(Ok(h)) => Some(h),
            None => None,
        };
        let request = Request::Run {
            session: session.clone(),
            command: p.command,
            host,
            timeout_s: p.timeout_s,
            on_timeout: p.on_timeout,
            output_limit: p.output_limit,
            workdir: p.workdir,
            create: Create {
                shell: None,
                norc: self.link.norc,
                no_nested: false,
                cwd: self.link.cwd.clone(),
                env: Some(self.link.env.clone()),
                confine,
            },
            stdin: None,
            follow: false,
            pieces: false,
            call: None,
        };
        Ok(self.cancellable(session, request, ctx).await)
    }

    #[tool(
        name = "shell_send",
        description = shape::send_description(),
        output_schema = schema_for_output::<ShellResult>()
    )]
    async fn shell_send(
        &self,
        Parameters(p): Parameters<SendParams>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let request = Request::Send {
            session: p.session.clone(),
            input: p.input,
            keys: p.keys,
            wait_s: p.wait_s,
            only_if_waiting: false,
            now: false,
        };
        Ok(self.cancellable(p.session, request, ctx).await)
    }

    #[tool(
        name = "shell_read",
        description = "Return output produced since the last result, waiting up to wait_s, and the final status once a kept command has finished.",
        output_schema = schema_for_output::<ShellResult>()
    )]
    async fn shell_read(
        &self,
        Parameters(p): Parameters<ReadParams>,
    ) -> Result<CallToolResult, ErrorData> {
        Ok(self
            .shell(Request::Read {
                session: p.session,
                wait_s: p.wait_s,
            })
            .await)
    }

    #[tool(
        name = "shell_signal",
        description = shape::signal_tool_description(),
        output_schema = schema_for_output::<ShellResult>()
    )]
    async fn shell_signal(
        &self,
        Parameters(p): Parameters<SignalParams>,
    ) -> Result<CallToolResult, ErrorData> {
        Ok(self
            .shell(Request::Signal {
                session: p.session,
                signal: p.signal,
            })
            .await)
    }

    #[tool(
        name = "shell_screen",
        description = "The session's current screen as text (for full-screen programs such as less, vim or top)."
    )]
    async fn shell_screen(
        &self,
        Parameters(p): Parameters<SessionParams>,
    ) -> Result<CallToolResult, ErrorData> {
        Ok(
            match self
                .call::<ScreenReply>(Request::Screen { session: p.session })
                .await
            {
                Ok(v) => structured(&v, v.screen.clone()),
                Err(e) => e,
            },
        )
    }

    #[tool(
        name = "shell_reset",
        description = "Kill the session's processes and start it fresh, with its working directory and exported variables restored."
    )]
    async fn shell_reset(
        &self,
        Parameters(p): Parameters<SessionParams>,
    ) -> Result<CallToolResult, ErrorData> {
        let text = format!("[session {} reset]", p.session);
        Ok(
            match self
                .call::<ResetReply>(Request::Reset { session: p.session })
                .await
            {
                Ok(v) => structured(&v, text),
                Err(e) => e,
            },
        )
    }

    #[tool(
        name = "shell_close",
        description = "End the session: its processes are killed and its files removed."
    )]
    async fn shell_close(
        &self,
        Parameters(p): Parameters<SessionParams>,
    ) -> Result<CallToolResult, ErrorData> {
        let text = format!("[session {} closed]", p.session);
        Ok(
            match self
                .call::<CloseReply>(Request::Close { session: p.session })
                .await
            {
                Ok(v) => structured(&v, text),
                Err(e) => e,
            },
        )
    }

    #[tool(
        name = "exec_hosts",
        description = "Run one command on many hosts over SSH (at most 64 at once; host keys are checked against ~/.ssh/known_hosts; ~/.ssh/config applies). `hosts` is a node set: web[01-20], db1,db2, user@host:port, with ! to exclude. Hosts with identical results share one group, so many identical answers cost one.",
        output_schema = schema_for_output::<exec_hosts::ExecHostsResult>()
    )]
    async fn exec_hosts(
        &self,
        Parameters(p): Parameters<exec_hosts::ExecHostsParams>,
    ) -> Result<CallToolResult, ErrorData> {
        // Its commands would run on the hosts outside any fence.
        if !self.link.floor.is_none() {
            return Ok(tool_error(format!(
                "this server confines its sessions ({}): exec_hosts would run commands on hosts outside any fence, so it is off; use shell_run with `host` (the host's tether confines that session), or ask the person who started the server",
                self.link.floor.mode.name()
            )));
        }
        // SSH handshakes and ciphers compute: on a runtime of their own,
        // off the thread that serves every other call.
        let done = tokio::task::spawn_blocking(move || {
            tokio::runtime::Builder::new_multi_thread()
                .enable_all()
                .build()
                .map_err(|e| format!("cannot start the async runtime: {e}"))
                .and_then(|rt| rt.block_on(exec_hosts::run(p)))
        })
        .await;
        Ok(match done {
            Ok(Ok((result, text))) => structured(&result, text),
            Ok(Err(e)) => tool_error(e),
            Err(e) => tool_error(format!("exec_hosts failed: {e}")),
        })
    }

    #[tool(
        name = "shell_list",
        description = "Your sessions: name, host, dialect, cwd, state, foreground program, created, last used (and the address a person uses to `tether attach` to one)."
    )]
    async fn shell_list(&self) -> Result<CallToolResult, ErrorData> {
        let v = match self.call::<ListReply>(Request::List { all: false }).await {
            Ok(v) => v,
            Err(e) => return Ok(e),
        };
        let names: Vec<&str> = v.sessions.iter().map(|s| s.name.as_str()).collect();
        let text = if names.is_empty() {
            "[no sessions]".to_owned()
        } else {
            names.join("\n")
        };
        Ok(structured(&v, text))
    }
}

#[tool_handler(router = self.tool_router, name = "tether", version = "0.1.0")]
impl ServerHandler for TetherMcp {}

impl std::fmt::Debug for TetherMcp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TetherMcp").finish_non_exhaustive()
    }
}
