//! A shell started inside a confined session (`bash`) is armed there, as
//! root and as the unprivileged test user: later commands run in it, still
//! inside the fence (its roots writable, nothing else), and `exit` comes
//! back to the session's shell. Skips without `bwrap`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
mod fenced;

use fenced::{World, bwrap_missing, everyone, output};

#[test]
fn a_shell_started_in_a_fence_is_armed_inside_it() {
    if bwrap_missing() {
        return;
    }
    for who in everyone() {
        let w = World::new(who);
        let out = w.out.display().to_string();
        let c = |cmd: &str| w.run(&["-s", "n", "--confine", "workspace", "--norc", "--", cmd]);
        let r = c("bash --norc");
        assert_eq!(r["status"], "entered_shell", "{who:?}: {r}");
        assert_eq!(r["nested"][0]["program"], "bash", "{r}");
        let r = c("(exit 4)");
        assert_eq!(r["exit_code"], 4, "{who:?}: {r}");
        assert_eq!(r["confinement"]["mode"], "workspace", "{r}");
        let r = c("touch inside && echo made");
        assert_eq!(
            (r["exit_code"].as_i64(), output(&r)),
            (Some(0), "made\n"),
            "{r}"
        );
        let r = c(&format!("touch {out}/outside"));
        assert_eq!(r["exit_code"], 1, "{who:?}: {r}");
        assert!(output(&r).contains("Read-only file system"), "{r}");
        let r = c("exit 3");
        assert_eq!(r["exit_code"], 3, "{who:?}: {r}");
        assert_eq!(r["nest_change"], "returned", "{r}");
        let r = c("echo $BASH_SUBSHELL back");
        assert_eq!(output(&r), "0 back\n", "{r}");
        assert!(r["nested"].as_array().unwrap().is_empty(), "{r}");
    }
}
