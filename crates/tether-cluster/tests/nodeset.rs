//! Node sets by hand: algebra, whole-name exclusion, groups, host specs,
//! and errors that say what is wrong.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use tether_cluster::{ClusterError, NodeSet};

fn fold(expr: &str) -> String {
    NodeSet::parse(expr).unwrap().fold()
}

#[test]
fn ranges_padding_steps_and_dimensions() {
    assert_eq!(
        NodeSet::parse("web[01-10]").unwrap().names()[..3],
        ["web01", "web02", "web03"]
    );
    assert_eq!(fold("n[1-9/2]"), "n[1,3,5,7,9]");
    assert_eq!(NodeSet::parse("rack[1-2]-n[1-3]").unwrap().len(), 6);
    assert_eq!(
        fold("rack1-n1,rack1-n2,rack2-n1,rack2-n2"),
        "rack[1-2]-n[1-2]"
    );
}

#[test]
fn exclusion_matches_whole_names() {
    let s = NodeSet::parse("node[1-20]!node1").unwrap();
    assert!(!s.contains("node1") && s.contains("node10") && s.contains("node11"));
    assert_eq!(s.len(), 19);
    assert_eq!(fold("n[1-5]&n[3-9]"), "n[3-5]");
    assert_eq!(fold("n[1-5]^n[3-9]"), "n[1-2,6-9]");
    assert_eq!(
        fold("n1 n2  n3"),
        "n[1-3]",
        "whitespace between terms is a union"
    );
    assert_eq!(fold("n[1-3] ! n2"), "n[1,3]");
}

#[test]
fn host_specs_and_ipv6_literals_are_names() {
    let s = NodeSet::parse("admin@web[1-2]:2222,[::1],u@[fe80::1]:22").unwrap();
    assert_eq!(
        s.names(),
        [
            "[::1]",
            "admin@web1:2222",
            "admin@web2:2222",
            "u@[fe80::1]:22"
        ]
    );
}

#[test]
fn groups_expand_and_cycles_are_caught() {
    let groups = |name: &str| match name {
        "web" => Some("web[1-3]".to_owned()),
        "all" => Some("@web,db1".to_owned()),
        "loop" => Some("@loop2".to_owned()),
        "loop2" => Some("@loop".to_owned()),
        _ => None,
    };
    assert_eq!(
        NodeSet::parse_with("@all!web2", &groups).unwrap().fold(),
        "db1,web[1,3]"
    );
    assert_eq!(
        NodeSet::parse_with("@nope", &groups),
        Err(ClusterError::UnknownGroup("nope".into()))
    );
    assert!(matches!(
        NodeSet::parse_with("@loop", &groups),
        Err(ClusterError::GroupCycle(_))
    ));
    assert!(matches!(
        NodeSet::parse("@web"),
        Err(ClusterError::UnknownGroup(_))
    ));
}

#[test]
fn bad_expressions_say_what_is_wrong() {
    for (expr, needle) in [
        ("n[3-1]", "the start is after the end"),
        ("n[a-b]", "use numbers"),
        ("n[1-3", "never closed"),
        ("n]", "closes nothing"),
        ("n[1-3][4]", "text between them"),
        ("n[1-4/0]", "step"),
    ] {
        let err = NodeSet::parse(expr).unwrap_err().to_string();
        assert!(err.contains(needle) && err.contains(expr), "{expr}: {err}");
    }
    assert!(matches!(
        NodeSet::parse("n[1-9999999]"),
        Err(ClusterError::TooLarge(_))
    ));
    assert!(matches!(
        NodeSet::parse("a[1-2000]b[1-2000]"),
        Err(ClusterError::TooLarge(_))
    ));
    assert!(NodeSet::parse("").unwrap().is_empty());
}
