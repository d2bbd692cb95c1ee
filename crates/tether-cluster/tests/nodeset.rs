//! Node sets by hand: algebra, whole-name exclusion, groups, host specs,
//! and errors that say what is wrong.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use tether_cluster::{ClusterError, NodeSet, RangeProblem, SyntaxProblem};

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

/// Everything ClusterShell's `nodeset -e` refuses, tether refuses too.
#[test]
fn what_nodeset_refuses_is_refused() {
    for expr in [
        "n[01-104]",
        "n[002-67]",
        "n[1-010]",
        "n[01-9]",
        "n[000-0]",
        "n0[1-10]",
        "n[0-10]5",
        "n[1-6]^",
        "a,&b",
        "n[1-3],",
        ",a",
        "!a",
        "a,,b",
        "a!!b",
        "a&",
        "n[1-3] ,",
        "n[]",
        "n[1,]",
        "n[,1]",
        "n[1-]",
        "n[1/2]",
        "n[1-5/2]7",
        "n[1-3]5[4]",
        "n[1]x]",
        "n[1],b]",
        "n[1-3 ]7",
    ] {
        assert!(NodeSet::parse(expr).is_err(), "{expr:?} was accepted");
    }
}

fn problem(expr: &str) -> (usize, SyntaxProblem) {
    match NodeSet::parse(expr) {
        Err(ClusterError::Syntax {
            column, problem, ..
        }) => (column, problem),
        other => panic!("{expr:?}: {other:?}"),
    }
}

fn range(range: &str, joined: Option<&str>, problem: RangeProblem) -> SyntaxProblem {
    SyntaxProblem::Range {
        range: range.into(),
        joined: joined.map(str::to_owned),
        problem,
    }
}

/// Each refusal names its kind and its place.
#[test]
fn refusals_name_the_bad_part_and_its_column() {
    use RangeProblem::*;
    let missing = |op, after| SyntaxProblem::MissingOperand { op, after };
    for (expr, column, want) in [
        ("n[01-104]", 3, range("01-104", None, PaddingMismatch)),
        ("n[002-67]", 3, range("002-67", None, PaddingMismatch)),
        ("n[1-010]", 3, range("1-010", None, PaddingMismatch)),
        ("n[01-9]", 3, range("01-9", None, PaddingMismatch)),
        ("n[1,000-0]", 5, range("000-0", None, PaddingMismatch)),
        (
            "n0[1-10]",
            4,
            range("1-10", Some("01-010"), PaddingMismatch),
        ),
        (
            "n[0-10]5",
            3,
            range("0-10", Some("05-105/10"), PaddingMismatch),
        ),
        ("n[1-6]^", 7, missing('^', true)),
        ("a,&b", 3, missing('&', false)),
        ("n[1-3],", 7, missing(',', true)),
        (",a", 1, missing(',', false)),
        ("!a", 1, missing('!', false)),
        ("a!!b", 3, missing('!', false)),
        ("n[1-3] , ", 8, missing(',', true)),
        ("n[]", 3, range("", None, Empty)),
        ("n[1,]", 3, range("", None, Empty)),
        ("n[1-]", 3, range("1-", None, NotANumber)),
        ("n[3-1]", 3, range("3-1", None, Reversed)),
        ("n[1-4/0]", 3, range("1-4/0", None, BadStep)),
        ("n[1/2]", 3, range("1/2", None, StepWithoutRange)),
        ("n[-5]", 3, range("-5", None, Negative)),
        ("n[1-3", 2, SyntaxProblem::UnclosedBracket),
        ("a,n[1-3]b[", 10, SyntaxProblem::UnclosedBracket),
        ("n]", 2, SyntaxProblem::StrayBracket),
        ("n[1]x]", 6, SyntaxProblem::StrayBracket),
        ("n[1],b]", 7, SyntaxProblem::StrayBracket),
        ("n[1-3][4]", 7, SyntaxProblem::AdjacentRanges),
        ("n[1-3]5[4]", 8, SyntaxProblem::AdjacentRanges),
        ("n[1-5/2]7", 9, SyntaxProblem::DigitsAfterStep),
    ] {
        assert_eq!(problem(expr), (column, want), "{expr:?}");
    }
    assert_eq!(
        NodeSet::parse("n[01-104]").unwrap_err().to_string(),
        "bad node set \"n[01-104]\", column 3: padding mismatch in range \"01-104\": both ends must have the same width"
    );
    assert_eq!(
        NodeSet::parse("n[1-6]^").unwrap_err().to_string(),
        "bad node set \"n[1-6]^\", column 7: missing operand after ^"
    );
    // A group's body is checked when it is used, and named.
    let err = NodeSet::parse_with("@web", &|_| Some("web[1-3],".into())).unwrap_err();
    assert_eq!(
        err.to_string(),
        "bad node set \"web[1-3],\" (the group @web), column 9: missing operand after ,"
    );
}

/// Where nodeset accepts, tether reads the same hosts: the padding rules
/// and the digits next to brackets.
#[test]
fn padding_and_joined_digits_read_as_nodeset_reads_them() {
    let names = |e: &str| NodeSet::parse(e).unwrap().names();
    assert_eq!(names("n[0-9]").len(), 10);
    assert_eq!(names("n[0-00]"), ["n0"]);
    assert_eq!(names("n[00]"), ["n00"]);
    assert_eq!(names("n[ 1 - 3 ]"), ["n1", "n2", "n3"]);
    assert_eq!(names("n[1/1]"), ["n1"]);
    assert_eq!(names("n[1-3]5"), ["n15", "n25", "n35"]);
    assert_eq!(names("n[9-10]0"), ["n90", "n100"]);
    assert_eq!(names("n[]5"), ["n5"]);
    // ClusterShell joins the digits to the whole run: 18 to 110.
    assert_eq!(names("n1[8-10]").len(), 93);
    assert_eq!(fold("n[06,16-126]"), "n[06,16-99,100-126]");
    assert_eq!(fold("n[09-99],n100"), "n[09-99,100]");
    // The deliberate differences: whitespace is a union, IPv6 in brackets.
    assert_eq!(fold("n1 n2"), "n[1-2]");
    assert_eq!(fold("n1 , n2"), "n[1-2]");
    assert_eq!(fold("h1[::1]:22"), "h1[::1]:22");
}
