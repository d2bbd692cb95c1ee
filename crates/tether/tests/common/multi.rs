//! `tether shell` driven as a person drives it: started in a PTY against a
//! set of sshd nodes, lines typed, the screen read.

use super::Person;
use super::remote::Remote;
use tether_transport::Terminal;

/// `tether shell ARGS` against `r`'s nodes, without colours.
pub fn shell(r: &Remote, args: &[&str]) -> Person {
    let mut all = vec!["shell"];
    all.extend_from_slice(args);
    Person::spawn(
        &all,
        &r.daemon,
        &[
            ("HOME", r.home.0.display().to_string()),
            ("NO_COLOR", "1".into()),
        ],
    )
}

/// Types a line.
pub fn line(p: &Person, text: &str) {
    p.pty.write(format!("{text}\r").into_bytes()).unwrap();
}

/// What was shown after the last time `mark` was.
pub fn since(p: &Person, mark: &str) -> String {
    let text = p.text();
    text.rfind(mark)
        .map_or_else(String::new, |at| text[at..].to_owned())
}

/// Waits until one line shown after the last `mark` holds all of `parts`.
pub fn wait_lines(p: &Person, mark: &str, parts: &[&str]) {
    super::wait_for(20, &format!("a line with {parts:?}"), || {
        since(p, mark)
            .lines()
            .any(|l| parts.iter().all(|x| l.contains(x)))
            .then_some(())
    });
}

/// Waits until `what` is shown after the last `mark`.
pub fn sees_after(p: &Person, mark: &str, what: &str) {
    super::wait_for(30, &format!("{what:?} after {mark:?}"), || {
        since(p, mark).contains(what).then_some(())
    });
}

/// Waits (up to `secs`) for `summary` after the last `mark` and the
/// prompt drawn after it (the editor's last synchronized update).
pub fn prompt_after(p: &Person, secs: u64, mark: &str, summary: &str) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(secs);
    loop {
        let after = since(p, mark);
        if after.contains(summary) && after.ends_with("\x1b[?2026l") {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "never saw {summary:?} then the prompt after {mark:?}; saw {:?}",
            p.text()
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

/// A directory every node's user can write in, removed when dropped.
pub struct Shared(pub std::path::PathBuf);

impl Shared {
    pub fn new(name: &str) -> Shared {
        use std::os::unix::fs::PermissionsExt;
        let dir = std::env::temp_dir().join(format!("tether-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir(&dir).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
        Shared(dir)
    }

    /// `name` in it, as a shell word.
    pub fn path(&self, name: &str) -> String {
        self.0.join(name).display().to_string()
    }

    pub fn exists(&self, name: &str) -> bool {
        self.0.join(name).exists()
    }
}

impl Drop for Shared {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
