//! The protocol's wire strings and shapes: the typed enums and replies
//! serialise as the strings and objects clients have always read.

#![allow(clippy::unwrap_used)]

use serde_json::json;
use tether_daemon::protocol::{
    CloseReply, FailureKind, Response, ScreenReply, SessionState, Status,
};

/// The enums are the same snake_case strings on the wire as before.
#[test]
fn enums_keep_their_wire_strings() {
    let all = [
        (Status::Exited, "exited"),
        (Status::WaitingForInput, "waiting_for_input"),
        (Status::Running, "running"),
        (Status::TimedOut, "timed_out"),
        (Status::ShellExited, "shell_exited"),
        (Status::IncompleteInput, "incomplete_input"),
        (Status::ConnectionLost, "connection_lost"),
    ];
    for (status, text) in all {
        assert_eq!(serde_json::to_value(status).unwrap(), json!(text));
        assert_eq!(
            serde_json::from_value::<Status>(json!(text)).unwrap(),
            status
        );
    }
    let kinds = [
        (FailureKind::UnknownSession, "unknown_session"),
        (FailureKind::Busy, "busy"),
        (FailureKind::BadRequest, "bad_request"),
        (FailureKind::Refused, "refused"),
        (FailureKind::Version, "version"),
        (FailureKind::Ambiguous, "ambiguous"),
        (FailureKind::Engine, "engine"),
        (FailureKind::NotWaiting, "not_waiting"),
    ];
    for (kind, text) in kinds {
        assert_eq!(serde_json::to_value(kind).unwrap(), json!(text));
    }
    assert_eq!(
        serde_json::to_value(SessionState::Busy).unwrap(),
        json!("busy")
    );
    assert_eq!(
        serde_json::to_value(SessionState::Idle).unwrap(),
        json!("idle")
    );
}

/// A typed response is the bare object of its kind, as before.
#[test]
fn responses_are_untagged_objects() {
    let r = Response::Closed(CloseReply {
        session: "a".into(),
        closed: true,
    });
    assert_eq!(
        serde_json::to_value(&r).unwrap(),
        json!({"session": "a", "closed": true})
    );
    let r = Response::Screen(ScreenReply {
        session: "a".into(),
        screen: "$ ".into(),
    });
    assert_eq!(
        serde_json::to_value(&r).unwrap(),
        json!({"session": "a", "screen": "$ "})
    );
}

/// A failure carries how a remote host failed, typed; a failure that is
/// not a host's reads as it always did (no `host` key), and a reply from a
/// daemon without the key still reads.
#[test]
fn a_host_failure_is_typed_on_the_wire_and_optional() {
    use tether_daemon::protocol::Failure;
    use tether_transport::HostFailure;
    let host = Failure {
        kind: FailureKind::Engine,
        message: "n1: cannot connect".into(),
        host: Some(HostFailure::Refused),
    };
    let v = serde_json::to_value(&host).unwrap();
    assert_eq!(v["host"], json!("refused"));
    assert_eq!(serde_json::from_value::<Failure>(v).unwrap(), host);
    let plain = Failure {
        host: None,
        ..host.clone()
    };
    let v = serde_json::to_value(&plain).unwrap();
    assert!(v.get("host").is_none(), "{v}");
    let old = json!({"kind": "engine", "message": "m"});
    assert_eq!(serde_json::from_value::<Failure>(old).unwrap().host, None);
}
