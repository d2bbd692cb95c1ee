//! A person's echo on a session's terminal: on while they are attached at
//! the prompt, off again once they left, also when they left while a
//! command ran.

use std::process::Output;
use std::time::{Duration, Instant};

use tether_transport::Terminal;

use super::{Person, wait_for};

/// Waits until the session's terminal echoes, asking with `stty` typed as
/// the person (the typed line never passes for the answer, which needs the
/// arithmetic done), asking again only once the last question is answered.
pub fn until_on(person: &Person) {
    let ask = "stty -a | grep -q -w -- -echo && echo OFF$((1+1)) || echo ON$((2+2))\r";
    let mut asked = 0;
    wait_for(20, "echo on the session's terminal", || {
        let text = person.text();
        if text.contains("ON4") {
            return Some(());
        }
        if text.matches("OFF2").count() >= asked {
            person.pty.write(ask.as_bytes().to_vec()).unwrap();
            asked += 1;
        }
        None
    });
}

/// Waits until a command run on `session` through `tether` (tether against
/// the session's daemon) finds echo off.
pub fn until_off(session: &str, tether: &impl Fn(&[&str]) -> Output) {
    let off = "stty -a | grep -q -w -- -echo && echo off";
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let out = tether(&["run", "-s", session, "--", off]);
        if out.stdout == b"off\n" {
            return;
        }
        assert!(Instant::now() < deadline, "echo never off again: {out:?}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// `person`, attached to `session` with echo on, detaches while a command
/// runs there; once it ended, the terminal stops echoing.
pub fn off_after_leaving_busy(
    person: Person,
    session: &str,
    tether: impl Fn(&[&str]) -> Output + Sync,
) {
    until_on(&person);
    std::thread::scope(|s| {
        let busy = s.spawn(|| tether(&["run", "-s", session, "--", "echo busy-$((1+1)); sleep 2"]));
        person.sees("busy-2");
        // The person's last key was Enter: `~.` detaches.
        person.pty.write(b"~.".to_vec()).unwrap();
        person.exit();
        let out = busy.join().unwrap();
        assert_eq!(out.status.code(), Some(0), "{out:?}");
    });
    until_off(session, &tether);
}
