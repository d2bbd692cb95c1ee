//! `tether mcp`: the MCP server over stdio. The `rmcp` SDK (pinned) is used
//! only here. stdout carries only the protocol; nothing else writes to it.

mod shape;
mod stdio;

pub use stdio::serve;

use std::sync::Arc;
use std::time::Duration;

use rmcp::handler::server::common::schema_for_output;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ContentBlock};
use rmcp::{ErrorData, ServerHandler, tool, tool_handler, tool_router};
use tether_shell::{OnTimeout, Registry, RunOptions, RunResult, SessionOptions, ShellError};
use tether_transport::Signal;

use shape::{ReadParams, RunParams, SendParams, SessionParams, ShellResult, SignalParams};

/// The owner of this server's sessions.
const OWNER: &str = "mcp";
/// Longest `timeout_s` accepted.
const MAX_TIMEOUT_S: f64 = 3600.0;

/// The server: one registry of sessions.
#[derive(Clone)]
pub struct TetherMcp {
    registry: Arc<Registry>,
    tool_router: ToolRouter<Self>,
}

fn tool_error(message: impl Into<String>) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(message.into())])
}

fn shell_result(session: &str, r: RunResult) -> CallToolResult {
    let status = r.status;
    let result = ShellResult::new(session, r);
    let text = result.text(status);
    let value = serde_json::to_value(&result).unwrap_or_default();
    let mut out = CallToolResult::structured(value);
    out.content = vec![ContentBlock::text(text)];
    out
}

fn engine_error(e: ShellError) -> CallToolResult {
    tool_error(e.to_string())
}

/// Runs `f` on the caller's existing session `name` (none is created) and
/// shapes its result; errors become tool errors.
async fn on_existing(
    registry: &Registry,
    name: &str,
    f: impl AsyncFnOnce(&mut tether_shell::Session) -> Result<RunResult, ShellError>,
) -> CallToolResult {
    let session = match registry.existing(OWNER, name) {
        Ok(s) => s,
        Err(e) => return engine_error(e),
    };
    let mut s = session.lock().await;
    match f(&mut s).await {
        Ok(r) => shell_result(name, r),
        Err(e) => engine_error(e),
    }
}

fn seconds(name: &str, value: f64, max: f64) -> Result<Duration, CallToolResult> {
    if value.is_finite() && (0.0..=max).contains(&value) {
        Ok(Duration::from_secs_f64(value))
    } else {
        Err(tool_error(format!(
            "{name} must be between 0 and {max} seconds, got {value}"
        )))
    }
}

#[tool_router(router = tool_router)]
impl TetherMcp {
    /// A server whose sessions start with `options`.
    pub fn new(options: SessionOptions) -> Self {
        TetherMcp {
            registry: Arc::new(Registry::new(options)),
            tool_router: Self::tool_router(),
        }
    }

    #[tool(
        name = "shell_run",
        description = "Run a command in a persistent shell session (created on first use; cd, exports, functions and virtualenvs persist). Returns the exact exit code and the output. Non-interactive defaults are set: PAGER=cat, GIT_PAGER=cat, MANPAGER=cat, GIT_EDITOR=true, GIT_TERMINAL_PROMPT=0, DEBIAN_FRONTEND=noninteractive, PIP_NO_INPUT=1, NO_COLOR=1, TERM=dumb. A program that waits for input returns status waiting_for_input: answer with shell_send.",
        output_schema = schema_for_output::<ShellResult>()
    )]
    async fn shell_run(
        &self,
        Parameters(p): Parameters<RunParams>,
    ) -> Result<CallToolResult, ErrorData> {
        if let Some(host) = &p.host {
            return Ok(tool_error(format!(
                "remote hosts are not available yet (asked for {host:?}); omit `host` to run locally"
            )));
        }
        let timeout = match seconds("timeout_s", p.timeout_s, MAX_TIMEOUT_S) {
            Ok(t) if !t.is_zero() => t,
            Ok(_) => return Ok(tool_error("timeout_s must be more than 0 seconds")),
            Err(e) => return Ok(e),
        };
        let opts = RunOptions {
            timeout,
            on_timeout: match p.on_timeout {
                shape::OnTimeout::Interrupt => OnTimeout::Interrupt,
                shape::OnTimeout::Keep => OnTimeout::Keep,
            },
            output_limit: p.output_limit.max(1),
        };
        let workdir = p.workdir.clone();
        let command = p.command.clone();
        let result = self
            .registry
            .with(OWNER, &p.session, async move |s| {
                if let Some(dir) = workdir {
                    let cd = s
                        .run(
                            &format!("cd -- {}", shell_word(&dir)),
                            &RunOptions::default(),
                        )
                        .await?;
                    if cd.exit_code != Some(0) {
                        return Ok(cd);
                    }
                }
                s.run(&command, &opts).await
            })
            .await;
        Ok(match result {
            Ok(r) => shell_result(&p.session, r),
            Err(ShellError::Busy) => tool_error(format!(
                "session {:?} is still running a command kept past its deadline (or waiting for input): use shell_read or shell_send, shell_signal it, or shell_reset the session",
                p.session
            )),
            Err(e) => engine_error(e),
        })
    }

    #[tool(
        name = "shell_send",
        description = "Type input and/or press keys (C-c, C-d, C-z, Enter, Tab, Esc, Up, Down, Left, Right, Backspace) in a session's foreground program, then wait up to wait_s for it to be ready again.",
        output_schema = schema_for_output::<ShellResult>()
    )]
    async fn shell_send(
        &self,
        Parameters(p): Parameters<SendParams>,
    ) -> Result<CallToolResult, ErrorData> {
        let wait = match seconds("wait_s", p.wait_s, MAX_TIMEOUT_S) {
            Ok(w) => w,
            Err(e) => return Ok(e),
        };
        for k in &p.keys {
            if let Err(e) = tether_shell::keys::key_bytes(k) {
                return Ok(engine_error(e));
            }
        }
        let (input, keys) = (p.input.clone(), p.keys.clone());
        Ok(on_existing(&self.registry, &p.session, async move |s| {
            s.send(input.as_deref(), &keys, wait).await
        })
        .await)
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
        let wait = match seconds("wait_s", p.wait_s, MAX_TIMEOUT_S) {
            Ok(w) => w,
            Err(e) => return Ok(e),
        };
        Ok(on_existing(&self.registry, &p.session, async move |s| {
            s.read(wait).await
        })
        .await)
    }

    #[tool(
        name = "shell_signal",
        description = "Send a signal (INT, TERM, KILL, QUIT, HUP, TSTP, CONT) to the session's verified foreground process group.",
        output_schema = schema_for_output::<ShellResult>()
    )]
    async fn shell_signal(
        &self,
        Parameters(p): Parameters<SignalParams>,
    ) -> Result<CallToolResult, ErrorData> {
        let Some(signal) = Signal::from_name(&p.signal) else {
            return Ok(tool_error(format!(
                "unknown signal {:?}: use INT, TERM, KILL, QUIT, HUP, TSTP or CONT",
                p.signal
            )));
        };
        Ok(on_existing(&self.registry, &p.session, async move |s| {
            s.signal(signal)?;
            s.read(Duration::from_millis(500)).await
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
        let session = match self.registry.existing(OWNER, &p.session) {
            Ok(s) => s,
            Err(e) => return Ok(engine_error(e)),
        };
        let screen = session.lock().await.screen();
        let mut out = CallToolResult::structured(
            serde_json::json!({ "session": p.session, "screen": screen }),
        );
        out.content = vec![ContentBlock::text(screen)];
        Ok(out)
    }

    #[tool(
        name = "shell_reset",
        description = "Kill the session's processes and start it fresh, with its working directory and exported variables restored."
    )]
    async fn shell_reset(
        &self,
        Parameters(p): Parameters<SessionParams>,
    ) -> Result<CallToolResult, ErrorData> {
        let session = match self.registry.existing(OWNER, &p.session) {
            Ok(s) => s,
            Err(e) => return Ok(engine_error(e)),
        };
        let mut s = session.lock().await;
        Ok(match s.restart().await {
            Ok(()) => {
                let cwd = s.cwd().map(|c| c.display().to_string());
                let mut out = CallToolResult::structured(
                    serde_json::json!({ "session": p.session, "reset": true, "cwd": cwd }),
                );
                out.content = vec![ContentBlock::text(format!("[session {} reset]", p.session))];
                out
            }
            Err(e) => engine_error(e),
        })
    }

    #[tool(
        name = "shell_close",
        description = "End the session: its processes are killed and its files removed."
    )]
    async fn shell_close(
        &self,
        Parameters(p): Parameters<SessionParams>,
    ) -> Result<CallToolResult, ErrorData> {
        Ok(match self.registry.close(OWNER, &p.session).await {
            Ok(()) => {
                let mut out = CallToolResult::structured(
                    serde_json::json!({ "session": p.session, "closed": true }),
                );
                out.content = vec![ContentBlock::text(format!(
                    "[session {} closed]",
                    p.session
                ))];
                out
            }
            Err(e) => engine_error(e),
        })
    }

    #[tool(
        name = "shell_list",
        description = "Your sessions: name, host, dialect, cwd, state, created, last used."
    )]
    async fn shell_list(&self) -> Result<CallToolResult, ErrorData> {
        let since = |t: std::time::SystemTime| {
            t.duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_secs())
                .unwrap_or(0)
        };
        let sessions: Vec<serde_json::Value> = self
            .registry
            .list(OWNER)
            .into_iter()
            .map(|i| {
                serde_json::json!({
                    "name": i.name, "host": null, "dialect": i.dialect,
                    "cwd": i.cwd.map(|c| c.display().to_string()),
                    "state": if i.busy { "busy" } else { "idle" },
                    "created": since(i.created), "last_used": since(i.last_used),
                })
            })
            .collect();
        let text = sessions
            .iter()
            .map(|s| s["name"].as_str().unwrap_or("").to_owned())
            .collect::<Vec<_>>()
            .join("\n");
        let mut out = CallToolResult::structured(serde_json::json!({ "sessions": sessions }));
        out.content = vec![ContentBlock::text(if text.is_empty() {
            "[no sessions]".to_owned()
        } else {
            text
        })];
        Ok(out)
    }
}

#[tool_handler(router = self.tool_router, name = "tether", version = "0.1.0")]
impl ServerHandler for TetherMcp {}

/// Quotes a directory for `cd` in the POSIX-family shells.
fn shell_word(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

impl std::fmt::Debug for TetherMcp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TetherMcp").finish_non_exhaustive()
    }
}
