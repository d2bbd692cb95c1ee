//! Full-screen programs and terminal queries: the headless emulator answers
//! probes (replies never appear in results) and renders the screen.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use common::{within, xterm_session};
use tether_shell::Status;

#[tokio::test]
async fn queries_are_answered_and_replies_stay_out_of_results() {
    let mut s = xterm_session().await;
    let code = r#"printf '\rab\033[6n'; IFS= read -rsd R reply; printf '\033[c'; IFS= read -rsd c da; echo; echo "cpr=${reply#*[} da=${da#*[}""#;
    let r = s.run(code, &within(10)).await.unwrap();
    assert_eq!(r.status, Status::Exited, "{r:?}");
    let last = r.output.lines().last().unwrap();
    assert!(
        last.starts_with("cpr=") && last.ends_with(" da=?62;22"),
        "{:?}",
        r.output
    );
    let (row, col) = last["cpr=".len()..last.find(" da").unwrap()]
        .split_once(';')
        .unwrap();
    assert!(row.parse::<u16>().unwrap() >= 1);
    assert_eq!(col, "3", "the cursor is after `ab`");
    assert!(!r.output.contains("\x1b"));
}

#[tokio::test]
async fn less_as_pager_waits_for_input_and_shows_its_screen() {
    let mut s = xterm_session().await;
    let r = s
        .run("seq 1 200 | PAGER=less LESS= less", &within(10))
        .await
        .unwrap();
    assert_eq!(r.status, Status::WaitingForInput, "{r:?}");
    assert_eq!(r.foreground.as_ref().unwrap().command, "less");
    let screen = s.screen();
    let lines: Vec<&str> = screen.lines().collect();
    assert_eq!(&lines[..3], &["1", "2", "3"], "{screen}");
    let r = s
        .send(Some("q"), &[], Duration::from_secs(5))
        .await
        .unwrap();
    assert_eq!((r.status, r.exit_code), (Status::Exited, Some(0)));
}

#[tokio::test]
async fn vim_can_be_driven_and_quit() {
    let mut s = xterm_session().await;
    let file = std::env::temp_dir().join(format!("tether-vim-{}.txt", std::process::id()));
    let r = s
        .run(&format!("vim -u NONE -N {}", file.display()), &within(10))
        .await
        .unwrap();
    assert_eq!(r.status, Status::WaitingForInput, "{r:?}");
    // Text first: after a lone Esc vim waits (blocked reading) to see
    // whether a key sequence follows, before it redraws.
    let r = s
        .send(Some("ihello from tether"), &[], Duration::from_secs(5))
        .await
        .unwrap();
    assert_eq!(r.status, Status::WaitingForInput);
    // vim may still be settling its start-up (terminal queries) when it
    // first blocks: wait, with a deadline, for the text to be drawn.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !s.screen().starts_with("hello from tether") {
        assert!(std::time::Instant::now() < deadline, "{}", s.screen());
        let r = s.read(Duration::from_millis(100)).await.unwrap();
        assert_ne!(r.status, Status::Exited, "{r:?}");
    }
    let r = s
        .send(None, &["Esc".into()], Duration::from_secs(5))
        .await
        .unwrap();
    assert_eq!(r.status, Status::WaitingForInput);
    let r = s
        .send(Some(":wq\r"), &[], Duration::from_secs(5))
        .await
        .unwrap();
    assert_eq!((r.status, r.exit_code), (Status::Exited, Some(0)));
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "hello from tether\n"
    );
    let _ = std::fs::remove_file(file);
}

#[tokio::test]
async fn plain_lines_render_at_the_left_edge_without_output_processing() {
    // Sessions run with OPOST off: the program's bare LF must still start a
    // new line on the headless screen.
    let mut s = xterm_session().await;
    let r = s
        .run("printf '\\033[H\\033[2Jone\\ntwo\\nthree\\n'", &within(10))
        .await
        .unwrap();
    assert_eq!(r.output, "one\ntwo\nthree\n");
    let screen = s.screen();
    assert!(screen.starts_with("one\ntwo\nthree"), "{screen:?}");
}
