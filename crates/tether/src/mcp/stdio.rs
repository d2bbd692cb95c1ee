//! The stdio transport of `tether mcp`, with a guard in front of the SDK
//! that answers malformed JSON-RPC lines itself.

use rmcp::ServiceExt;

use super::TetherMcp;

/// How long answers may still be written after stdin ends.
const STDIN_CLOSED_GRACE: std::time::Duration = std::time::Duration::from_millis(500);

/// Serves MCP on stdin/stdout until the client goes away.
///
/// Lines from stdin pass through a check first: one that is not JSON, or
/// not a JSON-RPC 2.0 object, is answered with a JSON-RPC error (parse
/// error or invalid request) instead of reaching the SDK, which would drop
/// it silently. Both the SDK's replies and those errors go to stdout
/// through one writer, a whole line at a time.
pub async fn serve(server: TetherMcp) -> anyhow::Result<()> {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

    let (to_sdk, sdk_in) = tokio::io::duplex(1 << 16);
    let (sdk_out, from_sdk) = tokio::io::duplex(1 << 16);
    let (lines_tx, mut lines_rx) = tokio::sync::mpsc::channel::<String>(64);

    let errors = lines_tx.clone();
    let inbound = tokio::spawn(async move {
        let mut to_sdk = to_sdk;
        let mut stdin = BufReader::new(tokio::io::stdin()).lines();
        while let Ok(Some(line)) = stdin.next_line().await {
            match reject(&line) {
                Some(error) => {
                    let _ = errors.send(error).await;
                }
                None => {
                    if to_sdk
                        .write_all(format!("{line}\n").as_bytes())
                        .await
                        .is_err()
                    {
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
        let mut stdout = tokio::io::stdout();
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
    let service = server.serve((sdk_in, sdk_out)).await?;
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

/// The JSON-RPC error for a line that is not a JSON-RPC 2.0 message, or
/// `None` when the line may go to the SDK.
fn reject(line: &str) -> Option<String> {
    if line.trim().is_empty() {
        return None;
    }
    let error = |id: serde_json::Value, code: i32, message: &str| {
        serde_json::json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
            .to_string()
    };
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
