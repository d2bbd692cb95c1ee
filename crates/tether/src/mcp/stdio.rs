//! The stdio transport of `tether mcp`, with a guard in front of the SDK
//! that answers malformed JSON-RPC lines itself and bounds what one line
//! may cost.

use rmcp::ServiceExt;
use rmcp::transport::async_rw::AsyncRwTransport;
use tether_daemon::lines::{self, LineRead};

use super::TetherMcp;

/// How long answers may still be written after stdin ends.
const STDIN_CLOSED_GRACE: std::time::Duration = std::time::Duration::from_millis(500);

/// The most bytes one JSON-RPC line on stdin may have: 64 MiB. A line
/// over it is answered with an "invalid request" error (id null) once it
/// passes the bound; the rest of it is read and dropped, never held.
pub const MAX_REQUEST: usize = 64 << 20;

/// Serves MCP on stdin/stdout until the client goes away.
///
/// Lines from stdin pass through a check first: one that is not UTF-8,
/// not JSON, or not a JSON-RPC 2.0 object, or that is longer than
/// [`MAX_REQUEST`], is answered with a JSON-RPC error (parse error or
/// invalid request) instead of reaching the SDK, which would drop it
/// silently (or, for a line that is not UTF-8, end). Both the SDK's
/// replies and those errors go to stdout through one writer, a whole line
/// at a time.
pub async fn serve(server: TetherMcp) -> anyhow::Result<()> {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

    let (to_sdk, sdk_in) = tokio::io::duplex(1 << 16);
    let (sdk_out, from_sdk) = tokio::io::duplex(1 << 16);
    let (lines_tx, mut lines_rx) = tokio::sync::mpsc::channel::<String>(64);

    let errors = lines_tx.clone();
    let inbound = tokio::spawn(async move {
        let mut to_sdk = to_sdk;
        let mut stdin = BufReader::with_capacity(1 << 16, stdin_reader());
        let mut line = Vec::new();
        loop {
            // A large request's buffer is not kept for the server's life.
            line.clear();
            line.shrink_to(1 << 16);
            let rejected = match lines::read_line(&mut stdin, &mut line, MAX_REQUEST).await {
                Err(_) | Ok(LineRead::Eof) => break,
                Ok(LineRead::TooLong) => {
                    let _ = errors.send(too_long()).await;
                    if lines::skip_line(&mut stdin).await.is_err() {
                        break;
                    }
                    continue;
                }
                Ok(LineRead::Line) => reject(&line),
            };
            match rejected {
                Some(error) => {
                    let _ = errors.send(error).await;
                }
                None => {
                    line.push(b'\n');
                    if to_sdk.write_all(&line).await.is_err() {
                        break;
                    }
                }
            }
        }
        let _ = to_sdk.shutdown().await;
    });
    let outbound = tokio::spawn(async move {
        let mut replies = BufReader::new(from_sdk).lines();
        while let Ok(Some(line)) = replies.next_line().await {
            if lines_tx.send(line).await.is_err() {
                break;
            }
        }
    });
    let writer = tokio::spawn(async move {
        let mut stdout = stdout_writer();
        while let Some(line) = lines_rx.recv().await {
            if stdout
                .write_all(format!("{line}\n").as_bytes())
                .await
                .is_err()
                || stdout.flush().await.is_err()
            {
                break;
            }
        }
    });
    let mut inbound = inbound;
    // The guard has bounded each line already; the SDK's own bound (16
    // MiB, over which it drops a line without a word) must not be lower.
    let transport =
        AsyncRwTransport::new_server(sdk_in, sdk_out).with_max_line_length(MAX_REQUEST + 1);
    let service = server.serve(transport).await?;
    let waiting = service.waiting();
    tokio::pin!(waiting);
    tokio::select! {
        done = &mut waiting => {
            done?;
        }
        _ = &mut inbound => {
            // The end of stdin is the client's end. Answers already on
            // their way get a moment; calls still waiting on a command are
            // not waited for: the process exits, and the daemon ends this
            // server's sessions (and their commands) when its lease closes.
            if tokio::time::timeout(STDIN_CLOSED_GRACE, &mut waiting).await.is_err() {
                return Ok(());
            }
        }
    }
    inbound.abort();
    let _ = outbound.await;
    let _ = writer.await;
    Ok(())
}

/// Standard input as the runtime reads it: a pipe (what MCP clients give)
/// is registered with the runtime's reactor, so a request wakes this
/// thread and no other; anything else is read by tokio's blocking thread.
fn stdin_reader() -> Box<dyn tokio::io::AsyncRead + Unpin + Send> {
    use std::os::fd::AsFd;
    let pipe = std::io::stdin()
        .as_fd()
        .try_clone_to_owned()
        .ok()
        .and_then(|fd| tokio::net::unix::pipe::Receiver::from_file(fd.into()).ok());
    match pipe {
        Some(p) => Box::new(p),
        None => Box::new(tokio::io::stdin()),
    }
}

/// Standard output as the runtime writes it: a pipe, registered with the
/// reactor, unless standard error is the same pipe (it is made
/// non-blocking, which a write to stderr must not meet); else tokio's
/// stdout, written by a blocking thread.
fn stdout_writer() -> Box<dyn tokio::io::AsyncWrite + Unpin + Send> {
    use std::os::fd::AsFd;
    use std::os::unix::fs::MetadataExt;
    let file = |fd: std::os::fd::BorrowedFd<'_>| fd.try_clone_to_owned().map(std::fs::File::from);
    let pipe = file(std::io::stdout().as_fd()).ok().filter(|out| {
        let id = |f: &std::fs::File| f.metadata().map(|m| (m.dev(), m.ino()));
        let err = file(std::io::stderr().as_fd());
        matches!((id(out), err.map(|e| id(&e))), (Ok(o), Ok(Ok(e))) if o != e)
    });
    match pipe.and_then(|f| tokio::net::unix::pipe::Sender::from_file(f).ok()) {
        Some(p) => Box::new(p),
        None => Box::new(tokio::io::stdout()),
    }
}

fn error(id: serde_json::Value, code: i32, message: &str) -> String {
    serde_json::json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
        .to_string()
}

/// The JSON-RPC error for a line over [`MAX_REQUEST`].
fn too_long() -> String {
    error(
        serde_json::Value::Null,
        -32600,
        &format!(
            "invalid request: the line is longer than {} ({MAX_REQUEST} bytes), the most one message may have; it was dropped. Pass large inputs as files",
            lines::human_size(MAX_REQUEST as u64)
        ),
    )
}

/// The JSON-RPC error for a line that is not a JSON-RPC 2.0 message, or
/// `None` when the line may go to the SDK.
fn reject(line: &[u8]) -> Option<String> {
    let line = match std::str::from_utf8(line) {
        Ok(text) => text,
        Err(e) => {
            return Some(error(
                serde_json::Value::Null,
                -32700,
                &format!(
                    "parse error: the line is not UTF-8 (an invalid byte at offset {}); send one JSON-RPC 2.0 message per line, as UTF-8 text",
                    e.valid_up_to()
                ),
            ));
        }
    };
    if line.trim().is_empty() {
        return None;
    }
    match serde_json::from_str::<serde_json::Value>(line) {
        Err(e) => Some(error(
            serde_json::Value::Null,
            -32700,
            &format!("parse error: {e}; send one JSON-RPC 2.0 message per line"),
        )),
        Ok(serde_json::Value::Array(_)) => None,
        Ok(v) if v.get("jsonrpc").and_then(|j| j.as_str()) == Some("2.0") => None,
        Ok(v) => Some(error(
            v.get("id").cloned().unwrap_or(serde_json::Value::Null),
            -32600,
            "invalid request: not a JSON-RPC 2.0 object (\"jsonrpc\": \"2.0\" is required)",
        )),
    }
}
