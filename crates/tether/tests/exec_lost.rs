//! `tether exec` when the connection dies under a running command (issue
//! 23, item 7): the host sent no exit status, so the result says the
//! connection was lost and the command's end is unknown (kind
//! `connection_lost`, no exit code, exit 255), never an exit code or a
//! signal the host did not send. Against real sshd on 127.0.0.2.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
mod exec_kit;

use std::process::Stdio;

use exec_kit::{start, token, wait};

#[test]
fn a_connection_lost_under_a_command_is_said_lost_not_exited() {
    let Some(f) = start() else { return };
    let t = token("lost");
    let pid_file = f.marks.join(format!("pid_{t}"));
    // The shell writes its pid, then waits; `t` names it in `ps`.
    let command = format!("echo $$ > {}; sleep 30 # {t}", pid_file.display());
    for output in ["stream", "json"] {
        let _ = std::fs::remove_file(&pid_file);
        let child = f
            .command(None, "127.0.0.2", &["--output", output], &command)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        wait(
            || {
                std::fs::read_to_string(&pid_file)
                    .ok()
                    .and_then(|s| s.trim().parse::<i32>().ok())
                    .is_some()
            },
            "the remote shell's pid",
        );
        let pid: i32 = std::fs::read_to_string(&pid_file)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        common::remote::kill_connection_above(pid);
        let out = child.wait_with_output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(255), "{output}: {stdout} {stderr}");
        if output == "json" {
            let row: serde_json::Value = serde_json::from_str(stdout.trim()).unwrap();
            assert_eq!(row["error_kind"], "connection_lost", "{row}");
            assert!(row["exit_code"].is_null(), "{row}");
            assert!(row["signal"].is_null(), "{row}");
        } else {
            assert!(
                stderr.contains("127.0.0.2: the connection was lost before the command's end"),
                "{stderr}"
            );
            assert!(
                !stderr.contains("signal") && !stderr.contains("exited"),
                "{stderr}"
            );
        }
    }
}
