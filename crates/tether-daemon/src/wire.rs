//! The engine's values in their wire shapes: a call's result and a
//! session's listing entry.

use std::time::SystemTime;

use tether_shell::{RunResult, SessionInfo};

use crate::ops::Address;
use crate::protocol::{
    Foreground, LinkFailure, LinkLoss, SessionEntry, SessionState, ShellResult, TerminalHolder,
    Truncated,
};

/// The wire shape of an engine result for the session the client called
/// `session`.
pub fn shell_result(session: &str, host: Option<&str>, r: RunResult) -> ShellResult {
    ShellResult {
        session: session.to_owned(),
        host: host.map(str::to_owned),
        status: r.status.into(),
        exit_code: r.exit_code,
        pipe_status: r.pipe_status,
        signal: r.signal,
        output: r.output,
        truncated: r.truncated.map(|t| Truncated {
            omitted_chars: t.omitted_chars,
            total_chars: t.total_chars,
            full_output_path: t.full_output_path.map(|p| p.display().to_string()),
            note: t.note,
        }),
        cwd: r.cwd.map(|c| c.display().to_string()),
        foreground: r.foreground.map(|f| Foreground {
            pid: f.pid,
            command: f.command,
        }),
        duration_ms: r.duration_ms,
        shell_restarted: r.shell_restarted,
        link: r.link.map(|l| LinkLoss {
            failure: match l.failure {
                tether_shell::LinkFailure::Lost => LinkFailure::Lost,
                tether_shell::LinkFailure::Unanswered => LinkFailure::Unanswered,
            },
            command_started: l.command_started,
            kept: false,
        }),
        terminal_holders: r
            .terminal_holders
            .into_iter()
            .map(|h| TerminalHolder {
                pid: h.pid,
                program: h.program,
                can_type: h.can_type,
            })
            .collect(),
        nested: r.nested.into_iter().map(Into::into).collect(),
        nest_change: r.nest_change.map(Into::into),
        secret: r.secret,
        agentless: None,
        confinement: r.confinement,
        link_steps: Vec::new(),
    }
}

fn unix(t: SystemTime) -> u64 {
    t.duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

pub(crate) fn entry(i: SessionInfo) -> SessionEntry {
    let address = Address {
        owner: i.owner.clone(),
        name: i.name.clone(),
    };
    SessionEntry {
        address: address.display(),
        name: i.name,
        namespace: (!i.owner.is_empty()).then_some(i.owner),
        host: i.host,
        dialect: i.dialect.to_owned(),
        cwd: i.cwd.map(|c| c.display().to_string()),
        state: if i.lost {
            SessionState::Lost
        } else if i.busy {
            SessionState::Busy
        } else {
            SessionState::Idle
        },
        foreground: i.foreground.map(|f| Foreground {
            pid: f.pid,
            command: f.command,
        }),
        attached: 0,
        created: unix(i.created),
        last_used: unix(i.last_used),
        confinement: i.confinement,
    }
}
