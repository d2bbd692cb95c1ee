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

/// A response is its object tagged with its kind, and a client reads only
/// the kind its request gets: another kind is an error, not a guess.
#[test]
fn responses_are_tagged_with_their_kind() {
    use tether_daemon::protocol::{Reply, ReplyKind};
    let r = Response::Closed(CloseReply {
        session: "a".into(),
        closed: true,
    });
    assert_eq!(
        serde_json::to_value(&r).unwrap(),
        json!({"kind": "closed", "session": "a", "closed": true})
    );
    let r = Response::Screen(ScreenReply {
        session: "a".into(),
        screen: "$ ".into(),
    });
    let line = serde_json::to_string(&Reply::Ok(r.clone())).unwrap();
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&line).unwrap(),
        json!({"ok": {"kind": "screen", "session": "a", "screen": "$ "}})
    );
    let Reply::Ok(back) = serde_json::from_str::<Reply>(&line).unwrap() else {
        panic!("{line}");
    };
    assert_eq!(back, r);
    assert_eq!(
        ScreenReply::from_response(back.clone()).unwrap().screen,
        "$ "
    );
    // A screen where a close was due is refused, whatever its fields.
    assert_eq!(CloseReply::from_response(back).unwrap_err(), "screen");
    // An object without its kind is not read as any.
    assert!(serde_json::from_value::<Response>(json!({"session": "a", "closed": true})).is_err());
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

/// A followed command's output is `piece` (and `omitted`) lines before
/// the reply; a follow request names its offset.
#[test]
fn pieces_and_follow_on_the_wire() {
    use tether_daemon::protocol::{Omitted, Piece, Reply, Request};
    let piece = Reply::Piece(Piece {
        command: 3,
        offset: 12,
        text: "line\n".into(),
        at_ms: 250,
    });
    assert_eq!(
        serde_json::to_value(&piece).unwrap(),
        json!({"piece": {"command": 3, "offset": 12, "text": "line\n", "at_ms": 250}})
    );
    let gap = Reply::Omitted(Omitted {
        command: 3,
        from: 0,
        to: 12,
    });
    assert_eq!(
        serde_json::to_value(&gap).unwrap(),
        json!({"omitted": {"command": 3, "from": 0, "to": 12}})
    );
    let follow: Request =
        serde_json::from_value(json!({"op": "follow", "session": "s", "from": 12})).unwrap();
    assert!(matches!(follow, Request::Follow { from: Some(12), .. }));
    assert_eq!(follow.op(), "follow");
    // A run without the flag reads as it always did, and is written without it.
    let run: Request = serde_json::from_value(json!({
        "op": "run", "session": "s", "command": "true", "timeout_s": 1.0, "output_limit": 10
    }))
    .unwrap();
    assert!(matches!(run, Request::Run { follow: false, .. }));
    assert!(serde_json::to_value(&run).unwrap().get("follow").is_none());
}
