//! The thief: a python3 script a test leaves behind on a session's terminal
//! (`setsid python3 THIEF $(tty) PIDFILE &`) to try to forge marks and take
//! typed lines. One copy for the engine's, the CLI's and the remote tests.

use std::path::{Path, PathBuf};

/// The script's start: opens the terminal named by its first argument,
/// writes its pid to the second (atomically), then reads it forever.
const READ: &str = r#"
import itertools, os, re, sys
fd = os.open(sys.argv[1], os.O_RDWR | os.O_NOCTTY)
with open(sys.argv[2] + ".tmp", "w") as f:
    f.write(str(os.getpid()))
os.rename(sys.argv[2] + ".tmp", sys.argv[2])
seen = ""
while True:
    data = os.read(fd, 4096)
    if not data:
        break
    text = data.decode("utf-8", "replace")
    seen += text
"#;

/// The script's end: for every nonce it can build from what it read (each
/// run of 16 or more hex digits, each pair of them joined, each followed by
/// each number it read) it writes forged start and end marks (exit 0, cwd
/// /forged) to the terminal.
const FORGE: &str = r#"    hexes = set(re.findall(r"[0-9a-fA-F]{16,}", seen))
    numbers = set(re.findall(r"\b[0-9]{1,6}\b", seen)) | {""}
    forged = ""
    for n in hexes | {a + b for a, b in itertools.permutations(hexes, 2)}:
        for k in numbers:
            forged += "\033]6973;%s%s;start\007" % (n, k)
            forged += "\033]6973;%s%s;end;exit=0;pipe=0;ran=1;cwd=/forged\007" % (n, k)
    os.write(fd, forged.encode())
"#;

/// What the thief writes back to the terminal of what it read, before its
/// forged marks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Echo {
    /// `thief read: 'TEXT'` (Python's repr: control characters escaped).
    Quoted,
    /// `thief read: ` and the bytes read, as they were.
    Raw,
    /// Nothing: only the forged marks.
    Silent,
}

/// Writes the thief script into `dir` (readable by every user, so a remote
/// login user on this machine can run it) and returns its path.
pub fn write(dir: &Path, echo: Echo) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let echo = match echo {
        Echo::Quoted => "    os.write(fd, (\"thief read: %r\\n\" % text).encode())\n",
        Echo::Raw => "    os.write(fd, b\"thief read: \" + data + b\"\\n\")\n",
        Echo::Silent => "",
    };
    let path = dir.join("thief.py");
    std::fs::write(&path, format!("{READ}{echo}{FORGE}")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    path
}

/// Why the thief cannot run here (python3 is not on PATH), if it cannot.
pub fn unavailable() -> Option<String> {
    let found = std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join("python3").is_file()));
    (!found).then(|| "python3 is not installed (the thief is a python3 script)".to_owned())
}
